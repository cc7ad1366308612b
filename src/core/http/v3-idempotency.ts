/**
 * Step 6: idempotency of writes (docs/contract.md#idempotency-v3). Every POST needs an
 * Idempotency-Key, scoped to org, environment and key value. The first completed response is stored
 * for 24 h and replayed byte for byte; 409, 429 and 5xx responses are not stored (the lock is
 * released) so the client can retry with the same key. A store outage fails closed with 503: a
 * write that cannot be deduplicated is not attempted. The ledger's unique constraints on the key
 * are the second line, for a store that lost its records.
 */
import { randomUUID } from 'node:crypto';

import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../../lib/errors/api-error.js';
import { StoreUnavailableError } from '../../lib/errors/internal-errors.js';
import { IDEMPOTENCY_KEY_PATTERN, requestFingerprint } from '../../lib/idempotency-key.js';
import { type EphemeralStore, type StoredResponse } from '../../lib/store/ephemeral-store.js';
import type { Principal } from '../principal.js';
import { displayPath, type OperationMeta } from './operation.js';

/** v3 keys live 24 hours (docs/contract.md#idempotency-v3). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyOptions {
  readonly store: EphemeralStore;
  readonly lockTtlMs: number;
}

export function requiresIdempotencyKey(method: string): boolean {
  return method === 'POST';
}

/** Responses that must not be replayed: the client is told to retry them with the same key. */
function isRetryable(statusCode: number): boolean {
  return statusCode === 409 || statusCode === 429 || statusCode >= 500;
}

export function createIdempotency(options: IdempotencyOptions) {
  const { store } = options;

  async function unavailable(request: FastifyRequest, error: unknown): Promise<never> {
    if (!(error instanceof StoreUnavailableError)) throw error;
    request.log.error({ err: error }, 'idempotency store unavailable; write refused');
    throw new ApiError('IDEMPOTENCY_UNAVAILABLE');
  }

  /** Acquires the key, or answers for the request (replay) and returns true. */
  async function begin(
    request: FastifyRequest,
    reply: FastifyReply,
    operation: OperationMeta,
    principal: Principal,
  ): Promise<boolean> {
    const key = request.headers['idempotency-key'];
    if (key === undefined)
      throw new ApiError('IDEMPOTENCY_KEY_MISSING', { endpoint: `${operation.method} ${displayPath(operation.path)}` });
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) throw new ApiError('IDEMPOTENCY_KEY_INVALID');

    const storeKey = `idem:{${principal.orgId}:${principal.environment}}:${key}`;
    const owner = randomUUID();
    const fingerprint = requestFingerprint(request.method, request.raw.url ?? request.url, request.v3.rawBody);
    let result;
    try {
      result = await store.idempotencyBegin({ key: storeKey, fingerprint, owner, lockTtlMs: options.lockTtlMs });
    } catch (error) {
      return unavailable(request, error);
    }
    switch (result.outcome) {
      case 'acquired':
        request.v3.idempotency = { key, fingerprint, storeKey, owner, settled: false };
        return false;
      case 'in_flight':
        throw new ApiError('IDEMPOTENCY_IN_FLIGHT', undefined, {
          headers: { 'retry-after': String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))) },
        });
      case 'mismatch':
        throw new ApiError('IDEMPOTENCY_MISMATCH', { originalRequestHash: result.originalFingerprint });
      case 'completed': {
        const stored = result.response;
        for (const [name, value] of Object.entries(stored.headers)) reply.header(name, value);
        if (stored.statusCode < 300) reply.header('idempotency-replayed', 'true');
        reply.code(stored.statusCode).send(Buffer.from(stored.bodyBase64, 'base64'));
        return true;
      }
    }
  }

  /** onSend: stores the response of the request that owns the key, or releases the key. */
  async function settle(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
    const claim = request.v3?.idempotency;
    if (!claim || claim.settled) return;
    claim.settled = true;
    try {
      if (isRetryable(reply.statusCode) || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) {
        await store.idempotencyRelease(claim.storeKey, claim.owner);
        return;
      }
      const contentType = reply.getHeader('content-type');
      const response: StoredResponse = {
        statusCode: reply.statusCode,
        headers: typeof contentType === 'string' ? { 'content-type': contentType } : {},
        bodyBase64: Buffer.from(payload).toString('base64'),
      };
      const stored = await store.idempotencyComplete(claim.storeKey, claim.owner, response, IDEMPOTENCY_RETENTION_MS);
      if (!stored) request.log.warn({ key: claim.storeKey }, 'idempotency lock expired before the response was stored');
    } catch (error) {
      // The effect happened and the client gets its answer; a retry will find the resource
      // through the ledger's unique key. Nothing more can be done here.
      request.log.error({ err: error, key: claim.storeKey }, 'could not settle the idempotency record');
    }
  }

  /** onResponse: a request that ended without onSend (aborted) must not hold its lock until TTL. */
  async function releaseIfUnsettled(request: FastifyRequest): Promise<void> {
    const claim = request.v3?.idempotency;
    if (!claim || claim.settled) return;
    claim.settled = true;
    await store.idempotencyRelease(claim.storeKey, claim.owner).catch((error: unknown) => {
      request.log.error({ err: error }, 'could not release the idempotency lock');
    });
  }

  return { begin, settle, releaseIfUnsettled };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
