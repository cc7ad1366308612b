/**
 * When a failed webhook delivery is tried again: exponential backoff with full jitter, for
 * 72 hours from the event (DESIGN 3.8).
 *
 * After the n-th failed attempt the next one waits a uniformly random time in
 * [1 s, min(12 h, 30 s * 2^(n-1))]:
 *
 *   failure   1     2    3    4    5     6     7     8     9      10     11     12 and after
 *   at most   30 s  1 m  2 m  4 m  8 m   16 m  32 m  64 m  2.1 h  4.3 h  8.5 h  12 h
 *
 * Full jitter (rather than a fixed ladder) spreads the retries of many deliveries that failed
 * together, so a receiver coming back up is not hit by all of them at once. If every wait drew
 * its maximum, the 72 hours would hold 16 attempts; the waits average half that, so a receiver
 * that never answers sees about 22 (the first eleven within the first ~17 hours, then about two
 * a day). The last retry is moved to the 72-hour mark if it would fall after it, and the
 * delivery is given up (GAVE_UP) when an attempt at or after that mark fails.
 */

export const RETRY_BASE_MS = 30_000;
export const RETRY_CAP_MS = 12 * 60 * 60 * 1000;
/** A floor, so an unlucky draw near zero does not retry a failing receiver straight away. */
export const RETRY_MIN_MS = 1000;
/** How long after its event a delivery is still tried. */
export const DELIVERY_MAX_AGE_MS = 72 * 60 * 60 * 1000;

/** The upper bound of the wait after `failures` failed attempts (1 or more). */
export function retryCeilingMs(failures: number): number {
  // 2^30 already passes the cap; bounding the exponent keeps the arithmetic exact.
  return Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 30));
}

/** The wait after `failures` failed attempts; random() in [0, 1) as Math.random. */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  return Math.max(RETRY_MIN_MS, Math.floor(random() * retryCeilingMs(failures)));
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
