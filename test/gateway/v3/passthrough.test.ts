import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { Client, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { buildGatewayApp, type GatewayOptions } from '../../../src/gateway/app.js';
import { pathSurvivesForwarding, PLAIN_PATH } from '../../../src/gateway/v3/passthrough.js';
import { RecordingUpstream } from '../recording-upstream.js';

async function startGateway(options: GatewayOptions): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildGatewayApp({ logLevel: 'silent', ...options });
  return { app, url: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

describe('the /v3 passthrough', () => {
  let upstream: RecordingUpstream;
  let gateway: { app: FastifyInstance; url: string };

  beforeAll(async () => {
    upstream = await RecordingUpstream.start();
    gateway = await startGateway({ upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await gateway?.app.close();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.answer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[]}' };
  });

  it('forwards the path and query string byte for byte', async () => {
    const pathAndQuery = '/v3/fx/trades?limit=10&b=%20x&a=2&a=1&flag&plus=a+b&enc=%2F%3D&empty=';
    const response = await request(`${gateway.url}${pathAndQuery}`);
    await response.body.dump();
    expect(response.statusCode).toBe(200);
    expect(upstream.requests.map((r) => r.url)).toEqual([pathAndQuery]);
  });

  it('forwards a plain path (the fast path) and one of other characters (the proxy) alike, each as sent', async () => {
    const sent = ['/v3', '/v3/', '/v3/fx/trades/trd_1?a=1', '/v3/fx/trades/a:b@c?a=1', '/v3/fx/%41b'];
    for (const pathAndQuery of sent) {
      const response = await request(`${gateway.url}${pathAndQuery}`);
      await response.body.dump();
      expect(response.statusCode, pathAndQuery).toBe(200);
    }
    expect(upstream.requests.map((r) => r.url)).toEqual(sent);
  });

  it('forwards the body bytes untouched, with the signing headers', async () => {
    const body = Buffer.from('{ "zeta" :1,"alpha":  [1.10, 1e-7 ,100000000000000000000000000001],\n"s":"\\u00e9 é"}  ');
    const headers = {
      'content-type': 'application/json',
      authorization: 'Bearer a.b.c',
      'x-request-signature': 'c2ln',
      'idempotency-key': 'k-1',
      'x-app-mode': 'SANDBOX',
      'x-request-id': 'client-1',
    };
    const response = await request(`${gateway.url}/v3/fx/quotes`, { method: 'POST', headers, body });
    await response.body.dump();
    const [seen] = upstream.requests;
    expect(seen!.method).toBe('POST');
    expect(seen!.url).toBe('/v3/fx/quotes');
    expect(Buffer.compare(seen!.body, body)).toBe(0);
    expect(seen!.headers['content-length']).toBe(String(body.length));
    for (const [name, value] of Object.entries(headers)) expect(seen!.headers[name]).toBe(value);
  });

  it('passes the status, headers and body bytes of the upstream back', async () => {
    const body = '{"error":{ "code":"QUOTE_EXPIRED" ,"details":{}}}\n';
    upstream.answer = {
      status: 422,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'x-request-id': 'req_1',
        'ratelimit-limit': '20',
        'ratelimit-reset': '3',
        'idempotency-replayed': 'true',
        location: '/v3/fx/trades/trd_1',
      },
      body,
    };
    const response = await request(`${gateway.url}/v3/fx/trades`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.statusCode).toBe(422);
    expect(await response.body.text()).toBe(body);
    expect(response.headers).toMatchObject(upstream.answer.headers!);
  });

  it('streams a body the upstream sends in chunks', async () => {
    upstream.answer = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      chunks: ['{"data":', ' [1, ', '2]}'],
    };
    const response = await request(`${gateway.url}/v3/fx/pairs`);
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(await response.body.text()).toBe('{"data": [1, 2]}');
  });

  it('answers an upstream 503 once, without retrying it', async () => {
    upstream.answer = {
      status: 503,
      headers: { 'content-type': 'application/json', 'retry-after': '1' },
      body: '{"error":{}}',
    };
    const started = Date.now();
    const response = await request(`${gateway.url}/v3/fx/pairs`);
    expect(response.statusCode).toBe(503);
    expect(await response.body.text()).toBe('{"error":{}}');
    expect(upstream.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('replaces a client-sent X-Forwarded-For with the socket address when no proxy is trusted', async () => {
    const response = await request(`${gateway.url}/v3/fx/pairs`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    await response.body.dump();
    expect(upstream.requests[0]!.headers['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('refuses a path the proxy could not forward exactly, without calling the upstream', async () => {
    for (const path of ['/v3/fx/./pairs', '/v3/fx/%2e%2e/pairs', '/v3/fx/trades/%zz', '/v3/fx/{id}']) {
      // A Client sends the path as given; request(url) would normalise it first.
      const client = new Client(gateway.url);
      try {
        const response = await client.request({ method: 'GET', path });
        expect(response.statusCode, path).toBe(404);
        expect(await response.body.json(), path).toMatchObject({
          error: { code: 'ROUTE_NOT_FOUND', type: 'NOT_FOUND' },
        });
      } finally {
        await client.close();
      }
    }
    expect(upstream.requests).toEqual([]);
  });

  it('refuses an escaped / or backslash in the path, which the proxy would throw on: 404, never a 500, nothing sent', async () => {
    const client = new Client(gateway.url);
    try {
      for (const path of [
        '/v3/fx/trades/..%2F..',
        '/v3/fx/trades/..%2f..%2fadmin',
        '/v3/fx/trades/..%5C..',
        '/v3/fx/trades/%5c',
        '/v3/fx/trades/trd_1%2Fsettle',
        '/v3/fx/pairs%2F',
      ]) {
        for (const method of ['GET', 'POST'] as const) {
          const response = await client.request({
            method,
            path,
            ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}),
          });
          expect(response.statusCode, `${method} ${path}`).toBe(404);
          expect(await response.body.json(), path).toEqual({
            error: {
              code: 'ROUTE_NOT_FOUND',
              type: 'NOT_FOUND',
              message: 'No operation exists at this path.',
              retryStrategy: 'TERMINAL',
              details: { method, path },
            },
          });
        }
      }
    } finally {
      await client.close();
    }
    expect(upstream.requests).toEqual([]);
  });

  it('never answers a path with a 500: each one is forwarded exactly as sent, or refused with 404 before the upstream', async () => {
    const client = new Client(gateway.url);
    const segment = fc
      .array(
        fc.constantFrom(
          'a',
          '.',
          '..',
          '%2e',
          '%2E',
          '%2f',
          '%2F',
          '%5c',
          '%5C',
          '%zz',
          '%',
          '%25',
          '%41',
          '~',
          '-',
          '_',
          ':',
          ';',
          '@',
          '!',
          '*',
          "'",
          '(',
          '=',
          '+',
          ',',
          '$',
          '&',
          '%20',
          '%00',
          '%c3%a9',
          '%c3',
        ),
        { maxLength: 4 },
      )
      .map((parts) => parts.join(''));
    const paths = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => `/v3/fx/${segments.join('/')}`);
    try {
      await fc.assert(
        fc.asyncProperty(paths, async (path) => {
          upstream.requests.length = 0;
          const response = await client.request({ method: 'GET', path });
          const text = await response.body.text();
          expect(response.statusCode, `${path}: ${text}`).not.toBe(500);
          if (response.statusCode === 404 && text.includes('ROUTE_NOT_FOUND')) {
            expect(upstream.requests, path).toEqual([]);
          } else {
            expect(response.statusCode, path).toBe(200);
            expect(upstream.requests.map((seen) => seen.url)).toEqual([path]);
          }
        }),
        { numRuns: 300 },
      );
    } finally {
      await client.close();
    }
  });

  it('answers paths outside every generation with the v3 not-found envelope', async () => {
    const response = await request(`${gateway.url}/nowhere?x=1`);
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toEqual({
      error: {
        code: 'ROUTE_NOT_FOUND',
        type: 'NOT_FOUND',
        message: 'No operation exists at this path.',
        retryStrategy: 'TERMINAL',
        details: { method: 'GET', path: '/nowhere' },
      },
    });
  });
});

describe('the /v3 passthrough behind trusted proxies', () => {
  it('appends the socket address to the chain a trusted proxy sent', async () => {
    const upstream = await RecordingUpstream.start();
    const gateway = await startGateway({ upstreamUrl: upstream.url, trustedProxies: ['127.0.0.1'] });
    try {
      const response = await request(`${gateway.url}/v3/fx/pairs`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
      await response.body.dump();
      expect(upstream.requests[0]!.headers['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1');
    } finally {
      await gateway.app.close();
      await upstream.close();
    }
  });
});

describe('the /v3 passthrough when the upstream fails', () => {
  const serviceUnavailable = {
    error: {
      code: 'SERVICE_UNAVAILABLE',
      type: 'INTERNAL_ERROR',
      message: 'The v3 service behind this gateway is unavailable; retry later.',
      retryStrategy: 'RETRY_WITH_BACKOFF',
      details: {},
    },
  };

  it('answers 503 SERVICE_UNAVAILABLE at once when nothing listens upstream', async () => {
    const upstream = await RecordingUpstream.start();
    const deadUrl = upstream.url;
    await upstream.close();
    const gateway = await startGateway({ upstreamUrl: deadUrl });
    try {
      for (const method of ['GET', 'POST'] as const) {
        const started = Date.now();
        const response = await request(`${gateway.url}/v3/fx/trades`, {
          method,
          body: method === 'POST' ? '{}' : undefined,
        });
        expect(response.statusCode).toBe(503);
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(await response.body.json()).toEqual(serviceUnavailable);
        expect(Date.now() - started).toBeLessThan(1_000);
      }
    } finally {
      await gateway.app.close();
    }
  });

  // undici checks its timers on a coarse tick, so the bound is the timeout plus about a second.
  it('gives up on a silent upstream within the timeout: 503 for reads, 500 CHECK_STATE_THEN_RETRY for writes', async () => {
    const upstream = await RecordingUpstream.start();
    upstream.answer = { status: 200, hang: true };
    const gateway = await startGateway({ upstreamUrl: upstream.url, timeoutMs: 300 });
    try {
      let started = Date.now();
      const read = await request(`${gateway.url}/v3/fx/pairs`);
      expect(read.statusCode).toBe(503);
      expect(await read.body.json()).toEqual(serviceUnavailable);
      expect(Date.now() - started).toBeLessThan(3_000);

      started = Date.now();
      const write = await request(`${gateway.url}/v3/fx/trades`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(write.statusCode).toBe(500);
      expect(await write.body.json()).toMatchObject({
        error: { code: 'INTERNAL_ERROR', type: 'INTERNAL_ERROR', retryStrategy: 'CHECK_STATE_THEN_RETRY', details: {} },
      });
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await gateway.app.close();
      await upstream.close();
    }
  });
});

describe('which paths survive forwarding', () => {
  const pathCharacters = fc.constantFrom(...'aZ09-_~/.%2e:@!$&\'()*+,;=[]|\\ ^`{}"<>#é'.split(''));
  const paths = fc.array(pathCharacters, { maxLength: 24 }).map((characters) => `/${characters.join('')}`);

  it('the fast path accepts only paths that the URL parser leaves as they are', () => {
    fc.assert(
      fc.property(paths, (path) => {
        if (!PLAIN_PATH.test(path)) return;
        expect(new URL(path, 'http://upstream.invalid').pathname).toBe(path);
        expect(decodeURIComponent(path)).toBe(path);
      }),
      { numRuns: 5_000 },
    );
  });

  it.each([
    ['/v3/fx/trades/trd_0193', true],
    ['/v3//fx', true],
    ['//evil.example/v3', false],
    ['/v3/fx/../admin', false],
    // A `..` after a dot segment: some URL parsers leave it in place; the proxy would refuse it with a 400.
    ['/v3/fx/.a/../', false],
    ['/v3/fx/.well-known', true],
    ['/v3/fx/%2e%2e/admin', false],
    ['/v3/fx/%zz', false],
    ['/v3/fx trades', false],
    ['/v3/fx/trades/..%2F..', false],
    ['/v3/fx/trades/a%2fb', false],
    ['/v3/fx/trades/..%5C..', false],
    ['/v3/fx/trades/a%5cb', false],
    ['/v3/fx/trades/a%25b', true],
  ])('%s: %s', (path, survives) => {
    expect(pathSurvivesForwarding(path)).toBe(survives);
  });
});
