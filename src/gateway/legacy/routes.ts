/**
 * The legacy generations, v1 and v2, as fastify routes: one route per operation of the endpoint
 * tables, each served by a LegacyOperationHandler compiled from its declarations, and for
 * anything else under /v1 or /v2 the generation's own "not found" (a known path called with
 * another method included). Bodies are kept as raw bytes (never parsed by fastify), because
 * legacy amounts must be read from their text and the idempotency fingerprint is over the bytes
 * as sent.
 *
 * In shadow mode with the legacy service serving, a request of an org it serves is relayed to it
 * before anything here reads the request (its body included), whatever route it names.
 *
 * The answers given here, before an operation's handler runs, are counted in the usage report
 * with no org and no key (no token was read), under the route's operation or NO_OPERATION.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { ErrorCode } from '../../lib/errors/v3-error-catalog.js';
import { randomHex } from '../../lib/random.js';
import type { InFlightRequests } from '../in-flight.js';
import { NO_OPERATION } from '../usage/usage-recorder.js';
import { type LegacyErrorTables, resolveLegacyError } from './declarations/error-tables.js';
import {
  LEGACY_GENERATIONS,
  LEGACY_OPERATIONS,
  type LegacyGeneration,
  legacyRoutePath,
} from './declarations/legacy-operations.js';
import type { LegacyMappings } from './declarations/mappings-loader.js';
import { compileOperation } from './pipeline/compiled-operation.js';
import { LegacyOperationHandler, type LegacyServices, type LegacyTranslation } from './pipeline/operation-handler.js';
import { generationHeaders, sendLegacyError } from './runtime/reply.js';

export const LEGACY_PREFIXES = ['/v1', '/v2'] as const;

/** Legacy bodies are small JSON objects, at most 8 KB like v3's (docs/contract.md#limits). */
export const LEGACY_BODY_LIMIT_BYTES = 8 * 1024;

export interface LegacyRoutesOptions {
  readonly services: LegacyServices;
  readonly mappings: LegacyMappings;
  /** Every handler runs under it, so that shutdown can wait for the unfinished ones. */
  readonly inFlight: InFlightRequests;
  /** Shadow mode with the legacy service serving: the orgs it serves and how their requests reach it. */
  readonly legacyService?: LegacyServiceRouting;
}

/** What the relay of an org served by the legacy service needs from the legacy routes. */
export interface LegacyRouteContext {
  readonly generation: LegacyGeneration;
  /** The operation's translation, for a read the route serves; null for anything else. */
  readonly translate: ((request: FastifyRequest) => Promise<LegacyTranslation>) | null;
  readonly operation: string | null;
  /** The generation's error answer, when the legacy service cannot be reached. */
  readonly fail: (reply: FastifyReply, code: ErrorCode) => void;
}

export interface LegacyServiceRouting {
  relays(request: FastifyRequest, orgId: string): boolean;
  relay(request: FastifyRequest, reply: FastifyReply, route: LegacyRouteContext): Promise<void>;
}

/** The generation whose prefix a request target is under (`/v1`, `/v1/...`, `/v1?...`), or null. */
export function legacyGenerationOf(url: string): LegacyGeneration | null {
  for (const generation of LEGACY_GENERATIONS) {
    const prefix = `/${generation}`;
    const next = url.charAt(prefix.length);
    if (url.startsWith(prefix) && (next === '' || next === '/' || next === '?')) return generation;
  }
  return null;
}

