/**
 * Argument checks shared by every EphemeralStore, so that a bad TTL or limit fails the same way
 * in memory as in Redis (where it would otherwise surface as a protocol error, or not at all).
 */
import { InvalidStoreInputError } from '../../lib/errors/internal-errors.js';
import type { RateLimitInput } from '../../lib/store/ephemeral-store.js';

/** Redis PX takes whole positive milliseconds only; the memory store follows suit. */
export function assertTtlMs(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidStoreInputError(`${name} must be a positive whole number of milliseconds, got ${value}`);
  }
}

export function assertRateLimitInput(input: RateLimitInput): void {
  if (!Number.isSafeInteger(input.limit) || input.limit <= 0) {
    throw new InvalidStoreInputError(`limit must be a positive whole number, got ${input.limit}`);
  }
  assertTtlMs('periodMs', input.periodMs);
  // GCRA keeps time in whole microseconds (gcra.ts): a cell cannot tell two requests in one apart.
  if (input.limit > input.periodMs * 1000) {
    throw new InvalidStoreInputError(
      `limit ${input.limit} per ${input.periodMs} ms exceeds one request per microsecond`,
    );
  }
}
