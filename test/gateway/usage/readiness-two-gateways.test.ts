/**
 * The readiness report as an operator reads it, on PostgreSQL: two gateway processes in front of
 * one core, real v1 and v2 traffic of three keys in two orgs (v1 writes with and without
 * Idempotency-Key, a trade answered, a read carrying a key; a v2 trade by a key that may only
 * trade, a live key declaring `production`, a list paged by number; bad tokens that name no
 * key), counted exactly once both have flushed and read through one gateway's admin listener;
 * then a third gateway, as after a restart, adds to the same rows.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildGatewayApp } from '../../../src/gateway/app.js';
import { ProvisioningCredentials } from '../../../src/gateway/upstream/signing-credentials.js';
import { type ReadinessReport, readReadiness } from '../../../src/gateway/usage/readiness-recorder.js';
import { AdminListener } from '../../../src/lib/admin/admin-listener.js';
import { newUuid } from '../../../src/lib/ids.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { legacyToken } from '../../support/independent-signing.js';
import { UNLIMITED_LEGACY_RATE } from '../../support/legacy-harness.js';
import { sendTo, TEST_ISSUER, TEST_ISSUERS, V3Harness } from '../../support/v3-harness.js';

const QUOTE_BODY = '{"amount":100,"buy":"EUR","sell":"USD","referencedUnit":"EUR","quoteForSeconds":60}';

interface Gateway {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly admin: AdminListener;
}

interface Call {
  readonly key: LoadedKey;
  readonly method: 'GET' | 'POST';
  /** Below /v{n}/brokerage/{orgId}/. */
  readonly path: string;
  readonly generation: 'v1' | 'v2';
  readonly body?: string;
  readonly idempotencyKey?: boolean;
  readonly mode?: string;
  readonly badToken?: boolean;
  /** The path's org, when not the key's. */
  readonly orgId?: string;
}

/** The rows as `org key operation count: kind=count ...`, for one comparison. */
function summary(report: ReadinessReport): string[] {
  return report.rows.map(
    (row) =>
      `${row.orgId} ${row.keyName.split('/').at(-1)} ${row.operation} ${row.count}:` +
      row.blockers.map((blocker) => ` ${blocker.kind}=${blocker.count}`).join(''),
  );
}

