/**
 * The rounds of a webhook delivery worker, as the v3 worker (src/core/events/webhook-worker.ts)
 * and the legacy one (src/gateway/webhooks/delivery-worker.ts) both run them: the rounds in
 * progress, which stop() interrupts; the claimed rows attempted `concurrency` at a time; the
 * outcomes of a locked round written one after another on its connection; and the lease of a
 * leased round, with the rows it did not reach handed back; and DeliveryWorkerCore, which both
 * workers extend: the poll loop, stop() and runOnce(), the claims, hand-backs and records of a
 * worker's outbox, and the sending of its signed deliveries. Library code: touches the outbox
 * tables a worker names (its deliveries and their attempts) and the network, through the
 * attempts; a worker's signing and its schedule are its own.
 */
import type { Mode } from '../auth/credential-vocabulary.js';
import type { Database, Queryable } from '../db/database.js';
import { createPollLoop, type PollLoop } from '../jobs/poll-loop.js';
import {
  type Audience,
  type DestinationPolicy,
  type OutboundAllowance,
  webhookPolicies,
} from '../net/destination-policy.js';
import type { SealingKeyring } from '../secrets/sealing-keyring.js';
import {
  attemptDelivery,
  type AttemptResult,
  type DeliveryKind,
  type DeliveryPost,
  type ModeFetchers,
  modeFetchers,
  type WebhookFetcher,
} from './delivery-attempt.js';
import type { DeliveryOutcome } from './retry-schedule.js';

/**
 * How a round claims its rows: 'lock' (PostgreSQL) holds the row locks through the attempts in
 * one transaction; 'lease' (PGlite, one connection) puts the rows out of reach for the longest
 * the round can take, and records each outcome in its own short transaction.
 */
export type ClaimMode = 'lock' | 'lease';

export interface DeliveryRoundOptions {
  /** Deliveries claimed per round. */
  readonly batchSize: number;
  /** Attempts in flight at once in a round, and so at most this many connections. */
  readonly concurrency: number;
  /** Whole-attempt bound: connect, send, response headers and body. */
  readonly requestTimeoutMs: number;
}

export interface DeliveryLoopOptions extends DeliveryRoundOptions {
  /** Wait between rounds that found less than a full batch. */
  readonly pollIntervalMs: number;
  /** By default 'lock' on PostgreSQL and 'lease' on PGlite (defaultClaim). */
  readonly claim: ClaimMode;
}

/** The claim a database's driver wants: PGlite's one connection cannot be held through HTTP calls. */
export function defaultClaim(db: Database): ClaimMode {
  return db.driver === 'pglite' ? 'lease' : 'lock';
}

/** A worker's poll loop: a round at once after a full batch, else after pollIntervalMs. */
export function deliveryPollLoop(
  name: string,
  options: DeliveryLoopOptions,
  runOnce: () => Promise<number>,
  onError: (error: unknown) => void,
): PollLoop {
  return createPollLoop({
    name,
    intervalMs: options.pollIntervalMs,
    firstDelayMs: 0,
    tick: async () => ((await runOnce()) >= options.batchSize ? 'again' : 'wait'),
    onError,
  });
}

/** The end of the lease of rows claimed at `now`: the longest a round can hold one, its attempts running in waves of `concurrency`. */
export function roundLeaseUntil(now: Date, options: DeliveryRoundOptions): Date {
  const waves = Math.ceil(options.batchSize / options.concurrency) + 1;
  return new Date(now.getTime() + waves * options.requestTimeoutMs);
}

/**
 * `write` made to run one call after another: a connection runs one statement at a time, and pg
 * refuses overlapping queries, while a round's attempts run concurrently. A failed write fails
 * its own call only.
 */
export function oneAfterAnother<A extends unknown[]>(
  write: (...args: A) => Promise<void>,
): (...args: A) => Promise<void> {
  let writes: Promise<void> = Promise.resolve();
  return (...args) => {
    const next = writes.then(() => write(...args));
    writes = next.catch(() => undefined);
    return next;
  };
}

