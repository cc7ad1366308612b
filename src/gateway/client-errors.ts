/**
 * What the gateway answers to a request its HTTP server refused before routing (headers too
 * large, framing it cannot parse, a request that did not arrive in time; see
 * src/lib/http/client-errors.ts). A request whose request line names a path under /v1 or /v2
 * gets its generation's `{status: 'error', message}` with the status the legacy error tables give
 * the code and its generation's deprecation headers, so v1 and v2 answer as they answer any
 * other request; everything else (/v3, an unknown path, a request whose line could not be
 * read) gets v3's envelope.
 */
import type { Socket } from 'node:net';

import {
  type ClientError,
  type ClientErrorRequest,
  createClientErrorHandler,
  type RawAnswer,
  v3ClientErrorAnswer,
} from '../lib/http/client-errors.js';
import { randomHex } from '../lib/random.js';
import type { LegacyGeneration } from './legacy/catalog.js';
import { legacyErrorBody, type LegacyErrorTables, resolveLegacyError } from './legacy/error-tables.js';
import { generationHeaders, type LegacyReplyOptions } from './legacy/reply.js';
import { legacyGenerationOf } from './legacy/routes.js';

export type LegacyErrorTablesByGeneration = { readonly [G in LegacyGeneration]: LegacyErrorTables<G> };

/** The answer for one refused request: the legacy envelope under /v1 and /v2, v3's elsewhere. */
export function gatewayClientErrorAnswer(
  tables: LegacyErrorTablesByGeneration,
  reply: LegacyReplyOptions,
  request: ClientErrorRequest,
): RawAnswer {
  const generation = request.path === undefined ? null : legacyGenerationOf(request.path);
  if (generation === null) return v3ClientErrorAnswer(request);
  const answer = resolveLegacyError(tables[generation] as LegacyErrorTables<LegacyGeneration>, { code: request.code });
  const ids = { 'x-request-id': request.requestId, 'x-trace-id': randomHex(16) };
  return {
    status: answer.status,
    body: JSON.stringify(legacyErrorBody(answer)),
    headers: { ...ids, ...generationHeaders(generation, reply) },
  };
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
