/**
 * The core's HTTP server before any route, over a raw socket: what Node's parser refuses
 * (headers over 16 KB, a negative Content-Length, a Transfer-Encoding other than chunked last,
 * a garbage request line) and requests that do not arrive whole within the request timeout (a
 * body or headers trickled in, a connection that sends nothing) are answered with the v3 envelope
 * and a cataloged code, then the connection closes; everyone else is served meanwhile and after.
 * Every method Node accepts is answered in the v3 envelope, CONNECT included, whose connection is
 * then closed.
 */
import { METHODS } from 'node:http';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import {
  emptyRequest,
  expectRawV3Answer,
  expectRawV3Error,
  parseRawResponse,
  rawExchange,
  type RawStep,
} from '../support/raw-http.js';
import { V3Harness } from '../support/v3-harness.js';

/** Short, to keep the suite fast; Node checks every tenth of it. */
const REQUEST_TIMEOUT_MS = 1_500;
/** When the answer to a request cut by the timeout may come: the timeout, plus Node's check interval and scheduling. */
const CUT_WINDOW = { from: REQUEST_TIMEOUT_MS - 20, to: REQUEST_TIMEOUT_MS + 1_000 };

let harness: V3Harness;

beforeAll(async () => {
  // Limits out of reach: the method sweeps below send well over a client's share of writes.
  harness = await V3Harness.start({
    core: { requestTimeoutMs: REQUEST_TIMEOUT_MS, rateLimits: { reads: 1_000_000, writes: 1_000_000 } },
  });
});
afterAll(async () => harness?.close());

afterEach(async () => {
  // Whatever a client did, the next one is served.
  expect((await harness.send({ path: '/healthz' })).status).toBe(200);
});

const OVERSIZED = `GET /v3/fx/pairs HTTP/1.1\r\nHost: fxgate\r\nX-Filler: ${'a'.repeat(17 * 1024)}\r\n\r\n`;

