/**
 * Legacy rate limits as a fleet runs them (docs/contract.md#rate-limits-legacy): two gateway
 * processes (two gateway apps, each with its own connection to Redis, its own v3 credentials,
 * usage batches and metrics) in front of the real core on PostgreSQL, sharing one Redis. A
 * key's budget (3 reads, 2 writes per 10 s here) is spent wherever its requests land; another
 * key of the same org keeps its own; the 429s are counted in the usage report and the metrics;
 * and the v3 budget of a gateway's own credential (3 writes per 10 s here), which the book's
 * keys share, still answers 429 when they together exceed it, told apart by the metrics.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { RedisStore } from '../../../../src/cli/store/redis-store.js';
import { buildGatewayApp } from '../../../../src/gateway/app.js';
import { GatewayMetrics, type RateLimitSource } from '../../../../src/gateway/metrics/gateway-metrics.js';
import { ProvisioningCredentials } from '../../../../src/gateway/upstream/signing-credentials.js';
import { readUsage, type UsageRow } from '../../../../src/gateway/usage/usage-recorder.js';
import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { legacyToken } from '../../../support/independent-signing.js';
import { TEST_LIFECYCLE } from '../../../support/legacy-lifecycle.js';
import { testServices } from '../../../support/services.js';
import { testKeyPrefix } from '../../../support/test-run.js';
import { sendTo, TEST_ISSUER, TEST_ISSUERS, type TestResponse, V3Harness } from '../../../support/v3-harness.js';

const LEGACY = { reads: 3, writes: 2 };
/** The core's limits of every v3 key, the gateways' own credentials included. */
const CORE = { reads: 1_000_000, writes: 3 };
const QUOTE_BODY = '{"amount":100,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}';
const TOO_MANY = { status: 'error', message: 'Too many requests, please try again later' };
const RATE_LIMITED_FAMILY = 'fxgate_gateway_rate_limited_total';

interface Gateway {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly store: RedisStore;
  readonly metrics: GatewayMetrics;
  readonly keysDir: string;
}

let core: V3Harness;
const gateways: Gateway[] = [];

