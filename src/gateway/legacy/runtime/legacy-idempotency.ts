/**
 * The legacy idempotency bridge: the record store of legacy answers and the v3 key of a legacy
 * write. Part of the legacy layer; the handler's idempotency step uses it.
 *
 * v2 keeps its own contract: Idempotency-Key required on POST (400 IDEMPOTENCY_KEY_REQUIRED /
 * INVALID_IDEMPOTENCY_KEY), honoured on GET when sent, lifetimes per operation (24 h trades,
 * 7 d withdrawals, 30 min quotes), the cached LEGACY response replayed for the same key and body,
 * 409 while in flight, 422 on a different body, 503 when the store is down (fail closed). That
 * record lives in the gateway's own store, per generation, because the answer to replay is the
 * legacy one. v1 writes honour a key the same way when one is sent.
 *
 * Underneath, the v3 call carries a key DERIVED from (org, mode, operation, legacy key). So when
 * the gateway crashes after v3 moved money but before it stored the legacy answer, or v3
 * answered a 5xx, the client's retry with the same key reaches v3 with the same v3 key, and v3
 * replays its first answer instead of executing again. The derivation ignores the generation, so
 * a retry sent to the other generation reaches v3 with the same key too. The gateway record is
 * the fast path; the derived key is what makes a duplicate impossible.
 *
 * A v1 write sent without a key gets a fresh random v3 key: v1 never had a retry contract.
 */
import { createHash, randomUUID } from 'node:crypto';

import type { Mode } from '../../../lib/auth/credential-vocabulary.js';
import { ApiError } from '../../../lib/errors/api-error.js';
import { StoreUnavailableError } from '../../../lib/errors/internal-errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../../../lib/idempotency-key.js';
import { type EphemeralStore, type StoredResponse } from '../../../lib/store/ephemeral-store.js';
import type { GatewayMetrics } from '../../metrics/gateway-metrics.js';
import type { LegacyGeneration } from '../declarations/legacy-operations.js';

export interface LegacyIdempotencyScope {
  readonly generation: LegacyGeneration;
  readonly orgId: string;
  readonly mode: Mode;
  readonly operation: string;
  readonly key: string;
}

/** Validates the header with v3's syntax (v2 recommends a UUID, which fits): undefined when absent, the key when well formed, IDEMPOTENCY_KEY_INVALID otherwise. */
export function readIdempotencyKey(header: string | readonly string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(header))
    throw new ApiError('IDEMPOTENCY_KEY_INVALID');
  return header;
}

/** The gateway record's key: per org and book (hash tag for Redis Cluster), per operation. */
export function legacyRecordKey(scope: LegacyIdempotencyScope): string {
  return `lidem:{${scope.orgId}:${scope.mode}}:${scope.generation}:${scope.operation}:${scope.key}`;
}

/**
 * The v3 key for a legacy key: a pure function, so a retry always reaches v3 with the same key.
 * Its inputs are hashed so that no legacy key, whatever its length, makes an invalid v3 key. The
 * `v2` in the hashed text is part of the derivation, fixed when only v2 had keys: v1 shares it.
 */
export function derivedV3Key(scope: LegacyIdempotencyScope): string {
  const digest = createHash('sha256')
    .update(`${scope.orgId}\n${scope.mode}\nv2\n${scope.operation}\n${scope.key}`)
    .digest('hex');
  return `fxgw2.${digest}`;
}

/** A fresh key for a v1 write sent without one: v1 has no retry contract to keep. */
export function freshV3Key(): string {
  return `fxgw1.${randomUUID()}`;
}

/**
 * A response is kept for replay when it is final: a success or a refusal the same request would
 * meet again. In-flight conflicts, rate limits and 5xx are not: the retry must run again (and
 * reaches v3 with the derived key, which replays whatever v3 did).
 */
export function isReplayable(status: number, v2Code: string | undefined): boolean {
  if (status >= 500 || status === 429) return false;
  return v2Code !== 'IDEMPOTENCY_IN_FLIGHT';
}

export type BeginOutcome =
  | { readonly kind: 'acquired'; readonly owner: string }
  | { readonly kind: 'replay'; readonly response: StoredResponse };

export interface LegacyIdempotencyOptions {
  readonly store: EphemeralStore;
  /** How long a lock lives if its owner dies (FXGATE_IDEMPOTENCY_LOCK_TTL_MS). */
  readonly lockTtlMs: number;
  /** Counts each key's outcome. */
  readonly metrics?: GatewayMetrics;
}

export class LegacyIdempotency {
  constructor(private readonly options: LegacyIdempotencyOptions) {}

  /**
   * Takes the key, or answers why not: the replay of the first response, or an ApiError
   * (IDEMPOTENCY_IN_FLIGHT with Retry-After, IDEMPOTENCY_MISMATCH, IDEMPOTENCY_UNAVAILABLE).
   */
  async begin(scope: LegacyIdempotencyScope, fingerprint: string): Promise<BeginOutcome> {
    const owner = randomUUID();
    const series = this.options.metrics?.of(scope.generation, scope.operation);
    let result;
    try {
      result = await this.options.store.idempotencyBegin({
        key: legacyRecordKey(scope),
        fingerprint,
        owner,
        lockTtlMs: this.options.lockTtlMs,
      });
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        series?.idempotency('store_down');
        throw new ApiError('IDEMPOTENCY_UNAVAILABLE', {}, { cause: error });
      }
      throw error;
    }
    series?.idempotency(
      result.outcome === 'acquired' ? 'new' : result.outcome === 'completed' ? 'replay' : result.outcome,
    );
    switch (result.outcome) {
      case 'acquired':
        return { kind: 'acquired', owner };
      case 'completed':
        return { kind: 'replay', response: result.response };
      case 'in_flight':
        throw new ApiError(
          'IDEMPOTENCY_IN_FLIGHT',
          {},
          { headers: { 'retry-after': String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))) } },
        );
      case 'mismatch':
        throw new ApiError('IDEMPOTENCY_MISMATCH', { originalRequestHash: result.originalFingerprint });
    }
  }

  /** Keeps the answer for the operation's lifetime. A store failure here loses only the fast path. */
  async complete(
    scope: LegacyIdempotencyScope,
    owner: string,
    response: StoredResponse,
    lifetimeSeconds: number,
  ): Promise<void> {
    await this.options.store.idempotencyComplete(legacyRecordKey(scope), owner, response, lifetimeSeconds * 1000);
  }

  async release(scope: LegacyIdempotencyScope, owner: string): Promise<void> {
    await this.options.store.idempotencyRelease(legacyRecordKey(scope), owner);
  }
}