/** `/v1/brokerage/{orgId}/...`: the org of a legacy path, lower case; null when it names none. */
export function legacyOrgOf(url: string): string | null {
  const match = /^\/v[12]\/brokerage\/([^/?#]+)/.exec(url);
  if (match === null) return null;
  try {
    return decodeURIComponent(match[1]!).toLowerCase();
  } catch {
    return null;
  }
}

/** Answers a request under a generation's prefix that names no route there (a path the router cannot even decode included). */
export type LegacyNotFound = (
  generation: LegacyGeneration,
  request: FastifyRequest,
  reply: FastifyReply,
) => FastifyReply;

/** Each operation's route as a pattern, to tell "wrong method" from "no such path". */
function routePatterns(generation: LegacyGeneration): RegExp[] {
  return LEGACY_OPERATIONS[generation].map(
    (operation) => new RegExp(`^${legacyRoutePath(generation, operation).replaceAll(/:[A-Za-z]+/g, '[^/]+')}/?$`),
  );
}

const PATTERNS: Readonly<Record<LegacyGeneration, readonly RegExp[]>> = {
  v1: routePatterns('v1'),
  v2: routePatterns('v2'),
};

/** What a legacy path (without its query) answers to a method none of its operations has: a known path is METHOD_NOT_ALLOWED, any other ROUTE_NOT_FOUND. */
export function legacyUnroutedCode(
  generation: LegacyGeneration,
  path: string,
): 'METHOD_NOT_ALLOWED' | 'ROUTE_NOT_FOUND' {
  return PATTERNS[generation].some((pattern) => pattern.test(path)) ? 'METHOD_NOT_ALLOWED' : 'ROUTE_NOT_FOUND';
}

export async function registerLegacyRoutes(
  app: FastifyInstance,
  options: LegacyRoutesOptions,
): Promise<LegacyNotFound> {
  const { services, mappings } = options;
  const tablesOf = (generation: LegacyGeneration): LegacyErrorTables<LegacyGeneration> =>
    mappings.errors[generation] as LegacyErrorTables<LegacyGeneration>;
  const count = (generation: LegacyGeneration, request: FastifyRequest, operation: string = NO_OPERATION) =>
    services.usage?.seen({ generation, operation, caller: null, address: request.ip });

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: LEGACY_BODY_LIMIT_BYTES }, (_request, body, done) =>
      done(null, body),
    );

    // Failures fastify raises before a handler runs: an oversized or unreadable body.
    scope.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      // The scope holds only /v1 and /v2 routes.
      const generation = legacyGenerationOf(request.url) ?? 'v2';
      count(
        generation,
        request,
        handlers.get(`${request.method === 'HEAD' ? 'GET' : request.method} ${request.routeOptions.url ?? ''}`)?.name,
      );
      const code =
        error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'VALIDATION_PAYLOAD_TOO_LARGE'
          : (error.statusCode ?? 500) < 500
            ? 'VALIDATION_BODY_FAILED'
            : 'INTERNAL_ERROR';
      if (code === 'INTERNAL_ERROR') request.log.error({ err: error }, 'legacy request failed');
      return legacyErrorReply(reply, tablesOf(generation), code, generationHeaders(generation, services.reply));
    });

    const handlers = new Map<string, LegacyOperationHandler<LegacyGeneration>>();
    const { legacyService } = options;
    if (legacyService !== undefined) {
      scope.addHook('onRequest', async (request, reply) => {
        const orgId = legacyOrgOf(request.url);
        if (orgId === null || !legacyService.relays(request, orgId)) return undefined;
        const generation = legacyGenerationOf(request.url) ?? 'v2';
        const handler = handlers.get(
          `${request.method === 'HEAD' ? 'GET' : request.method} ${request.routeOptions.url ?? ''}`,
        );
        const fail = (failed: FastifyReply, code: ErrorCode) =>
          legacyErrorReply(failed, tablesOf(generation), code, generationHeaders(generation, services.reply));
        await options.inFlight.track(
          legacyService.relay(request, reply, {
            generation,
            operation: handler?.name ?? null,
            translate: handler?.translate ?? null,
            fail,
          }),
        );
        return reply;
      });
    }

    for (const generation of LEGACY_GENERATIONS) {
      for (const operation of LEGACY_OPERATIONS[generation]) {
        const compiled = compileOperation(mappings, generation, operation);
        const handler = new LegacyOperationHandler(services, compiled);
        handlers.set(`${compiled.mapping.method} ${compiled.route}`, handler);
        scope.route({
          method: compiled.mapping.method,
          url: compiled.route,
          handler: (request, reply) => options.inFlight.track(handler.handle(request, reply)),
        });
      }
      const fallback = async (request: FastifyRequest, reply: FastifyReply) => {
        count(generation, request);
        return legacyErrorReply(
          reply,
          tablesOf(generation),
          legacyUnroutedCode(generation, request.url.split('?', 1)[0]!),
          generationHeaders(generation, services.reply),
        );
      };
      scope.all(`/${generation}`, fallback);
      scope.all(`/${generation}/*`, fallback);
    }
  });
  return (generation, request, reply) => {
    count(generation, request);
    return legacyErrorReply(
      reply,
      tablesOf(generation),
      'ROUTE_NOT_FOUND',
      generationHeaders(generation, services.reply),
    );
  };
}

/** Answers raised before an operation is known (unknown path, wrong method, bad body framing). */
function legacyErrorReply<G extends LegacyGeneration>(
  reply: FastifyReply,
  tables: LegacyErrorTables<G>,
  code: ErrorCode,
  extraHeaders: Readonly<Record<string, string>>,
): FastifyReply {
  const answer = resolveLegacyError(tables, { code });
  return sendLegacyError(reply, answer, {
    'x-trace-id': randomHex(16),
    'x-request-id': reply.request.id,
    ...extraHeaders,
  });
}
