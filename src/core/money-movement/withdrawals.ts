/**
 * Withdrawals: money leaving an org's book for one of its withdrawal accounts.
 *
 * Creation (POST /v3/fx/withdrawals) checks the ten rules of docs/contract.md#v3-withdrawals-rules
 * in their order, the first failing rule answering. All of it runs in one SQL transaction:
 * - the account row is locked (FOR UPDATE), so an operator disabling it either commits first
 *   (and the withdrawal sees it) or waits for the withdrawal;
 * - the org's client account in the currency is locked (FOR UPDATE) before the balance is read,
 *   so withdrawals of one currency are serialised and can never together overdraw it (rule 7);
 * - the withdrawal row (PENDING), the hold on the ledger (client -amount, withdrawal_hold
 *   +amount) and the event withdrawal.pending are written together, or none of them is.
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
import { failpoint } from '../../lib/failpoints.js';
import { isId, newId } from '../../lib/ids.js';
import { Decimal, formatDecimal, formatToDecimals, fractionDigits, parseDecimal } from '../../lib/money.js';
import { rowInBook } from '../book-rows.js';
import { recordStatusEvent } from '../events/outbox.js';
import { raceWinner, replayOrMismatch } from '../idempotent-rows.js';
import { type Posting, postMovement } from '../ledger/ledger.js';
import type { Principal } from '../principal.js';
import { withdrawableBalance } from '../trading/balances.js';
import type { ReferenceSnapshot } from '../trading/reference-data.js';
import { actorIdOf } from '../trading/trades.js';
import { type TradingContext, transactionWithReference } from '../trading/trading-context.js';
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

/** Locks the org's client account in the currency and returns its balance (0 before its first movement). */
async function lockClientBalance(tx: Queryable, book: Book, currency: string): Promise<Decimal> {
  const { rows } = await tx.query<{ balance: string }>(
    `SELECT balance::text AS balance FROM ledger_accounts
      WHERE org_id = $1 AND environment = $2 AND kind = 'client' AND currency = $3
      FOR UPDATE`,
    [book.orgId, book.environment, currency],
  );
  return rows[0] ? parseDecimal(rows[0].balance) : new Decimal(0);
}

/** Rule 8: the org's largest debt (see the module comment), or null when it owes nothing. */
async function largestDebt(
  tx: Queryable,
  context: WithdrawalContext,
  book: Book,
): Promise<{ currency: string; amount: Decimal } | null> {
  const { rows } = await tx.query<{ currency: string; balance: string }>(
    `SELECT currency, balance::text AS balance FROM ledger_accounts
      WHERE org_id = $1 AND environment = $2 AND kind = 'client' AND balance < 0`,
    [book.orgId, book.environment],
  );
  if (rows.length === 0) return null;
  const debts = await Promise.all(
    rows.map(async (row) => {
      const amount = parseDecimal(row.balance).negated();
      // A currency without a price cannot be ranked by value; it still counts as a debt.
      const usd = await context.rates.usdPrice(row.currency).then(
        (price) => amount.times(price),
        () => null,
      );
      return { currency: row.currency, amount, usd };
    }),
  );
  debts.sort((a, b) => {
    if (a.usd && b.usd && !a.usd.eq(b.usd)) return b.usd.comparedTo(a.usd) ?? 0;
    if (a.usd && !b.usd) return -1;
    if (!a.usd && b.usd) return 1;
    return a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0;
  });
  return debts[0]!;
}

/**
 * Creates the withdrawal and returns its row; a retry of the same request (same key, same body)
 * returns the first attempt's withdrawal as it is now. Refusals are ApiErrors; anything
 * unexpected is WITHDRAWAL_INITIATION_FAILED naming the withdrawal id, so the client can check
 * it (absent: nothing was written) and retry with the same key (docs/contract.md#errors-recovery).
 */