export interface LaneWork<Row, Result> {
  readonly concurrency: number;
  readonly signal: AbortSignal;
  readonly now: () => Date;
  /** The attempt of a row; null when nothing is to be sent (its endpoint or subscription is gone). */
  readonly attempt: (row: Row, attemptedAt: Date) => Promise<Result | null>;
  readonly record: (row: Row, result: Result | null, attemptedAt: Date) => Promise<void>;
}

/**
 * Attempts the rows, `concurrency` at a time, stopping early when the signal aborts; returns the
 * ids it reached. Every lane is awaited even when one fails, so nothing still uses the round's
 * transaction after it has ended.
 */
export async function attemptInLanes<Row extends { readonly id: string }, Result>(
  rows: readonly Row[],
  work: LaneWork<Row, Result>,
): Promise<Set<string>> {
  const reached = new Set<string>();
  let next = 0;
  const lane = async () => {
    while (next < rows.length && !work.signal.aborted) {
      const row = rows[next++]!;
      reached.add(row.id);
      const attemptedAt = work.now();
      await work.record(row, await work.attempt(row, attemptedAt), attemptedAt);
    }
  };
  const lanes = await Promise.allSettled(Array.from({ length: Math.min(work.concurrency, rows.length) }, lane));
  const failed = lanes.find((settled): settled is PromiseRejectedResult => settled.status === 'rejected');
  if (failed) throw failed.reason;
  return reached;
}

/** A worker's rounds in progress: each runs with a signal that stop() aborts. */
export class DeliveryRounds {
  private readonly rounds = new Set<AbortController>();
  private closedFlag = false;
  private stopping: Promise<void> | null = null;

  /** `name` is the worker's, for the errors: `the ${name} is stopped`, `${name} stopping`. */
  constructor(private readonly name: string) {}

  /** Whether stop() was called. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** Runs one round with the signal stop() aborts; refuses once stopped. */
  async run<T>(round: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.closedFlag) throw new Error(`the ${this.name} is stopped`);
    const controller = new AbortController();
    this.rounds.add(controller);
    try {
      return await round(controller.signal);
    } finally {
      this.rounds.delete(controller);
    }
  }

  /** Stops the loop, interrupts the rounds in progress, waits for the loop to end, then `close`; idempotent. */
  stop(loop: PollLoop, close: () => Promise<void>): Promise<void> {
    this.stopping ??= (async () => {
      this.closedFlag = true;
      const ended = loop.stop();
      for (const round of this.rounds) round.abort(new Error(`${this.name} stopping`));
      await ended;
      await close();
    })();
    return this.stopping;
  }
}

/** A worker's own part of a round: its claims, its attempt of a row and its record of the outcome. */
interface WorkerSteps<Row extends { readonly id: string }, Result> {
  /** Claims up to batchSize due rows, locked until the round's transaction ends. */
  readonly claimLocked: (tx: Queryable, now: Date) => Promise<readonly Row[]>;
  /** Claims up to batchSize due rows, leased until `leaseUntil`. */
  readonly claimLeased: (tx: Queryable, now: Date, leaseUntil: Date) => Promise<readonly Row[]>;
  /** Hands back leased rows a stopped round did not reach, so they need not wait for the lease's end. */
  readonly release: (db: Queryable, rows: readonly Row[], now: Date) => Promise<void>;
  readonly attempt: LaneWork<Row, Result>['attempt'];
  readonly record: (tx: Queryable, row: Row, result: Result | null, attemptedAt: Date) => Promise<void>;
}

/** A round: the worker's steps, its database, options and clock. */
interface RoundSteps<Row extends { readonly id: string }, Result> extends WorkerSteps<Row, Result> {
  readonly db: Database;
  readonly options: DeliveryLoopOptions;
  readonly now: () => Date;
}

function attemptRows<Row extends { readonly id: string }, Result>(
  steps: RoundSteps<Row, Result>,
  rows: readonly Row[],
  signal: AbortSignal,
  record: LaneWork<Row, Result>['record'],
): Promise<Set<string>> {
  return attemptInLanes(rows, {
    concurrency: steps.options.concurrency,
    signal,
    now: steps.now,
    attempt: steps.attempt,
    record,
  });
}

