/**
 * How the core names its requests' server spans (lib/tracing/server-spans.ts): a declared
 * operation by its method and path, as the core's metrics label it, a path's 405 and a request
 * no route took as `unknown`, any other route (health, the reference) by its pattern. Reads
 * only the route's own configuration.
 */
import type { FastifyRequest } from 'fastify';

import type { RequestNames } from '../../lib/tracing/server-spans.js';
import type { OperationMeta } from './operation.js';

const UNKNOWN = 'unknown';

/** Each route's names, made on its first request. */
const byRoute = new WeakMap<object, RequestNames>();

function generationOf(url: string): RequestNames['generation'] {
  return url === '/v3' || url.startsWith('/v3/') ? 'v3' : undefined;
}

function namesOf(
  url: string | undefined,
  config: { v3Operation?: OperationMeta; methodNotAllowed?: unknown },
): RequestNames {
  if (url === undefined) return { operation: UNKNOWN };
  const generation = generationOf(url);
  const declared = config.v3Operation;
  const operation =
    declared !== undefined
      ? `${declared.method} ${declared.path}`
      : config.methodNotAllowed !== undefined
        ? UNKNOWN
        : url;
  return { operation, route: url, ...(generation === undefined ? {} : { generation }) };
}

export function coreRequestNames(request: FastifyRequest): RequestNames {
  if (request.is404) return { operation: UNKNOWN, ...(generationOf(request.url) ? { generation: 'v3' } : {}) };
  const config = request.routeOptions.config as { v3Operation?: OperationMeta; methodNotAllowed?: unknown };
  let names = byRoute.get(config);
  if (names === undefined) {
    names = namesOf(request.routeOptions.url, config);
    byRoute.set(config, names);
  }
  return names;
}