export async function createWithdrawal(
  context: WithdrawalContext,
  principal: Principal,
  request: WithdrawalRequest,
  idempotency: { readonly key: string; readonly fingerprint: string },
): Promise<WithdrawalRow> {
  const earlier = await findByIdempotencyKey(context.db, principal, idempotency.key);
  if (earlier) return replayOrMismatch(earlier, idempotency.fingerprint);

  const now = context.now();
  const withdrawalId = newId('withdrawal', now.getTime());
  try {
    const withdrawal = await transactionWithReference(context, async (tx, reference) => {
      const account = await findWithdrawalAccount(tx, principal, request.withdrawalAccountId, { forUpdate: true });
      checkAccountAndRequest(account, request, reference);
      const currency = reference.currencies.get(account.currency)!;
      const amount = parseDecimal(request.withdrawalAmount);

      const balance = await lockClientBalance(tx, principal, currency.code);
      // A separate statement after the lock: under READ COMMITTED it sees a withdrawal that a
      // racing attempt with this key committed while this one waited (both got past a store
      // that had lost the key). That withdrawal is this request's answer, not a second one.
      const winner = await findByIdempotencyKey(tx, principal, idempotency.key);
      if (winner) return replayOrMismatch(winner, idempotency.fingerprint);

      // 7. The balance covers it (held money is already out of the client balance).
      const available = withdrawableBalance(balance);
      if (amount.isGreaterThan(available)) {
        throw new ApiError('WITHDRAWAL_INSUFFICIENT_BALANCE', {
          requiredAmount: formatToDecimals(amount, currency.decimals),
          availableAmount: formatToDecimals(available, currency.decimals),
          currency: currency.code,
        });
      }
      // 8. The org owes nothing in any currency.
      const debt = await largestDebt(tx, context, principal);
      if (debt) {
        const decimals = reference.currencies.get(debt.currency)?.decimals ?? 2;
        throw new ApiError('WITHDRAWAL_PENDING_DEPOSIT_REQUIRED', {
          outstandingAmount: formatToDecimals(debt.amount, decimals, Decimal.ROUND_UP),
          currency: debt.currency,
        });
      }
      // 9. Withdrawals are enabled for the account.
      if (!account.withdrawals_enabled) throw new ApiError('WITHDRAWAL_DISABLED_FOR_ACCOUNT');
      // 10. Its address or routing checksums are still valid (checked at creation too).
      const checksum = accountChecksumFailure(account);
      if (checksum) throw new ApiError('WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', checksum);

      const { rows } = await tx.query<WithdrawalRow>(
        `INSERT INTO withdrawals (id, org_id, environment, withdrawal_account_id, currency, asset_type, amount, status, network,
                                  actor_id, actor_email, comments, metadata, idempotency_key, request_fingerprint, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'PENDING', $8, $9, $10, $11, $12, $13, $14, $15, $15)
         RETURNING *`,
        [
          withdrawalId,
          principal.orgId,
          principal.environment,
          account.id,
          currency.code,
          account.asset_type,
          formatDecimal(amount),
          account.asset_type === 'STABLECOIN' ? account.network : null,
          actorIdOf(principal),
          actorEmailOf(principal),
          request.comments ?? '',
          JSON.stringify(request.metadata ?? {}),
          idempotency.key,
          idempotency.fingerprint,
          now,
        ],
      );
      const withdrawal = rows[0]!;
      failpoint('withdrawal.after-insert');
      await postMovement(tx, {
        orgId: principal.orgId,
        environment: principal.environment,
        kind: 'withdrawal_hold',
        referenceId: withdrawal.id,
        at: now,
        postings: [
          { account: 'client', currency: currency.code, amount: amount.negated() },
          { account: 'withdrawal_hold', currency: currency.code, amount },
        ],
      });
      failpoint('withdrawal.after-ledger');
      await recordWithdrawalEvent(tx, withdrawal, reference, now);
      failpoint('withdrawal.after-event');
      return withdrawal;
    });
    // An earlier attempt's withdrawal (a retry found it above) was counted when it was made.
    if (withdrawal.id === withdrawalId) context.metrics?.withdrawalMoved(null, 'PENDING');
    return withdrawal;
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
