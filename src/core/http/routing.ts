/**
 * Step 2: routing errors. An unknown path is 404 ROUTE_NOT_FOUND; a known path asked with another
 * method, any that Node's parser accepts, is 405 METHOD_NOT_ALLOWED with `Allow`. Both are
 * decided in onRequest, before the body is read or the caller authenticated, because neither
 * depends on who is asking. CONNECT, which Node never routes, gets the same answer on its own
 * path (connectAnswer), and its connection is closed.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../../lib/errors/api-error.js';
import { type RawAnswer, v3RawAnswer } from '../../lib/http/client-errors.js';
import type { ConnectRequest } from '../../lib/http/connect-requests.js';
import { CONNECT, EVERY_METHOD } from '../../lib/http/methods.js';
import { methodsAt } from '../../lib/http/route-inventory.js';
import type { OperationMeta } from './operation.js';

function pathOf(request: FastifyRequest): string {
  const url = request.raw.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Registers one catch-all route per path for the methods that path does not serve. */
export function registerMethodNotAllowedRoutes(
  app: FastifyInstance,
  operations: readonly Pick<OperationMeta, 'method' | 'path'>[],
): void {
  const byPath = new Map<string, Set<string>>();
  for (const operation of operations) {
    const methods = byPath.get(operation.path) ?? new Set<string>();
    methods.add(operation.method);
    if (operation.method === 'GET') methods.add('HEAD'); // fastify serves HEAD for every GET
    byPath.set(operation.path, methods);
  }
  for (const [path, methods] of byPath) {
    const allowed = EVERY_METHOD.filter((m) => methods.has(m));
    const others = EVERY_METHOD.filter((m) => !methods.has(m));
    app.route({
      method: others,
      url: path,
      config: { methodNotAllowed: allowed },
      handler: async () => {
        // Unreachable: the onRequest hook below answers first.
        throw new Error('405 route reached its handler');
      },
    });
  }
}

export async function rejectUnroutable(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (request.is404) {
    throw new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: pathOf(request) });
  }
  const allowed = request.routeOptions.config.methodNotAllowed;
  if (allowed) {
    throw new ApiError(
      'METHOD_NOT_ALLOWED',
      { method: request.method, allowed: [...allowed] },
      { headers: { allow: allowed.join(', ') } },
    );
  }
}

/** The answer to a CONNECT request: 405 with the methods its path serves, or 404 where nothing is served (a `host:port` target included). */
export function connectAnswer(app: FastifyInstance, request: ConnectRequest): RawAnswer {
  // The 405 catch-alls only refuse; the methods they name are the others'.
  const allowed =
    request.path === undefined
      ? []
      : methodsAt(app, request.path, EVERY_METHOD, (route) => route.config.methodNotAllowed === undefined);
  const error =
    allowed.length > 0
      ? new ApiError('METHOD_NOT_ALLOWED', { method: CONNECT, allowed }, { headers: { allow: allowed.join(', ') } })
      : new ApiError('ROUTE_NOT_FOUND', { method: CONNECT, path: request.path ?? request.target });
  return v3RawAnswer(error, CONNECT, request.requestId);
}
