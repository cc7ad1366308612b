/**
 * The core's Prometheus metrics, end to end, on PostgreSQL and Redis and again on PGlite and the
 * in-process store (the `embedded` project): the core as buildCoreApp builds it (with its
 * withdrawal processor on the simulated rail), its metrics on an admin listener, and traffic of
 * known shape: trades executed, reversed and settled, a replayed trade, live withdrawals taken
 * through the rail and a sandbox one failed, a webhook endpoint whose deliveries wait in the
 * outbox. GET /metrics is read in the text format (checked against the exposition grammar) and
 * through prom-client's registry; every counter moves by exactly what the test did, the backlog
 * is the outbox's, and the ledger gauge turns 0 when an entry is planted that unbalances a currency.
 */
import { randomUUID } from 'node:crypto';

import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MemoryStore } from '../../../src/cli/store/memory-store.js';
import { RedisStore } from '../../../src/cli/store/redis-store.js';
import { buildCoreApp } from '../../../src/core/app.js';
import { CoreMetrics } from '../../../src/core/metrics/core-metrics.js';
import { verifyWithdrawalAccount } from '../../../src/core/money-movement/withdrawal-accounts.js';
import { setCreditLine } from '../../../src/core/trading/org-books.js';
import { AdminListener } from '../../../src/lib/admin/admin-listener.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { newUuid } from '../../../src/lib/ids.js';
import { type LoadedKey, loadKey } from '../../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { Decimal } from '../../../src/lib/money.js';
import type { EphemeralStore } from '../../../src/lib/store/ephemeral-store.js';
import { FEDWIRE_ACCOUNT, recordTestDeposit } from '../../support/book-fixtures.js';
import { createTestPglite, createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { type Family, labelValues, parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { testServices } from '../../support/services.js';
import { testKeyPrefix } from '../../support/test-run.js';
import { randomKeyring, sendTo, TEST_ISSUER, TEST_ISSUERS, type TestResponse } from '../../support/v3-harness.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const BUY_EUR = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.00', amountCurrency: 'EUR' };

let database: TestDatabase;
let store: EphemeralStore;
let registry: KeyRegistry;
let metrics: CoreMetrics;
let admin: AdminListener;
let app: FastifyInstance;
let url: string;
let adminUrl: string;
/** The ledger check's clock: moved past its interval to run the check again. */
let clockMs = Date.now();

beforeAll(async () => {
  // PostgreSQL and Redis, or what `npm start` uses in the embedded project.
  const embedded = process.env.FXGATE_TEST_BACKEND === 'embedded';
  database = embedded ? await createTestPglite() : await createTestPostgres();
  store = embedded
    ? new MemoryStore()
    : new RedisStore({ url: testServices().redisUrl, keyPrefix: testKeyPrefix('m') });
  registry = new KeyRegistry(database.db, { cacheTtlMs: 0 });
  metrics = new CoreMetrics({ db: database.db, ledgerCheck: { now: () => clockMs } });
  admin = new AdminListener({ logLevel: 'silent' });
  admin.addMetrics(metrics.registry);
  app = await buildCoreApp(
    { db: database.db, store, registry, keyring: randomKeyring() },
    {
      logLevel: 'silent',
      issuers: TEST_ISSUERS,
      rateLimits: { reads: 10_000, writes: 10_000 },
      metrics,
      // Live withdrawals go through the rail at once; deliveries stay in the outbox for the backlog.
      withdrawalProcessor: { intervalMs: 50, rail: { delayMs: 0 } },
      webhookWorker: { enabled: false },
    },
  );
  url = await app.listen({ host: '127.0.0.1', port: 0 });
  adminUrl = await admin.listen('127.0.0.1', 0);
});

afterAll(async () => {
  await app?.close();
  await admin?.close();
  await store?.close();
  await database?.drop();
});

async function newKey(mode: Mode): Promise<LoadedKey> {
  const key = loadKey(
    await registry.createKey({ orgId: newUuid(), scopes: ['view', 'trade', 'withdraw', 'webhooks'], mode }),
  );
  if (mode === 'live') await setCreditLine(database.db, key.file.orgId, 'live', new Decimal('1000000'));
  await recordTestDeposit(database.db, { orgId: key.file.orgId, environment: mode, currency: 'USD', amount: '100000' });
  return key;
}

async function signed(
  key: LoadedKey,
  method: string,
  path: string,
  body?: unknown,
  idempotencyKey: string = randomUUID(),
): Promise<TestResponse> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
  const headers = await signer.headers({
    method,
    pathAndQuery: path,
    body: text,
    ...(method === 'POST' ? { idempotencyKey } : {}),
  });
  return sendTo(url, {
    method,
    path,
    ...(text === undefined ? {} : { body: text }),
    headers: { ...headers, ...(text === undefined ? {} : { 'content-type': 'application/json' }) },
  });
}

