/**
 * coreRequestNames: the core's server spans are named as its metrics label requests: a declared
 * operation by its method and path, a path's 405 and a request no route took as `unknown`, any
 * other route by its pattern.
 */
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';

import { coreRequestNames } from '../../../src/core/http/request-spans.js';

function request(url: string, route: string | undefined, config: object, is404 = false): FastifyRequest {
  return { url, is404, routeOptions: { url: route, config } } as unknown as FastifyRequest;
}

describe('coreRequestNames', () => {
  it('names a declared operation by its method and path', () => {
    const config = { v3Operation: { method: 'GET', path: '/v3/fx/trades/:id', scope: 'view' } };
    expect(coreRequestNames(request('/v3/fx/trades/trd_1', '/v3/fx/trades/:id', config))).toEqual({
      generation: 'v3',
      operation: 'GET /v3/fx/trades/:id',
      route: '/v3/fx/trades/:id',
    });
  });

  it("names a path's 405 and a request no route took as unknown, other routes by their pattern", () => {
    expect(coreRequestNames(request('/v3/fx/trades', '/v3/fx/trades', { methodNotAllowed: ['GET', 'POST'] }))).toEqual({
      generation: 'v3',
      operation: 'unknown',
      route: '/v3/fx/trades',
    });
    expect(coreRequestNames(request('/v3/nothing/here', undefined, {}, true))).toEqual({
      generation: 'v3',
      operation: 'unknown',
    });
    expect(coreRequestNames(request('/readyz', '/readyz', {}))).toEqual({ operation: '/readyz', route: '/readyz' });
  });
});
