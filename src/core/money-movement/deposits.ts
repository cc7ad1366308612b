/**
 * Deposits: money arriving in an org's book. Live deposits come from the rails (none reachable
 * here); sandbox deposits are made on request (POST /v3/fx/sandbox/deposits, or
 * createSandboxDeposit in-process for the seeded sandbox).
 *
 * Semantics:
 * - A deposit is created PENDING (event deposit.pending) and settles into its outcome. COMPLETED
 *   credits the org: one ledger movement `rail_in_transit -amount, client +amount` (kind
 *   `deposit`), status COMPLETED, event deposit.completed, all in one SQL transaction. FAILED
 *   (a sandbox deposit asking for it) credits nothing: status FAILED and event deposit.failed.
 *   Nothing touches the ledger while PENDING.
 * - completeAfterSeconds 0 (the default) creates and settles in the same transaction, so the
 *   response already shows the outcome; a delay leaves it PENDING with `completes_at`, and the
 *   deposit completer (deposit-completer.ts) settles it once due.
 * - Settling is a conditional update from PENDING, so it happens once whoever tries it.
 * - The row carries the Idempotency-Key and request fingerprint under a unique constraint: a
 *   retry whose idempotency-store record was lost finds the deposit instead of making another.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';

import { z } from 'zod';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Queryable } from '../../lib/db/database.js';
import { ApiError, isApiError } from '../../lib/errors/api-error.js';
import type { ValidationIssue } from '../../lib/errors/validation-issues.js';
import { toIssues } from '../../lib/errors/validation-issues.js';
import { failpoint } from '../../lib/failpoints.js';
import { isId, newId } from '../../lib/ids.js';
import {
  Decimal,
  formatDecimal,
  formatToDecimals,
  fractionDigits,
  parseDecimal,
  V3_AMOUNT_PATTERN,
} from '../../lib/money.js';
import { rowInBook } from '../book-rows.js';
import { recordStatusEvent } from '../events/outbox.js';
import { raceWinner, replayOrMismatch } from '../idempotent-rows.js';
import { postMovement } from '../ledger/ledger.js';
import type { Principal } from '../principal.js';
import type { Currency, ReferenceSnapshot } from '../trading/reference-data.js';
import type { TradingContext } from '../trading/trading-context.js';
import { currencyCode, decimalString, timestamp, v3Id } from '../wire-types.js';

export type DepositStatus = 'PENDING' | 'COMPLETED' | 'FAILED';
export const DEPOSIT_STATUSES = ['PENDING', 'COMPLETED', 'FAILED'] as const satisfies readonly DepositStatus[];
/** What a PENDING deposit settles into. */
export const DEPOSIT_OUTCOMES = ['COMPLETED', 'FAILED'] as const satisfies readonly DepositStatus[];
export type DepositOutcome = (typeof DEPOSIT_OUTCOMES)[number];

/** The network of every fiat deposit (docs/contract.md#resources-deposit). */
export const FIAT_NETWORK = 'FIAT';
/** The longest delay a sandbox deposit may ask for before it completes. */
export const MAX_COMPLETE_AFTER_SECONDS = 3600;
/**
 * The largest sandbox deposit. Not a business limit: it keeps every amount far inside
 * numeric(38, 18), so an absurd request is a 400 and never an overflow.
 */
export const MAX_DEPOSIT_AMOUNT = new Decimal('1000000000000');

/** What deposits run on: a slice of the trading context. */
export type DepositContext = Pick<TradingContext, 'db' | 'reference' | 'now'>;
/** The book a deposit belongs to: an org in one environment (a request's principal is one). */
export type Book = Pick<Principal, 'orgId' | 'environment'>;