async function data(response: Promise<TestResponse>): Promise<Record<string, string>> {
  const answered = await response;
  expect(answered.status, answered.text.slice(0, 300)).toBe(200);
  return answered.json<{ data: Record<string, string> }>().data;
}

async function trade(key: LoadedKey): Promise<Record<string, string>> {
  const quote = await data(signed(key, 'POST', '/v3/fx/quotes', BUY_EUR));
  return data(signed(key, 'POST', '/v3/fx/trades', { quoteId: quote.id }));
}

async function scrape(): Promise<Map<string, Family>> {
  const response = await sendTo(adminUrl, { path: '/metrics' });
  expect(response.status).toBe(200);
  return parsePrometheusText(response.text);
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('GET /metrics of the core', () => {
  it('is served by the admin listener only, with the process metrics and every core family', async () => {
    expect((await sendTo(url, { path: '/metrics' })).status).toBe(404);
    const families = await scrape();
    for (const name of ['process_cpu_user_seconds_total', 'nodejs_eventloop_lag_seconds'])
      expect(families.has(name), name).toBe(true);
    const types = Object.fromEntries(
      [...families.values()]
        .filter((family) => family.name.startsWith('fxgate_core_'))
        .map((family) => [family.name, family.type]),
    );
    expect(types).toEqual({
      fxgate_core_requests_total: 'counter',
      fxgate_core_request_duration_seconds: 'histogram',
      fxgate_core_trades_total: 'counter',
      fxgate_core_withdrawal_transitions_total: 'counter',
      fxgate_core_webhook_backlog: 'gauge',
      fxgate_core_ledger_check_timestamp_seconds: 'gauge',
      fxgate_core_ledger_balanced: 'gauge',
    });
  });

  it('counts trades, withdrawal status changes and requests exactly, and reads the backlog and the ledger check', async () => {
    const before = await scrape();
    const live = await newKey('live');
    const sandbox = await newKey('sandbox');
    // The live book's deliveries wait in the outbox: the worker is off, so the name is never resolved.
    await data(signed(live, 'POST', '/v3/fx/webhook-endpoints', { url: 'https://receiver.example/hooks' }));

    // Trades: one executed and replayed, one reversed, one settled (the book holds USD).
    const executeKey = randomUUID();
    const quote = await data(signed(live, 'POST', '/v3/fx/quotes', BUY_EUR));
    const first = await data(signed(live, 'POST', '/v3/fx/trades', { quoteId: quote.id }, executeKey));
    const replayed = await signed(live, 'POST', '/v3/fx/trades', { quoteId: quote.id }, executeKey);
    expect(replayed.headers['idempotency-replayed']).toBe('true');
    const reverseQuote = await data(signed(live, 'POST', `/v3/fx/trades/${first.id}/reverse-quote`));
    await data(signed(live, 'POST', `/v3/fx/trades/${first.id}/reverse`, { quoteId: reverseQuote.id }));
    const toSettle = await trade(live);
    await data(signed(live, 'POST', `/v3/fx/trades/${toSettle.id}/settle`));
    // Refused: settled already. Counted as a request, not as a trade event.
    expect((await signed(live, 'POST', `/v3/fx/trades/${toSettle.id}/settle`)).status).toBe(409);

    // A live withdrawal through the rail (created, processing, completed), and a sandbox one failed.
    const liveAccount = await data(signed(live, 'POST', '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT));
    await verifyWithdrawalAccount(database.db, { orgId: live.file.orgId, environment: 'live' }, liveAccount.id!);
    await data(
      signed(live, 'POST', '/v3/fx/withdrawals', {
        withdrawalAccountId: liveAccount.id,
        withdrawalAmount: '10.00',
        currency: 'USD',
      }),
    );
    const sandboxAccount = await data(signed(sandbox, 'POST', '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT));
    await data(signed(sandbox, 'POST', `/v3/fx/sandbox/withdrawal-accounts/${sandboxAccount.id}/verify`));
    const failing = await data(
      signed(sandbox, 'POST', '/v3/fx/withdrawals', {
        withdrawalAccountId: sandboxAccount.id,
        withdrawalAmount: '5.00',
        currency: 'USD',
      }),
    );
    await data(signed(sandbox, 'POST', `/v3/fx/sandbox/withdrawals/${failing.id}/fail`));
    // Unrouted, a known path with another method, and health.
    expect((await sendTo(url, { path: `/v3/fx/nothing/${live.file.orgId}` })).status).toBe(404);
    expect((await sendTo(url, { method: 'DELETE', path: '/v3/fx/trades' })).status).toBe(405);
    expect((await sendTo(url, { path: '/healthz' })).status).toBe(200);

    const transitions = (of: Map<string, Family>, from: string, to: string) =>
      sampleValue(of, 'fxgate_core_withdrawal_transitions_total', { from, to });
    await until(
      async () =>
        transitions(await scrape(), 'processing', 'completed') - transitions(before, 'processing', 'completed') === 1,
      'the live withdrawal completed',
    );

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(moved('fxgate_core_trades_total', { event: 'executed' })).toBe(2);
    expect(moved('fxgate_core_trades_total', { event: 'reversed' })).toBe(1);
    expect(moved('fxgate_core_trades_total', { event: 'settled' })).toBe(1);
    expect(moved('fxgate_core_withdrawal_transitions_total', { from: 'none', to: 'pending' })).toBe(2);
    expect(moved('fxgate_core_withdrawal_transitions_total', { from: 'pending', to: 'processing' })).toBe(1);
    expect(moved('fxgate_core_withdrawal_transitions_total', { from: 'processing', to: 'completed' })).toBe(1);
    expect(moved('fxgate_core_withdrawal_transitions_total', { from: 'pending', to: 'failed' })).toBe(1);
    const requests = (operation: string, statusClass: string) =>
      moved('fxgate_core_requests_total', { operation, status_class: statusClass });
    expect(requests('POST /v3/fx/quotes', '2xx')).toBe(2);
    expect(requests('POST /v3/fx/trades/:id/reverse-quote', '2xx')).toBe(1);
    // The trade, its replay (answered by the idempotency step, not executed again) and the settled one's.
    expect(requests('POST /v3/fx/trades', '2xx')).toBe(3);
    expect(requests('POST /v3/fx/trades/:id/settle', '2xx')).toBe(1);
    expect(requests('POST /v3/fx/trades/:id/settle', '4xx')).toBe(1);
    expect(requests('POST /v3/fx/sandbox/withdrawals/:id/fail', '2xx')).toBe(1);
    expect(requests('unknown', '4xx')).toBe(2);
    expect(requests('/healthz', '2xx')).toBe(1);
    expect(moved('fxgate_core_request_duration_seconds_count', { operation: 'POST /v3/fx/trades' })).toBe(3);
    // prom-client's registry agrees with the text.
    const json = await metrics.registry.getMetricsAsJSON();
    const executed = json
      .find((metric) => metric.name === 'fxgate_core_trades_total')!
      .values.find((value) => value.labels.event === 'executed')!.value;
    expect(executed).toBe(sampleValue(after, 'fxgate_core_trades_total', { event: 'executed' }));

    // The backlog is the outbox's: the live book's three withdrawal events, one endpoint.
    const { rows } = await database.db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM webhook_deliveries WHERE status = 'PENDING'`,
    );
    expect(Number(rows[0]!.n)).toBe(3);
    expect(sampleValue(after, 'fxgate_core_webhook_backlog')).toBe(3);

    // The ledger check: balanced, then an entry planted that unbalances USD (seen once the interval has passed).
    expect(sampleValue(after, 'fxgate_core_ledger_balanced')).toBe(1);
    expect(sampleValue(after, 'fxgate_core_ledger_check_timestamp_seconds')).toBeCloseTo(clockMs / 1000, 0);
    await database.db.query(
      `INSERT INTO ledger_entries (transaction_id, account_id, currency, amount) SELECT transaction_id, account_id, currency, 1 FROM ledger_entries WHERE currency = 'USD' LIMIT 1`,
    );
    expect(sampleValue(await scrape(), 'fxgate_core_ledger_balanced')).toBe(1);
    clockMs += 60_000;
    expect(sampleValue(await scrape(), 'fxgate_core_ledger_balanced')).toBe(0);

    for (const { sample, label, value } of labelValues(after)) {
      expect(value, `${sample} ${label}`).not.toMatch(UUID);
      expect(value, `${sample} ${label}`).not.toContain(live.file.orgId);
      expect(value, `${sample} ${label}`).not.toContain(first.id!);
    }
  });
});
