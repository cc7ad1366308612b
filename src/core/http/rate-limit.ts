/**
 * Step 5: rate limits (docs/contract.md#rate-limits). GCRA per API key, reads and writes in
 * separate cells; a caller whose token did not prove a key is limited per client address. Every
 * response carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds); 429
 * adds `Retry-After`. The cell is charged as lib/store/rate-limit-cell.ts charges every cell, so
 * the limiter fails open: a rate-limit store outage must not take the API down with it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../../lib/errors/api-error.js';
import type { EphemeralStore } from '../../lib/store/ephemeral-store.js';
import { chargeCell, resetSeconds, retryAfterSeconds } from '../../lib/store/rate-limit-cell.js';
import { isWriteMethod } from './request-state.js';

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
    const charged = await chargeCell(
      store,
      `rl:{${subject}}:${write ? 'w' : 'r'}`,
      write ? options.writes : options.reads,
      (error) => request.log.warn({ err: error }, 'rate-limit store unavailable; request let through'),
    );
    const { limit, result } = charged;
    request.v3.rateLimit = charged;
    reply.header('ratelimit-limit', String(limit));
    reply.header('ratelimit-remaining', String(result?.remaining ?? limit));
    reply.header('ratelimit-reset', String(resetSeconds(charged)));
    if (result && !result.allowed) {
      throw new ApiError('RATE_LIMIT_EXCEEDED', undefined, {
        headers: { 'retry-after': String(retryAfterSeconds(result)) },
      });
    }
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

export function addressSubject(request: FastifyRequest): string {
  return `ip:${request.ip}`;
}
