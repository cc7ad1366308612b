/**
 * What the v3 pipeline learns about a request as it passes each step, kept on the request.
 * Each step reads what earlier steps wrote and adds its own part; nothing else writes here.
 */
import type { RateLimitResult } from '../../lib/store/ephemeral-store.js';
import type { Principal } from '../principal.js';
import type { OperationMeta } from './operation.js';

export interface IdempotencyClaim {
  /** The client's Idempotency-Key and the request's fingerprint (`sha256:<hex>`). */
  readonly key: string;
  readonly fingerprint: string;
  readonly storeKey: string;
  readonly owner: string;
  /** Set once the response was stored or the lock released, so that it happens once. */
  settled: boolean;
}

export interface V3RequestState {
  readonly receivedAt: Date;
  readonly traceId: string;
  /** The raw body bytes as received; empty when there was none. */
  rawBody: Buffer;
  principal: Principal | null;
  /** An authentication failure waits here until the rate limit has been charged (per address). */
  pendingAuthError: Error | null;
  rateLimit: { readonly limit: number; readonly result: RateLimitResult | null } | null;
  idempotency: IdempotencyClaim | null;
  /** Id of the resource a write created or touched, named on a 500: docs/contract.md#errors-recovery. */
  resourceId: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    v3: V3RequestState;
  }
  interface FastifyContextConfig {
    /** Present on v3 operations; absent on the 405 catch-alls and non-v3 routes. */
    v3Operation?: OperationMeta;
    /** Methods allowed on this path, for routes that only answer 405. */
    methodNotAllowed?: readonly string[];
  }
}

export function isWriteMethod(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}
