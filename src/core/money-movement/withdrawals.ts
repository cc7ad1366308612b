/**
 * Withdrawals: money leaving an org's book for one of its withdrawal accounts.
 *
 * Creation (POST /v3/fx/withdrawals) checks the ten rules of docs/contract.md#v3-withdrawals-rules
 * in their order, the first failing rule answering. All of it runs in one statement, the database
 * function fx_create_withdrawal (migration 0013), which is its own transaction:
 * - the account row is locked (FOR UPDATE), so an operator disabling it either commits first
 *   (and the withdrawal sees it) or waits for the withdrawal;
 * - the org's client account in the currency is locked (FOR UPDATE) before the balance is read,
 *   so withdrawals of one currency are serialised and can never together overdraw it (rule 7);
 * - the withdrawal row (PENDING), the hold on the ledger (client -amount, withdrawal_hold
 *   +amount) and the event withdrawal.pending are written together, or none of them is.
 * The rules that need the application (reference data, checksums, prices) are judged here on the
 * account as read just before, and the statement refuses when that account has changed since.
 *
 * Semantics:
 * - Holds are their own ledger account: the client balance already excludes held money, so
 *   withdrawable = max(0, client balance) (= balance minus pending withdrawals, never below 0,
 *   where the balance GET /v3/fx/balances shows is client + held: docs/contract.md#ledger-balances).
 * - Rule 6 counts decimals as written, like quotes and deposits: "1.500" USD has 3.
 * - Rule 8 (the org owes money) looks at client balances below zero in every currency. When
 *   several are negative it names the largest debt in USD terms (ties and unpriced currencies by
 *   code), since that is the one most worth settling first; outstandingAmount is the debt as a
 *   positive amount with the currency's decimals. Other currencies' balances are read, not
 *   locked: rule 8 is a policy on the org's standing, not an invariant of this withdrawal's money.
 * - actorEmail: API keys have no e-mail address, so a key acts as `<keyId>@api-keys.fxgate.invalid`
 *   (stable per key; `.invalid` can never be delivered to, RFC 2606).
 * - estimatedCompletionAt is null until a rail accepts the withdrawal (PROCESSING); transactionHash
 *   is set when a stablecoin transaction is broadcast; paymentDetails is {} until completion, then
 *   `{FEDWIRE: {imad, omad}}` or `{SWIFT: {uetr}}` for fiat (stablecoins keep {}: their proof is
 *   the transaction hash).
 * - failureReason is set on FAILED and CANCELLED, completedAt on COMPLETED only.
 *
 * Lifecycle (applyTransition, the one place a status changes): PENDING -> PROCESSING, CANCELLED or
 * FAILED; PROCESSING -> COMPLETED or FAILED; anything else is 409
 * WITHDRAWAL_INVALID_STATE_TRANSITION. Completion moves the hold to the rail (withdrawal_hold
 * -amount, rail_in_transit +amount); failure and cancellation release it (withdrawal_hold
 * -amount, client +amount). Every transition writes its event `withdrawal.<status>`.
 *
 * Live withdrawals are moved by the withdrawal processor (withdrawal-processor.ts) through a
 * payment rail; sandbox withdrawals stay PENDING until the integrator drives them with POST
 * /v3/fx/sandbox/withdrawals/{id}/complete or /fail.
 */
