/**
 * The gateway's HTTP server before any route, over a raw socket, in front of the real core as
 * `fxgate all` runs them: what Node's parser refuses and requests that do not arrive whole within
 * the request timeout are answered in the envelope of the generation the request line names
 * (v1 and v2: `{status: 'error', message}` with their tables' status; /v3, an unknown path and
 * `/`: v3's), then the connection closes, and everyone else is served meanwhile and after. Every
 * method Node accepts is answered in the envelope of its path's generation, CONNECT included,
 * whose connection is then closed.
 */
import { METHODS } from 'node:http';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { EVERY_METHOD } from '../../src/lib/http/methods.js';
import type { LoadedKey } from '../../src/lib/keys/key-file.js';
import { LegacyHarness } from '../support/legacy-harness.js';
import {
  emptyRequest,
  expectRawLegacyError,
  expectRawV3Answer,
  expectRawV3Error,
  type RawExchange,
  rawExchange,
} from '../support/raw-http.js';

/** The gateway's; the core behind it keeps its default, so that the gateway is the one that cuts. */
const REQUEST_TIMEOUT_MS = 1_500;
const CUT_WINDOW = { from: REQUEST_TIMEOUT_MS - 20, to: REQUEST_TIMEOUT_MS + 1_000 };
const VALIDATION = 'Query validation failed';
const TIMED_OUT = 'The request did not arrive in time, please try again';

let harness: LegacyHarness;
let key: LoadedKey;

beforeAll(async () => {
  harness = await LegacyHarness.start({ gateway: { requestTimeoutMs: REQUEST_TIMEOUT_MS } });
  key = await harness.createKey();
});
afterAll(async () => harness?.close());

afterEach(async () => {
  // Whatever a client did, the next ones are served, on every generation.
  expect((await harness.v2(key, { path: 'balances' })).status).toBe(200);
  expect((await harness.send({ path: '/v3/fx/pairs' })).status).toBe(401);
});

type Where = 'v1' | 'v2' | 'v3' | 'unknown' | 'root';

function pathOf(where: Where): string {
  const orgId = key.file.orgId;
  return {
    v1: `/v1/brokerage/${orgId}/balances`,
    v2: `/v2/brokerage/${orgId}/trade`,
    v3: '/v3/fx/quotes',
    unknown: '/nope/v1/x',
    root: '/',
  }[where];
}

/** What the answer must be: the legacy status and message under /v1 and /v2, else the v3 code. */
function expectAnswer(
  exchange: RawExchange,
  where: Where,
  v3Code: 'REQUEST_HEADERS_TOO_LARGE' | 'REQUEST_MALFORMED' | 'REQUEST_TIMEOUT',
  legacy: readonly [number, string],
): void {
  if (where === 'v1' || where === 'v2') expectRawLegacyError(exchange, where, legacy[0], legacy[1]);
  else expectRawV3Error(exchange, v3Code);
}

const PLACES: readonly Where[] = ['v3', 'v1', 'v2', 'unknown', 'root'];

