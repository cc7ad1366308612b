/**
 * Trades: a quote executed, exactly once. One SQL transaction claims the quote and inserts the
 * trade (one statement), posts its ledger movement and reserves the trade's USD value on the
 * credit line with a conditional update (so racing trades cannot both take the last of the
 * line). The trade row carries the Idempotency-Key under a unique constraint, so a retry whose
 * record the idempotency store lost finds the trade instead of making a second one.
 */
import type { Mode } from '../../lib/auth/credentials.js';
import type { Queryable } from '../../lib/db/database.js';
import { ApiError, isApiError } from '../../lib/errors/api-error.js';
import { failpoint } from '../../lib/failpoints.js';
import { idToLegacyUuid, newId } from '../../lib/ids.js';
import { Decimal, formatDecimal, formatToDecimals, parseDecimal } from '../../lib/money.js';
import type { Principal } from '../http/request-state.js';
import { postMovement } from '../ledger/ledger.js';
import { assertTradingAllowed, readOrgBook } from './org-books.js';
import type { ReferenceSnapshot } from './reference-data.js';
import type { TradingContext } from './trading-context.js';
import { replayOrMismatch } from '../http/idempotency.js';
import { isUniqueViolation } from '../../lib/db/constraint-errors.js';

export type TradeStatus = 'EXECUTED' | 'SETTLED' | 'REVERSED';
/**
 * Where an executed trade stands on its way to settlement: AWAITING_FUNDING while the org's
 * balance in the sold currency is negative, FUNDED once it is not (settle may then run),
 * SETTLED after settlement, CLOSED for both trades of a reversal.
 */
export type SettlementStage = 'AWAITING_FUNDING' | 'FUNDED' | 'SETTLED' | 'CLOSED';

export interface TradeRow {
  id: string;
  org_id: string;
  environment: Mode;
  quote_id: string;
  idempotency_key: string;
  request_fingerprint: string;
  buy_currency: string;
  sell_currency: string;
  buy_amount: string;
  sell_amount: string;
  referenced_currency: string;
  referenced_amount: string;
  rate: string;
  sell_usd_value: string;
  status: TradeStatus;
  client_reference_id: string | null;
  original_trade_id: string | null;
  reversed_by_trade_id: string | null;
  source: string;
  actor_id: string;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
  settled_at: Date | null;
  /** Joined: the org's client balance in the sold currency (null before its first movement). */
  sell_balance?: string | null;
}

export interface TradeRecord {
  readonly object: 'trade';
  readonly id: string;
  readonly quoteId: string;
  readonly buyCurrency: string;
  readonly sellCurrency: string;
  readonly buyAmount: string;
  readonly sellAmount: string;
  readonly referencedCurrency: string;
  readonly referencedAmount: string;
  readonly rate: string;
  readonly status: TradeStatus;
  readonly settlementStage: SettlementStage;
  readonly clientReferenceId: string | null;
  readonly originalTradeId: string | null;
  readonly reversedByTradeId: string | null;
  readonly source: string;
  readonly actorId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly settledAt: string | null;
  readonly metadata: Record<string, string>;
}

/** Selects trades with the balance their settlement stage depends on. */
export const TRADE_SELECT = `SELECT t.*, b.balance::text AS sell_balance
  FROM trades t
  LEFT JOIN ledger_accounts b ON b.org_id = t.org_id AND b.environment = t.environment AND b.kind = 'client' AND b.currency = t.sell_currency`;

export function settlementStage(row: Pick<TradeRow, 'status' | 'sell_balance'>): SettlementStage {
  if (row.status === 'SETTLED') return 'SETTLED';
  if (row.status === 'REVERSED') return 'CLOSED';
  return row.sell_balance !== null && row.sell_balance !== undefined && !new Decimal(row.sell_balance).isNegative() ? 'FUNDED' : 'AWAITING_FUNDING';
}

