/**
 * Reversal: undoing an EXECUTED trade inside its reversal window with a reverse quote. The
 * reverse quote buys back the original's sell currency with exactly the amount the original
 * bought, at the rate of the moment; executing it makes a new trade with status REVERSED and
 * originalTradeId, moves the ledger back, and marks the original REVERSED (reversedByTradeId)
 * in the same transaction, releasing the credit the original held.
 *
 * Reversibility, checked in this order, when quoting and again when reversing (once before and
 * once inside the transaction with the original locked, so two racing reversals cannot both pass):
 * - the trade is itself a reversal → TRADE_NOT_REVERSIBLE;
 * - it has been reversed → TRADE_ALREADY_REVERSED;
 * - it has been settled → TRADE_ALREADY_SETTLED;
 * - the window [createdAt, createdAt + reversalWindowMs) has passed → TRADE_REVERSAL_WINDOW_CLOSED.
 */
import { z } from 'zod';

import type { Queryable } from '../../lib/db/database.js';
import { ApiError, isApiError } from '../../lib/errors/api-error.js';
import { formatToDecimals, parseDecimal } from '../../lib/money.js';
import type { Principal } from '../principal.js';
import { currencyCode, decimalString } from '../wire-types.js';
import { reversalDifferential } from './pricing.js';
import { createQuote, type QuoteRecord } from './quotes.js';
import type { ReferenceSnapshot } from './reference-data.js';
import { lockTradeForTransition } from './settlements.js';
import { executeTrade, type ExecuteTradeInput, findTrade, releaseCredit, type TradeRow } from './trades.js';
import type { TradingContext } from './trading-context.js';

/** What a reversal moved (docs/contract.md#resources-reversal-details), as reversalDetails writes it. */
export const reversalDetailsSchema = z
  .object({
    direction: z.enum(['CREDIT', 'DEBIT']).meta({
      description:
        "CREDIT when the reversal returns strictly more of the original's sell currency than the original sold.",
    }),
    differentialAmount: decimalString.meta({ description: 'The difference, unsigned, in currency with its decimals.' }),
    currency: currencyCode.meta({ description: "The original's sell currency: the one the reversal buys back." }),
  })
  .meta({ id: 'ReversalDetails', description: 'What a reversal moved, answered once beside the reversal trade.' });

export type ReversalDetails = Readonly<z.output<typeof reversalDetailsSchema>>;

/** Throws the reason the trade cannot be reversed at `at`, if there is one (order at the top). */
export function assertReversible(trade: TradeRow, at: Date, windowMs: number): void {
  if (trade.original_trade_id !== null)
    throw new ApiError('TRADE_NOT_REVERSIBLE', { tradeId: trade.id, status: trade.status });
  if (trade.reversed_by_trade_id !== null) {
    throw new ApiError('TRADE_ALREADY_REVERSED', { tradeId: trade.id, reversedByTradeId: trade.reversed_by_trade_id });
  }
  if (trade.status === 'SETTLED') throw new ApiError('TRADE_ALREADY_SETTLED', { tradeId: trade.id });
  // Unreachable while every REVERSED original names its reversal; kept so no other state slips through.
  if (trade.status !== 'EXECUTED')
    throw new ApiError('TRADE_NOT_REVERSIBLE', { tradeId: trade.id, status: trade.status });
  const windowEnd = trade.created_at.getTime() + windowMs;
  if (at.getTime() >= windowEnd) {
    throw new ApiError('TRADE_REVERSAL_WINDOW_CLOSED', {
      tradeId: trade.id,
      windowEndedAt: new Date(windowEnd).toISOString(),
    });
  }
}

async function findOrFail(db: Queryable, principal: Principal, tradeId: string): Promise<TradeRow> {
  const trade = await findTrade(db, principal, tradeId);
  if (!trade) throw new ApiError('TRADE_NOT_FOUND', { tradeId });
  return trade;
}

