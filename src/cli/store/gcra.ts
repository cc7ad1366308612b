/**
 * GCRA (the generic cell rate algorithm) as one pure step, so that both stores compute the same
 * numbers. The Redis Lua script in redis-scripts.ts is a line-by-line copy of this function: change
 * both together (the shared contract suite checks that they agree).
 *
 * Time is in whole microseconds and the emission interval T = periodMs / limit is truncated to
 * whole microseconds, so that every sum is exact (timestamps stay below 2^53): 1000 / 3 ms in
 * floats lets the last request of a burst miss its slot by one rounding error. The burst
 * tolerance is limit * T rather than periodMs for the same reason: a full bucket then admits
 * exactly `limit` requests for every limit and period. Both differ from the nominal values by
 * under a microsecond per request.
 */
import type { RateLimitResult } from '../../lib/store/ephemeral-store.js';

export interface GcraStep {
  readonly result: RateLimitResult;
  /** The theoretical arrival time to store, with its TTL; undefined when the request was denied. */
  readonly store?: { readonly tatUs: number; readonly ttlMs: number };
}

export function gcraStep(storedTatUs: number | undefined, nowUs: number, limit: number, periodMs: number): GcraStep {
  // At least 1: store-input.ts refuses more than one request per microsecond.
  const intervalUs = Math.floor((periodMs * 1000) / limit);
  // A whole period's worth of intervals: a full bucket admits `limit` requests at once.
  const toleranceUs = limit * intervalUs;
  const tatUs = storedTatUs !== undefined && storedTatUs > nowUs ? storedTatUs : nowUs;
  const newTatUs = tatUs + intervalUs;
  const allowAtUs = newTatUs - toleranceUs;
  if (allowAtUs > nowUs) {
    // Denied requests leave the cell as it was, or a client hammering a full limiter would never get back in.
    return {
      result: {
        allowed: false,
        remaining: 0,
        resetMs: Math.ceil((tatUs - nowUs) / 1000),
        retryAfterMs: Math.ceil((allowAtUs - nowUs) / 1000),
      },
    };
  }
  const ttlMs = Math.ceil((newTatUs - nowUs) / 1000);
  const remaining = Math.floor((toleranceUs - (newTatUs - nowUs)) / intervalUs);
  return { result: { allowed: true, remaining, resetMs: ttlMs, retryAfterMs: 0 }, store: { tatUs: newTatUs, ttlMs } };
}
