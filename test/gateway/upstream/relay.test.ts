/**
 * The relay under the /v3 passthrough, on connection-level behaviour the happy path does not
 * show (passthrough.test.ts has that): hop-by-hop headers, Expect, a GET with a body, a client
 * that leaves before or during the answer, an informational answer, an upstream that breaks off,
 * a request body the upstream did not wait for, an answer larger than the socket buffers, and an
 * answer whose head the gateway's server cannot write. Each case runs the gateway (the last, the
 * relay alone) against a real upstream on 127.0.0.1, a plain node:http or node:net server where
 * the case needs an upstream that misbehaves on purpose.
 */
import { once } from 'node:events';
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request as httpRequest,
  type RequestOptions,
  type Server,
} from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { Readable } from 'node:stream';

import Fastify, { type FastifyInstance } from 'fastify';
import { type Dispatcher, Pool, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';

import { buildGatewayApp } from '../../../src/gateway/app.js';
import { createUpstreamRelay } from '../../../src/gateway/upstream/relay.js';
import { RecordingUpstream } from '../recording-upstream.js';

const cleanups: Array<() => Promise<unknown>> = [];
/** The hand-made upstreams' sockets, cut first: a relay that failed its case must not keep the gateway's close waiting. */
const upstreamSockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of upstreamSockets) socket.destroy();
  // Bounded, so that a relay which never lets go fails its case instead of hanging the run.
  for (const cleanup of cleanups.splice(0).reverse())
    await Promise.race([cleanup(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
});

async function gatewayFor(upstreamUrl: string): Promise<string> {
  const app: FastifyInstance = await buildGatewayApp({ upstreamUrl, logLevel: 'silent' });
  cleanups.push(() => app.close());
  return app.listen({ host: '127.0.0.1', port: 0 });
}

async function listening(server: Server | ReturnType<typeof createNetServer>): Promise<string> {
  server.on('connection', (socket: Socket) => {
    upstreamSockets.add(socket);
    socket.on('close', () => upstreamSockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** node:http, because undici refuses to send Connection tokens, Keep-Alive, TE, Expect, or a body with a GET. */
function rawRequest(
  url: string,
  options: RequestOptions,
  body?: string,
): Promise<{ response: IncomingMessage; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { ...options, agent: false }, (response) => {
      let received = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      response.on('end', () => resolve({ response, body: received }));
    });
    outgoing.on('error', reject).end(body);
  });
}

describe('the passthrough relay', () => {
  it('forwards neither hop-by-hop headers nor those Connection names, in either direction', async () => {
    const upstream = await RecordingUpstream.start();
    cleanups.push(() => upstream.close());
    upstream.answer = {
      status: 200,
      headers: {
        'content-type': 'application/json',
        connection: 'x-upstream-hop',
        'x-upstream-hop': '1',
        'keep-alive': 'timeout=99',
        'x-upstream-kept': '1',
      },
      body: '{}',
    };
    const gateway = await gatewayFor(upstream.url);

    const { response } = await rawRequest(`${gateway}/v3/fx/pairs`, {
      headers: {
        connection: 'x-client-hop',
        'x-client-hop': 'secret',
        'keep-alive': 'timeout=5',
        te: 'trailers',
        'x-client-kept': '1',
      },
    });

    const sent = upstream.requests[0]!.headers;
    expect(sent['x-client-kept']).toBe('1');
    expect(sent['x-client-hop']).toBeUndefined();
    expect(sent['keep-alive']).toBeUndefined();
    expect(sent.te).toBeUndefined();
    expect(sent.connection).not.toContain('x-client-hop');
    expect(response.headers['x-upstream-kept']).toBe('1');
    expect(response.headers['x-upstream-hop']).toBeUndefined();
    // The gateway's own connection to the client has its own Keep-Alive, never the upstream's.
    expect(response.headers['keep-alive']).not.toBe('timeout=99');
    expect(response.headers.connection).not.toContain('x-upstream-hop');
  });

  it('answers Expect: 100-continue itself and sends the body on without the expectation', async () => {
    const upstream = await RecordingUpstream.start();
    cleanups.push(() => upstream.close());
    const gateway = await gatewayFor(upstream.url);
    const body = '{"pair":"BTC-USD"}';

    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = httpRequest(`${gateway}/v3/fx/quotes`, {
        method: 'POST',
        agent: false,
        headers: { expect: '100-continue', 'content-type': 'application/json', 'content-length': String(body.length) },
      });
      outgoing.on('continue', () => outgoing.end(body));
      outgoing.on('response', resolve).on('error', reject);
    });
    response.resume();

    expect(response.statusCode).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]!.body.toString()).toBe(body);
    expect(upstream.requests[0]!.headers.expect).toBeUndefined();
  });

  it('sends the body of a GET on as it came, which fastify itself leaves unread', async () => {
    const seen: Array<{ method: string | undefined; length: string | undefined; body: string }> = [];
    const upstream = createServer((incoming, response) => {
      let body = '';
      incoming.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      incoming.on('end', () => {
        seen.push({ method: incoming.method, length: incoming.headers['content-length'], body });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    const gateway = await gatewayFor(await listening(upstream));

    const { response } = await rawRequest(
      `${gateway}/v3/fx/pairs`,
      { method: 'GET', headers: { 'content-type': 'application/json', 'content-length': '9' } },
      '{"a": 1 }',
    );

    expect(response.statusCode).toBe(200);
    expect(seen).toEqual([{ method: 'GET', length: '9', body: '{"a": 1 }' }]);
  });

  it('lets the upstream finish a request whose client left before the answer, once, and keeps serving', async () => {
    const upstream = await RecordingUpstream.start();
    cleanups.push(() => upstream.close());
    upstream.answer = {
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: '{"data":{}}',
      delayMs: 300,
    };
    const gateway = await gatewayFor(upstream.url);

    const outgoing = httpRequest(`${gateway}/v3/fx/withdrawals`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k-1' },
    });
    outgoing.on('error', () => undefined).end('{"amount":"1.00"}');
    await expect.poll(() => upstream.requests.length).toBe(1);
    outgoing.destroy();
    // Past the upstream's answer: the relay has had it, and had nobody to give it to.
    await expect.poll(() => upstream.answered, { timeout: 5_000 }).toBe(1);

    expect(upstream.requests.map((seen) => `${seen.method} ${seen.url}`)).toEqual(['POST /v3/fx/withdrawals']);
    upstream.answer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[]}' };
    const next = await request(`${gateway}/v3/fx/pairs`);
    expect(next.statusCode).toBe(200);
    expect(await next.body.text()).toBe('{"data":[]}');
  });

  it('relays an answer larger than the socket buffers byte for byte', async () => {
    const upstream = await RecordingUpstream.start();
    cleanups.push(() => upstream.close());
    const body = Buffer.alloc(8 * 1024 * 1024);
    for (let index = 0; index < body.length; index++) body[index] = (index * 7919) % 251;
    upstream.answer = { status: 200, headers: { 'content-type': 'application/octet-stream' }, body };
    const gateway = await gatewayFor(upstream.url);

    const response = await request(`${gateway}/v3/fx/statements/export`);
    // Read slowly at first, so that the gateway's writes to this client fill up and it must pause the upstream.
    const chunks: Buffer[] = [];
    let delays = 0;
    for await (const chunk of response.body) {
      chunks.push(chunk as Buffer);
      if (delays++ < 20) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(response.headers['content-length']).toBe(String(body.length));
    expect(Buffer.compare(Buffer.concat(chunks), body)).toBe(0);
  });

  it('relays the final answer of an upstream that sends an informational one first', async () => {
    const upstream = createNetServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 103 Early Hints\r\nlink: </v3/fx/pairs>; rel=preload\r\n\r\n');
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"data":[]}');
      });
    });
    const gateway = await gatewayFor(await listening(upstream));

    const response = await request(`${gateway}/v3/fx/pairs`);
    expect(response.statusCode).toBe(200);
    expect(response.headers.link).toBeUndefined();
    expect(await response.body.text()).toBe('{"data":[]}');
  });

  it('cuts the client connection when the upstream breaks off after its headers', async () => {
    const upstream = createNetServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"data":');
        setTimeout(() => socket.destroy(), 20);
      });
    });
    const gateway = await gatewayFor(await listening(upstream));

    const response = await request(`${gateway}/v3/fx/pairs`);
    expect(response.statusCode).toBe(200);
    // A clean end would hand the client a truncated body as if it were whole.
    await expect(response.body.text()).rejects.toThrow();
  });

  it('stops relaying, and lets go of the upstream answer, when the client leaves during it', async () => {
    let upstreamClosedEarly: () => void;
    const closedEarly = new Promise<void>((resolve) => (upstreamClosedEarly = resolve));
    let chunksWritten = 0;
    const upstream = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => {
        response.write(`{"chunk":${chunksWritten++}}\n`);
        if (chunksWritten === 500) {
          clearInterval(timer);
          response.end();
        }
      }, 10);
      response.on('close', () => {
        clearInterval(timer);
        if (!response.writableFinished) upstreamClosedEarly();
      });
    });
    const gateway = await gatewayFor(await listening(upstream));

    const response = await request(`${gateway}/v3/fx/pairs`);
    const reader = response.body[Symbol.asyncIterator]();
    await reader.next();
    response.body.destroy();

    const outcome = await Promise.race([
      closedEarly.then(() => 'upstream answer closed'),
      new Promise((resolve) => setTimeout(resolve, 2_000, 'still streaming')),
    ]);
    expect(outcome).toBe('upstream answer closed');
    expect(chunksWritten).toBeLessThan(500);
  });

  // A write's body is read whole before anything is sent (body-limit.test.ts); a GET's is streamed, so the upstream may answer first.
  it('closes a connection whose request body the upstream answered without reading, even for a client that asked to keep it', async () => {
    const upstream = createServer((_request, response) => {
      // An upstream that means to keep its own connection open says so; that is no promise about the client's.
      response.writeHead(400, {
        'content-type': 'application/json',
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
      });
      response.end('{"error":{"code":"NOT_READ"}}');
    });
    const gateway = await gatewayFor(await listening(upstream));
    const agent = new Agent({ keepAlive: true });
    cleanups.push(async () => agent.destroy());

    // The body trickles in, so the upstream's answer arrives while most of it is still unsent.
    const trickle = Readable.from(
      (async function* () {
        for (let index = 0; index < 40; index++) {
          yield Buffer.alloc(1024, 0x20);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })(),
    );
    const answer = await new Promise<{ status: number | undefined; headers: IncomingHttpHeaders; body: string }>(
      (resolve, reject) => {
        const outgoing = httpRequest(`${gateway}/v3/fx/pairs`, {
          method: 'GET',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': String(40 * 1024) },
        });
        outgoing.on('response', (response) => {
          let body = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body }));
        });
        // The gateway closes the connection once it has answered; the unsent rest of the body then fails to write.
        outgoing.on('error', (error) => (outgoing.writableFinished ? undefined : reject(error)));
        trickle.pipe(outgoing);
      },
    );

    expect(answer.status).toBe(400);
    expect(answer.body).toBe('{"error":{"code":"NOT_READ"}}');
    expect(answer.headers.connection).toBe('close');
  });
});

