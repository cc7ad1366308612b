/**
 * Tracing end to end: a v1 trade read with a client's `traceparent`, through a gateway in front
 * of a real core (both built with tracing on, exporting to an OTLP/HTTP receiver on 127.0.0.1),
 * gives one trace holding the gateway's spans and the core's, each parent link as the hop makes
 * it; database and store spans sit under their request's span; and no span of the run carries
 * the org id, the key's name, the amount or a loopback address. Once per protocol.
 */
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type StartedTracing, startTracing } from '../../src/cli/tracing/start.js';
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import { idToLegacyUuid } from '../../src/lib/ids.js';
import type { LoadedKey } from '../../src/lib/keys/key-file.js';
import { quoteAndTrade, recordTestDeposit } from '../support/book-fixtures.js';
import { LegacyHarness } from '../support/legacy-harness.js';
import { OtlpReceiver, type ReceivedSpan, SPAN_KIND } from '../support/otlp-receiver.js';
import { rawExchange } from '../support/raw-http.js';
import { sendTo, TEST_ISSUER } from '../support/v3-harness.js';

/** The trade's amount: a figure no other value of the run has, so finding it in a span can only be a leak. */
const AMOUNT = '4321.77';

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

function byId(spans: readonly ReceivedSpan[]): Map<string, ReceivedSpan> {
  return new Map(spans.map((span) => [span.spanId, span]));
}

/** The span's ancestors in the trace, nearest first. */
function ancestors(span: ReceivedSpan, spans: Map<string, ReceivedSpan>): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  let parent = spans.get(span.parentSpanId);
  while (parent !== undefined) {
    chain.push(parent);
    parent = spans.get(parent.parentSpanId);
  }
  return chain;
}

/** Everything a span says, as text: its name, and each attribute's and event's key and value. */
function textOf(span: ReceivedSpan): string[] {
  return [
    span.name,
    span.statusMessage,
    ...Object.entries(span.attributes).flatMap(([name, value]) => [name, JSON.stringify(value)]),
    ...span.events.flatMap((event) => [
      event.name,
      ...Object.entries(event.attributes).flatMap(([name, value]) => [name, JSON.stringify(value)]),
    ]),
  ];
}

