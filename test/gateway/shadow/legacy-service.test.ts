/**
 * The legacy service's client, for a mirrored read: the request as the client sent it under the
 * base URL's path, with Via and X-Forwarded-For added and no body; the whole answer, or a
 * rejection when it is too slow, too large, or refused. And the base URL it accepts, and where it
 * connects: only where the destination policy of the operator's own services allows. With
 * tracing on, a mirrored read is a client span sending its own traceparent.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { context, trace } from '@opentelemetry/api';
import Fastify, { type FastifyRequest } from 'fastify';
import { type Dispatcher, Pool, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';

import {
  cameThroughGateway,
  LegacyService,
  MAX_COMPARED_BODY_BYTES,
} from '../../../src/gateway/shadow/legacy-service.js';
import {
  DestinationRefusedError,
  InvalidLegacyServiceUrlError,
  LegacyTimeoutError,
} from '../../../src/lib/errors/internal-errors.js';
import { AllowedNetworks } from '../../../src/lib/net/allowed-networks.js';
import { SPAN_KIND, traceToReceiver } from '../../support/otlp-receiver.js';
import { recordConnections, testResolver } from '../../support/outbound.js';
import { freePortUrl } from './shadow-setup.js';

const servers: Server[] = [];
const services: LegacyService[] = [];

async function serve(
  answer: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    seen.push(request);
    answer(request, response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function service(url: string): LegacyService {
  const created = new LegacyService({ url, connectTimeoutMs: 1_000, timeoutMs: 5_000 });
  services.push(created);
  return created;
}

/** What the client sent, as fastify hands it on. */
function clientRequest(url: string, headers: Record<string, string> = {}): FastifyRequest {
  return {
    url,
    headers: { host: 'gateway.example', authorization: 'Bearer token-of-the-client', ...headers },
    ip: '203.0.113.7',
  } as unknown as FastifyRequest;
}

afterEach(async () => {
  for (const created of services.splice(0)) await created.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('LegacyService.mirror', () => {
  it('sends the read as it came under the base path, adding Via and X-Forwarded-For, and returns the whole answer', async () => {
    const legacy = await serve((_request, response) =>
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"error"}'),
    );
    const answer = await service(`${legacy.url}/legacy-api/`).mirror(
      clientRequest('/v2/brokerage/o/trades?page=2', { via: '1.1 edge', 'content-length': '0' }),
      1_000,
    );
    expect(answer).toEqual({ status: 404, body: Buffer.from('{"status":"error"}') });
    const [seen] = legacy.seen;
    expect(seen!.url).toBe('/legacy-api/v2/brokerage/o/trades?page=2');
    expect(seen!.method).toBe('GET');
    expect(seen!.headers).toMatchObject({
      authorization: 'Bearer token-of-the-client',
      via: '1.1 edge, 1.1 fxgate',
      'x-forwarded-for': '203.0.113.7',
      host: new URL(legacy.url).host,
    });
    expect(seen!.headers['content-length']).toBeUndefined();
  });

  it('gives up after the timeout, on an answer larger than it keeps, and on a service that is not there', async () => {
    const silent = await serve(() => undefined);
    await expect(service(silent.url).mirror(clientRequest('/v1/brokerage/o/balances'), 200)).rejects.toBeInstanceOf(
      LegacyTimeoutError,
    );
    const huge = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(Buffer.alloc(MAX_COMPARED_BODY_BYTES + 1, 0x20));
    });
    await expect(service(huge.url).mirror(clientRequest('/v1/brokerage/o/balances'), 5_000)).rejects.toThrow(
      /larger than/,
    );
    await expect(
      service(await freePortUrl()).mirror(clientRequest('/v1/brokerage/o/balances'), 1_000),
    ).rejects.toThrow();
  });
});

