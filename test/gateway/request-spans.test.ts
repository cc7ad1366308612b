/**
 * GatewayRequestNames: the gateway's server spans are named as its metrics label requests: a
 * legacy operation by its declared name and template, a /v3 request by the v3 operation its
 * target names (never the target), the gateway's own routes by their pattern, and the rest as
 * `unknown` under their generation.
 */
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';

import { GatewayRequestNames } from '../../src/gateway/request-spans.js';

function request(method: string, url: string, route: string | undefined, is404 = false): FastifyRequest {
  return { method, url, is404, routeOptions: { url: route } } as unknown as FastifyRequest;
}

describe('GatewayRequestNames', () => {
  const names = new GatewayRequestNames();

  it('names a legacy operation by its declared name and route template', () => {
    const route = '/v1/brokerage/:orgId/trade/:id';
    expect(names.describe(request('GET', '/v1/brokerage/0190-org/trade/0190-trade', route))).toEqual({
      generation: 'v1',
      operation: 'trade/{id}',
      route,
    });
    expect(
      names.describe(request('POST', '/v2/brokerage/x/trade/reverse', '/v2/brokerage/:orgId/trade/reverse')),
    ).toMatchObject({
      generation: 'v2',
      operation: 'trade/reverse',
    });
  });

  it('names a /v3 request by the declared operation its target names, the template as its route', () => {
    expect(names.describe(request('GET', '/v3/fx/trades/trd_123?expand=1', '/v3/*'))).toEqual({
      generation: 'v3',
      operation: 'GET /v3/fx/trades/:id',
      route: '/v3/fx/trades/:id',
    });
    expect(names.describe(request('GET', '/v3/not/an/operation', '/v3/*'))).toEqual({
      generation: 'v3',
      operation: 'unknown',
      route: '/v3/*',
    });
  });

  it("names the gateway's own routes by their pattern, and a request no route took as unknown", () => {
    expect(names.describe(request('GET', '/healthz', '/healthz'))).toEqual({
      operation: '/healthz',
      route: '/healthz',
    });
    expect(names.describe(request('GET', '/v1/brokerage/x/nothing', undefined, true))).toEqual({
      generation: 'v1',
      operation: 'unknown',
    });
    expect(names.describe(request('GET', '/favicon.ico', undefined, true))).toEqual({ operation: 'unknown' });
  });
});