export function toTradeRecord(row: TradeRow, reference: ReferenceSnapshot): TradeRecord {
  const decimals = (code: string) => reference.currencies.get(code)!.decimals;
  return {
    object: 'trade',
    id: row.id,
    quoteId: row.quote_id,
    buyCurrency: row.buy_currency,
    sellCurrency: row.sell_currency,
    buyAmount: formatToDecimals(parseDecimal(row.buy_amount), decimals(row.buy_currency)),
    sellAmount: formatToDecimals(parseDecimal(row.sell_amount), decimals(row.sell_currency)),
    referencedCurrency: row.referenced_currency,
    referencedAmount: formatToDecimals(parseDecimal(row.referenced_amount), decimals(row.referenced_currency)),
    rate: formatDecimal(parseDecimal(row.rate)),
    status: row.status,
    settlementStage: settlementStage(row),
    clientReferenceId: row.client_reference_id,
    originalTradeId: row.original_trade_id,
    reversedByTradeId: row.reversed_by_trade_id,
    source: row.source,
    actorId: row.actor_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    settledAt: row.settled_at?.toISOString() ?? null,
    metadata: row.metadata,
  };
}

/** The acting user of an API key: keys act as users, `usr_` + the key id's hex. */
export function actorIdOf(principal: Principal): string {
  const keyId = principal.keyName.split('/').at(-1)!;
  return `usr_${keyId.replaceAll('-', '')}`;
}

export interface ExecuteTradeInput {
  readonly quoteId: string;
  readonly clientReferenceId?: string | undefined;
  readonly metadata?: Record<string, string> | undefined;
  readonly idempotency: { readonly key: string; readonly fingerprint: string };
  /** Set for a reversal: the trade this one reverses (the quote must be its reverse quote). */
  readonly reverses?: TradeRow;
}

/** The trade an earlier attempt with this Idempotency-Key made, if any. */
async function findByIdempotencyKey(db: Queryable, principal: Principal, key: string): Promise<TradeRow | null> {
  const { rows } = await db.query<TradeRow>(`${TRADE_SELECT} WHERE t.org_id = $1 AND t.environment = $2 AND t.idempotency_key = $3`, [
    principal.orgId,
    principal.environment,
    key,
  ]);
  return rows[0] ?? null;
}

/** What the claiming statement returns: the new trade, with what the checks after it need of its quote and book. */
interface ClaimedTradeRow extends TradeRow, TradingPermissionsRow {
  quote_expires_at: Date;
  quote_reverses_trade_id: string | null;
}

interface TradingPermissionsRow {
  trading_enabled: boolean;
  disabled_currencies: string[];
  disabled_pairs: string[];
}

/**
 * Claims the quote and inserts its trade, in one statement: the UPDATE takes the quote only if
 * no trade has claimed it (under READ COMMITTED, one that waited for a racing claim re-checks
 * that on the committed row, so a quote is executed at most once), and the INSERT copies its
 * terms. Nothing is returned when the quote is not this book's or is already claimed. The
 * checks on the quote and book run on the answer; a refusal then rolls the claim back.
 */
async function claimQuoteAsTrade(
  tx: Queryable,
  principal: Principal,
  input: ExecuteTradeInput,
  tradeId: string,
  now: Date,
): Promise<ClaimedTradeRow | null> {
  const { rows } = await tx.query<ClaimedTradeRow>(
    `WITH claimed AS (
       UPDATE quotes q SET used_by_trade_id = $1
         FROM org_environments b
        WHERE q.id = $4 AND q.org_id = $2 AND q.environment = $3 AND q.used_by_trade_id IS NULL
          AND b.org_id = q.org_id AND b.environment = q.environment
       RETURNING q.*, b.trading_enabled, b.disabled_currencies, b.disabled_pairs
     ),
     inserted AS (
       INSERT INTO trades (id, org_id, environment, quote_id, idempotency_key, request_fingerprint, buy_currency, sell_currency,
                           buy_amount, sell_amount, referenced_currency, referenced_amount, rate, sell_usd_value, status,
                           client_reference_id, original_trade_id, source, actor_id, metadata, created_at, updated_at)
       SELECT $1, org_id, environment, id, $5, $6, buy_currency, sell_currency,
              buy_amount, sell_amount, amount_currency, CASE WHEN amount_currency = buy_currency THEN buy_amount ELSE sell_amount END,
              rate, sell_usd_value, $7, $8, $9, 'API', $10, $11, $12, $12
         FROM claimed
       RETURNING *
     )
     SELECT inserted.*, claimed.expires_at AS quote_expires_at, claimed.reverses_trade_id AS quote_reverses_trade_id,
            claimed.trading_enabled, claimed.disabled_currencies, claimed.disabled_pairs
       FROM inserted CROSS JOIN claimed`,
    [
      tradeId,
      principal.orgId,
      principal.environment,
      input.quoteId,
      input.idempotency.key,
      input.idempotency.fingerprint,
      input.reverses ? 'REVERSED' : 'EXECUTED',
      input.clientReferenceId ?? null,
      input.reverses?.id ?? null,
      actorIdOf(principal),
      JSON.stringify(input.metadata ?? {}),
      now,
    ],
  );
  return rows[0] ?? null;
}

