/**
 * How the gateway names its requests' server spans (lib/tracing/server-spans.ts), as its
 * metrics label them: a legacy operation by its declared name and route template
 * (`/v1/brokerage/:orgId/trades/:id`: the template, never the org id), a /v3 request by the
 * declared v3 operation it names (`GET /v3/fx/trades/:id`, matched on the target without
 * recording it) or `unknown`, the gateway's own routes by their pattern. Reads only the
 * request's method, route and target.
 */
import type { FastifyRequest } from 'fastify';

import type { RequestNames } from '../lib/tracing/server-spans.js';
import { LEGACY_GENERATIONS, LEGACY_OPERATIONS, legacyRoutePath } from './legacy/declarations/legacy-operations.js';
import { v3OperationLabel, V3OperationMatcher } from './metrics/v3-routes.js';

const UNKNOWN = 'unknown';
const GENERATION_PREFIX = /^\/(v1|v2|v3)(?=$|[/?])/;

function generationOf(url: string): RequestNames['generation'] {
  return GENERATION_PREFIX.exec(url)?.[1] as RequestNames['generation'];
}

export class GatewayRequestNames {
  private readonly legacyRoutes = new Map<string, RequestNames>();
  private readonly v3Operations = new V3OperationMatcher();
  private readonly v3Names = new Map<string, RequestNames>();
  private readonly otherRoutes = new Map<string, RequestNames>();

  constructor() {
    for (const generation of LEGACY_GENERATIONS) {
      for (const operation of LEGACY_OPERATIONS[generation]) {
        const route = legacyRoutePath(generation, operation);
        this.legacyRoutes.set(route, { generation, operation, route });
      }
    }
  }

  readonly describe = (request: FastifyRequest): RequestNames => {
    const route = request.routeOptions.url;
    if (route === undefined || request.is404) {
      const generation = generationOf(request.url);
      return generation === undefined ? { operation: UNKNOWN } : { generation, operation: UNKNOWN };
    }
    const legacy = this.legacyRoutes.get(route);
    if (legacy !== undefined) return legacy;
    if (route === '/v3' || route.startsWith('/v3/')) return this.v3(request, route);
    let names = this.otherRoutes.get(route);
    if (names === undefined) {
      const generation = generationOf(route);
      names = generation === undefined ? { operation: route, route } : { generation, operation: UNKNOWN, route };
      this.otherRoutes.set(route, names);
    }
    return names;
  };

  /** A passthrough request named by the declared v3 operation its target names, its template the route. */
  private v3(request: FastifyRequest, route: string): RequestNames {
    const operation = this.v3Operations.match(request.method, request.url);
    if (operation === null) return { generation: 'v3', operation: UNKNOWN, route };
    const label = v3OperationLabel(operation);
    let names = this.v3Names.get(label);
    if (names === undefined) {
      names = { generation: 'v3', operation: label, route: operation.path };
      this.v3Names.set(label, names);
    }
    return names;
  }
}
