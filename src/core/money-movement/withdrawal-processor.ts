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
import { type ClaimResult, createPollingJob, type PollingJob, type PollingJobOptions } from '../jobs/polling-job.js';
import { transactionWithReference } from '../trading/trading-context.js';
import type { PaymentRail } from './payment-rails.js';
import type { WithdrawalStatus } from './withdrawal-status.js';
import {
  applyTransition,
  claimLiveWithdrawal,
  submitToRail,
  toRailWithdrawal,
  type WithdrawalContext,
} from './withdrawals.js';

export type WithdrawalProcessorOptions = PollingJobOptions;

/** start, stop, and runOnce (one round now: returns how many status changes it made). */
export type WithdrawalProcessor = PollingJob;

export function createWithdrawalProcessor(
  context: Pick<WithdrawalContext, 'db' | 'reference' | 'now' | 'metrics'>,
  rail: PaymentRail,
  options: WithdrawalProcessorOptions = {},
): WithdrawalProcessor {
  return createPollingJob(options, {
    names: { job: 'withdrawal processor', item: 'withdrawalId' },
    // A withdrawal still in flight is skipped for the rest of the round; one just submitted is
    // not, so with no rail delay it completes in the same round.
    async claimOne(skip, claimed) {
      const { result, moved } = await transactionWithReference(
        context,
        async (
          tx,
          reference,
        ): Promise<{ result: ClaimResult; moved?: readonly [WithdrawalStatus, WithdrawalStatus] }> => {
          const now = context.now();
          const withdrawal = await claimLiveWithdrawal(tx, now, skip);
          if (!withdrawal) return { result: 'none' };
          claimed(withdrawal.id);
          if (withdrawal.status === 'PENDING') {
            await submitToRail(tx, withdrawal, rail, reference, now);
            return { result: 'done', moved: ['PENDING', 'PROCESSING'] };
          }
          const outcome = await rail.outcome(toRailWithdrawal(withdrawal), now);
          if (outcome.status === 'IN_FLIGHT') return { result: 'skip' };
          if (outcome.status === 'COMPLETED') {
            await applyTransition(
              tx,
              withdrawal,
              'COMPLETED',
              { paymentDetails: outcome.paymentDetails, transactionHash: outcome.transactionHash },
              reference,
              now,
            );
          } else {
            await applyTransition(tx, withdrawal, 'FAILED', { failureReason: outcome.reason }, reference, now);
          }
          return { result: 'done', moved: [withdrawal.status, outcome.status] };
        },
      );
      // Counted once the transaction has committed.
      if (moved !== undefined) context.metrics?.withdrawalMoved(...moved);
      return result;
    },
  });
}
