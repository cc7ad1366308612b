/**
 * What the gateway answers to a request its HTTP server refused before routing (headers too
 * large, framing it cannot parse, a request that did not arrive in time; see
 * src/lib/http/client-errors.ts), and to a CONNECT request, which it never routes
 * (src/lib/http/connect-requests.ts). A request whose request line names a path under /v1 or /v2
 * gets its generation's `{status: 'error', message}` with the status the legacy error tables give
 * the code and its generation's deprecation headers, so v1 and v2 answer as they answer any
 * other request; everything else (/v3, an unknown path, a request whose line could not be
 * read) gets v3's envelope.
 */
import type { Socket } from 'node:net';

import type { FastifyInstance } from 'fastify';

import { ApiError } from '../lib/errors/api-error.js';
import type { ErrorCode } from '../lib/errors/v3-error-catalog.js';
import {
  type ClientError,
  type ClientErrorRequest,
  createClientErrorHandler,
  type RawAnswer,
  v3ClientErrorAnswer,
  v3RawAnswer,
} from '../lib/http/client-errors.js';
import type { ConnectRequest } from '../lib/http/connect-requests.js';
import { CONNECT, EVERY_METHOD } from '../lib/http/methods.js';
import { methodsAt } from '../lib/http/route-inventory.js';
import { randomHex } from '../lib/random.js';
import { legacyErrorBody, type LegacyErrorTables, resolveLegacyError } from './legacy/declarations/error-tables.js';
import type { LegacyGeneration } from './legacy/declarations/legacy-operations.js';
import { legacyGenerationOf, legacyUnroutedCode } from './legacy/routes.js';
import { generationHeaders, type LegacyReplyOptions } from './legacy/runtime/reply.js';

export type LegacyErrorTablesByGeneration = { readonly [G in LegacyGeneration]: LegacyErrorTables<G> };

/** A legacy error answer of `code` under `generation`, with its ids and its generation's headers. */
function legacyRawAnswer(
  tables: LegacyErrorTablesByGeneration,
  reply: LegacyReplyOptions,
  generation: LegacyGeneration,
  code: ErrorCode,
  requestId: string,
): RawAnswer {
  const answer = resolveLegacyError(tables[generation] as LegacyErrorTables<LegacyGeneration>, { code });
  const ids = { 'x-request-id': requestId, 'x-trace-id': randomHex(16) };
  return {
    status: answer.status,
    body: JSON.stringify(legacyErrorBody(answer)),
    headers: { ...ids, ...generationHeaders(generation, reply) },
  };
}

/** The answer for one refused request: the legacy envelope under /v1 and /v2, v3's elsewhere. */
export function gatewayClientErrorAnswer(
  tables: LegacyErrorTablesByGeneration,
  reply: LegacyReplyOptions,
  request: ClientErrorRequest,
): RawAnswer {
  const generation = request.path === undefined ? null : legacyGenerationOf(request.path);
  if (generation === null) return v3ClientErrorAnswer(request);
  return legacyRawAnswer(tables, reply, generation, request.code, request.requestId);
}

/**
 * The answer to a CONNECT request, as another method its target does not serve would get: under
 * /v1 and /v2 the generation's answer to METHOD_NOT_ALLOWED on a known path or ROUTE_NOT_FOUND;
 * elsewhere v3's 405 with the methods the gateway's routes serve there (every one but CONNECT
 * under /v3, which it forwards), or 404 where none does (a `host:port` target included).
 */
export function gatewayConnectAnswer(
  app: FastifyInstance,
  tables: LegacyErrorTablesByGeneration,
  reply: LegacyReplyOptions,
  request: ConnectRequest,
): RawAnswer {
  const { path } = request;
  const generation = path === undefined ? null : legacyGenerationOf(path);
  if (generation !== null)
    return legacyRawAnswer(tables, reply, generation, legacyUnroutedCode(generation, path!), request.requestId);
  const allowed = path === undefined ? [] : methodsAt(app, path, EVERY_METHOD);
  const error =
    allowed.length > 0
      ? new ApiError('METHOD_NOT_ALLOWED', { method: CONNECT, allowed }, { headers: { allow: allowed.join(', ') } })
      : new ApiError('ROUTE_NOT_FOUND', { method: CONNECT, path: path ?? request.target });
  return v3RawAnswer(error, CONNECT, request.requestId);
}

/**
 * The gateway's fastify `clientErrorHandler`. It takes the legacy error tables whether or not
 * this gateway serves v1 and v2: their envelope is the answer under those paths either way.
 */
export function createGatewayClientErrorHandler(
  tables: LegacyErrorTablesByGeneration,
  reply: LegacyReplyOptions,
): (error: ClientError, socket: Socket) => void {
  return createClientErrorHandler((request) => gatewayClientErrorAnswer(tables, reply, request));
}
