/**
 * The gateway's Prometheus metrics, end to end: a gateway with every part on (legacy v1 and v2,
 * the /v3 passthrough, legacy webhooks, shadow mode beside a legacy double) in front of the real
 * core, reached through a TCP forwarder the test can take down. Traffic of known shape goes
 * through it, then GET /metrics of its admin listener is read in the text format (checked
 * against the exposition grammar, test/support/prometheus-text.ts) and through prom-client's
 * own registry API, and every counter must have moved by exactly what the test did. No label
 * value may be an org id, a key, a path with an id, or an address.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { addWebhook } from '../../../src/cli/commands/webhooks.js';
import { WebhookDeliveryWorker } from '../../../src/core/events/webhook-worker.js';
import { buildGatewayApp } from '../../../src/gateway/app.js';
import { LEGACY_OPERATIONS } from '../../../src/gateway/legacy/declarations/legacy-operations.js';
import { V3_OPERATIONS } from '../../../src/gateway/legacy/v3-contract/operations.js';
import { GatewayMetrics } from '../../../src/gateway/metrics/gateway-metrics.js';
import type { ShadowReport } from '../../../src/gateway/shadow/shadow-recorder.js';
import { ProvisioningCredentials } from '../../../src/gateway/upstream/signing-credentials.js';
import { LegacyWebhooks } from '../../../src/gateway/webhooks/legacy-webhooks.js';
import { LEGACY_WEBHOOK_PATH } from '../../../src/gateway/webhooks/registrations.js';
import { AdminListener } from '../../../src/lib/admin/admin-listener.js';
import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { MIGRATION_GUIDE_OPERATION } from '../../../src/lib/metrics/series.js';
import { postData } from '../../support/book-fixtures.js';
import { legacyToken } from '../../support/independent-signing.js';
import { UNLIMITED_LEGACY_RATE } from '../../support/legacy-harness.js';
import { LegacyWebhookReceiver } from '../../support/legacy-webhook-receiver.js';
import { type Family, labelValues, parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { sendTo, TEST_ISSUER, TEST_ISSUERS, type TestResponse } from '../../support/v3-harness.js';
import { type LegacySide, startLegacySide } from '../shadow/shadow-setup.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const IPV4 = /\b\d{1,3}(\.\d{1,3}){3}\b/;
const IPV6 = /^[0-9a-f:]*::?[0-9a-f:]*$/i;
const QUOTE_BODY = JSON.stringify({ amount: 1000, buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' });

const FAMILIES = {
  requests: 'fxgate_gateway_requests_total',
  duration: 'fxgate_gateway_request_duration_seconds',
  upstream: 'fxgate_gateway_upstream_duration_seconds',
  failures: 'fxgate_gateway_upstream_failures_total',
  idempotency: 'fxgate_gateway_idempotency_total',
  deliveries: 'fxgate_gateway_webhook_deliveries_total',
  backlog: 'fxgate_gateway_webhook_backlog',
  shadow: 'fxgate_gateway_shadow_comparisons_total',
} as const;

let side: LegacySide;
let forwarder: TcpForwarder;
let receiver: LegacyWebhookReceiver;
let coreWorker: WebhookDeliveryWorker;
let webhooks: LegacyWebhooks;
let metrics: GatewayMetrics;
let admin: AdminListener;
let gateway: FastifyInstance;
let gatewayUrl: string;
let adminUrl: string;
let keysDir: string;
let key: LoadedKey;

beforeAll(async () => {
  side = await startLegacySide();
  const { h } = side;
  forwarder = await TcpForwarder.start(h.core.baseUrl);
  receiver = await LegacyWebhookReceiver.start();
  keysDir = await mkdtemp(join(tmpdir(), 'fxgate-metrics-keys-'));
  webhooks = new LegacyWebhooks({
    db: h.core.db,
    keyring: h.core.keyring,
    callbackBaseUrl: (port) => `http://127.0.0.1:${port}${LEGACY_WEBHOOK_PATH}`,
    worker: { pollIntervalMs: 50, requestTimeoutMs: 2_000 },
    reconcileIntervalMs: 3_600_000,
  });
  metrics = new GatewayMetrics();
  admin = new AdminListener({ logLevel: 'silent' });
  gateway = await buildGatewayApp({
    upstreamUrl: forwarder.url,
    logLevel: 'silent',
    admin,
    metrics,
    legacy: {
      registry: h.core.registry,
      database: h.core.db,
      store: h.core.store,
      credentials: new ProvisioningCredentials({ registry: h.core.registry, dir: keysDir, issuer: TEST_ISSUER }),
      issuers: TEST_ISSUERS,
      rateLimits: UNLIMITED_LEGACY_RATE,
      shadow: { legacyUrl: side.double.url, flushIntervalMs: 100 },
      webhooks,
    },
  });
  gatewayUrl = await gateway.listen({ host: '127.0.0.1', port: 0 });
  adminUrl = await admin.listen('127.0.0.1', 0);
  // The core's own v3 worker, delivering to the gateway's receiver.
  coreWorker = new WebhookDeliveryWorker({
    db: h.core.db,
    keyring: h.core.keyring,
    options: { pollIntervalMs: 50, requestTimeoutMs: 5_000 },
  });
  coreWorker.start();
  key = await h.core.createKey();
});

afterAll(async () => {
  await coreWorker?.stop();
  await gateway?.close();
  await admin?.close();
  await forwarder?.close();
  await receiver?.close();
  await side?.close();
  if (keysDir !== undefined) await rm(keysDir, { recursive: true, force: true });
});

function legacy(
  generation: 'v1' | 'v2',
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  return sendTo(gatewayUrl, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    path: path.startsWith('/') ? path : `/${generation}/brokerage/${key.file.orgId}/${path}`,
    ...(init.body === undefined ? {} : { body: init.body }),
    headers: {
      authorization: `Bearer ${legacyToken(key)}`,
      'x-app-mode': 'SANDBOX',
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
  });
}

async function passthrough(path: string): Promise<TestResponse> {
  const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
  return sendTo(gatewayUrl, { path, headers: await signer.headers({ method: 'GET', pathAndQuery: path }) });
}

async function scrape(): Promise<Map<string, Family>> {
  const response = await sendTo(adminUrl, { path: '/metrics' });
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheusText(response.text);
}

/** prom-client's own view of one counter: the value of the series with exactly these labels. */
async function registryValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((entry) => entry.name === name);
  const series = metric?.values.find(
    (value) =>
      Object.keys(labels).length === Object.keys(value.labels).length &&
      Object.entries(labels).every(([label, v]) => value.labels[label] === v),
  );
  return series?.value ?? 0;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('GET /metrics of the gateway', () => {
  it('is served by the admin listener only, in the text format, with the process metrics and every gateway family', async () => {
    expect((await sendTo(gatewayUrl, { path: '/metrics' })).status).toBe(404);
    const families = await scrape();
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ])
      expect(families.has(name), name).toBe(true);
    expect(families.get(FAMILIES.requests)?.type).toBe('counter');
    expect(families.get(FAMILIES.duration)?.type).toBe('histogram');
    expect(families.get(FAMILIES.upstream)?.type).toBe('histogram');
    expect(families.get(FAMILIES.backlog)?.type).toBe('gauge');
    expect(families.get(FAMILIES.shadow)?.type).toBe('counter');
    // The backlog is read from the outbox when scraped.
    expect(sampleValue(families, FAMILIES.backlog)).toBe(0);
  });

  it('counts v1, v2, the passthrough, idempotency, an upstream failure, a webhook delivery and shadow comparisons exactly', async () => {
    const org = key.file.orgId;
    // Counted from here: what the test does is the difference.
    const before = await scrape();
    // Reads of both generations (each mirrored to the legacy double and compared).
    for (let i = 0; i < 2; i++) expect((await legacy('v1', 'balances')).status).toBe(200);
    expect((await legacy('v2', 'balances')).status).toBe(200);
    // An idempotent write, its replay, and the key reused with another body.
    const idem = `k-${randomUUID()}`;
    const first = await legacy('v2', 'generate_quote', { body: QUOTE_BODY, headers: { 'idempotency-key': idem } });
    expect(first.status, first.text).toBe(200);
    const replay = await legacy('v2', 'generate_quote', { body: QUOTE_BODY, headers: { 'idempotency-key': idem } });
    expect(replay.headers['idempotency-replayed']).toBe('true');
    const mismatch = await legacy('v2', 'generate_quote', {
      body: QUOTE_BODY.replace('1000', '2000'),
      headers: { 'idempotency-key': idem },
    });
    expect(mismatch.status).toBeGreaterThanOrEqual(400);
    // The passthrough: a declared operation, and a path v3 does not have.
    expect((await passthrough('/v3/fx/pairs')).status).toBe(200);
    expect((await passthrough(`/v3/fx/trades/${'trd_0'.padEnd(36, '0')}`)).status).toBe(404);
    expect((await passthrough('/v3/fx/nothing-here')).status).toBe(404);
    // Unrouted, under a generation and under none; and the health route.
    // The generation's own "not found" (its table says which 4xx).
    expect(Math.trunc((await legacy('v1', `/v1/brokerage/${org}/no-such-operation`)).status / 100)).toBe(4);
    expect((await sendTo(gatewayUrl, { path: `/nowhere/${org}` })).status).toBe(404);
    expect((await sendTo(gatewayUrl, { path: '/healthz' })).status).toBe(200);
    // v3 unreachable, for a legacy read and a passthrough read.
    await forwarder.down();
    expect((await legacy('v1', 'available_markets')).status).toBe(500);
    expect((await passthrough('/v3/fx/pairs')).status).toBe(503);
    await forwarder.up();
    // A legacy webhook: subscribed and registered with v3, then a sandbox deposit on the core.
    const added = await addWebhook(
      {
        db: side.h.core.db,
        keyring: side.h.core.keyring,
        events: { names: webhooks.builder.eventNames, defaults: webhooks.builder.defaultEvents },
        registration: { registrar: webhooks.registrar, base: webhooks.callbackBase! },
      },
      { org, mode: 'sandbox', url: receiver.url('/hooks/metrics'), events: ['deposits'] },
    );
    expect(added.note.state, JSON.stringify(added.note)).toBe('registered');
    await postData(side.h.core, key, '/v3/fx/sandbox/deposits', {
      currency: 'USD',
      amount: '10.00',
      referenceId: 'INV-1',
    });
    await receiver.waitFor(() => receiver.received.some((hit) => hit.path === '/hooks/metrics'));
    await until(
      async () => (await registryValue(FAMILIES.deliveries, { outcome: 'delivered' })) === 1,
      'the delivery counted',
    );
    // The shadow comparisons settle after the answers; the report counts them independently.
    const report = async (): Promise<ShadowReport> =>
      (await sendTo(adminUrl, { path: '/admin/shadow/report' })).json<ShadowReport>();
    const reads = { v1: ['balances', 'available_markets'], v2: ['balances'] } as const;
    await until(async () => {
      const counted = (await report()).operations.reduce(
        (sum, operation) => sum + operation.compared + operation.notCompared + operation.dropped,
        0,
      );
      return counted === 4;
    }, 'four shadow comparisons');

    const families = await scrape();
    const value = (name: string, labels: Record<string, string>) =>
      sampleValue(families, name, labels) - sampleValue(before, name, labels);
    const requests = (generation: string, operation: string, statusClass: string) =>
      value(FAMILIES.requests, { generation, operation, status_class: statusClass });
    expect(requests('v1', 'balances', '2xx')).toBe(2);
    expect(requests('v2', 'balances', '2xx')).toBe(1);
    expect(requests('v2', 'generate_quote', '2xx')).toBe(2);
    expect(requests('v2', 'generate_quote', '4xx')).toBe(1);
    expect(requests('v1', 'available_markets', '5xx')).toBe(1);
    expect(requests('v1', 'unknown', '4xx')).toBe(1);
    expect(requests('v3', 'GET /v3/fx/pairs', '2xx')).toBe(1);
    expect(requests('v3', 'GET /v3/fx/pairs', '5xx')).toBe(1);
    expect(requests('v3', 'GET /v3/fx/trades/:id', '4xx')).toBe(1);
    expect(requests('v3', 'unknown', '4xx')).toBe(1);
    expect(requests('none', 'unknown', '4xx')).toBe(1);
    expect(requests('none', '/healthz', '2xx')).toBe(1);
    // The webhook receiver's route: the core's v3 delivery of the deposit event.
    expect(requests('none', `${LEGACY_WEBHOOK_PATH}/:orgId/:mode`, '2xx')).toBe(1);
    // Every request counted is in its latency histogram too.
    expect(value(`${FAMILIES.duration}_count`, { generation: 'v1', operation: 'balances' })).toBe(2);
    expect(value(`${FAMILIES.duration}_count`, { generation: 'v3', operation: 'GET /v3/fx/pairs' })).toBe(2);
    // Each v3 call answered: the quote once (its replay and the mismatch made none), the passthrough read once (the second was refused).
    expect(value(`${FAMILIES.upstream}_count`, { generation: 'v3', operation: 'GET /v3/fx/pairs' })).toBe(1);
    expect(value(`${FAMILIES.upstream}_count`, { generation: 'v2', operation: 'generate_quote' })).toBe(1);
    expect(value(`${FAMILIES.upstream}_count`, { generation: 'v1', operation: 'available_markets' })).toBe(0);
    expect(value(FAMILIES.idempotency, { generation: 'v2', operation: 'generate_quote', outcome: 'new' })).toBe(1);
    expect(value(FAMILIES.idempotency, { generation: 'v2', operation: 'generate_quote', outcome: 'replay' })).toBe(1);
    expect(value(FAMILIES.idempotency, { generation: 'v2', operation: 'generate_quote', outcome: 'mismatch' })).toBe(1);
    expect(value(FAMILIES.failures, { generation: 'v1', operation: 'available_markets', kind: 'unreachable' })).toBe(1);
    expect(value(FAMILIES.failures, { generation: 'v3', operation: 'GET /v3/fx/pairs', kind: 'unreachable' })).toBe(1);
    const total = (of: Map<string, Family>) =>
      of.get(FAMILIES.failures)!.samples.reduce((sum, sample) => sum + sample.value, 0);
    expect(total(families) - total(before)).toBe(2);
    expect(value(FAMILIES.deliveries, { outcome: 'delivered' })).toBe(1);
    expect(sampleValue(families, FAMILIES.backlog)).toBe(0);
    const shadowReport = await report();
    for (const [generation, operations] of Object.entries(reads)) {
      for (const operation of operations) {
        const reported = shadowReport.operations.find(
          (entry) => entry.generation === generation && entry.operation === operation,
        )!;
        expect(
          value(FAMILIES.shadow, { generation, operation, result: 'compared' }),
          `${generation} ${operation}`,
        ).toBe(reported.compared);
        expect(
          value(FAMILIES.shadow, { generation, operation, result: 'differing' }),
          `${generation} ${operation}`,
        ).toBe(reported.differing);
        expect(value(FAMILIES.shadow, { generation, operation, result: 'not_compared' })).toBe(reported.notCompared);
      }
    }
    // prom-client's registry agrees with the text.
    expect(
      await registryValue(FAMILIES.requests, { generation: 'v1', operation: 'balances', status_class: '2xx' }),
    ).toBe(2);
    expect(
      await registryValue(FAMILIES.idempotency, { generation: 'v2', operation: 'generate_quote', outcome: 'replay' }),
    ).toBe(1);

    // Bounded labels only: nothing the test sent (org, key, ids, paths, addresses) is a label value.
    const allowedOperations = new Set<string>([
      ...LEGACY_OPERATIONS.v1,
      ...LEGACY_OPERATIONS.v2,
      ...V3_OPERATIONS.map((operation) => `${operation.method} ${operation.path}`),
      'unknown',
      '/healthz',
      '/readyz',
      MIGRATION_GUIDE_OPERATION,
      `${LEGACY_WEBHOOK_PATH}/:orgId/:mode`,
    ]);
    for (const { sample, label, value: labelValue } of labelValues(families)) {
      expect(labelValue, `${sample} ${label}`).not.toMatch(UUID);
      expect(labelValue, `${sample} ${label}`).not.toMatch(IPV4);
      if (label !== 'le') expect(labelValue, `${sample} ${label}`).not.toMatch(IPV6);
      expect(labelValue, `${sample} ${label}`).not.toContain(org);
      expect(labelValue, `${sample} ${label}`).not.toContain(key.file.name);
      if (sample.startsWith('fxgate_gateway_') && label === 'operation')
        expect(allowedOperations.has(labelValue), labelValue).toBe(true);
    }
  });

  it('counts the migration guides as migration_guide, under no generation', async () => {
    const labels = { generation: 'none', operation: MIGRATION_GUIDE_OPERATION, status_class: '2xx' };
    const before = sampleValue(await scrape(), FAMILIES.requests, labels);
    for (const path of ['/docs/migrate/v1-to-v2', '/docs/migrate/v2-to-v3', '/docs/migrate/v1-to-v2'])
      expect((await sendTo(gatewayUrl, { path })).status).toBe(200);
    expect(sampleValue(await scrape(), FAMILIES.requests, labels) - before).toBe(3);
  });
});
