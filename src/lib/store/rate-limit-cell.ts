/**
 * One request charged to one GCRA cell of the ephemeral store, as the v3 pipeline
 * (core/http/rate-limit.ts) and the legacy gateway (gateway/legacy/runtime/legacy-rate-limits.ts) both charge
 * theirs: the same period, the same headers' arithmetic, and the same failure rule. It fails
 * open: a store that cannot be reached lets the request through (a null result), so that a
 * store outage does not take the API down with it. Touches the store only.
 */
import { StoreUnavailableError } from '../errors/internal-errors.js';
import { type EphemeralStore, type RateLimitResult } from './ephemeral-store.js';

/** Every cell's period: the limits are requests per 10 s. */
export const RATE_LIMIT_PERIOD_MS = 10_000;

/** Reads (GET, HEAD) and writes are charged to separate cells. */
export type RateLimitClass = 'read' | 'write';

/** What one charge found: the cell's limit, and the store's verdict (null: the store was down and the request let through). */
export interface RateLimitCharge {
  readonly limit: number;
  readonly result: RateLimitResult | null;
}

/**
 * Charges one request to the cell `key` of `limit` requests per period. A store outage is
 * reported to `onStoreDown` and lets the request through; any other error is thrown.
 */
export async function chargeCell(
  store: EphemeralStore,
  key: string,
  limit: number,
  onStoreDown: (error: StoreUnavailableError) => void,
): Promise<RateLimitCharge> {
  try {
    return { limit, result: await store.rateLimit({ key, limit, periodMs: RATE_LIMIT_PERIOD_MS }) };
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    onStoreDown(error);
    return { limit, result: null };
  }
}

/** True when the store refused the request (never when it was down). */
export function isOverLimit(charge: RateLimitCharge): boolean {
  return charge.result !== null && !charge.result.allowed;
}

/** `RateLimit-Reset`: whole seconds until the cell is full again (0 when the store was down). */
export function resetSeconds(charge: RateLimitCharge): number {
  return Math.ceil((charge.result?.resetMs ?? 0) / 1000);
}

/** `Retry-After` of a refused request: whole seconds until the next one is allowed, at least 1. */
export function retryAfterSeconds(result: RateLimitResult): number {
  return Math.max(1, Math.ceil(result.retryAfterMs / 1000));
}
