/**
 * The deposit completer: completes PENDING deposits whose `completes_at` has passed (sandbox
 * deposits made with a delay). Each deposit is claimed with FOR UPDATE SKIP LOCKED and completed
 * in its own transaction, so any number of completers (processes or timers) can run at once:
 * a locked deposit is skipped, and one completed meanwhile no longer matches `status = 'PENDING'`
 * when its lock is taken. The conditional update in completePendingDeposit is the last guard.
 */
import type { FastifyBaseLogger } from 'fastify';
import { type DepositContext, completePendingDeposit } from './deposits.js';

export interface DepositCompleterOptions {
  /** Pause between two rounds, counted from the end of the previous one. */
  readonly intervalMs?: number;
  /** The most deposits one round completes; the next round picks up the rest. */
  readonly batchSize?: number;
  readonly log?: Pick<FastifyBaseLogger, 'error'>;
}

export const DEPOSIT_COMPLETER_DEFAULTS = { intervalMs: 1000, batchSize: 100 } as const;

export interface DepositCompleter {
  /** Starts polling, logging failures to `log` (else options.log); a second call does nothing. */
  start(log?: Pick<FastifyBaseLogger, 'error'>): void;
  /** Stops polling and waits for the round in progress, if any. */
  stop(): Promise<void>;
  /** One round, now: completes what is due and returns how many it completed. */
  runOnce(): Promise<number>;
}

export function createDepositCompleter(context: DepositContext, options: DepositCompleterOptions = {}): DepositCompleter {
  const intervalMs = options.intervalMs ?? DEPOSIT_COMPLETER_DEFAULTS.intervalMs;
  const batchSize = options.batchSize ?? DEPOSIT_COMPLETER_DEFAULTS.batchSize;
  let log = options.log;
  let timer: NodeJS.Timeout | null = null;
  let running = false;
  let round: Promise<unknown> = Promise.resolve();

  /**
   * Claims one due deposit and completes it. `claimed` is set as soon as a row is locked, so a
   * failure after that names the deposit that failed.
   */
  const completeOne = async (skip: readonly string[], claimed: { id: string | null }): Promise<boolean> => {
    // Read before the transaction: on PGlite's single connection, a query outside the
    // transaction (a reference-data refresh) would wait for it forever.
    const reference = await context.reference();
    return context.db.transaction(async (tx) => {
      const now = context.now();
      const { rows } = await tx.query<{ id: string }>(
        `SELECT id FROM deposits
          WHERE status = 'PENDING' AND completes_at <= $1 AND NOT (id = ANY($2::text[]))
          ORDER BY completes_at, id
          LIMIT 1
          FOR UPDATE SKIP LOCKED`,
        [now, skip],
      );
      const due = rows[0];
      if (!due) return false;
      claimed.id = due.id;
      await completePendingDeposit(tx, due, reference, now);
      return true;
    });
  };

  const runOnce = async (): Promise<number> => {
    let completed = 0;
    // Deposits that failed this round are skipped for the rest of it, so one deposit that keeps
    // failing cannot hold back those due after it; the next round tries it again.
    const failed: string[] = [];
    while (completed + failed.length < batchSize) {
      const claimed: { id: string | null } = { id: null };
      try {
        if (!(await completeOne(failed, claimed))) break;
        completed += 1;
      } catch (error) {
        log?.error({ err: error, depositId: claimed.id }, 'deposit completer: completing a deposit failed; it is retried on the next round');
        // Without a claimed deposit the claim itself failed (database down): end the round.
        if (claimed.id === null) break;
        failed.push(claimed.id);
      }
    }
    return completed;
  };

  const schedule = () => {
    if (!running) return;
    timer = setTimeout(() => {
      round = runOnce().finally(schedule);
    }, intervalMs);
    // Polling alone must not keep a process alive that has nothing else to do.
    timer.unref();
  };

  return {
    start(startLog) {
      if (running) return;
      log = startLog ?? log;
      running = true;
      schedule();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
      await round.catch(() => undefined);
    },
    runOnce,
  };
}
