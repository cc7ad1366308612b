/**
 * The legacy generations' own rate limits (docs/contract.md#rate-limits-legacy): a budget per
 * legacy API key and class, reads (GET) and writes (POST) in separate GCRA cells of the
 * gateway's store, so that every gateway on one Redis counts against the same cells. A request
 * whose token proves no key is charged to its client address instead. The cells are the
 * gateway's (`lrl:`), apart from the core's v3 cells (`rl:`): a key's legacy budget and its v3
 * budget are two things, with their own settings.
 *
 * What a charge tells the client is the cell's `RateLimit-Limit` and `RateLimit-Reset`, the
 * two rate-limit headers legacy answers have always had. A store that is down lets the request
 * through, as v3's limiter does (lib/store/rate-limit-cell.ts). Touches the store only.
 */
import { type StoreUnavailableError } from '../../../lib/errors/internal-errors.js';
import type { EphemeralStore } from '../../../lib/store/ephemeral-store.js';
import {
  chargeCell,
  type RateLimitCharge,
  type RateLimitClass,
  resetSeconds,
} from '../../../lib/store/rate-limit-cell.js';

/** Requests allowed per legacy key (or client address) and class, per 10 s. */
export interface LegacyRateLimits {
  readonly reads: number;
  readonly writes: number;
}

/** Whose budget a request is charged to: the key its token proved, or else the address it came from. */
export type LegacyRateLimitSubject =
  { readonly kind: 'key'; readonly keyName: string } | { readonly kind: 'address'; readonly address: string };

export interface LegacyRateLimitCharge extends RateLimitCharge {
  readonly subject: LegacyRateLimitSubject['kind'];
  readonly class: RateLimitClass;
}

/** The store key of a cell: `lrl:{key:<name>}:r`, `lrl:{ip:<address>}:w`. */
export function legacyCellKey(subject: LegacyRateLimitSubject, rateClass: RateLimitClass): string {
  const who = subject.kind === 'key' ? `key:${subject.keyName}` : `ip:${subject.address}`;
  return `lrl:{${who}}:${rateClass === 'write' ? 'w' : 'r'}`;
}

/** The headers every answer charged to a cell carries: that cell's limit and reset, never v3's. */
export function legacyRateLimitHeaders(charge: RateLimitCharge): Record<string, string> {
  return { 'ratelimit-limit': String(charge.limit), 'ratelimit-reset': String(resetSeconds(charge)) };
}

export interface LegacyRateLimiterOptions {
  readonly store: EphemeralStore;
  readonly limits: LegacyRateLimits;
  /** Told when the store is down and a request goes through uncounted. */
  readonly onStoreDown?: (error: StoreUnavailableError, subject: LegacyRateLimitSubject['kind']) => void;
}

export class LegacyRateLimiter {
  constructor(private readonly options: LegacyRateLimiterOptions) {}

  /** Charges one request of `rateClass` to the subject's cell. Never refuses by itself: the caller reads the charge. */
  charge(subject: LegacyRateLimitSubject, rateClass: RateLimitClass): Promise<LegacyRateLimitCharge> {
    const { store, limits, onStoreDown } = this.options;
    const limit = rateClass === 'write' ? limits.writes : limits.reads;
    return chargeCell(store, legacyCellKey(subject, rateClass), limit, (error) =>
      onStoreDown?.(error, subject.kind),
    ).then((charge) => ({ ...charge, subject: subject.kind, class: rateClass }));
  }
}