/**
 * A reverse quote for the trade: buys the original's sell currency and sells its buy currency,
 * for exactly the amount the original bought (the org sells back what it bought). Its pair
 * limits and the org's trading settings apply as to any quote.
 */
export async function createReverseQuote(
  context: TradingContext,
  principal: Principal,
  tradeId: string,
  validForSeconds: number,
): Promise<QuoteRecord> {
  const trade = await findOrFail(context.db, principal, tradeId);
  assertReversible(trade, context.now(), context.reversalWindowMs);
  const { currencies } = await context.reference();
  const amount = formatToDecimals(parseDecimal(trade.buy_amount), currencies.get(trade.buy_currency)!.decimals);
  return createQuote(
    context,
    principal,
    {
      buyCurrency: trade.sell_currency,
      sellCurrency: trade.buy_currency,
      amount,
      amountCurrency: trade.buy_currency,
      validForSeconds,
    },
    { reversesTradeId: trade.id },
  );
}

/**
 * True when the trade was reversed by a request with this Idempotency-Key: that request is being
 * retried, and executeTrade replays its reversal instead of this module refusing it as reversed.
 */
async function reversedWithKey(db: Queryable, trade: TradeRow, key: string): Promise<boolean> {
  if (trade.reversed_by_trade_id === null) return false;
  const { rows } = await db.query<{ idempotency_key: string }>('SELECT idempotency_key FROM trades WHERE id = $1', [
    trade.reversed_by_trade_id,
  ]);
  return rows[0]?.idempotency_key === key;
}

export type ReverseTradeInput = Omit<ExecuteTradeInput, 'reverses'>;

/** Reverses the trade with the reverse quote; returns the original (as read first) and the new REVERSED trade. */
export async function reverseTrade(
  context: TradingContext,
  principal: Principal,
  tradeId: string,
  input: ReverseTradeInput,
): Promise<{ original: TradeRow; reversal: TradeRow }> {
  const original = await findOrFail(context.db, principal, tradeId);
  if (!(await reversedWithKey(context.db, original, input.idempotency.key))) {
    assertReversible(original, context.now(), context.reversalWindowMs);
  }
  try {
    const reversal = await executeTrade(
      context,
      principal,
      { ...input, reverses: original },
      {
        inTransaction: async (tx, created) => {
          // The check that counts: a racing reversal or settlement of the original has committed
          // or waits behind this lock, and the window is judged at the reversal's own instant.
          const locked = await lockTradeForTransition(tx, principal, original.id);
          if (!locked) throw new Error(`trade ${original.id} vanished during its reversal`);
          assertReversible(locked, created.created_at, context.reversalWindowMs);
          await tx.query(
            "UPDATE trades SET status = 'REVERSED', reversed_by_trade_id = $2, updated_at = $3 WHERE id = $1",
            [locked.id, created.id, created.created_at],
          );
          await releaseCredit(tx, locked);
        },
      },
    );
    return { original, reversal };
  } catch (error) {
    // Two reversals racing with the same quote: the loser finds the quote used by the winner.
    // The useful answer is that the trade is reversed, which is what the client was attempting.
    if (isApiError(error) && error.code === 'QUOTE_ALREADY_USED') {
      const latest = await findTrade(context.db, principal, tradeId);
      if (latest?.reversed_by_trade_id)
        throw new ApiError('TRADE_ALREADY_REVERSED', { tradeId, reversedByTradeId: latest.reversed_by_trade_id });
    }
    throw error;
  }
}

/** What the rate moved between the original and its reversal, in the original's sell currency. */
export function reversalDetails(original: TradeRow, reversal: TradeRow, reference: ReferenceSnapshot): ReversalDetails {
  const differential = reversalDifferential(
    { sellAmount: parseDecimal(original.sell_amount) },
    { buyAmount: parseDecimal(reversal.buy_amount) },
  );
  return {
    direction: differential.direction,
    differentialAmount: formatToDecimals(
      differential.differentialAmount,
      reference.currencies.get(original.sell_currency)!.decimals,
    ),
    currency: original.sell_currency,
  };
}