export interface DepositRow {
  id: string;
  org_id: string;
  environment: Mode;
  currency: string;
  amount: string;
  network: string;
  status: DepositStatus;
  outcome: DepositOutcome;
  transaction_hash: string | null;
  reference_id: string | null;
  comments: string | null;
  completes_at: Date | null;
  idempotency_key: string;
  request_fingerprint: string;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/**
 * A deposit as v3 shows it (docs/contract.md#resources-deposit), as toDepositRecord writes it;
 * every field the legacy deposit needs is here or derivable.
 */
export const depositRecordSchema = z
  .object({
    object: z.literal('deposit'),
    id: v3Id('deposit'),
    currency: currencyCode,
    amount: decimalString,
    network: z.string().meta({ description: 'FIAT for a fiat deposit, else its chain.' }),
    assetType: z.enum(['FIAT', 'STABLECOIN'] as const satisfies readonly Currency['assetType'][]),
    status: z.enum(DEPOSIT_STATUSES),
    transactionHash: z.string().nullable().meta({ description: 'The chain transaction of a stablecoin deposit.' }),
    referenceId: z.string().nullable().meta({ description: "The payer's reference." }),
    comments: z.string().nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
    completedAt: timestamp.nullable().meta({ description: 'Set when the deposit is credited.' }),
  })
  .meta({ id: 'Deposit', description: 'An incoming deposit, fiat or stablecoin.' });

export type DepositRecord = Readonly<z.output<typeof depositRecordSchema>>;

export function toDepositRecord(row: DepositRow, reference: ReferenceSnapshot): DepositRecord {
  const currency = reference.currencies.get(row.currency)!;
  return {
    object: 'deposit',
    id: row.id,
    currency: row.currency,
    amount: formatToDecimals(parseDecimal(row.amount), currency.decimals),
    network: row.network,
    assetType: currency.assetType,
    status: row.status,
    transactionHash: row.transaction_hash,
    referenceId: row.reference_id,
    comments: row.comments,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

/** The body of POST /v3/fx/sandbox/deposits. Checks that need reference data follow in resolveDeposit. */
export const sandboxDepositSchema = z.strictObject({
  currency: z.string().regex(/^[A-Z]{3,5}$/, 'currency must be a currency code such as USD'),
  amount: z
    .string()
    .regex(V3_AMOUNT_PATTERN, 'amount must be a decimal string such as "100.00", unsigned, with at most 8 decimals'),
  network: z
    .string()
    .regex(/^[A-Z]{1,32}$/, 'network must be a network name such as ETHEREUM, or FIAT')
    .optional(),
  completeAfterSeconds: z.int().min(0).max(MAX_COMPLETE_AFTER_SECONDS).optional(),
  outcome: z.enum(DEPOSIT_OUTCOMES).optional().meta({
    description:
      'What the deposit settles into: COMPLETED (the default) credits the book; FAILED credits nothing and sends deposit.failed.',
  }),
  referenceId: z.string().min(1).max(128).optional(),
  comments: z.string().max(500).optional(),
});
export type SandboxDepositRequest = z.infer<typeof sandboxDepositSchema>;

interface DepositTerms {
  readonly currency: Currency;
  readonly amount: Decimal;
  readonly network: string;
  readonly completeAfterSeconds: number;
  readonly outcome: DepositOutcome;
}

function bodyError(issues: ValidationIssue[]): ApiError {
  return new ApiError('VALIDATION_BODY_FAILED', { issues });
}

/**
 * The checks that depend on the currency: it must exist, the amount must be positive, within
 * MAX_DEPOSIT_AMOUNT and within the currency's decimals (counted as written, like quotes), and
 * the network must be FIAT (or absent) for fiat and one of the currency's chains for
 * stablecoins (absent: its first chain). All failures are reported together, as a 400.
 */
export function resolveDeposit(request: SandboxDepositRequest, reference: ReferenceSnapshot): DepositTerms {
  const currency = reference.currencies.get(request.currency);
  if (!currency) {
    const known = [...reference.currencies.keys()].join(', ');
    throw bodyError([
      { path: 'currency', code: 'unknown_currency', message: `unknown currency ${request.currency}; known: ${known}` },
    ]);
  }
  const issues: ValidationIssue[] = [];
  const amount = parseDecimal(request.amount);
  if (amount.isZero()) issues.push({ path: 'amount', code: 'too_small', message: 'amount must be greater than 0' });
  if (amount.isGreaterThan(MAX_DEPOSIT_AMOUNT))
    issues.push({
      path: 'amount',
      code: 'too_big',
      message: `amount must be at most ${formatDecimal(MAX_DEPOSIT_AMOUNT)}`,
    });
  if (fractionDigits(request.amount) > currency.decimals) {
    issues.push({
      path: 'amount',
      code: 'too_many_decimals',
      message: `${currency.code} amounts have at most ${currency.decimals} decimals`,
    });
  }
  const allowed = currency.assetType === 'FIAT' ? [FIAT_NETWORK] : currency.networks;
  const network = request.network ?? allowed[0];
  if (network === undefined || !allowed.includes(network)) {
    issues.push({
      path: 'network',
      code: 'unsupported_network',
      message: `${currency.code} deposits arrive on ${allowed.join(', ') || 'no network'}`,
    });
  }
  if (issues.length > 0) throw bodyError(issues);
  return {
    currency,
    amount,
    network: network!,
    completeAfterSeconds: request.completeAfterSeconds ?? 0,
    outcome: request.outcome ?? 'COMPLETED',
  };
}

export const DEPOSIT_SELECT = 'SELECT * FROM deposits';

export async function findDeposit(db: Queryable, book: Book, depositId: string): Promise<DepositRow | null> {
  // A malformed id names no deposit; it is a 404, not a validation error.
  if (!isId('deposit', depositId)) return null;
  return rowInBook<DepositRow>(db, { select: DEPOSIT_SELECT }, book, 'id', depositId);
}

function findByIdempotencyKey(db: Queryable, book: Book, key: string): Promise<DepositRow | null> {
  return rowInBook<DepositRow>(db, { select: DEPOSIT_SELECT }, book, 'idempotency_key', key);
}

/** A chain transaction hash for a simulated stablecoin deposit; fiat deposits have none. */
function simulatedTransactionHash(currency: Currency): string | null {
  return currency.assetType === 'FIAT' ? null : `0x${randomBytes(32).toString('hex')}`;
}

export interface IdempotencyClaim {
  readonly key: string;
  readonly fingerprint: string;
}

/**
 * Creates a sandbox deposit from a validated request and returns its row (settled when no delay
 * was asked for). Refusals are ApiErrors; anything unexpected once the write began is
 * INTERNAL_ERROR naming the deposit id, so the client can check and retry with the same key.
 */
export async function createDeposit(
  context: DepositContext,
  book: Book,
  request: SandboxDepositRequest,
  idempotency: IdempotencyClaim,
): Promise<DepositRow> {
  if (book.environment !== 'sandbox') throw new ApiError('SANDBOX_MODE_REQUIRED');
  const earlier = await findByIdempotencyKey(context.db, book, idempotency.key);
  if (earlier) return replayOrMismatch(earlier, idempotency.fingerprint);

  const reference = await context.reference();
  const terms = resolveDeposit(request, reference);
  const now = context.now();
  const depositId = newId('deposit', now.getTime());
  const completesAt =
    terms.completeAfterSeconds > 0 ? new Date(now.getTime() + terms.completeAfterSeconds * 1000) : null;
  try {
    return await context.db.transaction(async (tx) => {
      const { rows } = await tx.query<DepositRow>(
        `INSERT INTO deposits (id, org_id, environment, currency, amount, network, status, outcome, transaction_hash, reference_id,
                               comments, completes_at, idempotency_key, request_fingerprint, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $14, $7, $8, $9, $10, $11, $12, $13, $13)
         RETURNING *`,
        [
          depositId,
          book.orgId,
          book.environment,
          terms.currency.code,
          formatDecimal(terms.amount),
          terms.network,
          simulatedTransactionHash(terms.currency),
          request.referenceId ?? null,
          request.comments ?? null,
          completesAt,
          idempotency.key,
          idempotency.fingerprint,
          now,
          terms.outcome,
        ],
      );
      const pending = rows[0]!;
      await recordDepositEvent(tx, pending, reference, now);
      failpoint('deposit.after-insert');
      if (completesAt) return pending;
      const settled = await settlePendingDeposit(tx, pending, reference, now);
      return settled ?? pending;
    });
  } catch (error) {
    if (isApiError(error)) throw error;
    const winner = await raceWinner(error, idempotency, (key) => findByIdempotencyKey(context.db, book, key));
    if (winner) return winner;
    throw new ApiError('INTERNAL_ERROR', { resourceId: depositId }, { cause: error });
  }
}

/**
 * Settles a PENDING deposit into its outcome inside the caller's transaction: status, the ledger
 * credit (COMPLETED only) and the event together. Returns null when the deposit is no longer
 * PENDING (someone else settled it), in which case nothing is written.
 */
export async function settlePendingDeposit(
  tx: Queryable,
  deposit: Pick<DepositRow, 'id'>,
  reference: ReferenceSnapshot,
  at: Date,
): Promise<DepositRow | null> {
  const { rows } = await tx.query<DepositRow>(
    `UPDATE deposits SET status = outcome, completed_at = CASE WHEN outcome = 'COMPLETED' THEN $2::timestamptz END,
                         updated_at = $2
      WHERE id = $1 AND status = 'PENDING'
      RETURNING *`,
    [deposit.id, at],
  );
  const settled = rows[0];
  if (!settled) return null;
  if (settled.status === 'FAILED') {
    await recordDepositEvent(tx, settled, reference, at);
    return settled;
  }
  const completed = settled;
  const amount = parseDecimal(completed.amount);
  await postMovement(tx, {
    orgId: completed.org_id,
    environment: completed.environment,
    kind: 'deposit',
    referenceId: completed.id,
    at,
    postings: [
      { account: 'rail_in_transit', currency: completed.currency, amount: amount.negated() },
      { account: 'client', currency: completed.currency, amount },
    ],
  });
  failpoint('deposit.after-ledger');
  await recordDepositEvent(tx, completed, reference, at);
  return completed;
}

async function recordDepositEvent(
  tx: Queryable,
  deposit: DepositRow,
  reference: ReferenceSnapshot,
  at: Date,
): Promise<void> {
  await recordStatusEvent(tx, 'deposits', deposit, toDepositRecord(deposit, reference), at);
}

export interface SandboxDepositInput extends SandboxDepositRequest {
  /**
   * Makes the call idempotent: the same key with the same input returns the first deposit, with
   * other input it is IDEMPOTENCY_MISMATCH. A fresh key is used when absent.
   */
  readonly idempotencyKey?: string;
}

/**
 * A sandbox deposit made in-process (the seeded sandbox, operator tools), through the same
 * validation and the same transaction as the HTTP operation. The fingerprint is a hash of the
 * input, so a repeated seed with a stable idempotencyKey deposits once.
 */
export async function createSandboxDeposit(
  context: DepositContext,
  principal: Book,
  input: SandboxDepositInput,
): Promise<DepositRecord> {
  const { idempotencyKey, ...fields } = input;
  const parsed = sandboxDepositSchema.safeParse(fields);
  if (!parsed.success) throw bodyError(toIssues(parsed.error));
  const request = parsed.data;
  const canonical = JSON.stringify(Object.entries(request).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const fingerprint = `sha256:${createHash('sha256').update(`in-process sandbox deposit\n${canonical}`).digest('hex')}`;
  const row = await createDeposit(context, principal, request, {
    key: idempotencyKey ?? `in-process:${randomUUID()}`,
    fingerprint,
  });
  return toDepositRecord(row, await context.reference());
}
