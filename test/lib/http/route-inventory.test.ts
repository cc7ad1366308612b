/**
 * The route inventory's matching (src/lib/http/route-inventory.ts): which routes, as fastify
 * declares them, name a concrete path, and the methods they serve there, held against fastify's
 * own router on the same routes. The CONNECT answers are built from it.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';

import { EVERY_METHOD, routeEveryMethod } from '../../../src/lib/http/methods.js';
import { methodsAt, routeUrlMatches, trackRoutes } from '../../../src/lib/http/route-inventory.js';

describe('routeUrlMatches', () => {
  it.each<[string, string, boolean]>([
    ['/v3/fx/pairs', '/v3/fx/pairs', true],
    ['/v3/fx/pairs', '/v3/fx/pairs/', false],
    ['/v3/fx/pairs', '/v3/fx', false],
    ['/v3/fx/trades/:id', '/v3/fx/trades/trd_1', true],
    ['/v3/fx/trades/:id', '/v3/fx/trades/', false],
    ['/v3/fx/trades/:id', '/v3/fx/trades/a/b', false],
    ['/v3/fx/trades/:id/settle', '/v3/fx/trades/x/settle', true],
    ['/v1/*', '/v1/', true],
    ['/v1/*', '/v1/a/b/c', true],
    ['/v1/*', '/v1', false],
    ['/v1', '/v1', true],
    ['/', '/', true],
    ['/', '/x', false],
  ])('%s names %s: %s', (url, path, matches) => {
    expect(routeUrlMatches(url, path)).toBe(matches);
  });
});

describe('methodsAt', () => {
  it("gives the methods fastify's router serves at a path, in the order asked, leaving out what `serves` refuses", async () => {
    const app = Fastify({ logger: false });
    routeEveryMethod(app);
    trackRoutes(app);
    const ok = async () => 'ok';
    app.get('/things', ok);
    app.post('/things', ok);
    app.delete('/things/:id', ok);
    app.route({ method: ['PUT', 'PROPFIND'], url: '/things/:id', config: { refusal: true }, handler: ok });
    app.all('/files/*', ok);
    await app.ready();
    expect(methodsAt(app, '/things', EVERY_METHOD)).toEqual(['GET', 'HEAD', 'POST']);
    expect(methodsAt(app, '/things/7', EVERY_METHOD)).toEqual(['PUT', 'DELETE', 'PROPFIND']);
    expect(methodsAt(app, '/things/7', EVERY_METHOD, (route) => route.config.refusal !== true)).toEqual(['DELETE']);
    expect(methodsAt(app, '/files/a/b', EVERY_METHOD)).toEqual(EVERY_METHOD);
    expect(methodsAt(app, '/nothing', EVERY_METHOD)).toEqual([]);
    // The router agrees, method by method, on every path above.
    for (const path of ['/things', '/things/7', '/files/a/b', '/nothing'])
      for (const method of EVERY_METHOD)
        expect(
          app.hasRoute({ method, url: path }) || app.findRoute({ method, url: path }) !== null,
          `${method} ${path}`,
        ).toBe(methodsAt(app, path, EVERY_METHOD).includes(method));
    await app.close();
  });
});

describe('routeEveryMethod', () => {
  it('routes every method Node accepts but CONNECT, the common ones first', async () => {
    const app = Fastify({ logger: false });
    routeEveryMethod(app);
    app.all('/', async (request) => request.method);
    for (const method of ['PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'SEARCH', 'REPORT', 'M-SEARCH', 'TRACE', 'QUERY']) {
      const answer = await app.inject({ method: method as 'GET', url: '/', headers: { 'content-type': 'text/plain' } });
      expect([method, answer.statusCode, answer.body]).toEqual([method, 200, method]);
    }
    expect(EVERY_METHOD.slice(0, 7)).toEqual(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
    expect(EVERY_METHOD).not.toContain('CONNECT');
    expect(new Set(EVERY_METHOD).size).toBe(EVERY_METHOD.length);
    await app.close();
  });
});
