/**
 * When a failed v3 webhook delivery is tried again: the shared schedule of
 * src/lib/webhooks/retry-schedule.ts with its default policy, for 72 hours.
 *
 *   failure   1       2      3      4      5      6     7     8      9       10 and after
 *   ceiling   5 m     10 m   20 m   40 m   80 m   2.7 h 5.3 h 10.7 h 21.3 h  24 h
 *
 * A receiver that never answers sees 12 to 15 attempts in the 72 hours (13 with average waits),
 * the last at the 72-hour mark (test/lib/webhooks/retry-schedule.test.ts counts them).
 */
import {
  DEFAULT_RETRY_POLICY,
  type DeliveryOutcome,
  outcomeAfterAttempt,
  retryCeilingFor,
  retryDelayFor,
} from '../../lib/webhooks/retry-schedule.js';

export type { DeliveryOutcome } from '../../lib/webhooks/retry-schedule.js';

export const RETRY_BASE_MS = DEFAULT_RETRY_POLICY.baseMs;
export const RETRY_CAP_MS = DEFAULT_RETRY_POLICY.capMs;
/** How long after its event a delivery is still tried. */
export const DELIVERY_MAX_AGE_MS = DEFAULT_RETRY_POLICY.maxAgeMs;

/** The upper bound of the wait after `failures` failed attempts (1 or more). */
export function retryCeilingMs(failures: number): number {
  return retryCeilingFor(DEFAULT_RETRY_POLICY, failures);
}

/** The wait after `failures` failed attempts, in [ceiling / 2, ceiling); random() in [0, 1). */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  return retryDelayFor(DEFAULT_RETRY_POLICY, failures, random);
}

/**
 * What becomes of a delivery after an attempt at `now`: delivered on success; otherwise tried
 * again after the backoff (no later than the deadline), or given up from the deadline on.
 */
export function afterAttempt(input: {
  readonly succeeded: boolean;
  readonly failures: number;
  readonly now: Date;
  readonly eventCreatedAt: Date;
  readonly maxAgeMs: number;
  readonly random?: () => number;
}): DeliveryOutcome {
  return outcomeAfterAttempt({ ...DEFAULT_RETRY_POLICY, maxAgeMs: input.maxAgeMs }, input);
}
