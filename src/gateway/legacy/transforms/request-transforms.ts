/**
 * Request transforms: a legacy body (as parseLegacyJson read it) -> the v3 body to send, or null
 * for v3 calls that take none. Each validates the legacy body with zod first; a body that does
 * not fit is VALIDATION_BODY_FAILED with `details.issues` in the legacy field names, which the
 * error tables turn into the legacy 400. Unknown legacy fields are ignored, as the legacy APIs
 * ignored them.
 *
 * What is judged here and what is left to v3: the gateway checks what it must understand to
 * translate (ids are UUIDs it can map, amounts are decimal text v3 can take, the referenced
 * currency is one of the two) and the v3 request rules it can state without reference data
 * (spec 2.2's amount pattern, v3's quote validities). Whether a currency exists, is tradable or
 * allows that many decimals is v3's to answer, with its own cataloged error.
 *
 * Amounts arrive as canonical decimal strings (the reader converted the JSON numbers at the
 * mapping's `amounts.request` paths); anything else there (a LosslessNumber, a boolean) is
 * refused, never coerced. Ids in the body that are also v3 path parameters (tradeId) are mapped
 * by the handler from the mapping's `params`; they are still validated here so a bad one is a
 * body error, not a routing one.
 */
import { z } from 'zod';
import { ApiError } from '../../../lib/errors/api-error.js';
import { toIssues } from '../../../lib/errors/validation-issues.js';
import { type IdKind, legacyUuidToId } from '../../../lib/ids.js';
import { V3_AMOUNT_PATTERN } from '../../../lib/money.js';
import type { RequestTransform } from './transform-types.js';

/** v3's quote validities (DESIGN 3.6); checked here so a legacy client reads its own field name. */
const QUOTE_VALIDITY_SECONDS: readonly number[] = [3, 15, 30, 45, 60];

/** A zod type error that says "is required" for a missing field rather than "received undefined". */
function expected(what: string) {
  return { error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`) };
}

// Legacy clients sent upper-case codes; a lower-case one is refused rather than guessed at.
const currencyCode = z.string(expected('a currency code')).regex(/^[A-Z]{3,5}$/, 'must be an upper-case currency code such as USD or USDC');

const amount = z
  .string(expected('a decimal number'))
  .regex(V3_AMOUNT_PATTERN, 'must be a positive decimal number with at most 8 decimals')
  // The pattern admits zero; the guard keeps a malformed amount to one issue.
  .refine((value) => !V3_AMOUNT_PATTERN.test(value) || /[1-9]/.test(value), { message: 'must be greater than zero', params: { code: 'too_small' } });

/** A legacy UUID (any case), read as the v3 id of its kind. */
function legacyId(kind: IdKind) {
  return z.string(expected('a UUID')).transform((value, ctx) => {
    const id = legacyUuidToId(kind, value);
    if (id === null) {
      ctx.addIssue({ code: 'custom', message: 'must be a UUID', params: { code: 'invalid_format' }, input: value });
      return z.NEVER;
    }
    return id;
  });
}

// v3's own bound on the field, so a legacy client hears it in its own field name.
const clientReferenceId = z.string(expected('a string')).min(1).max(128).optional();

const quoteBody = z
  .object({
    amount,
    buy: currencyCode,
    sell: currencyCode,
    referencedUnit: currencyCode,
    quoteForSeconds: z
      .number(expected('a whole number of seconds'))
      .int()
      .refine((value) => QUOTE_VALIDITY_SECONDS.includes(value), {
        message: `must be one of ${QUOTE_VALIDITY_SECONDS.join(', ')}`,
        params: { code: 'invalid_value' },
      })
      .optional(),
  })
  .superRefine((body, ctx) => {
    if (body.buy === body.sell) ctx.addIssue({ code: 'custom', path: ['sell'], message: 'must differ from buy', params: { code: 'same_currency' } });
    if (body.referencedUnit !== body.buy && body.referencedUnit !== body.sell) {
      ctx.addIssue({ code: 'custom', path: ['referencedUnit'], message: 'must be the buy or the sell currency', params: { code: 'invalid_value' } });
    }
  });

const tradeBody = z.object({ quoteId: legacyId('quote'), clientReferenceId });
const tradeIdBody = z.object({ tradeId: legacyId('trade') });
const reverseBody = z.object({ tradeId: legacyId('trade'), quoteId: legacyId('quote'), clientReferenceId });
const withdrawalBody = z.object({ amount, currency: currencyCode, withdrawalAddressId: legacyId('withdrawalAccount') });

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiError('VALIDATION_BODY_FAILED', { issues: toIssues(parsed.error) });
  return parsed.data;
}

/** An optional field is left out of the v3 body rather than sent as null, which v3 refuses. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [P in K]: V });
}

export const REQUEST_TRANSFORMS: Readonly<Record<string, RequestTransform>> = Object.freeze({
  quoteRequest: ({ body }) => {
    const quote = parseBody(quoteBody, body);
    return {
      buyCurrency: quote.buy,
      sellCurrency: quote.sell,
      amount: quote.amount,
      amountCurrency: quote.referencedUnit,
      ...optional('validForSeconds', quote.quoteForSeconds),
    };
  },

  tradeRequest: ({ body }) => {
    const trade = parseBody(tradeBody, body);
    return { quoteId: trade.quoteId, ...optional('clientReferenceId', trade.clientReferenceId) };
  },

  // v3 reverse-quote takes no body: the trade is in its path and the validity is v3's default.
  reverseQuoteRequest: ({ body }) => {
    parseBody(tradeIdBody, body);
    return null;
  },

  reverseRequest: ({ body }) => {
    const reverse = parseBody(reverseBody, body);
    return { quoteId: reverse.quoteId, ...optional('clientReferenceId', reverse.clientReferenceId) };
  },

  settleRequest: ({ body }) => {
    parseBody(tradeIdBody, body);
    return null;
  },

  // One legacy body for both rails: v3 resolves rail, network and currency from the account.
  withdrawalRequest: ({ body }) => {
    const withdrawal = parseBody(withdrawalBody, body);
    return { withdrawalAccountId: withdrawal.withdrawalAddressId, withdrawalAmount: withdrawal.amount, currency: withdrawal.currency };
  },
});