/** One round, claimed as `steps.options.claim` says; returns how many rows it claimed. */
function runRound<Row extends { readonly id: string }, Result>(
  steps: RoundSteps<Row, Result>,
  signal: AbortSignal,
): Promise<number> {
  return steps.options.claim === 'lock' ? lockedRound(steps, signal) : leasedRound(steps, signal);
}

/** A 'lock' round: one transaction claims the rows, holds them through the attempts and records each. */
function lockedRound<Row extends { readonly id: string }, Result>(
  steps: RoundSteps<Row, Result>,
  signal: AbortSignal,
): Promise<number> {
  return steps.db.transaction(async (tx) => {
    const rows = await steps.claimLocked(tx, steps.now());
    // The attempts run concurrently, but their results are written one after another on the round's connection.
    const record = oneAfterAnother((row: Row, result: Result | null, at: Date) => steps.record(tx, row, result, at));
    // Rows not reached before a stop need nothing: the commit unlocks them and they are still due.
    await attemptRows(steps, rows, signal, record);
    return rows.length;
  });
}

/** A 'lease' round: a short transaction claims the rows, each outcome is recorded in its own. */
async function leasedRound<Row extends { readonly id: string }, Result>(
  steps: RoundSteps<Row, Result>,
  signal: AbortSignal,
): Promise<number> {
  const now = steps.now();
  const leaseUntil = roundLeaseUntil(now, steps.options);
  const rows = await steps.db.transaction((tx) => steps.claimLeased(tx, now, leaseUntil));
  const reached = await attemptRows(steps, rows, signal, (row, result, at) =>
    steps.db.transaction((tx) => steps.record(tx, row, result, at)),
  );
  const unreached = rows.filter((row) => !reached.has(row.id));
  // Stopped before these were tried: hand them back now rather than at the lease's end.
  if (unreached.length > 0) await steps.release(steps.db, unreached, now);
  return rows.length;
}

/** The subset of a pino / fastify logger a worker's rounds write to. */
export interface RoundLog {
  error(object: object, message: string): void;
}

/** What came of an attempt, as a worker's metrics count it; `gave_up` includes a target removed before the attempt. */
export type DeliveryOutcomeName = 'delivered' | 'retrying' | 'gave_up' | 'interrupted';

/** What a worker is given that its core keeps (each worker's dependencies have these). */
export interface WorkerCoreDependencies {
  readonly db: Database;
  /** The clock; `new Date()` unless given. */
  readonly now?: () => Date;
  /** Every attempt's fetcher, in place of the guarded agents (tests). */
  readonly fetcher?: WebhookFetcher;
  readonly log?: RoundLog;
  /** The jitter's source, [0, 1) like Math.random; Math.random unless given. */
  readonly random?: () => number;
  /** Told of each attempt's outcome once it is written (the metrics). */
  readonly onOutcome?: (outcome: DeliveryOutcomeName) => void;
  /** Opens the targets' sealed secrets: the service's keyring, resolved at start-up. */
  readonly keyring: SealingKeyring;
  /**
   * Where targets may point beyond public addresses (and loopback in the sandbox), and the
   * resolver; each mode's attempts connect through undici pools that connect only there.
   */
  readonly outbound?: OutboundAllowance;
}

/** Each outbox's deliveries table, and its attempts table: one row an attempt made, whatever came of it. */
const ATTEMPTS_TABLES = {
  webhook_deliveries: 'webhook_delivery_attempts',
  legacy_webhook_deliveries: 'legacy_webhook_delivery_attempts',
} as const;

type AttemptsTable = (typeof ATTEMPTS_TABLES)[keyof typeof ATTEMPTS_TABLES];

/**
 * A worker's outbox: its deliveries table (whose attempts table is ATTEMPTS_TABLES's), how its
 * lease is held, and what its claim reads.
 *
 * - lease 'next_attempt_at' (v3): a leased round moves the rows' due time to the lease's end;
 *   a row handed back (not reached, or its attempt interrupted) is due again from that moment.
 * - lease 'leased_until' (legacy): a column of its own, which every write of the row clears.
 */
