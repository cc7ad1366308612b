/**
 * Trades: POST /v3/fx/trades (execute a quote), GET /v3/fx/trades (cursor list, newest first,
 * filters status and currency) and GET /v3/fx/trades/{id}.
 */
import { z } from 'zod';

import { ApiError } from '../../lib/errors/api-error.js';
import type { ErrorCode } from '../../lib/errors/v3-error-catalog.js';
import { failpoint } from '../../lib/failpoints.js';
import { defineOperation } from '../http/operation.js';
import type { CursorCodec } from '../pagination/cursor-codec.js';
import {
  executeTrade,
  findTrade,
  toTradeRecord,
  TRADE_SELECT,
  type TradeRecord,
  tradeRecordSchema,
  type TradeRow,
} from '../trading/trades.js';
import type { TradingContext } from '../trading/trading-context.js';
import { dataOf } from '../wire-types.js';
import {
  namingFailedResource,
  type RecordKind,
  retrieveOperation,
  statusCurrencyListOperation,
} from './record-routes.js';

/** Client metadata: at most 20 keys of up to 40 characters, string values up to 500. */
export const metadataSchema = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((value) => Object.keys(value).length <= 20, 'at most 20 keys');

/** What using a quote may refuse, whether it executes a trade or reverses one. */
export const QUOTE_USE_ERRORS = [
  'QUOTE_NOT_FOUND',
  'QUOTE_EXPIRED',
  'QUOTE_ALREADY_USED',
  'REVERSE_QUOTE_INVALID',
  'TRADE_DISABLED',
  'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT',
  'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT',
] as const satisfies readonly ErrorCode[];

/** The body of a write that uses a quote: executing one, or reversing a trade with its reverse quote. */
export const quoteUseSchema = z.strictObject({
  quoteId: z.string().min(1).max(64),
  clientReferenceId: z.string().min(1).max(128).optional(),
  metadata: metadataSchema.optional(),
});

const TRADE: RecordKind<TradeRow, TradeRecord> = {
  noun: 'trade',
  schema: tradeRecordSchema,
  find: findTrade,
  toRecord: toTradeRecord,
};

export function tradeOperations(context: TradingContext, cursors: CursorCodec) {
  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/trades',
      scope: 'trade',
      summary: 'Execute a quote',
      response: dataOf(tradeRecordSchema),
      errors: [...QUOTE_USE_ERRORS, 'TRADE_CREDIT_LIMIT_EXCEEDED', 'TRADE_EXECUTION_FAILED'],
      body: quoteUseSchema,
      async handle({ principal, body, idempotency, setResourceId }) {
        const trade = await namingFailedResource(
          executeTrade(context, principal, { ...body, idempotency: idempotency! }),
          'TRADE_EXECUTION_FAILED',
          setResourceId,
        );
        setResourceId(trade.id);
        try {
          failpoint('trade.after-commit');
          return { body: { data: toTradeRecord(trade, await context.reference()) } };
        } catch (error) {
          // The trade is committed; a failure while answering is still this write's 500, with
          // the id to fetch it by (docs/contract.md#errors-recovery), never a bare INTERNAL_ERROR
          // or a 503.
          throw new ApiError('TRADE_EXECUTION_FAILED', { resourceId: trade.id }, { cause: error });
        }
      },
    }),
    statusCurrencyListOperation(context, cursors, TRADE, ['EXECUTED', 'SETTLED', 'REVERSED'], {
      from: `(${TRADE_SELECT}) AS listed`,
      currencyMatch: '$4 IN (buy_currency, sell_currency)',
    }),
    retrieveOperation(context, TRADE, ['TRADE_NOT_FOUND'], (id) => new ApiError('TRADE_NOT_FOUND', { tradeId: id })),
  ];
}