describe('what the parser refuses is the v3 envelope, and the connection closes', () => {
  it.each<
    [
      string,
      string,
      readonly RawStep[],
      'REQUEST_HEADERS_TOO_LARGE' | 'REQUEST_MALFORMED' | 'VALIDATION_PAYLOAD_TOO_LARGE',
    ]
  >([
    ['headers over 16 KB', '431', [OVERSIZED], 'REQUEST_HEADERS_TOO_LARGE'],
    [
      'headers over 16 KB, sent in pieces',
      '431',
      [OVERSIZED.slice(0, 100), { pauseMs: 50 }, OVERSIZED.slice(100, 9000), { pauseMs: 50 }, OVERSIZED.slice(9000)],
      'REQUEST_HEADERS_TOO_LARGE',
    ],
    [
      'Content-Length: -1',
      '400',
      ['POST /v3/fx/quotes HTTP/1.1\r\nHost: fxgate\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}'],
      'REQUEST_MALFORMED',
    ],
    [
      'Transfer-Encoding: chunked, identity',
      '400',
      [
        'POST /v3/fx/quotes HTTP/1.1\r\nHost: fxgate\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      ],
      'REQUEST_MALFORMED',
    ],
    [
      'two Content-Lengths',
      '400',
      ['POST /v3/fx/quotes HTTP/1.1\r\nHost: fxgate\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
      'REQUEST_MALFORMED',
    ],
    [
      'a bad chunk size',
      '400',
      [
        'POST /v3/fx/quotes HTTP/1.1\r\nHost: fxgate\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      ],
      'REQUEST_MALFORMED',
    ],
    [
      'chunk extensions over 16 KB',
      '413',
      [
        `POST /v3/fx/quotes HTTP/1.1\r\nHost: fxgate\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2;x=${'a'.repeat(17 * 1024)}\r\n{}\r\n0\r\n\r\n`,
      ],
      'VALIDATION_PAYLOAD_TOO_LARGE',
    ],
    ['a garbage request line', '400', ['G@T /v3/fx/pairs HTTP/1.1\r\nHost: fxgate\r\n\r\n'], 'REQUEST_MALFORMED'],
    ['binary garbage', '400', [Buffer.from([0x00, 0x01, 0xff, 0x0d, 0x0a, 0x0d, 0x0a])], 'REQUEST_MALFORMED'],
    ['an unknown HTTP version', '400', ['GET /v3/fx/pairs HTTP/9.9\r\nHost: fxgate\r\n\r\n'], 'REQUEST_MALFORMED'],
  ])('%s: %s', async (_name, _status, steps, code) => {
    expectRawV3Error(await rawExchange(harness.baseUrl, { steps }), code);
  });

  it('on a kept-alive connection, after a request that was answered', async () => {
    const exchange = await rawExchange(harness.baseUrl, {
      steps: [
        'GET /healthz HTTP/1.1\r\nHost: fxgate\r\n\r\n',
        { pauseMs: 100 },
        'POST /v3/fx/quotes HTTP/1.1\r\nHost: fxgate\r\nContent-Length: -1\r\n\r\n',
      ],
    });
    const text = exchange.received.toString('latin1');
    expect(text.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    const second = exchange.received.subarray(text.indexOf('HTTP/1.1 ', 1));
    expectRawV3Error({ ...exchange, received: second, response: parseRawResponse(second) }, 'REQUEST_MALFORMED');
  });
});

describe('a request that does not arrive whole within the request timeout is 408 REQUEST_TIMEOUT', () => {
  it('headers, then the body a byte at a time: cut at the timeout while another client is served', async () => {
    const slow = rawExchange(harness.baseUrl, {
      steps: [
        'POST /v3/fx/quotes HTTP/1.1\r\nHost: fxgate\r\nContent-Type: application/json\r\nContent-Length: 100\r\nIdempotency-Key: slow-1\r\n\r\n',
      ],
      trickle: { chunk: ' ', everyMs: 250 },
    });
    await new Promise((wait) => setTimeout(wait, 300));
    const startedOther = performance.now();
    const other = await harness.send({ path: '/v3/fx/pairs' });
    const otherTookMs = performance.now() - startedOther;
    expect(other.status).toBe(401);
    expect(otherTookMs).toBeLessThan(1_000);

    const exchange = await slow;
    expectRawV3Error(exchange, 'REQUEST_TIMEOUT');
    expect(exchange.answeredAfterMs).toBeGreaterThanOrEqual(CUT_WINDOW.from);
    expect(exchange.answeredAfterMs).toBeLessThanOrEqual(CUT_WINDOW.to);
    expect(exchange.trickled, 'the client kept sending until it was cut').toBeGreaterThanOrEqual(4);
  });

  it('a header line at a time, or nothing at all: each cut at the timeout', async () => {
    const exchanges = await Promise.all([
      rawExchange(harness.baseUrl, {
        steps: ['GET /v3/fx/pairs HTTP/1.1\r\n'],
        trickle: { chunk: 'X-Slow: 1\r\n', everyMs: 250 },
      }),
      rawExchange(harness.baseUrl, { steps: [] }),
    ]);
    for (const exchange of exchanges) {
      expectRawV3Error(exchange, 'REQUEST_TIMEOUT');
      expect(exchange.answeredAfterMs).toBeGreaterThanOrEqual(CUT_WINDOW.from);
      expect(exchange.answeredAfterMs).toBeLessThanOrEqual(CUT_WINDOW.to);
    }
    expect(exchanges[0]!.trickled).toBeGreaterThanOrEqual(4);
  });

  it('a request that arrived whole is never cut, and a kept-alive connection idles past the timeout', async () => {
    const exchange = await rawExchange(harness.baseUrl, {
      steps: [
        'GET /healthz HTTP/1.1\r\nHost: fxgate\r\n\r\n',
        { pauseMs: REQUEST_TIMEOUT_MS + 300 },
        'GET /healthz HTTP/1.1\r\nHost: fxgate\r\nConnection: close\r\n\r\n',
      ],
      failAfterMs: 5_000,
    });
    const text = exchange.received.toString('latin1');
    expect(text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(text, 'no 408 status line').not.toMatch(/HTTP\/1\.1 408/);
  });
});

describe('every method Node accepts is answered in the v3 envelope', () => {
  const exchange = (method: string, target: string) =>
    rawExchange(harness.baseUrl, { steps: [emptyRequest(method, target)] });

  it('a known path: 405 with Allow for every method it does not serve, CONNECT included, and the connection ends', async () => {
    for (const method of METHODS.filter((m) => m !== 'GET' && m !== 'HEAD')) {
      const response = expectRawV3Answer(await exchange(method, '/v3/fx/pairs'), 'METHOD_NOT_ALLOWED', {
        method,
        allowed: ['GET', 'HEAD'],
      });
      expect(response.headers.allow, method).toBe('GET, HEAD');
    }
    // A path of a write: what it serves, its parameter matched.
    const connect = expectRawV3Answer(
      await exchange('CONNECT', '/v3/fx/trades/trd_0123/settle'),
      'METHOD_NOT_ALLOWED',
      { method: 'CONNECT', allowed: ['POST'] },
    );
    expect(connect.headers.allow).toBe('POST');
    expect(connect.headers['x-request-timestamp']).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it.each(['/nope', '/v1/brokerage/x/balances', '/v2/x'])(
    'a path the core does not serve (%s): 404 for every method, and the connection ends',
    async (path) => {
      for (const method of METHODS) {
        expectRawV3Answer(
          await exchange(method, path),
          'ROUTE_NOT_FOUND',
          { method, path },
          { head: method === 'HEAD' },
        );
      }
    },
  );

  it('a CONNECT tunnel to host:port is 404, read and never connected to', async () => {
    const tunnel = await rawExchange(harness.baseUrl, {
      steps: ['CONNECT upstream.example.test:443 HTTP/1.1\r\nHost: upstream.example.test:443\r\n\r\n'],
    });
    expectRawV3Answer(tunnel, 'ROUTE_NOT_FOUND', { method: 'CONNECT', path: 'upstream.example.test:443' });
  });
});
