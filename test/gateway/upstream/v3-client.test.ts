import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Fastify, { type FastifyInstance } from 'fastify';
import type { Pool } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { createUpstreamPool } from '../../../src/gateway/upstream/pool.js';
import { KeyDirectoryCredentials, ProvisioningCredentials } from '../../../src/gateway/upstream/signing-credentials.js';
import { parseV3Error, SharedDeadline, v3CallSpan, V3Client } from '../../../src/gateway/upstream/v3-client.js';
import { SINGLE_USE_REFUSAL_MESSAGES } from '../../../src/lib/auth/single-use.js';
import {
  UpstreamCredentialError,
  UpstreamProtocolError,
  UpstreamTimeoutError,
  UpstreamUnreachableError,
} from '../../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../../src/lib/ids.js';
import { TEST_ISSUER, V3Harness } from '../../support/v3-harness.js';
import { RecordingUpstream } from '../recording-upstream.js';

const TIMEOUT_MS = 300;

let harness: V3Harness;
let dir: string;
let credentials: ProvisioningCredentials;
const pools: Pool[] = [];

function pool(origin: string): Pool {
  const created = createUpstreamPool({ origin, connectTimeoutMs: TIMEOUT_MS, timeoutMs: TIMEOUT_MS });
  pools.push(created);
  return created;
}