import { z } from 'zod';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Queryable } from '../../lib/db/database.js';
import { ApiError, isApiError } from '../../lib/errors/api-error.js';
import { AccountChangingError } from '../../lib/errors/internal-errors.js';
import { failpoint, takeArmedFailpoint } from '../../lib/failpoints.js';
import { isId, newId } from '../../lib/ids.js';
import { Decimal, formatDecimal, formatToDecimals, fractionDigits, parseDecimal } from '../../lib/money.js';
import { rowInBook } from '../book-rows.js';
import { recordStatusEvent, statusEventType } from '../events/outbox.js';
import { raceWinner, replayOrMismatch } from '../idempotent-rows.js';
import { type Posting, postMovement } from '../ledger/ledger.js';
import type { Principal } from '../principal.js';
import { statementRefusalOf } from '../statement-refusals.js';
import { withdrawableBalance } from '../trading/balances.js';
import type { ReferenceSnapshot } from '../trading/reference-data.js';
import { actorIdOf } from '../trading/trades.js';
import type { TradingContext } from '../trading/trading-context.js';
import { currencyCode, decimalString, metadataRecord, timestamp, v3Id } from '../wire-types.js';
import type {
  FiatRail,
  PaymentDetails,
  PaymentRail,
  RailWithdrawal,
  SubmittedWithdrawal,
  WithdrawalAssetType,
} from './payment-rails.js';
import { simulatedCompletion } from './payment-rails.js';
import { accountChecksumFailure, findWithdrawalAccount, type WithdrawalAccountRow } from './withdrawal-accounts.js';
import { WITHDRAWAL_STATUSES, WITHDRAWAL_TRANSITIONS, type WithdrawalStatus } from './withdrawal-status.js';

/** What withdrawals run on: a slice of the trading context. */
export type WithdrawalContext = Pick<TradingContext, 'db' | 'reference' | 'rates' | 'now' | 'metrics'>;
/** The book a withdrawal belongs to: an org in one environment (a request's principal is one). */
export type Book = Pick<Principal, 'orgId' | 'environment'>;