describe.each(['http/protobuf', 'http/json'] as const)('tracing over %s', (protocol) => {
  let receiver: OtlpReceiver;
  let tracing: StartedTracing;
  let h: LegacyHarness;
  let key: LoadedKey;
  let tradeId: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    // The exporter reads its endpoint and protocol from the process environment, as it does in production.
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: 'fxgate-test',
    };
    Object.assign(process.env, env);
    tracing = (await startTracing(env, 'all'))!;
    expect(tracing).not.toBeNull();
    h = await LegacyHarness.start({ driver: 'postgres', storeKind: 'redis' });
    key = await h.createKey();
    await recordTestDeposit(h.core.db, {
      orgId: key.file.orgId,
      environment: 'sandbox',
      currency: 'USD',
      amount: '100000.00',
    });
    const trade = await quoteAndTrade(h.core, key, {
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      amount: AMOUNT,
      amountCurrency: 'USD',
    });
    tradeId = trade.id!;
  });

  afterAll(async () => {
    await h?.close();
    await tracing?.shutdown();
    await receiver?.close();
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  });

  it('a v1 trade read continues the client trace through the gateway into the core', async () => {
    const traceId = hex(16);
    const clientSpanId = hex(8);
    const response = await h.v1(key, {
      path: `trade/${idToLegacyUuid('trade', tradeId)}`,
      headers: { traceparent: `00-${traceId}-${clientSpanId}-01`, tracestate: 'vendor=opaque' },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.text).toContain(AMOUNT.replace(/0+$/, ''));
    await tracing.forceFlush();

    const spans = receiver.trace(traceId);
    const index = byId(spans);
    const gatewayServer = spans.find((span) => span.scope === 'fxgate.gateway' && span.kind === SPAN_KIND.server);
    expect(gatewayServer, JSON.stringify(spans.map((span) => span.name))).toBeDefined();
    expect(gatewayServer).toMatchObject({
      parentSpanId: clientSpanId,
      name: 'GET /v1/brokerage/:orgId/trade/:id',
      attributes: {
        'fxgate.api.generation': 'v1',
        'fxgate.operation': 'trade/{id}',
        'http.request.method': 'GET',
        'http.route': '/v1/brokerage/:orgId/trade/:id',
        'http.response.status_code': 200,
        'fxgate.request_id': response.headers['x-request-id'],
      },
    });

    // Each v3 call of the gateway is a client span under its server span, and the core's server span is that call's child.
    const upstreamCalls = spans.filter(
      (span) => span.scope === 'fxgate.gateway' && span.kind === SPAN_KIND.client && span.attributes['url.template'],
    );
    expect(upstreamCalls.length).toBeGreaterThan(0);
    for (const call of upstreamCalls) expect(call.parentSpanId).toBe(gatewayServer!.spanId);
    const coreServers = spans.filter((span) => span.scope === 'fxgate.core' && span.kind === SPAN_KIND.server);
    expect(coreServers.length).toBe(upstreamCalls.length);
    for (const server of coreServers) {
      const call = index.get(server.parentSpanId);
      expect(call?.scope).toBe('fxgate.gateway');
      expect(call?.kind).toBe(SPAN_KIND.client);
      expect(server.attributes['fxgate.api.generation']).toBe('v3');
    }
    const read = coreServers.find((span) => span.name === 'GET /v3/fx/trades/:id');
    expect(read).toMatchObject({
      attributes: { 'fxgate.operation': 'GET /v3/fx/trades/:id', 'http.route': '/v3/fx/trades/:id' },
    });
    expect(index.get(read!.parentSpanId)).toMatchObject({
      name: 'GET /v3/fx/trades/:id',
      attributes: { 'http.response.status_code': 200, 'url.template': '/v3/fx/trades/:id' },
    });

    // The core's reads of PostgreSQL and both parts' Redis calls, each under a request's server span.
    const database = spans.filter((span) => span.attributes['db.system.name'] === 'postgresql');
    const store = spans.filter((span) => span.attributes['db.system.name'] === 'redis');
    expect(database.length).toBeGreaterThan(0);
    expect(store.length).toBeGreaterThan(0);
    for (const span of [...database, ...store]) {
      expect(span.kind).toBe(SPAN_KIND.client);
      expect(span.attributes['db.operation.name']).toMatch(/^[A-Z]+$/);
      expect(ancestors(span, index).some((above) => above.kind === SPAN_KIND.server)).toBe(true);
    }
    expect(database.some((span) => span.parentSpanId === read!.spanId || ancestors(span, index).includes(read!))).toBe(
      true,
    );
    expect(store.some((span) => span.name === 'EVALSHA claimNonce')).toBe(true);
    expect(spans.every((span) => span.resource['service.name'] === 'fxgate-test')).toBe(true);
  });

  it('a /v3 read through the passthrough is a client span of the gateway and a server span of the core', async () => {
    const traceId = hex(16);
    const path = `/v3/fx/trades/${tradeId}`;
    const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
    const response = await sendTo(h.gatewayUrl, {
      path,
      headers: {
        ...(await signer.headers({ method: 'GET', pathAndQuery: path })),
        traceparent: `00-${traceId}-${hex(8)}-01`,
      },
    });
    expect(response.status, response.text).toBe(200);
    await tracing.forceFlush();
    const spans = receiver.trace(traceId);
    const index = byId(spans);
    const gatewayServer = spans.find((span) => span.scope === 'fxgate.gateway' && span.kind === SPAN_KIND.server);
    expect(gatewayServer).toMatchObject({
      name: 'GET /v3/fx/trades/:id',
      attributes: { 'fxgate.api.generation': 'v3', 'fxgate.operation': 'GET /v3/fx/trades/:id' },
    });
    const relayed = spans.find((span) => span.scope === 'fxgate.gateway' && span.kind === SPAN_KIND.client);
    expect(relayed).toMatchObject({ parentSpanId: gatewayServer!.spanId, name: 'GET /v3/fx/trades/:id' });
    expect(relayed!.attributes['http.response.status_code']).toBe(200);
    const coreServer = spans.find((span) => span.scope === 'fxgate.core' && span.kind === SPAN_KIND.server);
    expect(coreServer?.parentSpanId).toBe(relayed!.spanId);
    expect(index.size).toBe(spans.length);
  });

  it("a write's statements run in its span, its body sent after its head: the body's events carry the request's context", async () => {
    const traceId = hex(16);
    const body = JSON.stringify({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10.00', amountCurrency: 'USD' });
    const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
    const signed = await signer.headers({
      method: 'POST',
      pathAndQuery: '/v3/fx/quotes',
      body,
      idempotencyKey: hex(8),
    });
    const head = [
      'POST /v3/fx/quotes HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
      `traceparent: 00-${traceId}-${hex(8)}-01`,
      ...Object.entries(signed).map(([name, value]) => `${name}: ${value}`),
    ].join('\r\n');
    // The body in a later packet: its events come from the socket, not from the request's own call.
    const exchange = await rawExchange(h.core.baseUrl, { steps: [`${head}\r\n\r\n`, { pauseMs: 50 }, body] });
    expect(exchange.response?.status, exchange.response?.body).toBe(200);
    await tracing.forceFlush();
    const spans = receiver.trace(traceId);
    const insert = spans.find((span) => span.name === 'INSERT quotes');
    expect(insert, JSON.stringify(spans.map((span) => span.name))).toBeDefined();
    expect(ancestors(insert!, byId(spans)).map((span) => span.name)).toContain('POST /v3/fx/quotes');
  });

  it('no span carries an org id, a key name, an amount or an address', async () => {
    await tracing.forceFlush();
    expect(receiver.spans.length).toBeGreaterThan(0);
    expect(
      receiver.contentTypes.every((type) =>
        type.startsWith(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf'),
      ),
    ).toBe(true);
    const orgId = key.file.orgId;
    const forbidden = [
      orgId,
      orgId.replaceAll('-', ''),
      key.file.name,
      'apiKey/',
      AMOUNT,
      '127.0.0.1',
      '::1',
      'localhost',
    ];
    for (const span of receiver.spans) {
      for (const text of textOf(span)) {
        for (const value of forbidden) expect(text, `${span.name}: ${text}`).not.toContain(value);
      }
      for (const name of [
        'url.full',
        'url.path',
        'client.address',
        'server.address',
        'network.peer.address',
        'db.query.text',
      ])
        expect(span.attributes, span.name).not.toHaveProperty([name]);
    }
  });
});
