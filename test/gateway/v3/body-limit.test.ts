/**
 * The /v3 passthrough holds a write's body to v3's 8 KB limit itself: 413
 * VALIDATION_PAYLOAD_TOO_LARGE in the v3 envelope, from the Content-Length before anything is
 * read or sent upstream, and for a chunked body as soon as it passes the limit; the connection
 * closes after the answer, so a client still writing is not left hanging. And a write the
 * upstream never received whole is never said to have maybe taken effect. Real servers on
 * loopback throughout: the gateway, a counting node:http upstream, and the real core.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, request as httpRequest, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

import type { FastifyInstance } from 'fastify';
import { Client, Pool, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { buildGatewayApp, type GatewayOptions } from '../../../src/gateway/app.js';
import { V3_BODY_LIMIT_BYTES } from '../../../src/gateway/v3/passthrough.js';
import { V3Harness } from '../../support/v3-harness.js';
import { RecordingUpstream } from '../recording-upstream.js';

const PAYLOAD_TOO_LARGE = {
  error: {
    code: 'VALIDATION_PAYLOAD_TOO_LARGE',
    type: 'VALIDATION_ERROR',
    message: 'The request body exceeds 8 KB.',
    retryStrategy: 'FIX_AND_RESUBMIT',
    details: {},
  },
};

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gatewayFor(
  upstreamUrl: string,
  options: Partial<GatewayOptions> = {},
): Promise<{ app: FastifyInstance; url: string; port: number }> {
  const app = await buildGatewayApp({ upstreamUrl, logLevel: 'silent', ...options });
  cleanups.push(() => app.close());
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url, port: (app.server.address() as AddressInfo).port };
}

/** An upstream that counts every connection and every byte it is sent, and answers 200 `{}` to whatever request completes. */
async function countingUpstream(): Promise<{
  url: string;
  connections: () => number;
  bytes: () => number;
  bodies: Buffer[];
}> {
  let connections = 0;
  let bytes = 0;
  const bodies: Buffer[] = [];
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    bytes: () => bytes,
    bodies,
  };
}

interface RawOutcome {
  /** The whole answer as received, head and body. */
  readonly answer: string;
  /** When the answer's first byte came, and when the gateway ended the connection, from the start. */
  readonly answeredAfterMs: number | null;
  readonly closedAfterMs: number;
  /** How much of the body the client got to write before the connection ended. */
  readonly bodyBytesWritten: number;
}

/**
 * A keep-alive client writing `bodyBytes` after its head as fast as the socket takes them, the
 * way a client with a large upload does, while reading whatever comes back. Resolves when the
 * connection ends, whoever ends it; a bound on that is the point of the test.
 */
function rawWrite(port: number, head: string, bodyBytes: number, chunked = false): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let answeredAfterMs: number | null = null;
    let written = 0;
    let ended = false;
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const writeMore = (): void => {
      while (!ended && written < bodyBytes) {
        const size = Math.min(piece.length, bodyBytes - written);
        const chunk = chunked
          ? Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), piece.subarray(0, size), Buffer.from('\r\n')])
          : piece.subarray(0, size);
        written += size;
        if (!socket.write(chunk)) {
          socket.once('drain', writeMore);
          return;
        }
      }
      if (!ended && chunked && written >= bodyBytes) socket.write('0\r\n\r\n');
    };
    socket.on('connect', () => {
      socket.write(head);
      writeMore();
    });
    socket.on('data', (chunk: Buffer) => {
      answeredAfterMs ??= Date.now() - started;
      answer += chunk.toString('latin1');
    });
    // EPIPE or ECONNRESET on a write after the gateway closed: the end this test is about.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      ended = true;
      resolve({ answer, answeredAfterMs, closedAfterMs: Date.now() - started, bodyBytesWritten: written });
    });
  });
}

function parseAnswer(answer: string): { status: number; headers: Record<string, string>; body: string } {
  const split = answer.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = answer.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine!.split(' ')[1]), headers, body: answer.slice(split + 4) };
}