beforeAll(async () => {
  harness = await V3Harness.start();
  dir = await mkdtemp(join(tmpdir(), 'fxgate-v3-client-'));
  credentials = new ProvisioningCredentials({ registry: harness.registry, dir, issuer: TEST_ISSUER });
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.destroy()));
  await harness?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('V3Client against the real core', () => {
  let client: V3Client;
  beforeAll(() => {
    client = new V3Client({ dispatcher: pool(harness.baseUrl), credentials });
  });

  it('GET /v3/fx/pairs is signed and answered 200', async () => {
    const response = await client.request({
      orgId: newUuid(),
      mode: 'sandbox',
      method: 'GET',
      pathAndQuery: '/v3/fx/pairs',
    });
    expect(response.status, response.body.toString()).toBe(200);
    expect(response.error).toBeUndefined();
    expect(JSON.parse(response.body.toString())).toHaveProperty('data');
  });

  it('POST /v3/fx/quotes with an idempotency key is signed (body, key) and answered 200, and replayed', async () => {
    const orgId = newUuid();
    const idempotencyKey = randomUUID();
    const body = Buffer.from(
      JSON.stringify({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100', amountCurrency: 'EUR' }),
    );
    const call = {
      orgId,
      mode: 'sandbox' as const,
      method: 'POST' as const,
      pathAndQuery: '/v3/fx/quotes',
      body,
      idempotencyKey,
    };
    const first = await client.request(call);
    expect(first.status, first.body.toString()).toBe(200);
    const quote = JSON.parse(first.body.toString()).data as { id: string };
    expect(quote.id).toBeTruthy();
    const again = await client.request(call);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body.toString()).data.id).toBe(quote.id);
  });

  it('works in live mode too, with its own key', async () => {
    const response = await client.request({
      orgId: newUuid(),
      mode: 'live',
      method: 'GET',
      pathAndQuery: '/v3/fx/pairs',
    });
    expect(response.status, response.body.toString()).toBe(200);
  });

  it('returns a v3 error of the real core parsed', async () => {
    const body = Buffer.from(
      JSON.stringify({ buyCurrency: 'EUR', sellCurrency: 'EUR', amount: '-1', amountCurrency: 'EUR' }),
    );
    const response = await client.request({
      orgId: newUuid(),
      mode: 'sandbox',
      method: 'POST',
      pathAndQuery: '/v3/fx/quotes',
      body,
      idempotencyKey: randomUUID(),
    });
    expect(response.status).toBe(400);
    expect(response.error).toMatchObject({ type: 'VALIDATION_ERROR' });
    expect(response.error!.code).toBeTruthy();
  });

  it('lets a credential error through, untouched', async () => {
    const stand = new V3Client({
      dispatcher: pool(harness.baseUrl),
      credentials: new KeyDirectoryCredentials(dir, TEST_ISSUER),
    });
    const error = await stand
      .request({ orgId: newUuid(), mode: 'sandbox', method: 'GET', pathAndQuery: '/v3/fx/pairs' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamCredentialError);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('V3Client failures', () => {
  let upstream: RecordingUpstream;
  let stalling: FastifyInstance;
  let stallingUrl: string;

  beforeAll(async () => {
    upstream = await RecordingUpstream.start();
    stalling = Fastify({ logger: false, forceCloseConnections: true });
    stalling.get('/*', (_request, reply) => {
      // Headers and half a body, then nothing.
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'application/json' });
      reply.raw.write('{"data":');
    });
    stallingUrl = await stalling.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await upstream?.close();
    await stalling?.close();
  });
  beforeEach(() => {
    upstream.answer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[]}' };
  });

  const call = {
    orgId: newUuid(),
    mode: 'sandbox' as const,
    method: 'POST' as const,
    pathAndQuery: '/v3/fx/quotes',
    body: Buffer.from('{}'),
    idempotencyKey: 'k',
  };

  it('an unreachable port is UpstreamUnreachableError, quickly', async () => {
    const client = new V3Client({ dispatcher: pool(`http://127.0.0.1:${await freePort()}`), credentials });
    const started = Date.now();
    const error = await client.request(call).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamUnreachableError);
    expect(error).toMatchObject({ code: 'FXGATE_UPSTREAM_UNREACHABLE', mayHaveReachedUpstream: false });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a server that never answers is UpstreamTimeoutError within the bound', async () => {
    upstream.answer = { status: 200, hang: true };
    const client = new V3Client({ dispatcher: pool(upstream.url), credentials });
    const started = Date.now();
    const error = await client.request(call).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(error).toMatchObject({ code: 'FXGATE_UPSTREAM_TIMEOUT', mayHaveReachedUpstream: true });
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 2_000);
  });

  it('a body that stalls is UpstreamTimeoutError within the bound', async () => {
    const client = new V3Client({ dispatcher: pool(stallingUrl), credentials });
    const started = Date.now();
    const error = await client.request({ ...call, method: 'GET', body: undefined }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2_000);
  });

  it('an answer trickling in, each byte inside the body timeout, is UpstreamTimeoutError at the deadline', async () => {
    const DEADLINE_MS = 800;
    const sockets: Socket[] = [];
    const trickling = createServer((socket) => {
      sockets.push(socket);
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10000\r\n\r\n{');
        const timer = setInterval(() => socket.write(' '), TIMEOUT_MS / 3);
        socket.on('close', () => clearInterval(timer)).on('error', () => undefined);
      });
    });
    trickling.listen(0, '127.0.0.1');
    await new Promise((resolve) => trickling.once('listening', resolve));
    try {
      const client = new V3Client({
        dispatcher: pool(`http://127.0.0.1:${(trickling.address() as AddressInfo).port}`),
        credentials,
        deadlineMs: DEADLINE_MS,
      });
      const started = Date.now();
      const error = await client.request(call).catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect(error).toBeInstanceOf(UpstreamTimeoutError);
      expect(error).toMatchObject({
        code: 'FXGATE_UPSTREAM_TIMEOUT',
        mayHaveReachedUpstream: true,
        message: expect.stringContaining('deadline'),
      });
      expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
      expect(elapsed).toBeLessThan(DEADLINE_MS + 500);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => trickling.close(resolve));
    }
  });

  it('an answer that finishes inside the deadline is unaffected by it', async () => {
    upstream.answer = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"data":[]}',
      delayMs: 100,
    };
    const client = new V3Client({ dispatcher: pool(upstream.url), credentials, deadlineMs: 400 });
    const response = await client.request(call);
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe('{"data":[]}');
  });

  it('calls sharing a deadline end together when it runs out; each alone would have fitted', async () => {
    upstream.answer = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"data":[]}',
      delayMs: 400,
    };
    const client = new V3Client({ dispatcher: pool(upstream.url), credentials, deadlineMs: 1_000 });
    // Alone, a call of 400 ms fits a 1 s deadline.
    expect((await client.request(call)).status).toBe(200);
    // Sharing one, the third call gets what the first two left of it.
    const deadline = new SharedDeadline();
    const started = performance.now();
    expect((await client.request({ ...call, deadline })).status).toBe(200);
    expect((await client.request({ ...call, deadline })).status).toBe(200);
    const error = await client.request({ ...call, deadline }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(error).toMatchObject({
      deadline: true,
      message: expect.stringContaining('1000 ms deadline of the request'),
    });
    expect(performance.now() - started).toBeLessThan(1_000 + 300);
  });

  it('garbage on a 500 is UpstreamProtocolError', async () => {
    upstream.answer = { status: 500, headers: { 'content-type': 'text/html' }, body: '<html>Bad Gateway</html>' };
    const client = new V3Client({ dispatcher: pool(upstream.url), credentials });
    const error = await client.request(call).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamProtocolError);
    expect(error).toMatchObject({ code: 'FXGATE_UPSTREAM_PROTOCOL', status: 500 });
  });

  it('JSON that is not the v3 envelope on a 4xx is UpstreamProtocolError', async () => {
    upstream.answer = { status: 404, headers: { 'content-type': 'application/json' }, body: '{"message":"Not Found"}' };
    const client = new V3Client({ dispatcher: pool(upstream.url), credentials });
    await expect(client.request(call)).rejects.toBeInstanceOf(UpstreamProtocolError);
  });

  it('skips an informational answer and reads the real one, its headers as sent, its body in chunks', async () => {
    const hinting = Fastify({ logger: false, forceCloseConnections: true });
    hinting.get('/*', (_request, reply) => {
      reply.hijack();
      reply.raw.writeEarlyHints({ link: '</v3/fx/pairs>; rel=preload' });
      reply.raw.writeHead(200, {
        'content-type': 'application/json',
        'x-trace-id': 'abc',
        'set-cookie': ['a=1', 'b=2'],
      });
      reply.raw.write('{"data":');
      setTimeout(() => reply.raw.end('[1]}'), 20);
    });
    const url = await hinting.listen({ host: '127.0.0.1', port: 0 });
    try {
      const client = new V3Client({ dispatcher: pool(url), credentials });
      const answer = await client.request({ ...call, method: 'GET', body: undefined });
      expect(answer.status).toBe(200);
      expect(answer.headers).toMatchObject({ 'x-trace-id': 'abc', 'set-cookie': ['a=1', 'b=2'] });
      expect(answer.headers.link).toBeUndefined();
      expect(answer.body.toString()).toBe('{"data":[1]}');
    } finally {
      await hinting.close();
    }
  });

  it('a body over the size limit is UpstreamProtocolError', async () => {
    upstream.answer = { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.alloc(4096, 'a') };
    const client = new V3Client({ dispatcher: pool(upstream.url), credentials, maxBodyBytes: 1024 });
    await expect(client.request(call)).rejects.toBeInstanceOf(UpstreamProtocolError);
  });

  /** v3's refusal of a token, as the core words it (docs/contract.md#auth-tokens-single-use). */
  function tokenRefusal(message: string) {
    return {
      status: 401,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        error: {
          code: 'AUTH_TOKEN_INVALID',
          type: 'AUTHENTICATION_ERROR',
          message,
          retryStrategy: 'TERMINAL',
          details: {},
        },
      }),
    };
  }

  describe('a token v3 took for one signed before its replay store was reset', () => {
    afterEach(() => {
      upstream.answerFor = null;
      upstream.requests.length = 0;
    });

    it('is signed again and the call sent once more, with the same key and body', async () => {
      upstream.requests.length = 0;
      upstream.answerFor = () =>
        upstream.requests.length === 1
          ? tokenRefusal(SINGLE_USE_REFUSAL_MESSAGES.SIGNED_BEFORE_STORE_RESET)
          : { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":{"id":"q"}}' };
      const client = new V3Client({ dispatcher: pool(upstream.url), credentials });
      const response = await client.request(call);
      expect(response.status).toBe(200);
      expect(response.error).toBeUndefined();
      const [first, second] = upstream.requests;
      expect(upstream.requests).toHaveLength(2);
      expect(second!.headers.authorization).not.toBe(first!.headers.authorization);
      expect(second!.headers['x-request-signature']).not.toBe(first!.headers['x-request-signature']);
      expect(second!.headers['idempotency-key']).toBe('k');
      expect(Buffer.compare(second!.body, first!.body)).toBe(0);
    });

    it('is sent once more only: a second such refusal is the answer', async () => {
      upstream.requests.length = 0;
      upstream.answerFor = () => tokenRefusal(SINGLE_USE_REFUSAL_MESSAGES.SIGNED_BEFORE_STORE_RESET);
      const client = new V3Client({ dispatcher: pool(upstream.url), credentials });
      const response = await client.request(call);
      expect(response.status).toBe(401);
      expect(response.error).toMatchObject({ code: 'AUTH_TOKEN_INVALID' });
      expect(upstream.requests).toHaveLength(2);
    });

    it('is the only refusal sent again: a replayed token, or another 401, is answered as it came', async () => {
      const client = new V3Client({ dispatcher: pool(upstream.url), credentials });
      for (const message of [SINGLE_USE_REFUSAL_MESSAGES.REPLAYED, 'The bearer token is invalid.']) {
        upstream.requests.length = 0;
        upstream.answerFor = () => tokenRefusal(message);
        const response = await client.request(call);
        expect(response.status).toBe(401);
        expect(upstream.requests).toHaveLength(1);
      }
    });
  });

  it('sends the signing headers, the idempotency key and the exact body', async () => {
    upstream.requests.length = 0;
    const client = new V3Client({ dispatcher: pool(upstream.url), credentials });
    const body = Buffer.from('{"amount":"1.10"}');
    await client.request({ ...call, body, headers: { 'x-request-id': 'r-1', authorization: 'overridden' } });
    const [seen] = upstream.requests;
    expect(seen!.url).toBe('/v3/fx/quotes');
    expect(Buffer.compare(seen!.body, body)).toBe(0);
    expect(seen!.headers).toMatchObject({ 'idempotency-key': 'k', 'x-app-mode': 'SANDBOX', 'x-request-id': 'r-1' });
    expect(seen!.headers.authorization).toMatch(/^Bearer /);
    expect(seen!.headers['x-request-signature']).toBeTruthy();
  });
});