describe('the legacy service URL', () => {
  it.each(['ftp://legacy', 'not a url', 'http://user:secret@legacy', 'http://legacy/?x=1'])('refuses %s', (url) => {
    expect(() => new LegacyService({ url, connectTimeoutMs: 1, timeoutMs: 1 })).toThrow(InvalidLegacyServiceUrlError);
  });

  it.each([
    ['http://169.254.169.254/latest/', '169.254.169.254 is a link-local address (cloud metadata)'],
    ['http://10.0.0.1:8080', '10.0.0.1 is a private address'],
    ['http://[fd00::1]/', 'fd00::1 is a unique local address (private IPv6)'],
    ['http://0xa000001/', '10.0.0.1 is a private address'],
    ['http://legacy.corp.internal/', 'legacy.corp.internal is a private name (.internal is never public)'],
  ])('refuses %s where the destination policy does, saying how to allow it', (url, reason) => {
    expect(() => new LegacyService({ url, connectTimeoutMs: 1, timeoutMs: 1 })).toThrow(
      `invalid legacy service URL ${url}: ${reason}; the legacy service (FXGATE_SHADOW_URL) must be at a public or loopback address, or in a network of FXGATE_WEBHOOK_ALLOWED_NETWORKS`,
    );
  });

  it("accepts loopback, and the operator's allowed networks", () => {
    const networks = AllowedNetworks.of(['10.0.0.0/8']);
    for (const url of ['http://127.0.0.1:8080', 'http://localhost:8080/legacy', 'http://[::1]:8080']) service(url);
    for (const url of ['http://10.0.0.1:8080', 'https://legacy.corp.internal/api'])
      services.push(new LegacyService({ url, connectTimeoutMs: 1, timeoutMs: 1, outbound: { networks } }));
  });

  it('connects only where the policy allows: a name that resolves to a private address is refused, no socket opened', async () => {
    const legacy = await serve((_request, response) => response.end('{}'));
    const port = new URL(legacy.url).port;
    const resolver = testResolver({ 'legacy.test': ['127.0.0.1'], 'rebind.test': ['10.0.0.1'] });
    const named = (name: string) =>
      new LegacyService({
        url: `http://${name}:${port}`,
        connectTimeoutMs: 1_000,
        timeoutMs: 5_000,
        outbound: { resolver },
      });
    const allowed = named('legacy.test');
    const refused = named('rebind.test');
    services.push(allowed, refused);
    const connections = recordConnections();
    try {
      expect(await allowed.mirror(clientRequest('/v1/brokerage/o/balances'), 1_000)).toMatchObject({ status: 200 });
      await expect(refused.mirror(clientRequest('/v1/brokerage/o/balances'), 1_000)).rejects.toThrow(
        new DestinationRefusedError(
          'rebind.test resolved to 10.0.0.1, a private address; the legacy service (FXGATE_SHADOW_URL) must be at a public or loopback address, or in a network of FXGATE_WEBHOOK_ALLOWED_NETWORKS',
        ).message,
      );
    } finally {
      connections.restore();
    }
    expect(connections.hosts()).toEqual(['127.0.0.1']);
    expect(legacy.seen).toHaveLength(1);
  });
});

describe('cameThroughGateway', () => {
  it.each([
    [undefined, false],
    ['1.1 edge', false],
    ['1.1 fxgate', true],
    ['1.0 a, 1.1 fxgate', true],
    [['1.1 a', '1.1 fxgate'], true],
    ['1.1 fxgate-other', false],
  ] as const)('%j -> %s', (via, expected) => {
    expect(cameThroughGateway(via as string | string[] | undefined)).toBe(expected);
  });
});

describe('LegacyService with tracing on', () => {
  const traced = traceToReceiver('gateway');

  it("sends a mirrored read under the gateway's own span in place of the client's traceparent, named by the route template", async () => {
    const legacy = await serve((_request, response) => response.writeHead(200).end('{}'));
    const request = {
      ...clientRequest('/v2/brokerage/org-7/trades?page=2', {
        traceparent: `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01`,
      }),
      routeOptions: { url: '/v2/brokerage/:orgId/trades' },
    } as unknown as FastifyRequest;
    const parent = trace.getTracer('test').startSpan('GET /v2/brokerage/:orgId/trades');
    await context.with(trace.setSpan(context.active(), parent), () => service(legacy.url).mirror(request, 1_000));
    parent.end();
    const sent = String(legacy.seen[0]!.headers.traceparent);
    const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(sent) ?? [];
    expect(traceId).toBe(parent.spanContext().traceId);
    await traced.flush();
    expect(traced.receiver.spans.find((span) => span.spanId === spanId)).toMatchObject({
      name: 'GET /v2/brokerage/:orgId/trades',
      kind: SPAN_KIND.client,
      parentSpanId: parent.spanContext().spanId,
      attributes: { 'fxgate.shadow.call': 'mirror', 'http.response.status_code': 200 },
    });
    expect(JSON.stringify(traced.receiver.spans)).not.toMatch(/org-7|127\.0\.0\.1|203\.0\.113\.7/);
  });

  it('a relayed answer the gateway cannot write ends its span failed and cuts the client, who is not left waiting', async () => {
    const legacy = await serve((_request, response) => response.writeHead(200).end('{"ok":true}'));
    // A real answer from a real socket, with a status Node's server refuses to write (below 100).
    const pool = new Pool(legacy.url);
    const dispatcher = {
      request: async (options: Dispatcher.RequestOptions) => ({ ...(await pool.request(options)), statusCode: 99 }),
    } as unknown as Dispatcher;
    const relaying = new LegacyService({ url: legacy.url, connectTimeoutMs: 1_000, timeoutMs: 5_000, dispatcher });
    services.push(relaying);
    const outcomes: unknown[] = [];
    const app = Fastify();
    app.get('/v1/brokerage/:orgId/trades', async (request, reply) => {
      outcomes.push(await relaying.relay(request, reply, { deadlineMs: 1_000, capture: false, onFailure: () => {} }));
      return reply;
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const client = request(
        `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/brokerage/org-7/trades`,
        {
          headersTimeout: 2_000,
        },
      );
      await expect(client).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    } finally {
      await app.close();
      await pool.close();
    }
    expect(outcomes).toEqual([null]);
    await traced.flush();
    // Status 2 is ERROR.
    expect(traced.receiver.spans.filter((span) => span.attributes['fxgate.shadow.call'] === 'relay')).toMatchObject([
      {
        name: 'GET /v1/brokerage/:orgId/trades',
        statusCode: 2,
        attributes: { 'error.type': 'ERR_HTTP_INVALID_STATUS_CODE' },
      },
    ]);
  });
});
