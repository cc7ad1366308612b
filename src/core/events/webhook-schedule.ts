/**
 * When a failed webhook delivery is tried again: exponential backoff with "equal" jitter, for
 * 72 hours from the event (DESIGN 3.8: about 10 tries).
 *
 * After the n-th failed attempt the ceiling is min(24 h, 5 min * 2^(n-1)), and the next attempt
 * waits a uniformly random time in [ceiling / 2, ceiling):
 *
 *   failure   1       2      3      4      5      6     7     8      9       10 and after
 *   ceiling   5 m     10 m   20 m   40 m   80 m   2.7 h 5.3 h 10.7 h 21.3 h  24 h
 *
 * Half of each wait is random, which spreads the retries of many deliveries that failed
 * together (a receiver coming back up is not hit by all of them at once); the other half keeps
 * the ladder's shape, so a receiver that never answers sees 11 to 13 attempts in the 72 hours
 * (12 on average waits). The last retry is moved to the 72-hour mark if it would fall after it,
 * and the delivery is given up (GAVE_UP) when an attempt at or after that mark fails.
 */

export const RETRY_BASE_MS = 5 * 60 * 1000;
export const RETRY_CAP_MS = 24 * 60 * 60 * 1000;
/** How long after its event a delivery is still tried. */
export const DELIVERY_MAX_AGE_MS = 72 * 60 * 60 * 1000;

/** The upper bound of the wait after `failures` failed attempts (1 or more). */
export function retryCeilingMs(failures: number): number {
  // 2^30 already passes the cap; bounding the exponent keeps the arithmetic exact.
  return Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 30));
}

/** The wait after `failures` failed attempts, in [ceiling / 2, ceiling); random() in [0, 1). */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  const ceiling = retryCeilingMs(failures);
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}

export type DeliveryOutcome =
  | { readonly status: 'DELIVERED' }
  | { readonly status: 'PENDING'; readonly nextAttemptAt: Date }
  | { readonly status: 'GAVE_UP' };

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
  if (input.succeeded) return { status: 'DELIVERED' };
  const deadline = input.eventCreatedAt.getTime() + input.maxAgeMs;
  const now = input.now.getTime();
  if (now >= deadline) return { status: 'GAVE_UP' };
  return { status: 'PENDING', nextAttemptAt: new Date(Math.min(now + retryDelayMs(input.failures, input.random), deadline)) };
}
