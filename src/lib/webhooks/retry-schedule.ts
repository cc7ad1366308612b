/**
 * When a failed webhook delivery is tried again: exponential backoff with "equal" jitter, until
 * a deadline after the event. The core's v3 deliveries and the gateway's legacy deliveries both
 * follow it, each with its own policy (the defaults are the core's).
 *
 * After the n-th failed attempt the ceiling is min(cap, base * 2^(n-1)), and the next attempt
 * waits a uniformly random time in [ceiling / 2, ceiling). Half of each wait is random, which
 * spreads the retries of many deliveries that failed together (a receiver coming back up is not
 * hit by all of them at once); the other half keeps the ladder's shape. The last retry is moved
 * to the deadline if it would fall after it, and the delivery is given up when an attempt at or
 * after the deadline fails.
 */

export interface RetryPolicy {
  /** The first ceiling, after one failure. */
  readonly baseMs: number;
  /** No wait is longer. */
  readonly capMs: number;
  /** How long after its event a delivery is still tried. */
  readonly maxAgeMs: number;
}

/** 5 min, doubling to 24 h, for 72 h: 11 to 13 attempts for a receiver that never answers. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  baseMs: 5 * 60 * 1000,
  capMs: 24 * 60 * 60 * 1000,
  maxAgeMs: 72 * 60 * 60 * 1000,
});

/** The upper bound of the wait after `failures` failed attempts (1 or more). */
export function retryCeilingFor(policy: Pick<RetryPolicy, 'baseMs' | 'capMs'>, failures: number): number {
  // 2^30 already passes any cap; bounding the exponent keeps the arithmetic exact.
  return Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(Math.max(failures, 1) - 1, 30));
}

/** The wait after `failures` failed attempts, in [ceiling / 2, ceiling); random() in [0, 1). */
export function retryDelayFor(
  policy: Pick<RetryPolicy, 'baseMs' | 'capMs'>,
  failures: number,
  random: () => number = Math.random,
): number {
  const ceiling = retryCeilingFor(policy, failures);
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
export function outcomeAfterAttempt(
  policy: RetryPolicy,
  input: {
    readonly succeeded: boolean;
    readonly failures: number;
    readonly now: Date;
    readonly eventCreatedAt: Date;
    readonly random?: () => number;
  },
): DeliveryOutcome {
  if (input.succeeded) return { status: 'DELIVERED' };
  const deadline = input.eventCreatedAt.getTime() + policy.maxAgeMs;
  const now = input.now.getTime();
  if (now >= deadline) return { status: 'GAVE_UP' };
  return {
    status: 'PENDING',
    nextAttemptAt: new Date(Math.min(now + retryDelayFor(policy, input.failures, input.random), deadline)),
  };
}
