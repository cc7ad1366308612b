/**
 * Settlement: an EXECUTED trade whose sell side the org has funded becomes SETTLED and gives
 * back the credit it held. The trade moved the balances when it executed, so settling posts no
 * ledger movement; it only closes the trade's claim on the credit line.
 *
 * Funded means the org's client balance in the sold currency is not negative: every trade that
 * sold that currency is covered at once by the deposits and purchases in it. When it is
 * negative, TRADE_SETTLEMENT_UNFUNDED reports
 * - requiredAmount: what the org must still deposit in that currency (minus the balance), and
 * - availableAmount: what it holds in that currency, never below 0 (so always 0 here: a negative
 *   balance holds nothing), the same floor the balances endpoint applies to withdrawable,
 * both with the currency's decimals.
 */
import type { Queryable } from '../../lib/db/database.js';
import { ApiError } from '../../lib/errors/api-error.js';
import { idToLegacyUuid } from '../../lib/ids.js';
import { Decimal, formatToDecimals, parseDecimal } from '../../lib/money.js';
import type { Principal } from '../principal.js';
import { releaseCredit, type TradeRow } from './trades.js';
import { type TradingContext, transactionWithReference } from './trading-context.js';

/**
 * The trade, locked for a status change until the transaction ends, or null. FOR NO KEY UPDATE,
 * not FOR UPDATE: inserting a reversal takes a KEY SHARE lock on its original (the foreign key),
 * which FOR UPDATE would wait for, deadlocking two racing reversals; NO KEY UPDATE does not
 * conflict with it and still serialises every status change of the trade.
 */
export async function lockTradeForTransition(
  tx: Queryable,
  principal: Principal,
  tradeId: string,
): Promise<TradeRow | null> {
  if (idToLegacyUuid('trade', tradeId) === null) return null;
  const { rows } = await tx.query<TradeRow>(
    'SELECT t.*, NULL::text AS sell_balance FROM trades t WHERE t.id = $1 AND t.org_id = $2 AND t.environment = $3 FOR NO KEY UPDATE',
    [tradeId, principal.orgId, principal.environment],
  );
  return rows[0] ?? null;
}

/** The org's client balance in one currency; no account yet is a balance of 0. */
async function clientBalance(tx: Queryable, trade: TradeRow): Promise<Decimal> {
  const { rows } = await tx.query<{ balance: string }>(
    `SELECT balance::text AS balance FROM ledger_accounts
      WHERE org_id = $1 AND environment = $2 AND kind = 'client' AND currency = $3`,
    [trade.org_id, trade.environment, trade.sell_currency],
  );
  return rows[0] ? parseDecimal(rows[0].balance) : new Decimal(0);
}

function assertSettleable(trade: TradeRow): void {
  if (trade.status === 'SETTLED') throw new ApiError('TRADE_ALREADY_SETTLED', { tradeId: trade.id });
  if (trade.status !== 'EXECUTED')
    throw new ApiError('TRADE_NOT_SETTLEABLE', { tradeId: trade.id, status: trade.status });
}

/** Settles the trade (see the top of this file) and returns its updated row. */
export async function settleTrade(context: TradingContext, principal: Principal, tradeId: string): Promise<TradeRow> {
  const settled = await transactionWithReference(context, async (tx, { currencies }) => {
    const trade = await lockTradeForTransition(tx, principal, tradeId);
    if (!trade) throw new ApiError('TRADE_NOT_FOUND', { tradeId });
    assertSettleable(trade);
    // Read after the lock: a reversal or another settlement of this trade has committed by now.
    const balance = await clientBalance(tx, trade);
    if (balance.isNegative()) {
      const places = currencies.get(trade.sell_currency)!.decimals;
      throw new ApiError('TRADE_SETTLEMENT_UNFUNDED', {
        requiredAmount: formatToDecimals(balance.negated(), places, Decimal.ROUND_UP),
        availableAmount: formatToDecimals(new Decimal(0), places),
        currency: trade.sell_currency,
      });
    }
    const now = context.now();
    const { rows } = await tx.query<TradeRow>(
      "UPDATE trades SET status = 'SETTLED', settled_at = $2, updated_at = $2 WHERE id = $1 RETURNING *",
      [trade.id, now],
    );
    await releaseCredit(tx, trade);
    return rows[0]!;
  });
  context.metrics?.trade('settled');
  return settled;
}