/** A gateway process of the fleet: its own Redis connection on the fleet's prefix, its own credentials and metrics. */
async function startGateway(keyPrefix: string): Promise<Gateway> {
  const store = new RedisStore({ url: testServices().redisUrl, keyPrefix });
  await store.nonceEpoch();
  const keysDir = await mkdtemp(join(tmpdir(), 'fxgate-rate-keys-'));
  const metrics = new GatewayMetrics();
  const app = await buildGatewayApp({
    upstreamUrl: core.baseUrl,
    logLevel: 'silent',
    // The test's requests name their client address.
    trustedProxies: ['127.0.0.1'],
    metrics,
    legacy: {
      registry: core.registry,
      database: core.db,
      store,
      credentials: new ProvisioningCredentials({ registry: core.registry, dir: keysDir, issuer: TEST_ISSUER }),
      issuers: TEST_ISSUERS,
      lifecycle: TEST_LIFECYCLE,
      rateLimits: LEGACY,
      usage: { flushIntervalMs: 50 },
    },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url, store, metrics, keysDir };
}

beforeAll(async () => {
  core = await V3Harness.start({ driver: 'postgres', storeKind: 'redis', core: { rateLimits: CORE } });
  // The fleet's keys, apart from every other test run's on the shared Redis.
  const keyPrefix = testKeyPrefix();
  gateways.push(await startGateway(keyPrefix), await startGateway(keyPrefix));
});

afterAll(async () => {
  for (const gateway of gateways) {
    await gateway.app.close();
    await gateway.store.close();
    await rm(gateway.keysDir, { recursive: true, force: true });
  }
  await core?.close();
});

function send(
  gateway: Gateway,
  generation: 'v1' | 'v2',
  key: LoadedKey,
  operation: 'balances' | 'generate_quote',
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  const write = operation === 'generate_quote';
  return sendTo(gateway.url, {
    method: write ? 'POST' : 'GET',
    path: `/${generation}/brokerage/${key.file.orgId}/${operation}`,
    ...(write ? { body: QUOTE_BODY } : {}),
    headers: {
      authorization: `Bearer ${legacyToken(key)}`,
      'x-app-mode': 'SANDBOX',
      ...(write ? { 'content-type': 'application/json', 'idempotency-key': `rl-${randomUUID()}` } : {}),
      ...headers,
    },
  });
}

/** 429s counted by both gateways' metrics for a generation's operation, by source. */
async function rateLimited(generation: string, operation: string, source: RateLimitSource): Promise<number> {
  let sum = 0;
  for (const { metrics } of gateways) {
    const family = (await metrics.registry.getMetricsAsJSON()).find((entry) => entry.name === RATE_LIMITED_FAMILY);
    for (const value of family?.values ?? []) {
      const { labels } = value;
      if (labels.generation === generation && labels.operation === operation && labels.source === source)
        sum += value.value;
    }
  }
  return sum;
}

function expectKeyLimited(answer: TestResponse, limit: number): void {
  expect(answer.status, answer.text).toBe(429);
  expect(answer.json()).toEqual(TOO_MANY);
  expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(Math.ceil(10 / limit));
  expect(answer.headers['ratelimit-limit']).toBe(String(limit));
}

describe('legacy rate limits over two gateways sharing one Redis', () => {
  it('spends one budget per key and class wherever the requests land: the fourth read and the third write are 429 at either gateway', async () => {
    const [a, b] = gateways as [Gateway, Gateway];
    const key = await core.createKey({ scopes: ['view', 'trade'] });
    for (let i = 0; i < LEGACY.reads; i += 1) {
      const answer = await send(i % 2 === 0 ? a : b, i % 2 === 0 ? 'v1' : 'v2', key, 'balances');
      expect(answer.status, answer.text).toBe(200);
      expect(answer.headers['ratelimit-limit']).toBe(String(LEGACY.reads));
    }
    expectKeyLimited(await send(b, 'v2', key, 'balances'), LEGACY.reads);
    expectKeyLimited(await send(a, 'v1', key, 'balances'), LEGACY.reads);
    expect((await send(a, 'v2', key, 'generate_quote')).status).toBe(200);
    expect((await send(b, 'v1', key, 'generate_quote')).status).toBe(200);
    expectKeyLimited(await send(a, 'v2', key, 'generate_quote'), LEGACY.writes);
    expectKeyLimited(await send(b, 'v2', key, 'generate_quote'), LEGACY.writes);
  });

  it("leaves another key of the same org its own budget, and every answer carries the key's limit, not v3's", async () => {
    const [a, b] = gateways as [Gateway, Gateway];
    const noisy = await core.createKey({ scopes: ['view', 'trade'] });
    const quiet = await core.createKey({ scopes: ['view', 'trade'], orgId: noisy.file.orgId });
    for (let i = 0; i < LEGACY.reads; i += 1) expect((await send(a, 'v2', noisy, 'balances')).status).toBe(200);
    expectKeyLimited(await send(b, 'v2', noisy, 'balances'), LEGACY.reads);
    for (let i = 0; i < LEGACY.reads; i += 1) {
      const answer = await send(i % 2 === 0 ? b : a, 'v2', quiet, 'balances');
      expect(answer.status).toBe(200);
      // The core's limit for the gateway's credential is a million reads; that is not what the client is told.
      expect(answer.headers['ratelimit-limit']).toBe(String(LEGACY.reads));
      expect(answer.headers['ratelimit-remaining']).toBeUndefined();
    }
  });

  it("counts the key's 429s on its usage row, an address's on the unattributed one, and both in the metrics by source", async () => {
    const [a, b] = gateways as [Gateway, Gateway];
    const key = await core.createKey({ scopes: ['view'] });
    const keyBefore = await rateLimited('v2', 'balances', 'key');
    const addressBefore = await rateLimited('v1', 'trades', 'address');
    for (let i = 0; i < LEGACY.reads; i += 1) expect((await send(a, 'v2', key, 'balances')).status).toBe(200);
    expectKeyLimited(await send(b, 'v2', key, 'balances'), LEGACY.reads);
    expectKeyLimited(await send(a, 'v2', key, 'balances'), LEGACY.reads);
    // Tokens that prove no key, from one client address (through the trusted proxy), over both gateways.
    const address = { authorization: 'Bearer not.a.token', 'x-forwarded-for': '198.51.100.77' };
    const statuses: number[] = [];
    for (let i = 0; i <= LEGACY.reads; i += 1)
      statuses.push(
        (await sendTo((i % 2 === 0 ? a : b).url, { path: `/v1/brokerage/${key.file.orgId}/trades`, headers: address }))
          .status,
      );
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Another address is not held back by that one.
    expect(
      (
        await sendTo(a.url, {
          path: `/v1/brokerage/${key.file.orgId}/trades`,
          headers: { ...address, 'x-forwarded-for': '198.51.100.78' },
        })
      ).status,
    ).toBe(401);

    expect((await rateLimited('v2', 'balances', 'key')) - keyBefore).toBe(2);
    expect((await rateLimited('v1', 'trades', 'address')) - addressBefore).toBe(1);
    await vi.waitFor(
      async () => {
        const rows = (await readUsage(core.db)).rows;
        const row = (orgId: string | null, generation: string, operation: string): UsageRow | undefined =>
          rows.find((r) => r.orgId === orgId && r.generation === generation && r.operation === operation);
        expect(row(key.file.orgId, 'v2', 'balances')).toMatchObject({
          keyName: key.file.name,
          count: LEGACY.reads + 2,
          rateLimited: 2,
        });
        expect(row(null, 'v1', 'trades')).toMatchObject({ count: LEGACY.reads + 2, rateLimited: 1 });
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it("answers the legacy 429 when the book's keys, each within its budget, together spend v3's budget of the gateway's credential: v3's Retry-After, the key's own headers, counted as upstream", async () => {
    const [a] = gateways as [Gateway, Gateway];
    const first = await core.createKey({ scopes: ['view', 'trade'] });
    const second = await core.createKey({ scopes: ['view', 'trade'], orgId: first.file.orgId });
    const upstreamBefore = await rateLimited('v2', 'generate_quote', 'upstream');
    const keyBefore = await rateLimited('v2', 'generate_quote', 'key');
    // Four quotes of one book through one gateway (one credential): v3 takes three.
    const answers: TestResponse[] = [];
    for (const key of [first, first, second, second]) answers.push(await send(a, 'v2', key, 'generate_quote'));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    const refused = answers[3]!;
    expect(refused.json()).toEqual(TOO_MANY);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-limit']).toBe(String(LEGACY.writes));
    expect((await rateLimited('v2', 'generate_quote', 'upstream')) - upstreamBefore).toBe(1);
    expect((await rateLimited('v2', 'generate_quote', 'key')) - keyBefore).toBe(0);
    // Not the key's own limit: its usage row counts no 429 of its own.
    await vi.waitFor(
      async () => {
        const rows = (await readUsage(core.db)).rows;
        expect(rows.find((r) => r.keyName === second.file.name && r.operation === 'generate_quote')).toMatchObject({
          count: 2,
          rateLimited: 0,
        });
      },
      { timeout: 10_000, interval: 100 },
    );
  });
});
