/**
 * Trades: POST /v3/fx/trades (execute a quote), GET /v3/fx/trades (cursor list, newest first,
 * filters status and currency) and GET /v3/fx/trades/{id}.
 */
import { z } from 'zod';

import { ApiError } from '../../lib/errors/api-error.js';
import { failpoint } from '../../lib/failpoints.js';
import { defineOperation } from '../http/operation.js';
import type { CursorCodec } from '../pagination/cursor-codec.js';
import { cursorScope } from '../pagination/cursor-codec.js';
import { cursorQuerySchema } from '../pagination/cursor-query.js';
import { cursorPageOf, paginate } from '../pagination/paginate.js';
import {
  executeTrade,
  findTrade,
  toTradeRecord,
  TRADE_SELECT,
  tradeRecordSchema,
  type TradeRow,
} from '../trading/trades.js';
import type { TradingContext } from '../trading/trading-context.js';
import { dataOf } from '../wire-types.js';

/** Client metadata: at most 20 keys of up to 40 characters, string values up to 500. */
export const metadataSchema = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((value) => Object.keys(value).length <= 20, 'at most 20 keys');

const executeSchema = z.strictObject({
  quoteId: z.string().min(1).max(64),
  clientReferenceId: z.string().min(1).max(128).optional(),
  metadata: metadataSchema.optional(),
});

const listQuerySchema = cursorQuerySchema({
  status: z.enum(['EXECUTED', 'SETTLED', 'REVERSED']).optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3,5}$/)
    .optional(),
});

export function tradeOperations(context: TradingContext, cursors: CursorCodec) {
  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/trades',
      scope: 'trade',
      summary: 'Execute a quote',
      response: dataOf(tradeRecordSchema),
      errors: [
        'QUOTE_NOT_FOUND',
        'QUOTE_EXPIRED',
        'QUOTE_ALREADY_USED',
        'REVERSE_QUOTE_INVALID',
        'TRADE_DISABLED',
        'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT',
        'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT',
        'TRADE_CREDIT_LIMIT_EXCEEDED',
        'TRADE_EXECUTION_FAILED',
      ],
      body: executeSchema,
      async handle({ principal, body, idempotency, setResourceId }) {
        const trade = await executeTrade(context, principal, { ...body, idempotency: idempotency! }).catch(
          (error: unknown) => {
            if (error instanceof ApiError && error.code === 'TRADE_EXECUTION_FAILED')
              setResourceId(String(error.details.resourceId));
            throw error;
          },
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
    defineOperation({
      method: 'GET',
      path: '/v3/fx/trades',
      scope: 'view',
      summary: 'List trades, newest first',
      response: cursorPageOf(tradeRecordSchema),
      query: listQuerySchema,
      async handle({ principal, query }) {
        const reference = await context.reference();
        const page = await paginate<TradeRow, ReturnType<typeof toTradeRecord>>(context.db, {
          from: `(${TRADE_SELECT}) AS listed`,
          where: {
            sql: 'org_id = $1 AND environment = $2 AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR $4 IN (buy_currency, sell_currency))',
            params: [principal.orgId, principal.environment, query.status ?? null, query.currency ?? null],
          },
          scope: cursorScope('trades', principal.orgId, principal.environment, {
            status: query.status,
            currency: query.currency,
          }),
          query,
          codec: cursors,
          toRecord: (row) => toTradeRecord(row, reference),
        });
        return { body: { data: page.data, pagination: page.pagination } };
      },
    }),
    defineOperation({
      method: 'GET',
      path: '/v3/fx/trades/:id',
      scope: 'view',
      summary: 'Retrieve a trade',
      response: dataOf(tradeRecordSchema),
      errors: ['TRADE_NOT_FOUND'],
      async handle({ principal, params }) {
        const trade = await findTrade(context.db, principal, params.id!);
        if (!trade) throw new ApiError('TRADE_NOT_FOUND', { tradeId: params.id! });
        return { body: { data: toTradeRecord(trade, await context.reference()) } };
      },
    }),
  ];
}