describe('parseV3Error', () => {
  it('reads the envelope, allowing unknown codes, types and strategies', () => {
    const parsed = parseV3Error(
      Buffer.from(
        JSON.stringify({
          error: { code: 'SOMETHING_NEW', type: 'NEW_TYPE', message: 'm', retryStrategy: 'NEW', details: { a: 1 } },
        }),
      ),
      409,
    );
    expect(parsed).toEqual({
      code: 'SOMETHING_NEW',
      type: 'INTERNAL_ERROR',
      rawType: 'NEW_TYPE',
      message: 'm',
      retryStrategy: 'TERMINAL',
      rawRetryStrategy: 'NEW',
      details: { a: 1 },
    });
    expect(
      parseV3Error('{"error":{"code":"QUOTE_EXPIRED","type":"CONFLICT","retryStrategy":"FIX_AND_RESUBMIT"}}'),
    ).toMatchObject({
      type: 'CONFLICT',
      retryStrategy: 'FIX_AND_RESUBMIT',
      message: '',
      details: {},
    });
  });

  it.each([
    '',
    'not json',
    '[]',
    '{}',
    '{"error":"x"}',
    '{"error":{"code":""}}',
    '{"error":{"code":1}}',
    '{"error":{"code":"X","details":[]}}',
    '{"error":{"code":"X","type":5}}',
  ])('refuses %j', (body) => {
    expect(() => parseV3Error(body, 500)).toThrow(UpstreamProtocolError);
  });
});

describe('v3CallSpan', () => {
  it('names a call by the declared operation its method and target name, never by the path or query', () => {
    const call = v3CallSpan('GET', '/v3/fx/trades/trade-secret-1?expand=all');
    expect(call).toEqual({
      method: 'GET',
      template: '/v3/fx/trades/:id',
      attributes: { 'fxgate.api.generation': 'v3', 'fxgate.operation': 'GET /v3/fx/trades/:id' },
    });
    expect(JSON.stringify(call)).not.toMatch(/trade-secret-1|expand/);
  });

  it('names a HEAD by its GET, and a target no operation declares by the method alone', () => {
    expect(v3CallSpan('HEAD', '/v3/fx/trades/t1')).toMatchObject({ method: 'HEAD', template: '/v3/fx/trades/:id' });
    expect(v3CallSpan('GET', '/v3/fx/nothing-here/t1')).toEqual({
      method: 'GET',
      attributes: { 'fxgate.api.generation': 'v3' },
    });
  });
});
