/**
 * The deposit completer: settles PENDING deposits whose `completes_at` has passed (sandbox
 * deposits made with a delay) into their outcome, COMPLETED or FAILED. Each deposit is claimed
 * with FOR UPDATE SKIP LOCKED and settled in its own transaction, so any number of completers
 * (processes or timers) can run at once: a locked deposit is skipped, and one settled meanwhile
 * no longer matches `status = 'PENDING'` when its lock is taken. The conditional update in
 * settlePendingDeposit is the last guard.
 */
import { createPollingJob, type PollingJob, type PollingJobOptions } from '../jobs/polling-job.js';
import { transactionWithReference } from '../trading/trading-context.js';
import { type DepositContext, settlePendingDeposit } from './deposits.js';

export type DepositCompleterOptions = PollingJobOptions;

/** start, stop, and runOnce (one round now: completes what is due, returns how many). */
export type DepositCompleter = PollingJob;

export function createDepositCompleter(
  context: DepositContext,
  options: DepositCompleterOptions = {},
): DepositCompleter {
  return createPollingJob(options, {
    names: { job: 'deposit completer', item: 'depositId' },
    async claimOne(skip, claimed) {
      return transactionWithReference(context, async (tx, reference) => {
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
        if (!due) return 'none';
        claimed(due.id);
        await settlePendingDeposit(tx, due, reference, now);
        return 'done';
      });
    },
  });
}