export interface Outbox {
  readonly deliveries: keyof typeof ATTEMPTS_TABLES;
  readonly lease: 'next_attempt_at' | 'leased_until';
  /** The delivery's columns a claim carries besides id and attempts (what the joins need). */
  readonly carried: readonly string[];
  /** The claimed row's columns besides id and attempts, over `c` (the claimed deliveries) and the joins. */
  readonly columns: string;
  readonly joins: string;
}

/** A claimed delivery: its id (bigint, as text in both drivers), the attempts it had when claimed, and its target's status. */
export interface ClaimedRow {
  readonly id: string;
  readonly attempts: number;
  /** The endpoint's or subscription's. */
  readonly target_status: string;
}

/** A delivery signed for its target, or why nothing is sent (a failed attempt, retried on the schedule). */
export type SignedDelivery = { readonly mode: Mode; readonly post: DeliveryPost } | { readonly notSent: string };

/**
 * The statements of an outbox. Every write is guarded by the attempt count the row was claimed
 * with, so a stale lease's late result changes nothing.
 */
function outboxStatements(outbox: Outbox) {
  const table = outbox.deliveries;
  const byDueTime = outbox.lease === 'next_attempt_at';
  const notLeased = byDueTime ? '' : ' AND (leased_until IS NULL OR leased_until <= $1)';
  const due = `SELECT id FROM ${table} WHERE status = 'PENDING' AND next_attempt_at <= $1${notLeased}
  ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED`;
  const claimed = (claim: string, order: string) =>
    `WITH c AS (${claim}) SELECT c.id::text AS id, c.attempts, ${outbox.columns} FROM c ${outbox.joins} ORDER BY ${order}`;
  const carried = outbox.carried.join(', ');
  // Handed back: due again from the time given, or the lease cleared; every other write clears the lease too.
  const handBack = (at: string) => (byDueTime ? `next_attempt_at = ${at}` : 'leased_until = NULL');
  const clearLease = byDueTime ? '' : ', leased_until = NULL';
  const claimedAttempt = `WHERE id = $1 AND status = 'PENDING' AND attempts = $2`;
  return {
    byDueTime,
    claimLocked: claimed(
      `SELECT ${['id', 'attempts', ...outbox.carried, 'next_attempt_at'].map((column) => `d.${column}`).join(', ')} FROM ${table} d WHERE d.id IN (${due})`,
      'c.next_attempt_at, c.id',
    ),
    claimLeased: claimed(
      `UPDATE ${table} SET ${outbox.lease} = $3 WHERE id IN (${due}) RETURNING id, attempts, ${carried}`,
      'c.id',
    ),
    release: `UPDATE ${table} SET ${handBack('$2')} WHERE id = ANY($1::bigint[]) AND status = 'PENDING'`,
    gaveUp: `UPDATE ${table} SET status = 'GAVE_UP'${clearLease} ${claimedAttempt}`,
    interrupted: `UPDATE ${table} SET ${handBack('$3')} ${claimedAttempt}`,
    settled: `UPDATE ${table}
          SET status = $3, attempts = attempts + 1${clearLease},
              next_attempt_at = COALESCE($4, next_attempt_at),
              delivered_at = CASE WHEN $3 = 'DELIVERED' THEN $5::timestamptz ELSE delivered_at END
        ${claimedAttempt}`,
  };
}

/** What makes a worker itself, as its constructor gives it to the core. */
export interface WorkerDescription<Options extends DeliveryLoopOptions> {
  /** The rounds' name in their errors, the poll loop's, and the log line of a failed round. */
  readonly names: { readonly rounds: string; readonly loop: string; readonly failed: string };
  /** Its attempts' kind in their traces. */
  readonly kind: DeliveryKind;
  readonly outbox: Outbox;
  /** Its options but the claim, which is the database's (defaultClaim) unless given. */
  readonly defaults: Omit<Options, 'claim'>;
  /** Whose targets it delivers to: a refusal recorded on an attempt names the setting that allows more. */
  readonly audience: Audience;
}

/** What an attempt tells the worker's schedule: whether the receiver took it, and the failures counting this one. */
export interface AttemptOutcome {
  readonly succeeded: boolean;
  readonly failures: number;
  readonly now: Date;
}