/**
 * Why the quote could not be claimed: it is not this book's (or does not exist), or a trade has
 * it. When that trade was made with this same Idempotency-Key (two attempts got past a store
 * that had lost the key, and the other won), it is this request's answer.
 */
async function unclaimableQuote(tx: Queryable, principal: Principal, input: ExecuteTradeInput): Promise<TradeRow> {
  const { rows } = await tx.query<{ used_by_trade_id: string | null; idempotency_key: string | null }>(
    `SELECT q.used_by_trade_id, t.idempotency_key
       FROM quotes q LEFT JOIN trades t ON t.id = q.used_by_trade_id
      WHERE q.id = $1 AND q.org_id = $2 AND q.environment = $3`,
    [input.quoteId, principal.orgId, principal.environment],
  );
  const quote = rows[0];
  if (!quote) throw new ApiError('QUOTE_NOT_FOUND', { quoteId: input.quoteId });
  if (quote.idempotency_key === input.idempotency.key) {
    const winner = await findByIdempotencyKey(tx, principal, input.idempotency.key);
    if (winner) return replayOrMismatch(winner, input.idempotency.fingerprint);
  }
  throw new ApiError('QUOTE_ALREADY_USED', { quoteId: input.quoteId, tradeId: quote.used_by_trade_id ?? '' });
}

function checkQuoteUsable(trade: ClaimedTradeRow, now: Date, reverses: TradeRow | undefined): void {
  const quoteReverses = trade.quote_reverses_trade_id;
  if (reverses ? quoteReverses !== reverses.id : quoteReverses !== null) {
    throw new ApiError('REVERSE_QUOTE_INVALID', { quoteId: trade.quote_id, tradeId: reverses?.id ?? quoteReverses ?? '' });
  }
  if (trade.quote_expires_at.getTime() <= now.getTime()) {
    throw new ApiError('QUOTE_EXPIRED', { quoteId: trade.quote_id, expiredAt: trade.quote_expires_at.toISOString() });
  }
}

/** The trade row of a claimed trade, without what the claim added about its quote and book. */
function tradeRowOf(claimed: ClaimedTradeRow, sellBalance: Decimal | undefined): TradeRow {
  const {
    quote_expires_at: _expiresAt,
    quote_reverses_trade_id: _reverses,
    trading_enabled: _enabled,
    disabled_currencies: _currencies,
    disabled_pairs: _pairs,
    ...trade
  } = claimed;
  return { ...trade, sell_balance: sellBalance?.toFixed() ?? null };
}

/**
 * Executes the quote as a trade (or, with `reverses`, as the reversal of that trade) and
 * returns the trade row, with the sell balance its settlement stage depends on. Business
 * refusals are ApiErrors; anything unexpected after the write began is TRADE_EXECUTION_FAILED
 * naming the trade id, so the client can check and retry.
 *
 * The happy path is five round trips: BEGIN, claim and insert, ledger movement, credit, COMMIT.
 * An earlier trade with this Idempotency-Key (a retry whose store record was lost) is found
 * where it shows: as the quote's claimant, as a unique violation of the key, or, before any
 * refusal is answered, by a look-up; so a retry is replayed (or is a mismatch) before it can be
 * refused for what its first attempt did.
 */
