/**
 * POST /v3/fx/quotes: a price for one trade, locked for validForSeconds (3, 15, 30, 45 or 60;
 * default 30). The amount is in amountCurrency, which must be the buy or the sell currency.
 * GET /v3/fx/quotes/{id}: one quote of the book (a reverse quote too), used or not, expired or
 * not, as POST answered it.
 */
import { z } from 'zod';

import { ApiError } from '../../lib/errors/api-error.js';
import { V3_AMOUNT_PATTERN } from '../../lib/money.js';
import { defineOperation } from '../http/operation.js';
import { createQuote, findQuote, quoteRecordSchema, toQuoteRecord } from '../trading/quotes.js';
import { quoteValiditySchema, type TradingContext } from '../trading/trading-context.js';
import { dataOf } from '../wire-types.js';

const currencyCode = z.string().regex(/^[A-Z]{3,5}$/, 'a currency code such as USD or USDC');

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

export function quoteOperations(context: TradingContext) {
  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/quotes',
      scope: 'trade',
      summary: 'Request a quote',
      response: dataOf(quoteRecordSchema),
      errors: [
        'TRADE_DISABLED',
        'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT',
        'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT',
        'PAIR_NOT_SUPPORTED',
        'QUOTE_INVALID_AMOUNT_PRECISION',
        'QUOTE_AMOUNT_OUT_OF_RANGE',
      ],
      body: quoteRequestSchema,
      async handle({ principal, body }) {
        return { body: { data: await createQuote(context, principal, body) } };
      },
    }),
    defineOperation({
      method: 'GET',
      path: '/v3/fx/quotes/:id',
      scope: 'view',
      summary: 'Retrieve a quote',
      response: dataOf(quoteRecordSchema),
      errors: ['QUOTE_NOT_FOUND'],
      async handle({ principal, params }) {
        const quote = await findQuote(context.db, principal, params.id!);
        if (!quote) throw new ApiError('QUOTE_NOT_FOUND', { quoteId: params.id! });
        return { body: { data: toQuoteRecord(quote, await context.reference()) } };
      },
    }),
  ];
}
