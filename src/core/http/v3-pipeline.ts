/**
 * The v3 request pipeline, assembled. Each step lives in its own module; this file fixes their
 * order (docs/contract.md#v3-check-order) and mounts the declared operations on it:
 *
 *   1 ids (onRequest)  2 routing 404/405 (onRequest)  3 body + Content-Type (parser, preValidation)
 *   4 auth  5 rate limit  6 idempotency (preValidation)  7 validation  8 handler (route handler)
 *
 * Errors from any step go through one error handler; onSend stores idempotent responses.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../../lib/errors/api-error.js';
import type { KeyRegistry } from '../../lib/keys/key-registry.js';
import type { EphemeralStore } from '../../lib/store/ephemeral-store.js';
import { createAuthenticator } from './authenticate.js';
import { acceptBody, installRawBodyParser } from './body.js';
import { createErrorHandler, type ErrorHandler } from './error-handler.js';
import type { Operation, OperationMeta } from './operation.js';
import { addressSubject, createRateLimiter } from './rate-limit.js';
import { attachRequestContext } from './request-context.js';
import type { V3RequestState } from './request-state.js';
import { registerMethodNotAllowedRoutes, rejectUnroutable } from './routing.js';
import { createIdempotency, requiresIdempotencyKey } from './v3-idempotency.js';
import { validateBody, validateNoParameters, validateQuery } from './validation.js';

export interface V3PipelineOptions {
  readonly registry: KeyRegistry;
  readonly store: EphemeralStore;
  /** The `iss` values accepted (FXGATE_JWT_ISSUER). */
  readonly issuers: readonly string[];
  readonly rateLimits: { readonly reads: number; readonly writes: number };
  readonly idempotencyLockTtlMs: number;
}

function metaOf(operation: Operation<never, never> | Operation): OperationMeta {
  const { method, path, scope, sandboxOnly } = operation;
  return sandboxOnly === undefined ? { method, path, scope } : { method, path, scope, sandboxOnly };
}

/** Returns the error handler, for fastify's `frameworkErrors` (failures before any hook runs). */
export function installV3Pipeline(
  app: FastifyInstance,
  operations: readonly Operation[],
  options: V3PipelineOptions,
): ErrorHandler {
  const authenticate = createAuthenticator(options);
  const chargeRateLimit = createRateLimiter({ store: options.store, ...options.rateLimits });
  const idempotency = createIdempotency({ store: options.store, lockTtlMs: options.idempotencyLockTtlMs });

  app.decorateRequest('v3', null as unknown as V3RequestState);
  installRawBodyParser(app);
  app.addHook('onRequest', attachRequestContext);
  app.addHook('onRequest', rejectUnroutable);

  app.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    const operation = request.routeOptions.config.v3Operation;
    if (!operation) return;
    await acceptBody(request, reply);
    // A proven key's charge starts when the key is proven, so that its store command goes out
    // with the nonce claim's instead of a round trip after it. Same charge, same precedence: it
    // is awaited before the authentication outcome, so a 429 still answers first.
    const charge: { key: Promise<void> | null } = { key: null };
    const outcome = await authenticate(request, operation, (keyName) => {
      charge.key = chargeRateLimit(request, reply, `key:${keyName}`);
      // Awaited below; until then an early 429 must not count as an unhandled rejection.
      charge.key.catch(() => {});
    });
    await (charge.key ?? chargeRateLimit(request, reply, addressSubject(request)));
    if (outcome.error) throw outcome.error;
    request.v3.principal = outcome.principal;
    if (
      requiresIdempotencyKey(request.method) &&
      (await idempotency.begin(request, reply, operation, outcome.principal!))
    ) {
      return reply; // replayed: the handler must not run
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (request.v3?.idempotency && reply.statusCode < 300) reply.header('idempotency-replayed', 'false');
    await idempotency.settle(request, reply, payload);
    return payload;
  });
  app.addHook('onResponse', async (request) => idempotency.releaseIfUnsettled(request));

  const handleError = createErrorHandler(chargeRateLimit);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(async (request) => {
    throw new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: request.url.split('?')[0] ?? '/' });
  });

  for (const operation of operations) {
    app.route({
      method: operation.method,
      url: operation.path,
      config: { v3Operation: metaOf(operation) },
      handler: async (request, reply) => {
        const query = operation.query ? validateQuery(operation.query, request.query) : rejectQuery(request);
        const body = operation.body
          ? validateBody(operation.body, request.v3.rawBody)
          : validateNoParameters(request.v3.rawBody);
        const result = await operation.handle({
          principal: request.v3.principal!,
          query,
          body,
          params: request.params as Record<string, string>,
          requestId: request.id,
          idempotency: request.v3.idempotency && {
            key: request.v3.idempotency.key,
            fingerprint: request.v3.idempotency.fingerprint,
          },
          log: request.log,
          setResourceId: (id) => {
            request.v3.resourceId = id;
          },
        });
        return reply
          .code(result.status ?? 200)
          .header('content-type', 'application/json; charset=utf-8')
          .send(result.body);
      },
    });
  }
  registerMethodNotAllowedRoutes(app, operations.map(metaOf));
  return handleError;
}

/** An operation without a query schema takes no query parameters: unknown input is an error. */
function rejectQuery(request: FastifyRequest): Record<string, never> {
  const names = Object.keys((request.query ?? {}) as object);
  if (names.length > 0) {
    throw new ApiError('VALIDATION_QUERY_FAILED', {
      issues: names.map((name) => ({
        path: name,
        code: 'unrecognized_keys',
        message: 'this operation takes no query parameters',
      })),
    });
  }
  return {};
}
