/**
 * Reads legacy request bodies as the declarations say (`request` of each endpoint mapping):
 * compiled once per operation into a zod schema of the legacy field names and a function that
 * writes the v3 body with the v3 names. Also the registered cross-field checks the mappings
 * name. A body that does not fit is VALIDATION_BODY_FAILED with `details.issues` in the legacy
 * field names, which the error tables turn into the legacy 400.
 *
 * What is judged here and what is left to v3: the gateway checks what it must understand to
 * translate (ids are UUIDs it can map, amounts are decimal text v3 can take, the referenced
 * currency is one of the two) and the request rules it can state without reference data. Whether
 * a currency exists, is tradable or allows that many decimals is v3's to answer.
 *
 * Amounts arrive as canonical decimal strings: the JSON reader converts the numbers at the
 * amount fields from their text (lossless-json.ts); anything else there (a LosslessNumber, a
 * boolean, a string the client sent) is refused, never coerced.
 */
import { z } from 'zod';

import { ApiError } from '../../../lib/errors/api-error.js';
import { toIssues } from '../../../lib/errors/validation-issues.js';
import { type IdKind, legacyUuidToId } from '../../../lib/ids.js';
import { V3_AMOUNT_PATTERN } from '../../../lib/money.js';
import { unstorableTextIssues } from '../../../lib/text.js';
import type { BodyField, RequestShape } from '../declarations/endpoint-mappings.js';

/** A zod type error that says "is required" for a missing field rather than "received undefined". */
function expected(what: string) {
  return { error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`) };
}

// Legacy clients sent upper-case codes; a lower-case one is refused rather than guessed at.
const currencyCode = z
  .string(expected('a currency code'))
  .regex(/^[A-Z]{3,5}$/, 'must be an upper-case currency code such as USD or USDC');

const amount = z
  .string(expected('a decimal number'))
  .regex(V3_AMOUNT_PATTERN, 'must be a positive decimal number with at most 8 decimals')
  // The pattern admits zero; the guard keeps a malformed amount to one issue.
  .refine((value) => !V3_AMOUNT_PATTERN.test(value) || /[1-9]/.test(value), {
    message: 'must be greater than zero',
    params: { code: 'too_small' },
  });

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

function fieldSchema(field: BodyField): z.ZodType {
  let schema: z.ZodType;
  switch (field.type) {
    case 'amount':
      schema = amount;
      break;
    case 'currency':
      schema = currencyCode;
      break;
    case 'id':
      schema = legacyId(field.idKind!);
      break;
    case 'string': {
      // The bounds name their own messages: the type's message ("must be a string") would be wrong for them.
      const maxLength = field.maxLength ?? 255;
      schema = z
        .string(expected('a string'))
        .min(1, 'must not be empty')
        .max(maxLength, `must be at most ${maxLength} characters`);
      break;
    }
    case 'integer': {
      const allowed = field.oneOf;
      schema = z
        .number(expected('a whole number'))
        .int()
        .refine((value) => allowed === undefined || allowed.includes(value), {
          message: `must be one of ${allowed?.join(', ')}`,
          params: { code: 'invalid_value' },
        });
      break;
    }
  }
  return field.required ? schema : schema.optional();
}

type Body = Record<string, unknown>;
type Check = (body: Body) => { readonly path: string; readonly code: string; readonly message: string } | null;

/** Cross-field rules the request declarations name. */
export const REQUEST_CHECKS: Readonly<Record<string, Check>> = {
  buyDiffersFromSell: (body) =>
    body.buy === body.sell ? { path: 'sell', code: 'same_currency', message: 'must differ from buy' } : null,
  referencedUnitIsASide: (body) =>
    body.referencedUnit !== body.buy && body.referencedUnit !== body.sell
      ? { path: 'referencedUnit', code: 'invalid_value', message: 'must be the buy or the sell currency' }
      : null,
};

/** What a legacy body becomes: its fields read (ids as v3 ids), and the v3 body, or null when v3 takes none. */
export interface ReadBody {
  readonly fields: Readonly<Body>;
  readonly v3Body: Body | null;
}

export type ReadRequest = (body: unknown) => ReadBody;

/** The reader of one operation's body; unknown legacy fields are ignored, as the legacy APIs ignored them. */
export function compileRequest(request: RequestShape): ReadRequest {
  const checks = (request.checks ?? []).map((name) => REQUEST_CHECKS[name]!);
  const schema = z
    .object(Object.fromEntries(Object.entries(request.fields).map(([name, field]) => [name, fieldSchema(field)])), {
      error: 'must be a JSON object',
    })
    .superRefine((body, ctx) => {
      for (const check of checks) {
        const issue = check(body);
        if (issue)
          ctx.addIssue({ code: 'custom', path: [issue.path], message: issue.message, params: { code: issue.code } });
      }
    });
  const sent = Object.entries(request.fields).flatMap(([name, field]) =>
    field.to === undefined ? [] : [[name, field.to] as const],
  );
  const declared = Object.keys(request.fields);
  return (body) => {
    // Text v3 cannot store (U+0000, an unpaired surrogate) is refused here, as v3 refuses it, with
    // no upstream call; only declared fields are read, since unknown ones are ignored.
    const fieldsSent = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Body) : {};
    const textIssues = declared.flatMap((name) =>
      Object.hasOwn(fieldsSent, name) ? unstorableTextIssues(fieldsSent[name], [name]) : [],
    );
    if (textIssues.length > 0) throw new ApiError('VALIDATION_BODY_FAILED', { issues: textIssues });
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw new ApiError('VALIDATION_BODY_FAILED', { issues: toIssues(parsed.error) });
    const fields = parsed.data as Body;
    if (sent.length === 0) return { fields, v3Body: null };
    const v3Body: Body = {};
    // An optional field left out is left out of the v3 body too, rather than sent as null.
    for (const [name, to] of sent) if (fields[name] !== undefined) v3Body[to] = fields[name];
    return { fields, v3Body };
  };
}

/** The JSON paths of a request's amounts, read from the body's text as decimal strings. */
export function requestAmountPaths(request: RequestShape | null): string[] {
  return Object.entries(request?.fields ?? {}).flatMap(([name, field]) => (field.type === 'amount' ? [name] : []));
}
