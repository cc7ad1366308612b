/**
 * What happens to a trade after execution: POST /v3/fx/trades/{id}/reverse-quote (a quote to undo
 * it), POST /v3/fx/trades/{id}/reverse (undo it with that quote) and POST /v3/fx/trades/{id}/settle
 * (close it once its sell side is funded). Rules live in trading/reversals.ts and settlements.ts.
 */
import { z } from 'zod';

import type { ErrorCode } from '../../lib/errors/v3-error-catalog.js';
import { defineOperation } from '../http/operation.js';
import { quoteRecordSchema } from '../trading/quotes.js';
import { createReverseQuote, reversalDetails, reversalDetailsSchema, reverseTrade } from '../trading/reversals.js';
import { settleTrade } from '../trading/settlements.js';
import { findTrade, toTradeRecord, tradeRecordSchema } from '../trading/trades.js';
import { DEFAULT_QUOTE_VALIDITY, quoteValiditySchema, type TradingContext } from '../trading/trading-context.js';
import { dataOf } from '../wire-types.js';
import { PRICING_ERRORS } from './quotes.js';
import { namingFailedResource } from './record-routes.js';
import { QUOTE_USE_ERRORS, quoteUseSchema } from './trades.js';

/** The body is optional: no body (or `{}`) asks for the default validity, as for quotes. */
const reverseQuoteSchema = z
  .strictObject({
    validForSeconds: quoteValiditySchema,
  })
  .optional();

/** Why a trade cannot be reversed: asking for its reverse quote and reversing it refuse alike. */
const REVERSAL_ERRORS = [
  'TRADE_NOT_FOUND',
  'TRADE_NOT_REVERSIBLE',
  'TRADE_ALREADY_REVERSED',
  'TRADE_ALREADY_SETTLED',
  'TRADE_REVERSAL_WINDOW_CLOSED',
] as const satisfies readonly ErrorCode[];

export function tradeLifecycleOperations(context: TradingContext) {
  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/trades/:id/reverse-quote',
      scope: 'trade',
      summary: 'Request a quote that reverses a trade',
      response: dataOf(quoteRecordSchema),
      errors: [...REVERSAL_ERRORS, ...PRICING_ERRORS],
      body: reverseQuoteSchema,
      async handle({ principal, params, body }) {
        const validForSeconds = body?.validForSeconds ?? DEFAULT_QUOTE_VALIDITY;
        return { body: { data: await createReverseQuote(context, principal, params.id!, validForSeconds) } };
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/trades/:id/reverse',
      scope: 'trade',
      summary: 'Reverse a trade with its reverse quote',
      response: dataOf(z.object({ trade: tradeRecordSchema, reversalDetails: reversalDetailsSchema })),
      errors: [...REVERSAL_ERRORS, ...QUOTE_USE_ERRORS, 'TRADE_EXECUTION_FAILED'],
      body: quoteUseSchema,
      async handle({ principal, params, body, idempotency, setResourceId }) {
        const { original, reversal } = await namingFailedResource(
          reverseTrade(context, principal, params.id!, { ...body, idempotency: idempotency! }),
          'TRADE_EXECUTION_FAILED',
          setResourceId,
        );
        setResourceId(reversal.id);
        const reference = await context.reference();
        // Re-read after commit: the settlement stage comes from the joined balance.
        const fresh = (await findTrade(context.db, principal, reversal.id))!;
        return {
          body: {
            data: {
              trade: toTradeRecord(fresh, reference),
              reversalDetails: reversalDetails(original, reversal, reference),
            },
          },
        };
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/trades/:id/settle',
      scope: 'trade',
      summary: 'Settle a funded trade',
      response: dataOf(tradeRecordSchema),
      errors: ['TRADE_NOT_FOUND', 'TRADE_ALREADY_SETTLED', 'TRADE_NOT_SETTLEABLE', 'TRADE_SETTLEMENT_UNFUNDED'],
      async handle({ principal, params, setResourceId }) {
        // A 500 names the trade, so the client can read its status before retrying
        // (docs/contract.md#errors-recovery).
        setResourceId(params.id!);
        const settled = await settleTrade(context, principal, params.id!);
        const fresh = (await findTrade(context.db, principal, settled.id))!;
        return { body: { data: toTradeRecord(fresh, await context.reference()) } };
      },
    }),
  ];
}
