/**
 * The withdrawal processor: moves live withdrawals through a payment rail. Each round it claims
 * withdrawals one at a time with FOR UPDATE SKIP LOCKED and, in that withdrawal's own
 * transaction, either submits a PENDING one to the rail (-> PROCESSING) or asks the rail how a
 * PROCESSING one whose estimated completion has passed ended (-> COMPLETED or FAILED; still in
 * flight: asked again next round). Any number of processors can run: a locked withdrawal is
 * skipped, and the status check under the lock (applyTransition) is the last guard.
 *
 * Live book only. Sandbox withdrawals stay PENDING until the integrator drives them with POST
 * /v3/fx/sandbox/withdrawals/{id}/complete or /fail, so tests and integrations decide every
 * outcome themselves and nothing in the sandbox changes behind their back.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { PaymentRail } from './payment-rails.js';
import { type WithdrawalContext, applyTransition, claimLiveWithdrawal, submitToRail, toRailWithdrawal } from './withdrawals.js';

export interface WithdrawalProcessorOptions {
  /** Pause between two rounds, counted from the end of the previous one. */
  readonly intervalMs?: number;
  /** The most withdrawals one round claims; the next round picks up the rest. */
  readonly batchSize?: number;
  readonly log?: Pick<FastifyBaseLogger, 'error'>;
}

export const WITHDRAWAL_PROCESSOR_DEFAULTS = { intervalMs: 1000, batchSize: 100 } as const;

export interface WithdrawalProcessor {
  /** Starts polling (logging failures to `log` unless the options gave one); a second call does nothing. */
  start(log?: Pick<FastifyBaseLogger, 'error'>): void;
  /** Stops polling and waits for the round in progress, if any. */
  stop(): Promise<void>;
  /** One round, now: returns how many status changes it made. */
  runOnce(): Promise<number>;
}

type Step = 'moved' | 'in-flight' | 'none';

export function createWithdrawalProcessor(
  context: Pick<WithdrawalContext, 'db' | 'reference' | 'now'>,
  rail: PaymentRail,
  options: WithdrawalProcessorOptions = {},
): WithdrawalProcessor {
  const intervalMs = options.intervalMs ?? WITHDRAWAL_PROCESSOR_DEFAULTS.intervalMs;
  const batchSize = options.batchSize ?? WITHDRAWAL_PROCESSOR_DEFAULTS.batchSize;
  let timer: NodeJS.Timeout | null = null;
  let running = false;
  let round: Promise<unknown> = Promise.resolve();
  let log = options.log;

  /** Claims one withdrawal with work to do and does it; `claimed` names it as soon as it is locked. */
  const processOne = async (skip: readonly string[], claimed: { id: string | null }): Promise<Step> => {
    // Read before the transaction: a reference-data refresh inside it would wait for a second
    // connection, which the embedded database (one connection) never has.
    const reference = await context.reference();
    return context.db.transaction(async (tx): Promise<Step> => {
      const now = context.now();
      const withdrawal = await claimLiveWithdrawal(tx, now, skip);
      if (!withdrawal) return 'none';
      claimed.id = withdrawal.id;
      if (withdrawal.status === 'PENDING') {
        await submitToRail(tx, withdrawal, rail, reference, now);
        return 'moved';
      }
      const outcome = await rail.outcome(toRailWithdrawal(withdrawal), now);
      if (outcome.status === 'IN_FLIGHT') return 'in-flight';
      if (outcome.status === 'COMPLETED') {
        await applyTransition(tx, withdrawal, 'COMPLETED', { paymentDetails: outcome.paymentDetails, transactionHash: outcome.transactionHash }, reference, now);
      } else {
        await applyTransition(tx, withdrawal, 'FAILED', { failureReason: outcome.reason }, reference, now);
      }
      return 'moved';
    });
  };

  const runOnce = async (): Promise<number> => {
    let moved = 0;
    // Withdrawals still in flight, or whose step failed, are skipped for the rest of the round,
    // so one of them cannot hold back the others; the next round tries them again. One that was
    // just submitted is not skipped: with no rail delay it completes in the same round.
    const skip: string[] = [];
    for (let claims = 0; claims < batchSize; claims += 1) {
      const claimed: { id: string | null } = { id: null };
      try {
        const step = await processOne(skip, claimed);
        if (step === 'none') break;
        if (step === 'moved') moved += 1;
        else skip.push(claimed.id!);
      } catch (error) {
        log?.error({ err: error, withdrawalId: claimed.id }, 'withdrawal processor: a step failed; it is retried on the next round');
        // Without a claimed withdrawal the claim itself failed (database down): end the round.
        if (claimed.id === null) break;
        skip.push(claimed.id);
      }
    }
    return moved;
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
      log ??= startLog;
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
