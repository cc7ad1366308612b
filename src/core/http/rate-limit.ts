/**
 * Step 5: rate limits (docs/contract.md#rate-limits). GCRA per API key, reads and writes in
 * separate cells; a caller whose token did not prove a key is limited per client address. Every
 * response carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds); 429
 * adds `Retry-After`. The limiter fails open: a rate-limit store outage must not take the API down
 * with it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../../lib/errors/api-error.js';
import { type EphemeralStore, StoreUnavailableError } from '../../lib/store/ephemeral-store.js';
import { isWriteMethod } from './request-state.js';

export const RATE_LIMIT_PERIOD_MS = 10_000;

export interface RateLimiterOptions {
  readonly store: EphemeralStore;
  /** Requests per period per subject. */
  readonly reads: number;
  readonly writes: number;
}

export function createRateLimiter(options: RateLimiterOptions) {
  const { store } = options;

  /** Charges one request to `subject` (`key:<name>` or `ip:<address>`); throws 429 when over. */
  return async function charge(request: FastifyRequest, reply: FastifyReply, subject: string): Promise<void> {
    const write = isWriteMethod(request.method);
    const limit = write ? options.writes : options.reads;
    let result = null;
    try {
      result = await store.rateLimit({
        key: `rl:{${subject}}:${write ? 'w' : 'r'}`,
        limit,
        periodMs: RATE_LIMIT_PERIOD_MS,
      });
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      request.log.warn({ err: error }, 'rate-limit store unavailable; request let through');
    }
    request.v3.rateLimit = { limit, result };
    reply.header('ratelimit-limit', String(limit));
    reply.header('ratelimit-remaining', String(result?.remaining ?? limit));
    reply.header('ratelimit-reset', String(Math.ceil((result?.resetMs ?? 0) / 1000)));
    if (result && !result.allowed) {
      throw new ApiError('RATE_LIMIT_EXCEEDED', undefined, {
        headers: { 'retry-after': String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))) },
      });
    }
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

export function addressSubject(request: FastifyRequest): string {
  return `ip:${request.ip}`;
}