/**
 * What the v3 and the legacy delivery workers share: their rounds in progress, their poll loop,
 * stop() and runOnce(); the claims, hand-backs and records of their outbox; and the sending of a
 * signed delivery where its mode allows. A subclass gives its outbox, the attempt of a row (its
 * signing) and the schedule after a failure.
 */
export abstract class DeliveryWorkerCore<
  Row extends ClaimedRow,
  Options extends DeliveryLoopOptions = DeliveryLoopOptions,
> {
  /** The rounds in progress, which stop() interrupts. */
  private readonly rounds: DeliveryRounds;
  /** Ticks until stop(): at once after a full batch (or a nudge), else after pollIntervalMs. */
  protected readonly loop: PollLoop;

  protected readonly db: Database;
  readonly options: Options;
  protected readonly now: () => Date;
  /** The jitter of the retries' schedule. */
  protected readonly random: () => number;
  protected readonly keyring: SealingKeyring;
  /** The outbound connections of the attempts, which stop() closes. */
  private readonly outboundFetchers: ModeFetchers;
  /** Where each mode's targets may point, checked before every attempt (and by the agents' connections). */
  private readonly destinations: Readonly<Record<Mode, DestinationPolicy>>;
  /** Where failed rounds (and the worker's own troubles) are reported. */
  protected log: RoundLog | null;
  private readonly onOutcome: ((outcome: DeliveryOutcomeName) => void) | null;
  private readonly kind: DeliveryKind;
  private readonly outbox: Outbox;
  private readonly statements: ReturnType<typeof outboxStatements>;

  protected constructor(
    deps: WorkerCoreDependencies & { readonly options?: Partial<Options> },
    worker: WorkerDescription<Options>,
  ) {
    // Whole: the defaults hold every option but the claim; TypeScript cannot follow that through a generic spread.
    const options = { ...worker.defaults, claim: defaultClaim(deps.db), ...deps.options } as Options;
    this.destinations = webhookPolicies(deps.outbound, worker.audience);
    this.kind = worker.kind;
    this.outbox = worker.outbox;
    this.statements = outboxStatements(worker.outbox);
    this.db = deps.db;
    this.options = options;
    this.now = deps.now ?? (() => new Date());
    this.random = deps.random ?? Math.random;
    this.keyring = deps.keyring;
    this.outboundFetchers = modeFetchers(this.destinations, options, deps.fetcher);
    this.log = deps.log ?? null;
    this.onOutcome = deps.onOutcome ?? null;
    this.rounds = new DeliveryRounds(worker.names.rounds);
    // A database outage: the deliveries are still in the outbox; report it and poll again.
    this.loop = deliveryPollLoop(
      worker.names.loop,
      options,
      () => this.runOnce(),
      (error) => this.log?.error({ err: error }, worker.names.failed),
    );
  }

  /** Whether stop() was called. */
  protected get stopped(): boolean {
    return this.rounds.closed;
  }

  /** Stops polling, interrupts the rounds in progress, waits for the loop to end and closes; idempotent. */
  stop(): Promise<void> {
    return this.rounds.stop(this.loop, () => this.outboundFetchers.close());
  }

  /** One round: claims up to batchSize due deliveries and attempts each; returns how many. */
  runOnce(): Promise<number> {
    return this.rounds.run((signal) =>
      runRound({ db: this.db, options: this.options, now: this.now, ...this.roundSteps(signal) }, signal),
    );
  }

  /** The delivery of a row, signed as the worker signs. */
  protected abstract sign(row: Row, attemptedAt: Date): SignedDelivery;

  /** What becomes of a delivery after an attempt the receiver answered or failed. */
  protected abstract schedule(row: Row, attempt: AttemptOutcome): DeliveryOutcome;

  /**
   * Signs a row's delivery and POSTs it with its mode's fetcher; a failed attempt naming why when
   * it cannot be signed or the mode's policy refuses its URL; null when its target is gone.
   */
  private async attempt(row: Row, attemptedAt: Date, signal: AbortSignal): Promise<AttemptResult | null> {
    // A target removed after the delivery was written: nothing is sent.
    if (row.target_status !== 'ACTIVE') return null;
    const signed = this.sign(row, attemptedAt);
    if ('notSent' in signed) return { kind: 'failed', error: signed.notSent, durationMs: 0 };
    // A target stored before the policy, or by a process with another allowance: nothing is sent.
    const refusal = this.destinations[signed.mode].refusalOf(signed.post.url);
    if (refusal !== null) return { kind: 'failed', error: `refused: ${refusal}`, durationMs: 0 };
    return attemptDelivery(
      this.outboundFetchers.fetchers[signed.mode],
      signed.post,
      signal,
      this.options.requestTimeoutMs,
      this.kind,
    );
  }

  /** The steps of a round whose signal stop() aborts. */
  private roundSteps(signal: AbortSignal): WorkerSteps<Row, AttemptResult> {
    const statements = this.statements;
    const claimedRows = async (tx: Queryable, sql: string, params: readonly unknown[]) =>
      (await tx.query<Row>(sql, params)).rows;
    return {
      claimLocked: (tx, now) => claimedRows(tx, statements.claimLocked, [now, this.options.batchSize]),
      claimLeased: (tx, now, leaseUntil) =>
        claimedRows(tx, statements.claimLeased, [now, this.options.batchSize, leaseUntil]),
      release: async (db, rows, now) => {
        const ids = rows.map((row) => row.id);
        await db.query(statements.release, statements.byDueTime ? [ids, now] : [ids]);
      },
      attempt: (row, attemptedAt) => this.attempt(row, attemptedAt, signal),
      record: (tx, row, result, at) => this.record(tx, row, result, at),
    };
  }

  /** Writes the attempt and the delivery's new state, and tells the outcome once it is written. */
  private async record(tx: Queryable, row: Row, result: AttemptResult | null, attemptedAt: Date): Promise<void> {
    const statements = this.statements;
    if (result === null) {
      const { rowCount } = await tx.query(statements.gaveUp, [row.id, row.attempts]);
      if (rowCount > 0) this.onOutcome?.('gave_up');
      return;
    }
    await insertAttempt(tx, ATTEMPTS_TABLES[this.outbox.deliveries], row.id, attemptedAt, result);
    if (result.kind === 'interrupted') {
      // Not the receiver's failure: no attempt counted, due again at once (a lease handed back).
      const claimed = [row.id, row.attempts];
      await tx.query(statements.interrupted, statements.byDueTime ? [...claimed, attemptedAt] : claimed);
      this.onOutcome?.('interrupted');
      return;
    }
    const outcome = this.schedule(row, {
      succeeded: receiverAccepted(result),
      failures: row.attempts + 1,
      now: attemptedAt,
    });
    const { rowCount } = await tx.query(statements.settled, [
      row.id,
      row.attempts,
      outcome.status,
      outcome.status === 'PENDING' ? outcome.nextAttemptAt : null,
      attemptedAt,
    ]);
    // A stale lease's late result changed nothing, and is not counted either.
    if (rowCount > 0)
      this.onOutcome?.(
        outcome.status === 'DELIVERED' ? 'delivered' : outcome.status === 'PENDING' ? 'retrying' : 'gave_up',
      );
  }
}

/** Writes an attempt's row: the receiver's status code, or the error that stood for an answer, and its duration. */
async function insertAttempt(
  tx: Queryable,
  table: AttemptsTable,
  deliveryId: string,
  attemptedAt: Date,
  result: AttemptResult,
): Promise<void> {
  const statusCode = result.kind === 'answered' ? result.statusCode : null;
  const error = result.kind === 'answered' ? null : result.error;
  await tx.query(
    `INSERT INTO ${table} (delivery_id, attempted_at, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5)`,
    [deliveryId, attemptedAt, statusCode, error, result.durationMs],
  );
}

/** Whether the receiver took the delivery: it answered with a 2xx status. */
export function receiverAccepted(result: AttemptResult): boolean {
  return result.kind === 'answered' && result.statusCode >= 200 && result.statusCode < 300;
}