describe('readiness over two gateway processes sharing PostgreSQL', () => {
  let core: V3Harness;
  let both: LoadedKey; // org one: view and trade, sandbox
  let tradeOnly: LoadedKey; // org two: trade only, sandbox
  let liveViewer: LoadedKey; // org two: view, live
  const keysDirs: string[] = [];
  const gateways: Gateway[] = [];

  async function startGateway(): Promise<Gateway> {
    const keysDir = await mkdtemp(join(tmpdir(), 'fxgate-readiness-keys-'));
    keysDirs.push(keysDir);
    const admin = new AdminListener({ logLevel: 'silent' });
    const app = await buildGatewayApp({
      upstreamUrl: core.baseUrl,
      logLevel: 'silent',
      admin,
      legacy: {
        registry: core.registry,
        database: core.db,
        store: core.store,
        credentials: new ProvisioningCredentials({ registry: core.registry, dir: keysDir, issuer: TEST_ISSUER }),
        issuers: TEST_ISSUERS,
        // Only the close and the admin route write: "after both flush" is the test's to decide.
        usage: { flushIntervalMs: 3_600_000 },
        rateLimits: UNLIMITED_LEGACY_RATE,
      },
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    await admin.build();
    return { app, url, admin };
  }

  async function send(gateway: Gateway, call: Call): Promise<{ status: number; json: <T>() => T }> {
    return sendTo(gateway.url, {
      method: call.method,
      path: `/${call.generation}/brokerage/${call.orgId ?? call.key.file.orgId}/${call.path}`,
      body: call.body,
      headers: {
        authorization: `Bearer ${call.badToken === true ? 'not.a.token' : legacyToken(call.key)}`,
        'x-app-mode': call.mode ?? 'SANDBOX',
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(call.idempotencyKey === true ? { 'idempotency-key': newUuid() } : {}),
      },
    });
  }

  async function ok(gateway: Gateway, call: Call): Promise<{ json: <T>() => T }> {
    const response = await send(gateway, call);
    expect(response.status, `${call.method} ${call.generation} ${call.path}`).toBe(200);
    return response;
  }

  const quote = (generation: 'v1' | 'v2', key: LoadedKey, idempotencyKey: boolean): Call => ({
    key,
    generation,
    method: 'POST',
    path: 'generate_quote',
    body: QUOTE_BODY,
    idempotencyKey,
  });

  beforeAll(async () => {
    core = await V3Harness.start({
      driver: 'postgres',
      storeKind: 'redis',
      core: { rateLimits: { reads: 1_000_000, writes: 1_000_000 } },
    });
    both = await core.createKey({ scopes: ['view', 'trade'], mode: 'sandbox' });
    tradeOnly = await core.createKey({ scopes: ['trade'], mode: 'sandbox' });
    liveViewer = await core.createKey({ orgId: tradeOnly.file.orgId, scopes: ['view'], mode: 'live' });
    gateways.push(await startGateway(), await startGateway());
  });
  afterAll(async () => {
    for (const gateway of gateways) {
      await gateway.app.close();
      await gateway.admin.close();
    }
    await core?.close();
    await Promise.all(keysDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it(
    'counts what each key would meet on the next generation, per operation, once both have flushed; a restart adds to the same rows',
    { timeout: 180_000 },
    async () => {
      const [first, second] = gateways as [Gateway, Gateway];
      // v1: quotes without a key on one gateway, with one on the other.
      for (let n = 0; n < 3; n += 1) await ok(first, quote('v1', both, false));
      for (let n = 0; n < 2; n += 1) await ok(second, quote('v1', both, true));
      // A v1 trade without a key, answered: a blocker and a warning.
      const quoteId = (await ok(first, quote('v1', both, true))).json<{ data: { quote: { id: string } } }>().data.quote
        .id;
      await ok(second, {
        key: both,
        generation: 'v1',
        method: 'POST',
        path: 'trade',
        body: JSON.stringify({ quoteId }),
      });
      // v1 reads carrying Idempotency-Key, which v1 ignores and v2 would honour.
      for (let n = 0; n < 2; n += 1)
        await ok(n === 0 ? first : second, {
          key: both,
          generation: 'v1',
          method: 'GET',
          path: 'trades',
          idempotencyKey: true,
        });
      // The other org's key: one write with a key, one without.
      await ok(first, quote('v1', tradeOnly, true));
      await ok(second, quote('v1', tradeOnly, false));
      // A path naming the other org: v1's 400 is v2's 404.
      const otherOrg = await send(first, {
        key: both,
        generation: 'v1',
        method: 'GET',
        path: 'balances',
        orgId: tradeOnly.file.orgId,
      });
      expect(otherOrg.status).toBe(400);
      // Bad tokens name no key: usage counts them unattributed, readiness not at all.
      expect((await send(first, { ...quote('v1', both, false), badToken: true })).status).toBe(401);

      // v2: a trade by a key that may only trade (v3 reads the balances and credit with view).
      const v2QuoteId = (await ok(first, quote('v2', tradeOnly, true))).json<{ data: { quote: { id: string } } }>().data
        .quote.id;
      await ok(second, {
        key: tradeOnly,
        generation: 'v2',
        method: 'POST',
        path: 'trade',
        body: JSON.stringify({ quoteId: v2QuoteId }),
        idempotencyKey: true,
      });
      // A live key declaring production, and a list paged by number.
      await ok(first, { key: liveViewer, generation: 'v2', method: 'GET', path: 'balances', mode: 'production' });
      await ok(second, {
        key: liveViewer,
        generation: 'v2',
        method: 'GET',
        path: 'trades?page=2&limit=5',
        mode: 'live',
      });

      // Nothing is written per request.
      expect((await readReadiness(core.db, { generation: 'v1' })).rows).toEqual([]);

      // The second gateway flushes as it closes; the first when its admin route is read.
      await second.app.close();
      const admin = await first.admin.build();
      const v1Answer = await admin.inject({ method: 'GET', url: '/admin/readiness?generation=v1&since=1h' });
      expect(v1Answer.statusCode).toBe(200);
      const v1 = v1Answer.json<ReadinessReport>();
      expect(v1).toMatchObject({ generation: 'v1', target: 'v2' });
      const id = (key: LoadedKey) => `${key.file.orgId} ${key.file.name.split('/').at(-1)}`;
      const v1Expected = [
        `${id(both)} balances 1: error-answer-changes=1`,
        `${id(both)} generate_quote 6: idempotency-key-missing=3`,
        `${id(both)} trade 1: idempotency-key-missing=1 trade-read-top-level=1`,
        `${id(both)} trades 2: read-idempotency-key-honoured=2`,
        `${id(tradeOnly)} generate_quote 2: idempotency-key-missing=1`,
      ].sort();
      expect(summary(v1).sort()).toEqual(v1Expected);
      const trade = v1.rows.find((row) => row.operation === 'trade')!;
      expect(trade.blockers).toEqual([
        {
          kind: 'idempotency-key-missing',
          severity: 'blocker',
          count: 1,
          example: 'POST /v1/brokerage/{orgId}/trade without Idempotency-Key',
          guide: '/docs/migrate/v1-to-v2#trade',
          lastSeen: expect.any(String),
        },
        {
          kind: 'trade-read-top-level',
          severity: 'warning',
          count: 1,
          example: 'POST /v1/brokerage/{orgId}/trade',
          guide: '/docs/migrate/v1-to-v2#trade',
          lastSeen: expect.any(String),
        },
      ]);

      const v2 = (await admin.inject({ method: 'GET', url: '/admin/readiness?generation=v2' })).json<ReadinessReport>();
      expect(v2).toMatchObject({ since: null, generation: 'v2', target: 'v3' });
      expect(summary(v2).sort()).toEqual(
        [
          `${id(tradeOnly)} generate_quote 1:`,
          `${id(tradeOnly)} trade 1: scope-missing=1`,
          `${id(liveViewer)} balances 1: app-mode-production=1`,
          `${id(liveViewer)} trades 1: page-number-paging=1`,
        ].sort(),
      );
      expect(v2.rows.find((row) => row.operation === 'trade')!.blockers[0]!.example).toBe(
        'POST /v2/brokerage/{orgId}/trade: key scopes trade; v3 needs view for GET /v3/fx/balances, view for GET /v3/fx/exposure',
      );
      expect(v1.rows.find((row) => row.operation === 'balances')!.blockers[0]!.example).toBe(
        'GET /v1/brokerage/{orgId}/balances answered 400 "Route not found"; the next generation answers 404 "Route not found"',
      );
      // The examples hold no org id, no token and no value the client sent.
      const examples = JSON.stringify([...v1.rows, ...v2.rows].flatMap((row) => row.blockers.map((b) => b.example)));
      for (const key of [both, tradeOnly, liveViewer]) expect(examples).not.toContain(key.file.orgId);
      expect(examples).not.toMatch(/Bearer|quoteId|100|page=2|limit/);

      // A restart: both gone, a new process adds to what they wrote.
      await first.app.close();
      const restarted = await startGateway();
      gateways.push(restarted);
      for (let n = 0; n < 2; n += 1) await ok(restarted, quote('v1', both, false));
      await restarted.app.close();
      const after = summary(await readReadiness(core.db, { generation: 'v1' }));
      expect(after.sort()).toEqual(
        v1Expected.map((line) =>
          line === `${id(both)} generate_quote 6: idempotency-key-missing=3`
            ? `${id(both)} generate_quote 8: idempotency-key-missing=5`
            : line,
        ),
      );
    },
  );
});