describe('the /v3 passthrough holds a write body to 8 KB', () => {
  it.each([
    ['one byte over', V3_BODY_LIMIT_BYTES + 1],
    ['1 MB', 1024 * 1024],
    ['10 MB', 10 * 1024 * 1024],
  ])(
    'a Content-Length %s: 413 at once, nothing sent upstream, and the connection closed after the answer',
    async (_name, size) => {
      const upstream = await countingUpstream();
      const gateway = await gatewayFor(upstream.url);
      const head = `POST /v3/fx/quotes HTTP/1.1\r\nhost: gw\r\nconnection: keep-alive\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`;

      const outcome = await rawWrite(gateway.port, head, size);

      const answer = parseAnswer(outcome.answer);
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(answer.body)).toEqual(PAYLOAD_TOO_LARGE);
      expect(outcome.answeredAfterMs).toBeLessThan(1_000);
      // The client is not left writing into a connection nobody reads.
      expect(outcome.closedAfterMs).toBeLessThan(3_000);
      expect(upstream.connections()).toBe(0);
    },
  );

  it('a chunked body: 413 once it passes the limit, nothing of it sent upstream, and the connection closed', async () => {
    const upstream = await countingUpstream();
    const gateway = await gatewayFor(upstream.url);
    const head =
      'POST /v3/fx/withdrawals HTTP/1.1\r\nhost: gw\r\nconnection: keep-alive\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n';

    const outcome = await rawWrite(gateway.port, head, 4 * 1024 * 1024, true);

    const answer = parseAnswer(outcome.answer);
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body.replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n\r\n$/, ''))).toEqual(
      PAYLOAD_TOO_LARGE,
    );
    expect(outcome.closedAfterMs).toBeLessThan(3_000);
    expect(upstream.connections()).toBe(0);
  });

  it('a body of exactly 8 KB passes, byte for byte, and so does a chunked one under it', async () => {
    const upstream = await countingUpstream();
    const gateway = await gatewayFor(upstream.url);
    const exact = Buffer.alloc(V3_BODY_LIMIT_BYTES, 0x61);
    const response = await request(`${gateway.url}/v3/fx/quotes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: exact,
    });
    expect(response.statusCode).toBe(200);
    await response.body.dump();

    const chunked = await new Promise<number | undefined>((resolve, reject) => {
      const outgoing = httpRequest(
        `${gateway.url}/v3/fx/quotes`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (answer) => {
          answer.resume();
          resolve(answer.statusCode);
        },
      );
      outgoing.on('error', reject);
      outgoing.write('{"a":');
      outgoing.write(' "b" ');
      outgoing.end('}');
    });
    expect(chunked).toBe(200);
    expect(upstream.bodies.map((body) => body.toString())).toEqual([exact.toString(), '{"a": "b" }']);
  });

  it('a GET keeps its body as it came, whatever its size: fastify, and so v3, never reads one', async () => {
    const upstream = await countingUpstream();
    const gateway = await gatewayFor(upstream.url);
    const body = Buffer.alloc(V3_BODY_LIMIT_BYTES * 2, 0x62);
    const client = new Client(gateway.url);
    cleanups.push(() => client.close());
    const response = await client.request({
      method: 'GET',
      path: '/v3/fx/pairs',
      body,
      headers: { 'content-length': String(body.length) },
    });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    expect(upstream.bodies[0]!.length).toBe(body.length);
  });
});

describe('the gateway refuses an oversized body as the core does', () => {
  let core: V3Harness;
  let app: FastifyInstance;
  let gateway: { url: string; port: number };
  beforeAll(async () => {
    core = await V3Harness.start();
    app = await buildGatewayApp({ upstreamUrl: core.baseUrl, logLevel: 'silent' });
    gateway = {
      url: await app.listen({ host: '127.0.0.1', port: 0 }),
      port: (app.server.address() as AddressInfo).port,
    };
  });
  afterAll(async () => {
    await app?.close();
    await core?.close();
  });

  it('the same status and envelope, direct and through the gateway', async () => {
    const body = Buffer.alloc(9_000, 0x20);
    const answers: Array<{ status: number; body: unknown; headers: IncomingHttpHeaders }> = [];
    for (const base of [core.baseUrl, gateway.url]) {
      const response = await request(`${base}/v3/fx/quotes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'k-1' },
        body,
      });
      answers.push({ status: response.statusCode, body: await response.body.json(), headers: response.headers });
    }
    expect(answers[0]!.status).toBe(413);
    expect(answers[1]!.status).toBe(413);
    expect(answers[1]!.body).toEqual(answers[0]!.body);
    expect(answers[1]!.headers.connection).toBe('close');
  });

  it('10 MB through the gateway: 413 in the v3 envelope, never a 500, and the connection ends', async () => {
    const size = 10 * 1024 * 1024;
    const head = `POST /v3/fx/trades HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\nidempotency-key: k-2\r\ncontent-length: ${size}\r\n\r\n`;
    const outcome = await rawWrite(gateway.port, head, size);
    const answer = parseAnswer(outcome.answer);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual(PAYLOAD_TOO_LARGE);
    expect(outcome.closedAfterMs).toBeLessThan(3_000);
  });
});

