/**
 * Step 2 of a legacy request: its idempotency, as the operation's rule says. Without a key the
 * request simply runs (a write with a fresh v3 key). With one, the first final answer is kept
 * for the operation's lifetime and replayed byte for byte, a second request with the key waits
 * or is refused (in flight, another body), and a write reaches v3 with the key derived from the
 * legacy one (idempotency.ts).
 */
import type { FastifyRequest } from 'fastify';

import { ApiError } from '../../../lib/errors/api-error.js';
import { requestFingerprint } from '../../../lib/idempotency-key.js';
import type { StoredResponse } from '../../../lib/store/ephemeral-store.js';
import type { LegacyGeneration } from '../declarations/legacy-operations.js';
import type { LegacyPrincipal } from '../runtime/auth.js';
import {
  derivedV3Key,
  freshV3Key,
  isReplayable,
  type LegacyIdempotency,
  type LegacyIdempotencyScope,
  readIdempotencyKey,
} from '../runtime/legacy-idempotency.js';
import { type LegacyAnswer, replayed } from './answer.js';
import { rawBodyOf } from './body-step.js';
import type { CompiledOperation } from './compiled-operation.js';

/** The legacy key of the request, per the rule: undefined when none applies or none was sent. */
function keyOf(request: FastifyRequest, operation: CompiledOperation<LegacyGeneration>): string | undefined {
  const rule = operation.mapping.idempotency;
  if (rule.kind === 'none') return undefined;
  const key = readIdempotencyKey(request.headers['idempotency-key']);
  if (key === undefined && rule.kind === 'required')
    throw new ApiError('IDEMPOTENCY_KEY_MISSING', { endpoint: `${operation.mapping.method} ${operation.route}` });
  return key;
}

/**
 * Runs the request under its idempotency rule. `run` gets the v3 key of a write (undefined for a
 * read); `failure` turns an error of a keyed request into the answer to keep or release.
 */
export async function withIdempotency(
  request: FastifyRequest,
  operation: CompiledOperation<LegacyGeneration>,
  principal: LegacyPrincipal,
  idempotency: LegacyIdempotency,
  run: (v3Key: string | undefined) => Promise<LegacyAnswer>,
  failure: (error: unknown) => LegacyAnswer,
): Promise<LegacyAnswer> {
  const key = keyOf(request, operation);
  if (key === undefined) return run(operation.write ? freshV3Key() : undefined);

  const scope: LegacyIdempotencyScope = {
    generation: operation.generation,
    orgId: principal.orgId,
    mode: principal.mode,
    operation: operation.name,
    key,
  };
  const fingerprint = requestFingerprint(
    request.method,
    request.url,
    operation.write ? rawBodyOf(request) : Buffer.alloc(0),
  );
  const begun = await idempotency.begin(scope, fingerprint);
  if (begun.kind === 'replay') return replayed(begun.response);

  let answer: LegacyAnswer;
  try {
    answer = await run(operation.write ? derivedV3Key(scope) : undefined);
  } catch (error) {
    answer = failure(error);
  }
  await settle(request, operation, idempotency, scope, begun.owner, answer);
  return answer;
}

/** Keeps a final answer for the key's lifetime; anything else frees the key for a retry. */
async function settle(
  request: FastifyRequest,
  operation: CompiledOperation<LegacyGeneration>,
  idempotency: LegacyIdempotency,
  scope: LegacyIdempotencyScope,
  owner: string,
  answer: LegacyAnswer,
): Promise<void> {
  const rule = operation.mapping.idempotency;
  const lifetimeSeconds = rule.kind === 'none' ? 0 : rule.lifetimeSeconds;
  try {
    if (isReplayable(answer.status, answer.legacyCode) && lifetimeSeconds > 0) {
      const stored: StoredResponse = {
        statusCode: answer.status,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        bodyBase64: Buffer.from(answer.body).toString('base64'),
      };
      await idempotency.complete(scope, owner, stored, lifetimeSeconds);
    } else {
      await idempotency.release(scope, owner);
    }
  } catch (error) {
    // The answer stands: without the record a retry reaches v3 with the same derived key,
    // which replays instead of executing again.
    request.log.warn({ err: error, operation: operation.name }, 'legacy idempotency record not written');
  }
}