export async function executeTrade(
  context: TradingContext,
  principal: Principal,
  input: ExecuteTradeInput,
  hooks: { readonly inTransaction?: (tx: Queryable, trade: TradeRow) => Promise<void> } = {},
): Promise<TradeRow> {
  const now = context.now();
  const tradeId = newId('trade', now.getTime());
  try {
    return await context.db.transaction(async (tx) => {
      const claimed = await claimQuoteAsTrade(tx, principal, input, tradeId, now);
      if (!claimed) return unclaimableQuote(tx, principal, input);
      checkQuoteUsable(claimed, now, input.reverses);
      assertTradingAllowed(
        { tradingEnabled: claimed.trading_enabled, disabledCurrencies: claimed.disabled_currencies, disabledPairs: claimed.disabled_pairs },
        claimed.buy_currency,
        claimed.sell_currency,
      );
      failpoint('trade.after-insert');
      // The rows every trade of this book contends on (its accounts, its credit) are touched
      // last, so they stay locked only for the last statements and the commit.
      const movement = await postMovement(tx, {
        orgId: principal.orgId,
        environment: principal.environment,
        kind: input.reverses ? 'reversal' : 'trade',
        referenceId: claimed.id,
        at: now,
        postings: tradePostings(claimed),
      });
      failpoint('trade.after-ledger');
      // A reversal closes a position: it commits no credit of its own.
      if (!input.reverses) await reserveCredit(tx, principal, parseDecimal(claimed.sell_usd_value));
      failpoint('trade.after-credit');
      const sellBalance = movement.balances.find((entry) => entry.account === 'client' && entry.currency === claimed.sell_currency)?.balance;
      const trade = tradeRowOf(claimed, sellBalance);
      await hooks.inTransaction?.(tx, trade);
      return trade;
    });
  } catch (error) {
    if (isApiError(error)) {
      if (error.code === 'IDEMPOTENCY_MISMATCH') throw error;
      // A refusal of a retry must not hide what its first attempt did.
      const earlier = await findByIdempotencyKey(context.db, principal, input.idempotency.key).catch(() => null);
      if (earlier) return replayOrMismatch(earlier, input.idempotency.fingerprint);
      throw error;
    }
    if (isUniqueViolation(error, 'idempotency_key')) {
      // An earlier or concurrent attempt with the same key has its trade (its store record was lost).
      const winner = await findByIdempotencyKey(context.db, principal, input.idempotency.key);
      if (winner) return replayOrMismatch(winner, input.idempotency.fingerprint);
    }
    throw new ApiError('TRADE_EXECUTION_FAILED', { resourceId: tradeId }, { cause: error });
  }
}

/** The org receives what it bought and pays what it sold; the house's liquidity is the other side. */
function tradePostings(trade: TradeRow) {
  const bought = parseDecimal(trade.buy_amount);
  const sold = parseDecimal(trade.sell_amount);
  return [
    { account: 'client' as const, currency: trade.buy_currency, amount: bought },
    { account: 'liquidity' as const, currency: trade.buy_currency, amount: bought.negated() },
    { account: 'client' as const, currency: trade.sell_currency, amount: sold.negated() },
    { account: 'liquidity' as const, currency: trade.sell_currency, amount: sold },
  ];
}

/**
 * Adds the trade's USD value to the book's committed amount, only if it stays within the credit
 * line. The row lock of the UPDATE serialises trades of one book; under READ COMMITTED the
 * condition is re-evaluated on the latest row, so the line is never overdrawn.
 */
async function reserveCredit(tx: Queryable, principal: Principal, amountUsd: Decimal): Promise<void> {
  const { rowCount } = await tx.query(
    `UPDATE org_environments SET committed_usd = committed_usd + $3::numeric, updated_at = now()
      WHERE org_id = $1 AND environment = $2 AND committed_usd + $3::numeric <= credit_line_usd`,
    [principal.orgId, principal.environment, formatDecimal(amountUsd)],
  );
  if (rowCount === 1) return;
  const book = await readOrgBook(tx, principal.orgId, principal.environment);
  throw new ApiError('TRADE_CREDIT_LIMIT_EXCEEDED', {
    creditLine: formatToDecimals(book!.creditLineUsd, 2),
    committedAmount: formatToDecimals(book!.committedUsd, 2),
    requiredAmount: formatToDecimals(amountUsd, 2),
    currency: 'USD',
  });
}

/**
 * Releases a trade's committed credit (settlement, reversal). No clamping at zero: releasing
 * twice must fail on the committed_usd >= 0 check, not hide the drift.
 */
export async function releaseCredit(tx: Queryable, trade: TradeRow): Promise<void> {
  await tx.query(
    `UPDATE org_environments SET committed_usd = committed_usd - $3::numeric, updated_at = now()
      WHERE org_id = $1 AND environment = $2`,
    [trade.org_id, trade.environment, trade.sell_usd_value],
  );
}

export async function findTrade(db: Queryable, principal: Principal, tradeId: string): Promise<TradeRow | null> {
  // A malformed id names no trade; it is not a validation error (404 never reveals anything).
  if (idToLegacyUuid('trade', tradeId) === null) return null;
  const { rows } = await db.query<TradeRow>(`${TRADE_SELECT} WHERE t.id = $1 AND t.org_id = $2 AND t.environment = $3`, [
    tradeId,
    principal.orgId,
    principal.environment,
  ]);
  return rows[0] ?? null;
}