describe('a write the upstream never received whole', () => {
  it('is 503 SERVICE_UNAVAILABLE when the deadline passes before it was sent, and is never sent after', async () => {
    const upstream = await RecordingUpstream.start();
    cleanups.push(() => upstream.close());
    // One connection, which the test itself holds with a request the upstream never answers.
    upstream.answerFor = (seen) =>
      seen.url === '/held'
        ? { status: 200, hang: true }
        : { status: 201, headers: { 'content-type': 'application/json' }, body: '{"data":{}}' };
    const pool = new Pool(upstream.url, { connections: 1 });
    cleanups.push(() => pool.destroy());
    const held = new AbortController();
    const holding = pool.request({ method: 'GET', path: '/held', signal: held.signal }).catch(() => undefined);
    await expect.poll(() => upstream.requests.length).toBe(1);
    const gateway = await gatewayFor(upstream.url, {
      upstreamDispatcher: pool,
      connectTimeoutMs: 200,
      timeoutMs: 200,
      deadlineMs: 400,
    });

    const started = Date.now();
    const response = await request(`${gateway.url}/v3/fx/withdrawals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'w-1' },
      body: '{"amount":"1.00"}',
    });
    const elapsed = Date.now() - started;
    expect(response.statusCode).toBe(503);
    expect(await response.body.json()).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        type: 'INTERNAL_ERROR',
        message: 'The v3 service behind this gateway is unavailable; retry later.',
        retryStrategy: 'RETRY_WITH_BACKOFF',
        details: {},
      },
    });
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(1_400);

    // The connection frees up: the pool takes the expired write up, and it is dropped before a byte is sent.
    held.abort();
    await holding;
    // A request queued after it on the one connection: once it is answered, the expired write, ahead of it, is settled.
    const after = await pool.request({ method: 'GET', path: '/after' });
    expect(after.statusCode).toBe(201);
    await after.body.text();
    expect(upstream.requests.map((seen) => `${seen.method} ${seen.url}`)).toEqual(['GET /held', 'GET /after']);
  });

  it('is still 500 CHECK_STATE_THEN_RETRY once it was sent whole and the answer did not come', async () => {
    const upstream = await RecordingUpstream.start();
    cleanups.push(() => upstream.close());
    upstream.answer = { status: 200, hang: true };
    const gateway = await gatewayFor(upstream.url, { timeoutMs: 200, connectTimeoutMs: 200, deadlineMs: 400 });
    const response = await request(`${gateway.url}/v3/fx/withdrawals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'w-2' },
      body: '{"amount":"1.00"}',
    });
    expect(response.statusCode).toBe(500);
    expect(await response.body.json()).toMatchObject({
      error: { code: 'INTERNAL_ERROR', retryStrategy: 'CHECK_STATE_THEN_RETRY' },
    });
    expect(upstream.requests).toHaveLength(1);
  });
});
