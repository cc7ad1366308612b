/**
 * Trades: a quote executed, exactly once. One SQL statement, the database function
 * fx_execute_trade (migration 0005), claims the quote and inserts the trade, posts its ledger
 * movement and reserves the trade's USD value on the credit line with a conditional update (so
 * racing trades cannot both take the last of the line), all in one transaction. The trade row
 * carries the Idempotency-Key under a unique constraint, so a retry whose record the idempotency
 * store lost finds the trade instead of making a second one.
 */
import { z } from 'zod';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Queryable } from '../../lib/db/database.js';
import { ApiError, isApiError } from '../../lib/errors/api-error.js';
import { takeArmedFailpoint } from '../../lib/failpoints.js';
import { idToLegacyUuid, newId } from '../../lib/ids.js';
import { Decimal, formatDecimal, formatToDecimals, parseDecimal } from '../../lib/money.js';
import { type BookSelect, rowInBook } from '../book-rows.js';
import { raceWinner, replayOrMismatch } from '../idempotent-rows.js';
import type { Principal } from '../principal.js';
import { statementRefusalOf } from '../statement-refusals.js';
import { currencyCode, decimalString, metadataRecord, timestamp, v3Id } from '../wire-types.js';
import { assertTradingAllowed } from './org-books.js';
import type { ReferenceSnapshot } from './reference-data.js';
import type { TradingContext } from './trading-context.js';

export const TRADE_STATUSES = ['EXECUTED', 'SETTLED', 'REVERSED'] as const;
export type TradeStatus = (typeof TRADE_STATUSES)[number];
/**
 * Where an executed trade stands on its way to settlement: AWAITING_FUNDING while the org's
 * balance in the sold currency is negative, FUNDED once it is not (settle may then run),
 * SETTLED after settlement, CLOSED for both trades of a reversal.
 */
export const SETTLEMENT_STAGES = ['AWAITING_FUNDING', 'FUNDED', 'SETTLED', 'CLOSED'] as const;
export type SettlementStage = (typeof SETTLEMENT_STAGES)[number];

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

/** The trade record (docs/contract.md#resources-trade), as toTradeRecord writes it. */
export const tradeRecordSchema = z
  .object({
    object: z.literal('trade'),
    id: v3Id('trade'),
    quoteId: v3Id('quote').meta({ description: 'The quote it executed.' }),
    buyCurrency: currencyCode,
    sellCurrency: currencyCode,
    buyAmount: decimalString.meta({ description: "The quote's buy amount." }),
    sellAmount: decimalString.meta({ description: "The quote's sell amount." }),
    referencedCurrency: currencyCode.meta({
      description: "The currency the amount was given in (the quote's amountCurrency).",
    }),
    referencedAmount: decimalString.meta({ description: 'The amount in referencedCurrency.' }),
    rate: decimalString.meta({ description: "The quote's rate." }),
    status: z.enum(TRADE_STATUSES),
    settlementStage: z.enum(SETTLEMENT_STAGES),
    clientReferenceId: z.string().nullable().meta({ description: 'As the client sent it.' }),
    originalTradeId: v3Id('trade').nullable().meta({ description: 'On a reversal trade: the trade it reversed.' }),
    reversedByTradeId: v3Id('trade').nullable().meta({ description: 'On a reversed trade: the reversal trade.' }),
    source: z.string().meta({ description: 'API.' }),
    actorId: v3Id('user').meta({ description: 'The user of the key that executed it.' }),
    createdAt: timestamp,
    updatedAt: timestamp,
    settledAt: timestamp.nullable(),
    metadata: metadataRecord,
  })
  .meta({ id: 'Trade', description: 'A quote executed, once.' });

export type TradeRecord = Readonly<z.output<typeof tradeRecordSchema>>;

/** Selects trades with the balance their settlement stage depends on. */
export const TRADE_SELECT = `SELECT t.*, b.balance::text AS sell_balance
  FROM trades t
  LEFT JOIN ledger_accounts b ON b.org_id = t.org_id AND b.environment = t.environment AND b.kind = 'client' AND b.currency = t.sell_currency`;
const TRADES: BookSelect = { select: TRADE_SELECT, alias: 't' };

