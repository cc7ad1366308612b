/**
 * POST /v3/fx/quotes: a price for one trade, locked for validForSeconds (3, 15, 30, 45 or 60;
 * default 30). The amount is in amountCurrency, which must be the buy or the sell currency.
 * GET /v3/fx/quotes/{id}: one quote of the book (a reverse quote too), used or not, expired or
 * not, as POST answered it.
 */
import { z } from 'zod';

import { ApiError } from '../../lib/errors/api-error.js';
import type { ErrorCode } from '../../lib/errors/v3-error-catalog.js';
import { V3_AMOUNT_PATTERN } from '../../lib/money.js';
import { defineOperation } from '../http/operation.js';
import {
  createQuote,
  findQuote,
  type QuoteRecord,
  quoteRecordSchema,
  type QuoteRow,
  toQuoteRecord,
} from '../trading/quotes.js';
import { quoteValiditySchema, type TradingContext } from '../trading/trading-context.js';
import { dataOf } from '../wire-types.js';
import { type RecordKind, retrieveOperation } from './record-routes.js';

const currencyCode = z.string().regex(/^[A-Z]{3,5}$/, 'a currency code such as USD or USDC');

/** What pricing a quote may refuse, a trade's reverse quote too. */
export const PRICING_ERRORS = [
  'TRADE_DISABLED',
  'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT',
  'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT',
  'PAIR_NOT_SUPPORTED',
  'QUOTE_INVALID_AMOUNT_PRECISION',
  'QUOTE_AMOUNT_OUT_OF_RANGE',
] as const satisfies readonly ErrorCode[];

export const quoteRequestSchema = z
  .strictObject({
    buyCurrency: currencyCode,
    sellCurrency: currencyCode,
    amount: z
      .string()
      .regex(V3_AMOUNT_PATTERN, 'a positive decimal string with at most 8 decimals')
      // The pattern admits zero, which prices to nothing (and pricing refuses it as a programming error).
      .refine((value) => !V3_AMOUNT_PATTERN.test(value) || /[1-9]/.test(value), {
        message: 'must be greater than zero',
        params: { code: 'too_small' },
      }),
    amountCurrency: currencyCode,
    validForSeconds: quoteValiditySchema,
  })
  .superRefine((body, ctx) => {
    if (body.buyCurrency === body.sellCurrency) {
      ctx.addIssue({
        code: 'custom',
        path: ['sellCurrency'],
        message: 'must differ from buyCurrency',
        params: { code: 'same_currency' },
      });
    }
    if (body.amountCurrency !== body.buyCurrency && body.amountCurrency !== body.sellCurrency) {
      ctx.addIssue({
        code: 'custom',
        path: ['amountCurrency'],
        message: 'must be buyCurrency or sellCurrency',
        params: { code: 'invalid_value' },
      });
    }
  });

const QUOTE: RecordKind<QuoteRow, QuoteRecord> = {
  noun: 'quote',
  schema: quoteRecordSchema,
  find: findQuote,
  toRecord: toQuoteRecord,
};

export function quoteOperations(context: TradingContext) {
  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/quotes',
      scope: 'trade',
      summary: 'Request a quote',
      response: dataOf(quoteRecordSchema),
      errors: PRICING_ERRORS,
      body: quoteRequestSchema,
      async handle({ principal, body }) {
        return { body: { data: await createQuote(context, principal, body) } };
      },
    }),
    retrieveOperation(context, QUOTE, ['QUOTE_NOT_FOUND'], (id) => new ApiError('QUOTE_NOT_FOUND', { quoteId: id })),
  ];
}
