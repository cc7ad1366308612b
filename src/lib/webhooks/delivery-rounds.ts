/**
 * The rounds of a webhook delivery worker, as the v3 worker (src/core/events/webhook-worker.ts)
 * and the legacy one (src/gateway/webhooks/delivery-worker.ts) both run them: the rounds in
 * progress, which stop() interrupts; the claimed rows attempted `concurrency` at a time; the
 * outcomes of a locked round written one after another on its connection; and the lease of a
 * leased round, with the rows it did not reach handed back; and DeliveryWorkerCore, the poll
 * loop, stop() and runOnce() both workers extend. Library code: the claims, the attempts and the
 * records are the worker's own; touches nothing.
 */
import type { Mode } from '../auth/credential-vocabulary.js';
import type { Database, Queryable } from '../db/database.js';
import { createPollLoop, type PollLoop } from '../jobs/poll-loop.js';
import type { DestinationPolicy } from '../net/destination-policy.js';
import { type AttemptResult, type ModeFetchers, modeFetchers, type WebhookFetcher } from './delivery-attempt.js';

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
export interface WorkerSteps<Row extends { readonly id: string }, Result> {
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

/** What a worker is given that its core keeps (each worker's dependencies have these). */
export interface WorkerCoreDependencies {
  readonly db: Database;
  /** The clock; `new Date()` unless given. */
  readonly now?: () => Date;
  /** Every attempt's fetcher, in place of the guarded agents (tests). */
  readonly fetcher?: WebhookFetcher;
  readonly log?: RoundLog;
}

/**
 * What the v3 and the legacy delivery workers share: their rounds in progress, their poll loop,
 * stop() and runOnce(). A subclass gives the steps of a round.
 */
export abstract class DeliveryWorkerCore<
  Row extends { readonly id: string },
  Result,
  Options extends DeliveryLoopOptions = DeliveryLoopOptions,
> {
  /** The rounds in progress, which stop() interrupts. */
  private readonly rounds: DeliveryRounds;
  /** Ticks until stop(): at once after a full batch (or a nudge), else after pollIntervalMs. */
  protected readonly loop: PollLoop;

  protected readonly db: Database;
  readonly options: Options;
  protected readonly now: () => Date;
  /** The outbound connections of the attempts, which stop() closes. */
  protected readonly outboundFetchers: ModeFetchers;
  /** Where failed rounds (and the worker's own troubles) are reported. */
  protected log: RoundLog | null;
  private readonly failedMessage: string;

  /**
   * `names`: the rounds' in their errors, the poll loop's, and the log line of a failed round;
   * `destinations`: where each mode's attempts may go, for the outbound fetchers.
   */
  protected constructor(
    names: { readonly rounds: string; readonly loop: string; readonly failed: string },
    deps: WorkerCoreDependencies,
    options: Options,
    destinations: Readonly<Record<Mode, DestinationPolicy>>,
  ) {
    this.db = deps.db;
    this.options = options;
    this.now = deps.now ?? (() => new Date());
    this.outboundFetchers = modeFetchers(destinations, options, deps.fetcher);
    this.log = deps.log ?? null;
    this.failedMessage = names.failed;
    this.rounds = new DeliveryRounds(names.rounds);
    // A database outage: the deliveries are still in the outbox; report it and poll again.
    this.loop = deliveryPollLoop(
      names.loop,
      options,
      () => this.runOnce(),
      (error) => this.log?.error({ err: error }, this.failedMessage),
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

  /** The steps of a round whose signal stop() aborts. */
  protected abstract roundSteps(signal: AbortSignal): WorkerSteps<Row, Result>;
}

/** A worker's table of attempts: one row an attempt made, whatever came of it. */
export type AttemptsTable = 'webhook_delivery_attempts' | 'legacy_webhook_delivery_attempts';

/** Writes an attempt's row: the receiver's status code, or the error that stood for an answer, and its duration. */
export async function insertAttempt(
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