export function settlementStage(row: Pick<TradeRow, 'status' | 'sell_balance'>): SettlementStage {
  if (row.status === 'SETTLED') return 'SETTLED';
  if (row.status === 'REVERSED') return 'CLOSED';
  return row.sell_balance !== null && row.sell_balance !== undefined && !new Decimal(row.sell_balance).isNegative()
    ? 'FUNDED'
    : 'AWAITING_FUNDING';
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
function findByIdempotencyKey(db: Queryable, principal: Principal, key: string): Promise<TradeRow | null> {
  return rowInBook<TradeRow>(db, TRADES, principal, 'idempotency_key', key);
}

/** The armed failpoints fx_execute_trade can fail at, one per step (tests only). */
const TRADE_FAILPOINTS = ['trade.after-insert', 'trade.after-ledger', 'trade.after-credit'] as const;

type TradeRefusalReason =
  'QUOTE_UNCLAIMABLE' | 'REVERSE_QUOTE_INVALID' | 'QUOTE_EXPIRED' | 'TRADING_NOT_ALLOWED' | 'CREDIT_LIMIT_EXCEEDED';

interface TradeRefusal {
  readonly reason: TradeRefusalReason;
  readonly facts: Readonly<Record<string, unknown>>;
}

/** A refusal of fx_execute_trade (migration 0005), or null for any other error. */
function tradeRefusalOf(error: unknown): TradeRefusal | null {
  const refusal = statementRefusalOf(error);
  if (!refusal) return null;
  return { reason: refusal.reason as TradeRefusalReason, facts: (refusal.facts ?? {}) as Record<string, unknown> };
}

/**
 * Runs fx_execute_trade: claims the quote, inserts the trade, checks the quote and the book,
 * posts the ledger movement and reserves credit, in one statement (migration 0005 says why and
 * how). Outside a transaction the statement is its own; inside one (a reversal) it joins it.
 */
async function runTradeStatement(
  db: Queryable,
  principal: Principal,
  input: ExecuteTradeInput,
  tradeId: string,
  now: Date,
): Promise<TradeRow> {
  const { rows } = await db.query<TradeRow>(
    `SELECT (r.trade).*, r.sell_balance::text AS sell_balance
       FROM fx_execute_trade($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13::text[], $14) AS r`,
    [
      tradeId,
      principal.orgId,
      principal.environment,
      input.quoteId,
      input.idempotency.key,
      input.idempotency.fingerprint,
      input.reverses?.id ?? null,
      input.clientReferenceId ?? null,
      actorIdOf(principal),
      JSON.stringify(input.metadata ?? {}),
      now,
      newId('ledgerTransaction'),
      // An id for each of the four accounts a trade moves, used where the account is new.
      Array.from({ length: 4 }, () => newId('balance', now.getTime())),
      takeArmedFailpoint(TRADE_FAILPOINTS),
    ],
  );
  return rows[0]!;
}

/**
 * Why the quote could not be claimed: it is not this book's (or does not exist), or a trade has
 * it. When that trade was made with this same Idempotency-Key (two attempts got past a store
 * that had lost the key, and the other won), it is this request's answer.
 */
async function unclaimableQuote(db: Queryable, principal: Principal, input: ExecuteTradeInput): Promise<TradeRow> {
  const { rows } = await db.query<{ used_by_trade_id: string | null; idempotency_key: string | null }>(
    `SELECT q.used_by_trade_id, t.idempotency_key
       FROM quotes q LEFT JOIN trades t ON t.id = q.used_by_trade_id
      WHERE q.id = $1 AND q.org_id = $2 AND q.environment = $3`,
    [input.quoteId, principal.orgId, principal.environment],
  );
  const quote = rows[0];
  if (!quote) throw new ApiError('QUOTE_NOT_FOUND', { quoteId: input.quoteId });
  if (quote.idempotency_key === input.idempotency.key) {
    const winner = await findByIdempotencyKey(db, principal, input.idempotency.key);
    if (winner) return replayOrMismatch(winner, input.idempotency.fingerprint);
  }
  throw new ApiError('QUOTE_ALREADY_USED', { quoteId: input.quoteId, tradeId: quote.used_by_trade_id ?? '' });
}

/** The answer to a refusal of fx_execute_trade: the catalogued error, or the earlier trade a retry finds. */
async function answerRefusal(
  db: Queryable,
  principal: Principal,
  input: ExecuteTradeInput,
  refusal: TradeRefusal,
): Promise<TradeRow> {
  const { facts } = refusal;
  switch (refusal.reason) {
    case 'QUOTE_UNCLAIMABLE':
      return unclaimableQuote(db, principal, input);
    case 'REVERSE_QUOTE_INVALID':
      throw new ApiError('REVERSE_QUOTE_INVALID', {
        quoteId: input.quoteId,
        tradeId: input.reverses?.id ?? (facts.quoteReversesTradeId as string | null) ?? '',
      });
    case 'QUOTE_EXPIRED':
      throw new ApiError('QUOTE_EXPIRED', {
        quoteId: input.quoteId,
        expiredAt: new Date(Number(facts.expiresAtMs)).toISOString(),
      });
    case 'TRADING_NOT_ALLOWED':
      // The statement said whether; assertTradingAllowed says which refusal it is (a test holds
      // fx_trading_allowed and assertTradingAllowed to the same answer).
      assertTradingAllowed(
        {
          tradingEnabled: facts.tradingEnabled as boolean,
          disabledCurrencies: facts.disabledCurrencies as string[],
          disabledPairs: facts.disabledPairs as string[],
        },
        facts.buyCurrency as string,
        facts.sellCurrency as string,
      );
      throw new Error('fx_execute_trade refused a trade that assertTradingAllowed allows');
    case 'CREDIT_LIMIT_EXCEEDED':
      throw new ApiError('TRADE_CREDIT_LIMIT_EXCEEDED', {
        creditLine: formatToDecimals(parseDecimal(facts.creditLine as string), 2),
        committedAmount: formatToDecimals(parseDecimal(facts.committed as string), 2),
        requiredAmount: formatToDecimals(parseDecimal(facts.required as string), 2),
        currency: 'USD',
      });
    default:
      // A reason this code does not know (a newer migration's): a failure, never a silent answer.
      throw new Error(
        `fx_execute_trade refused with an unknown reason ${JSON.stringify(refusal.reason satisfies never)}`,
      );
  }
}

/**
 * Executes the quote as a trade (or, with `reverses`, as the reversal of that trade) and
 * returns the trade row, with the sell balance its settlement stage depends on. Business
 * refusals are ApiErrors; anything unexpected after the write began is TRADE_EXECUTION_FAILED
 * naming the trade id, so the client can check and retry.
 *
 * The happy path is one round trip: the fx_execute_trade statement, its own transaction. A
 * reversal, which also updates the original trade, runs it inside a transaction with its hook.
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
  const inTransaction = hooks.inTransaction;
  try {
    try {
      const trade = inTransaction
        ? await context.db.transaction(async (tx) => {
            const created = await runTradeStatement(tx, principal, input, tradeId, now);
            await inTransaction(tx, created);
            return created;
          })
        : await runTradeStatement(context.db, principal, input, tradeId, now);
      // Only here is the trade new and committed: the ways below answer an earlier one or a refusal.
      context.metrics?.trade(input.reverses === undefined ? 'executed' : 'reversed');
      return trade;
    } catch (error) {
      const refusal = tradeRefusalOf(error);
      if (refusal === null) throw error;
      return await answerRefusal(context.db, principal, input, refusal);
    }
  } catch (error) {
    if (isApiError(error)) {
      if (error.code === 'IDEMPOTENCY_MISMATCH') throw error;
      // A refusal of a retry must not hide what its first attempt did.
      const earlier = await findByIdempotencyKey(context.db, principal, input.idempotency.key).catch(() => null);
      if (earlier) return replayOrMismatch(earlier, input.idempotency.fingerprint);
      throw error;
    }
    const winner = await raceWinner(error, input.idempotency, (key) =>
      findByIdempotencyKey(context.db, principal, key),
    );
    if (winner) return winner;
    throw new ApiError('TRADE_EXECUTION_FAILED', { resourceId: tradeId }, { cause: error });
  }
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
  return rowInBook<TradeRow>(db, TRADES, principal, 'id', tradeId);
}