describe('createUpstreamRelay', () => {
  it('cuts the client, and tells the observer, when the upstream head is one the server cannot write', async () => {
    const upstream = await listening(
      createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{}')),
    );
    const pool = new Pool(upstream);
    cleanups.push(() => pool.close());
    // The upstream's real answer, its status reported as 1000: Node's server refuses to write it (100 to 999).
    const dispatcher = {
      dispatch: (options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) =>
        pool.dispatch(
          options,
          new Proxy(handler, {
            get(target, key) {
              if (key === 'onResponseStart')
                return (...[controller, , headers, message]: Parameters<NonNullable<typeof target.onResponseStart>>) =>
                  target.onResponseStart!(controller, 1000, headers, message);
              const value: unknown = Reflect.get(target, key, target);
              return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
            },
          }),
        ),
    } as unknown as Dispatcher;
    const failures: Error[] = [];
    const brokenOff: Error[] = [];
    const relay = createUpstreamRelay({
      origin: upstream,
      dispatcher,
      forwardedFor: (request) => request.ip,
      deadlineMs: 5_000,
      onFailure: (reply, error) => {
        failures.push(error);
        void reply.code(502).send();
      },
      observer: { answered: () => {}, brokeOff: (_request, error) => brokenOff.push(error) },
    });
    const app = Fastify();
    cleanups.push(() => app.close());
    app.get('/v3/fx/pairs', (request, reply) => relay(request, reply, '/v3/fx/pairs'));
    const gateway = await app.listen({ host: '127.0.0.1', port: 0 });
    // Before, the error reached onFailure, which cannot answer a hijacked reply: the client waited for its own timeout.
    await expect(request(`${gateway}/v3/fx/pairs`, { headersTimeout: 2_000 })).rejects.toMatchObject({
      code: 'UND_ERR_SOCKET',
    });
    expect(failures).toEqual([]);
    expect(brokenOff).toMatchObject([{ code: 'ERR_HTTP_INVALID_STATUS_CODE' }]);
  });
});