describe('what the parser refuses gets the envelope of the generation its request line names, and the connection closes', () => {
  describe.each(PLACES)('under %s', (where) => {
    it('headers over 16 KB: v3 431, legacy 400', async () => {
      const exchange = await rawExchange(harness.gatewayUrl, {
        steps: [`GET ${pathOf(where)} HTTP/1.1\r\nHost: fxgate\r\nX-Filler: ${'a'.repeat(17 * 1024)}\r\n\r\n`],
      });
      expectAnswer(exchange, where, 'REQUEST_HEADERS_TOO_LARGE', [400, VALIDATION]);
    });

    it('Content-Length: -1: 400', async () => {
      const exchange = await rawExchange(harness.gatewayUrl, {
        steps: [
          `POST ${pathOf(where)} HTTP/1.1\r\nHost: fxgate\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}`,
        ],
      });
      expectAnswer(exchange, where, 'REQUEST_MALFORMED', [400, VALIDATION]);
    });

    it('Transfer-Encoding: chunked, identity: 400', async () => {
      const exchange = await rawExchange(harness.gatewayUrl, {
        steps: [
          `POST ${pathOf(where)} HTTP/1.1\r\nHost: fxgate\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        ],
      });
      expectAnswer(exchange, where, 'REQUEST_MALFORMED', [400, VALIDATION]);
    });

    it('a garbage request line: 400', async () => {
      const exchange = await rawExchange(harness.gatewayUrl, {
        steps: [`G@T ${pathOf(where)} HTTP/1.1\r\nHost: fxgate\r\n\r\n`],
      });
      expectAnswer(exchange, where, 'REQUEST_MALFORMED', [400, VALIDATION]);
    });
  });

  it("a request line that cannot be read at all is v3's", async () => {
    expectRawV3Error(
      await rawExchange(harness.gatewayUrl, { steps: [Buffer.from([0x00, 0x01, 0xff, 0x0d, 0x0a, 0x0d, 0x0a])] }),
      'REQUEST_MALFORMED',
    );
  });
});

describe('a request that does not arrive whole within the request timeout is cut, in its envelope', () => {
  it('the body a byte at a time, under each generation at once: v3 408, v1 and v2 500, while another client is served', async () => {
    const slow = PLACES.map((where) =>
      rawExchange(harness.gatewayUrl, {
        steps: [
          `POST ${pathOf(where)} HTTP/1.1\r\nHost: fxgate\r\nContent-Type: application/json\r\nContent-Length: 100\r\nIdempotency-Key: slow-${where}\r\n\r\n`,
        ],
        trickle: { chunk: ' ', everyMs: 250 },
      }),
    );
    await new Promise((wait) => setTimeout(wait, 300));
    const startedOther = performance.now();
    const other = await harness.v1(key, { path: 'balances' });
    expect(other.status).toBe(200);
    expect(performance.now() - startedOther).toBeLessThan(1_000);

    const exchanges = await Promise.all(slow);
    PLACES.forEach((where, index) => {
      const exchange = exchanges[index]!;
      expectAnswer(exchange, where, 'REQUEST_TIMEOUT', [500, TIMED_OUT]);
      expect(exchange.answeredAfterMs, where).toBeGreaterThanOrEqual(CUT_WINDOW.from);
      expect(exchange.answeredAfterMs, where).toBeLessThanOrEqual(CUT_WINDOW.to);
      expect(exchange.trickled, where).toBeGreaterThanOrEqual(4);
    });
  });

  it("a header line at a time, or nothing at all: cut at the timeout with v3's envelope (no request line was parsed)", async () => {
    const exchanges = await Promise.all([
      rawExchange(harness.gatewayUrl, {
        steps: [`GET ${pathOf('v1')} HTTP/1.1\r\n`],
        trickle: { chunk: 'X-Slow: 1\r\n', everyMs: 250 },
      }),
      rawExchange(harness.gatewayUrl, { steps: [] }),
    ]);
    for (const exchange of exchanges) {
      expectRawV3Error(exchange, 'REQUEST_TIMEOUT');
      expect(exchange.answeredAfterMs).toBeGreaterThanOrEqual(CUT_WINDOW.from);
      expect(exchange.answeredAfterMs).toBeLessThanOrEqual(CUT_WINDOW.to);
    }
  });
});

describe('every method Node accepts is answered in the envelope of the generation its path names', () => {
  /** The legacy answer to a method a known path does not have: the tables' "Route not found". */
  const LEGACY_NOT_ROUTED = { v1: 400, v2: 404 } as const;

  function exchange(method: string, target: string): Promise<RawExchange> {
    return rawExchange(harness.gatewayUrl, { steps: [emptyRequest(method, target)] });
  }

  it.each(['v1', 'v2'] as const)(
    '%s: every method its path does not serve gets the legacy answer with its headers; CONNECT too, and its connection ends',
    async (generation) => {
      const path = `/${generation}/brokerage/${key.file.orgId}/balances`;
      for (const method of METHODS.filter((m) => m !== 'GET' && m !== 'HEAD')) {
        const answer = await exchange(method, path);
        expectRawLegacyError(answer, generation, LEGACY_NOT_ROUTED[generation], 'Route not found');
      }
      // A path no operation has, with every method.
      for (const method of METHODS) {
        const answer = await exchange(method, `/${generation}/nowhere`);
        expectRawLegacyError(answer, generation, LEGACY_NOT_ROUTED[generation], 'Route not found', {
          head: method === 'HEAD',
        });
      }
    },
  );

  it('/v3: every method but GET and HEAD is 405 with Allow, from v3 behind the gateway; CONNECT from the gateway itself, which forwards every other method', async () => {
    for (const method of METHODS.filter((m) => m !== 'GET' && m !== 'HEAD' && m !== 'CONNECT')) {
      const answer = await exchange(method, '/v3/fx/pairs');
      const response = expectRawV3Answer(answer, 'METHOD_NOT_ALLOWED', { method, allowed: ['GET', 'HEAD'] });
      expect(response.headers.allow, method).toBe('GET, HEAD');
    }
    const connect = expectRawV3Answer(await exchange('CONNECT', '/v3/fx/pairs'), 'METHOD_NOT_ALLOWED', {
      method: 'CONNECT',
      allowed: EVERY_METHOD,
    });
    expect(connect.headers.allow).toBe(EVERY_METHOD.join(', '));
  });

  it('an unknown path, and a CONNECT tunnel to host:port: v3 404 for every method, and the connection ends', async () => {
    for (const method of METHODS) {
      const answer = await exchange(method, '/nope/v1/x');
      expectRawV3Answer(answer, 'ROUTE_NOT_FOUND', { method, path: '/nope/v1/x' }, { head: method === 'HEAD' });
    }
    // Nothing is connected to: the target is only read.
    const tunnel = await rawExchange(harness.gatewayUrl, {
      steps: ['CONNECT upstream.example.test:443 HTTP/1.1\r\nHost: upstream.example.test:443\r\n\r\n'],
    });
    const refused = expectRawV3Answer(tunnel, 'ROUTE_NOT_FOUND', {
      method: 'CONNECT',
      path: 'upstream.example.test:443',
    });
    // The gateway's own raw answers carry the request ids, as before routing.
    expect(refused.headers['x-request-id']).toMatch(/^req_/);
    expect(refused.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
  });
});