export interface WithdrawalRow {
  id: string;
  org_id: string;
  environment: Mode;
  withdrawal_account_id: string;
  currency: string;
  asset_type: WithdrawalAssetType;
  amount: string;
  status: WithdrawalStatus;
  network: string | null;
  transaction_hash: string | null;
  payment_details: PaymentDetails;
  estimated_completion_at: Date | null;
  failure_reason: string | null;
  actor_id: string;
  actor_email: string;
  comments: string;
  metadata: Record<string, string>;
  idempotency_key: string;
  request_fingerprint: string;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/** A withdrawal with where it goes (from its account): what a payment rail needs. */
export interface RoutedWithdrawalRow extends WithdrawalRow {
  transfer_type: FiatRail | null;
  account_number: string | null;
  routing_number: string | null;
  swift_code: string | null;
  address: string | null;
}

/** The v3 withdrawal (docs/contract.md#resources-withdrawal, in its order), as toWithdrawalRecord writes it. */
export const withdrawalRecordSchema = z
  .object({
    object: z.literal('withdrawal'),
    id: v3Id('withdrawal'),
    currency: currencyCode,
    assetType: z.enum(['FIAT', 'STABLECOIN'] as const satisfies readonly WithdrawalAssetType[]),
    withdrawalAmount: decimalString,
    status: z.enum(WITHDRAWAL_STATUSES),
    network: z.string().nullable().meta({ description: 'null for fiat; the chain for a stablecoin.' }),
    withdrawalAccountId: v3Id('withdrawalAccount'),
    estimatedCompletionAt: timestamp
      .nullable()
      .meta({ description: 'Set when a payment rail accepts the withdrawal.' }),
    transactionHash: z.string().nullable().meta({ description: 'Set when a stablecoin transaction is broadcast.' }),
    paymentDetails: z.record(z.string(), z.record(z.string(), z.string())).meta({
      description:
        'Keyed by rail: {} until completion, then {"FEDWIRE": {imad, omad}} or {"SWIFT": {uetr}}; stablecoins keep {}.',
    }),
    actorId: v3Id('user'),
    actorEmail: z
      .string()
      .meta({ description: 'The stand-in e-mail of the API key: <keyId>@api-keys.fxgate.invalid.' }),
    comments: z.string().meta({ description: 'Empty when none was given.' }),
    createdAt: timestamp,
    metadata: metadataRecord,
    updatedAt: timestamp,
    completedAt: timestamp.nullable().meta({ description: 'Set on COMPLETED only.' }),
    failureReason: z.string().nullable().meta({ description: 'Set on FAILED and CANCELLED.' }),
  })
  .meta({ id: 'Withdrawal', description: 'Money leaving the book to a withdrawal account.' });

export type WithdrawalRecord = Readonly<z.output<typeof withdrawalRecordSchema>>;

export function toWithdrawalRecord(row: WithdrawalRow, reference: ReferenceSnapshot): WithdrawalRecord {
  const decimals = reference.currencies.get(row.currency)!.decimals;
  return {
    object: 'withdrawal',
    id: row.id,
    currency: row.currency,
    assetType: row.asset_type,
    withdrawalAmount: formatToDecimals(parseDecimal(row.amount), decimals),
    status: row.status,
    network: row.network,
    withdrawalAccountId: row.withdrawal_account_id,
    estimatedCompletionAt: row.estimated_completion_at?.toISOString() ?? null,
    transactionHash: row.transaction_hash,
    paymentDetails: row.payment_details,
    actorId: row.actor_id,
    actorEmail: row.actor_email,
    comments: row.comments,
    createdAt: row.created_at.toISOString(),
    metadata: row.metadata,
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
    failureReason: row.failure_reason,
  };
}

/** The stand-in e-mail of an API key (see the module comment). */
export function actorEmailOf(principal: Principal): string {
  return `${principal.keyName.split('/').at(-1)!}@api-keys.fxgate.invalid`;
}

export const WITHDRAWAL_SELECT = 'SELECT * FROM withdrawals';
/** Withdrawals with their account's destination; `FOR UPDATE OF w` locks the withdrawal only. */
const ROUTED_SELECT = `SELECT w.*, a.transfer_type, a.account_number, a.routing_number, a.swift_code, a.address
  FROM withdrawals w JOIN withdrawal_accounts a ON a.id = w.withdrawal_account_id`;

export async function findWithdrawal(db: Queryable, book: Book, withdrawalId: string): Promise<WithdrawalRow | null> {
  // A malformed id names no withdrawal: 404, never a validation error.
  if (!isId('withdrawal', withdrawalId)) return null;
  return rowInBook<WithdrawalRow>(db, { select: WITHDRAWAL_SELECT }, book, 'id', withdrawalId);
}

function findByIdempotencyKey(db: Queryable, book: Book, key: string): Promise<WithdrawalRow | null> {
  return rowInBook<WithdrawalRow>(db, { select: WITHDRAWAL_SELECT }, book, 'idempotency_key', key);
}

// ---------------------------------------------------------------------------------------------
// Creation.

/** The validated body of POST /v3/fx/withdrawals (schema in routes/withdrawals.ts). */
export interface WithdrawalRequest {
  readonly withdrawalAccountId: string;
  readonly withdrawalAmount: string;
  readonly currency: string;
  readonly comments?: string | undefined;
  readonly metadata?: Record<string, string> | undefined;
}

/** Rules 1 to 6: the account and the request, before any balance is looked at. */
function checkAccountAndRequest(
  account: WithdrawalAccountRow | null,
  request: WithdrawalRequest,
  reference: ReferenceSnapshot,
): asserts account is WithdrawalAccountRow {
  // 1. The account exists in this book.
  if (!account) throw new ApiError('WITHDRAWAL_ADDRESS_NOT_FOUND', { accountId: request.withdrawalAccountId });
  // 2. It is active.
  if (account.status !== 'ACTIVE')
    throw new ApiError('WITHDRAWAL_ACCOUNT_NOT_LIVE', { accountId: account.id, status: account.status });
  // 3. It is verified.
  if (!account.verified) throw new ApiError('WITHDRAWAL_ADDRESS_NOT_VERIFIED', { accountId: account.id });
  // 4. The currency is the account's.
  if (request.currency !== account.currency)
    throw new ApiError('WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH', {
      expected: account.currency,
      received: request.currency,
    });
  // 5. The currency can be withdrawn at all (JPY cannot: docs/contract.md#types-currencies).
  const currency = reference.currencies.get(account.currency)!;
  if (!currency.withdrawalsEnabled) throw new ApiError('WITHDRAWAL_CURRENCY_NOT_SUPPORTED');
  // 6. The amount has no more decimals than the currency.
  if (fractionDigits(request.withdrawalAmount) > currency.decimals) {
    throw new ApiError('WITHDRAWAL_INVALID_AMOUNT_PRECISION', {
      maxDecimals: currency.decimals,
      currency: currency.code,
    });
  }
}

/** Rule 8: the largest of the book's debts (see the module comment); `debts` are its negative client balances. */
async function largestDebt(
  context: WithdrawalContext,
  debts: readonly { readonly currency: string; readonly balance: string }[],
): Promise<{ currency: string; amount: Decimal }> {
  const ranked = await Promise.all(
    debts.map(async (row) => {
      const amount = parseDecimal(row.balance).negated();
      // A currency without a price cannot be ranked by value; it still counts as a debt.
      const usd = await context.rates.usdPrice(row.currency).then(
        (price) => amount.times(price),
        () => null,
      );
      return { currency: row.currency, amount, usd };
    }),
  );
  ranked.sort((a, b) => {
    if (a.usd && b.usd && !a.usd.eq(b.usd)) return b.usd.comparedTo(a.usd) ?? 0;
    if (a.usd && !b.usd) return -1;
    if (!a.usd && b.usd) return 1;
    return a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0;
  });
  return ranked[0]!;
}

/** The armed failpoints fx_create_withdrawal can fail at, one per step (tests only). */
const CREATION_FAILPOINTS = ['withdrawal.after-insert', 'withdrawal.after-ledger', 'withdrawal.after-event'] as const;

type CreationRefusal =
  | { readonly reason: 'ACCOUNT_CHANGED' | 'REFUSED' }
  | { readonly reason: 'INSUFFICIENT_BALANCE'; readonly facts: { readonly balance: string } }
  | { readonly reason: 'DEBTS'; readonly facts: readonly { readonly currency: string; readonly balance: string }[] };

/** A refusal of fx_create_withdrawal (migration 0013), or null for any other error. */
function creationRefusalOf(error: unknown): CreationRefusal | null {
  return statementRefusalOf(error) as CreationRefusal | null;
}

/** How often an account changed under a withdrawal is read again before the withdrawal gives up. */
const ACCOUNT_READS = 3;

/**
 * One attempt of fx_create_withdrawal (migration 0013 lists its steps), on the account as it was
 * just read: rules 1 to 6, 9 and 10 are judged here and handed to the statement, which raises
 * them in their place among rules 7 and 8. Returns the withdrawal, an earlier one for a replay, or
 * null when the account changed since it was read.
 */
async function attemptCreation(
  context: WithdrawalContext,
  principal: Principal,
  request: WithdrawalRequest,
  idempotency: { readonly key: string; readonly fingerprint: string },
  withdrawalId: string,
  now: Date,
): Promise<{ readonly withdrawal: WithdrawalRow; readonly replayed: boolean } | null> {
  const reference = await context.reference();
  const account = await findWithdrawalAccount(context.db, principal, request.withdrawalAccountId);
  let refusal: ApiError | null = null;
  try {
    checkAccountAndRequest(account, request, reference);
  } catch (error) {
    if (!isApiError(error)) throw error;
    refusal = error;
  }
  const early = refusal !== null;
  // 9 and 10 come after the balance and the debts: judged now, raised in their place.
  if (!refusal && !account!.withdrawals_enabled) refusal = new ApiError('WITHDRAWAL_DISABLED_FOR_ACCOUNT');
  const checksum = refusal ? null : accountChecksumFailure(account!);
  if (checksum) refusal = new ApiError('WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', checksum);

  const currency = reference.currencies.get(request.currency);
  const amount = parseDecimal(request.withdrawalAmount);
  // What the insert will write, so the event can carry the record the answer shows.
  const pending: WithdrawalRow = {
    id: withdrawalId,
    org_id: principal.orgId,
    environment: principal.environment,
    withdrawal_account_id: request.withdrawalAccountId,
    currency: request.currency,
    asset_type: account?.asset_type ?? 'FIAT',
    amount: formatDecimal(amount),
    status: 'PENDING',
    network: account?.asset_type === 'STABLECOIN' ? account.network : null,
    transaction_hash: null,
    payment_details: {},
    estimated_completion_at: null,
    failure_reason: null,
    actor_id: actorIdOf(principal),
    actor_email: actorEmailOf(principal),
    comments: request.comments ?? '',
    metadata: request.metadata ?? {},
    idempotency_key: idempotency.key,
    request_fingerprint: idempotency.fingerprint,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
  try {
    const { rows } = await context.db.query<WithdrawalRow & { replayed: boolean }>(
      `SELECT (r.withdrawal).*, r.replayed
         FROM fx_create_withdrawal($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17::jsonb,
                                   $18, $19, $20, $21, $22::text[], $23, $24, $25::jsonb, $26) AS r`,
      [
        pending.id,
        pending.org_id,
        pending.environment,
        pending.withdrawal_account_id,
        account?.status ?? null,
        account?.verified ?? null,
        account?.withdrawals_enabled ?? null,
        early,
        refusal !== null && !early,
        pending.currency,
        pending.asset_type,
        pending.amount,
        pending.network,
        pending.actor_id,
        pending.actor_email,
        pending.comments,
        JSON.stringify(pending.metadata),
        pending.idempotency_key,
        pending.request_fingerprint,
        now,
        newId('ledgerTransaction'),
        // An id for each of the two accounts the hold moves, used where the account is new.
        [newId('balance', now.getTime()), newId('balance', now.getTime())],
        newId('event', now.getTime()),
        statusEventType('withdrawals', 'PENDING'),
        // Only a withdrawal that passes every rule is inserted, and then the currency is known.
        currency && !refusal ? JSON.stringify(toWithdrawalRecord(pending, reference)) : '{}',
        takeArmedFailpoint(CREATION_FAILPOINTS),
      ],
    );
    const { replayed, ...withdrawal } = rows[0]!;
    return { withdrawal, replayed };
  } catch (error) {
    const refused = creationRefusalOf(error);
    if (!refused) throw error;
    switch (refused.reason) {
      case 'ACCOUNT_CHANGED':
        return null;
      case 'REFUSED':
        throw refusal!;
      case 'INSUFFICIENT_BALANCE': {
        // 7. The balance covers it (held money is already out of the client balance).
        const decimals = currency!.decimals;
        throw new ApiError('WITHDRAWAL_INSUFFICIENT_BALANCE', {
          requiredAmount: formatToDecimals(amount, decimals),
          availableAmount: formatToDecimals(withdrawableBalance(parseDecimal(refused.facts.balance)), decimals),
          currency: currency!.code,
        });
      }
      case 'DEBTS': {
        // 8. The org owes nothing in any currency.
        const debt = await largestDebt(context, refused.facts);
        throw new ApiError('WITHDRAWAL_PENDING_DEPOSIT_REQUIRED', {
          outstandingAmount: formatToDecimals(
            debt.amount,
            reference.currencies.get(debt.currency)?.decimals ?? 2,
            Decimal.ROUND_UP,
          ),
          currency: debt.currency,
        });
      }
    }
  }
}

/**
 * Creates the withdrawal and returns its row; a retry of the same request (same key, same body)
 * returns the first attempt's withdrawal as it is now. Refusals are ApiErrors; anything
 * unexpected is WITHDRAWAL_INITIATION_FAILED naming the withdrawal id, so the client can check
 * it (absent: nothing was written) and retry with the same key (docs/contract.md#errors-recovery).
 *
 * The happy path is two round trips: the account read, and fx_create_withdrawal, its own
 * transaction. An operator's change to the account between the two makes the statement refuse
 * without writing, and the account is read again.
 */
export async function createWithdrawal(
  context: WithdrawalContext,
  principal: Principal,
  request: WithdrawalRequest,
  idempotency: { readonly key: string; readonly fingerprint: string },
): Promise<WithdrawalRow> {
  const now = context.now();
  const withdrawalId = newId('withdrawal', now.getTime());
  try {
    for (let read = 1; read <= ACCOUNT_READS; read++) {
      const created = await attemptCreation(context, principal, request, idempotency, withdrawalId, now);
      if (!created) continue;
      if (created.replayed) return replayOrMismatch(created.withdrawal, idempotency.fingerprint);
      context.metrics?.withdrawalMoved(null, 'PENDING');
      return created.withdrawal;
    }
    throw new AccountChangingError(request.withdrawalAccountId, ACCOUNT_READS);
  } catch (error) {
    if (isApiError(error)) throw error;
    const winner = await raceWinner(error, idempotency, (key) => findByIdempotencyKey(context.db, principal, key));
    if (winner) return winner;
    throw new ApiError('WITHDRAWAL_INITIATION_FAILED', { resourceId: withdrawalId }, { cause: error });
  }
}

async function recordWithdrawalEvent(
  tx: Queryable,
  withdrawal: WithdrawalRow,
  reference: ReferenceSnapshot,
  at: Date,
): Promise<void> {
  await recordStatusEvent(tx, 'withdrawals', withdrawal, toWithdrawalRecord(withdrawal, reference), at);
}

// ---------------------------------------------------------------------------------------------
// Lifecycle.

/** What a transition may set besides the status; each applies only where it makes sense. */
export interface TransitionChanges {
  /** PROCESSING: when the rail expects the payment to be final. */
  readonly estimatedCompletionAt?: Date | null;
  /** PROCESSING or COMPLETED: the chain transaction (kept when not given). */
  readonly transactionHash?: string | null;
  /** COMPLETED: the rail's proof (FEDWIRE imad/omad, ...). */
  readonly paymentDetails?: PaymentDetails;
  /** FAILED or CANCELLED: why. */
  readonly failureReason?: string;
}

const DEFAULT_REASONS: Partial<Record<WithdrawalStatus, string>> = {
  FAILED: 'The payment rail rejected the withdrawal.',
  CANCELLED: 'Cancelled before submission to a payment rail.',
};

/** The ledger movement of a transition: completion pays the hold out to the rail, failure and cancellation give it back. */
function transitionPostings(withdrawal: WithdrawalRow, to: WithdrawalStatus): Posting[] {
  const amount = parseDecimal(withdrawal.amount);
  const currency = withdrawal.currency;
  if (to === 'COMPLETED') {
    return [
      { account: 'withdrawal_hold', currency, amount: amount.negated() },
      { account: 'rail_in_transit', currency, amount },
    ];
  }
  if (to === 'FAILED' || to === 'CANCELLED') {
    return [
      { account: 'withdrawal_hold', currency, amount: amount.negated() },
      { account: 'client', currency, amount },
    ];
  }
  return [];
}

/**
 * Moves a withdrawal the caller has locked (lockWithdrawal) to `to`, inside the caller's
 * transaction: status and fields, the ledger movement and the event, together. An illegal move
 * is 409 WITHDRAWAL_INVALID_STATE_TRANSITION and writes nothing.
 *
 * Each transition is stamped at least 1 ms after the previous one (updated_at), even when both
 * happen within one millisecond (sandbox completion, a rail without delay): a withdrawal's
 * events then sort by createdAt, and by id (time-ordered), in the order they happened.
 */
export async function applyTransition<Row extends WithdrawalRow>(
  tx: Queryable,
  locked: Row,
  to: WithdrawalStatus,
  changes: TransitionChanges,
  reference: ReferenceSnapshot,
  at: Date,
): Promise<Row> {
  if (!WITHDRAWAL_TRANSITIONS[locked.status].includes(to)) {
    throw new ApiError('WITHDRAWAL_INVALID_STATE_TRANSITION', {
      withdrawalId: locked.id,
      status: locked.status,
      requestedStatus: to,
    });
  }
  const final = to === 'FAILED' || to === 'CANCELLED';
  const stamp = new Date(Math.max(at.getTime(), locked.updated_at.getTime() + 1));
  const { rows } = await tx.query<WithdrawalRow>(
    `UPDATE withdrawals
        SET status = $3, updated_at = $4,
            estimated_completion_at = CASE WHEN $5::boolean THEN $6::timestamptz ELSE estimated_completion_at END,
            transaction_hash = COALESCE($7, transaction_hash),
            payment_details = COALESCE($8::jsonb, payment_details),
            failure_reason = COALESCE($9, failure_reason),
            completed_at = CASE WHEN $3 = 'COMPLETED' THEN $4 ELSE completed_at END
      WHERE id = $1 AND status = $2
      RETURNING *`,
    [
      locked.id,
      locked.status,
      to,
      stamp,
      changes.estimatedCompletionAt !== undefined,
      changes.estimatedCompletionAt ?? null,
      changes.transactionHash ?? null,
      to === 'COMPLETED' ? JSON.stringify(changes.paymentDetails ?? {}) : null,
      final ? (changes.failureReason ?? DEFAULT_REASONS[to]!) : null,
    ],
  );
  // The caller holds the row lock, so the status cannot have moved since it was read.
  if (!rows[0]) throw new Error(`withdrawal ${locked.id} is not ${locked.status} although it is locked`);
  const updated = { ...locked, ...rows[0] };
  failpoint('withdrawal.transition-after-update');
  const postings = transitionPostings(updated, to);
  if (postings.length > 0) {
    await postMovement(tx, {
      orgId: updated.org_id,
      environment: updated.environment,
      kind: to === 'COMPLETED' ? 'withdrawal' : 'withdrawal_release',
      referenceId: updated.id,
      at: stamp,
      postings,
    });
    failpoint('withdrawal.transition-after-ledger');
  }
  await recordWithdrawalEvent(tx, updated, reference, stamp);
  return updated;
}

/** Reads and locks one withdrawal of the book with its destination; null when the book has none by this id. */
export async function lockWithdrawal(
  tx: Queryable,
  book: Book,
  withdrawalId: string,
): Promise<RoutedWithdrawalRow | null> {
  if (!isId('withdrawal', withdrawalId)) return null;
  return rowInBook<RoutedWithdrawalRow>(
    tx,
    { select: ROUTED_SELECT, alias: 'w', lock: 'FOR UPDATE OF w' },
    book,
    'id',
    withdrawalId,
  );
}

/**
 * Claims the oldest live withdrawal a processor has work on (PENDING, or PROCESSING and due for
 * an outcome), skipping rows another processor holds: any number of processors can run.
 */
export async function claimLiveWithdrawal(
  tx: Queryable,
  now: Date,
  skip: readonly string[],
): Promise<RoutedWithdrawalRow | null> {
  const { rows } = await tx.query<RoutedWithdrawalRow>(
    `${ROUTED_SELECT}
      WHERE w.environment = 'live'
        AND (w.status = 'PENDING' OR (w.status = 'PROCESSING' AND (w.estimated_completion_at IS NULL OR w.estimated_completion_at <= $1)))
        AND NOT (w.id = ANY($2::text[]))
      ORDER BY w.created_at, w.id
      LIMIT 1
      FOR UPDATE OF w SKIP LOCKED`,
    [now, skip],
  );
  return rows[0] ?? null;
}

/** The withdrawal as a payment rail sees it. */
export function toRailWithdrawal(row: RoutedWithdrawalRow): SubmittedWithdrawal {
  return {
    id: row.id,
    currency: row.currency,
    assetType: row.asset_type,
    amount: parseDecimal(row.amount),
    transferType: row.transfer_type,
    network: row.network,
    destination: {
      accountNumber: row.account_number,
      routingNumber: row.routing_number,
      swiftCode: row.swift_code,
      address: row.address,
    },
    estimatedCompletionAt: row.estimated_completion_at,
    transactionHash: row.transaction_hash,
  };
}

/** Hands a locked PENDING withdrawal to the rail and records it PROCESSING. */
export async function submitToRail(
  tx: Queryable,
  locked: RoutedWithdrawalRow,
  rail: PaymentRail,
  reference: ReferenceSnapshot,
  now: Date,
): Promise<RoutedWithdrawalRow> {
  // Checked before the rail is called: an illegal move must not reach a real rail first.
  if (locked.status !== 'PENDING') {
    throw new ApiError('WITHDRAWAL_INVALID_STATE_TRANSITION', {
      withdrawalId: locked.id,
      status: locked.status,
      requestedStatus: 'PROCESSING',
    });
  }
  const railWithdrawal: RailWithdrawal = toRailWithdrawal(locked);
  const submission = await rail.submit(railWithdrawal, now);
  return applyTransition(
    tx,
    locked,
    'PROCESSING',
    { estimatedCompletionAt: submission.estimatedCompletionAt, transactionHash: submission.transactionHash ?? null },
    reference,
    now,
  );
}

type LifecycleContext = Pick<WithdrawalContext, 'db' | 'reference' | 'now' | 'metrics'>;

/** One transition of one withdrawal of the book, in its own transaction; 404 WITHDRAWAL_NOT_FOUND when absent. */
export async function transitionWithdrawal(
  context: LifecycleContext,
  book: Book,
  withdrawalId: string,
  to: WithdrawalStatus,
  changes: TransitionChanges = {},
): Promise<WithdrawalRow> {
  const reference = await context.reference();
  const { from, moved } = await context.db.transaction(async (tx) => {
    const locked = await lockWithdrawal(tx, book, withdrawalId);
    if (!locked) throw new ApiError('WITHDRAWAL_NOT_FOUND');
    return { from: locked.status, moved: await applyTransition(tx, locked, to, changes, reference, context.now()) };
  });
  context.metrics?.withdrawalMoved(from, to);
  return moved;
}

/**
 * Sandbox: completes a withdrawal as the simulated rail would, at once. From PENDING it goes
 * through PROCESSING (both transitions and events, one transaction), so integrators see the
 * same sequence as live withdrawals produce. Anything but PENDING or PROCESSING is 409,
 * requestedStatus COMPLETED.
 */
export async function completeSandboxWithdrawal(
  context: LifecycleContext,
  book: Book,
  withdrawalId: string,
  rail: PaymentRail,
): Promise<WithdrawalRow> {
  const reference = await context.reference();
  const { submitted, completed } = await context.db.transaction(async (tx) => {
    let locked = await lockWithdrawal(tx, book, withdrawalId);
    if (!locked) throw new ApiError('WITHDRAWAL_NOT_FOUND');
    const now = context.now();
    const pending = locked.status === 'PENDING';
    if (pending) locked = await submitToRail(tx, locked, rail, reference, now);
    const completion = simulatedCompletion(toRailWithdrawal(locked), now);
    return {
      submitted: pending,
      completed: await applyTransition(
        tx,
        locked,
        'COMPLETED',
        { paymentDetails: completion.paymentDetails, transactionHash: completion.transactionHash },
        reference,
        now,
      ),
    };
  });
  if (submitted) context.metrics?.withdrawalMoved('PENDING', 'PROCESSING');
  context.metrics?.withdrawalMoved('PROCESSING', 'COMPLETED');
  return completed;
}
