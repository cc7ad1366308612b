/**
 * The usage report as the platform team reads it, on PostgreSQL: two gateway processes (two
 * gateway apps, each with its own batches) in front of one core, 1,000 legacy requests of three
 * keys spread over both (v1 and v2, four operations, some refused: bad tokens, a key without the
 * scope, v1 in a brownout for the orgs not exempt), counted exactly once both have flushed, read
 * through one gateway's admin listener; then a third gateway, as after a restart, adds to the
 * same rows.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildGatewayApp } from '../../../src/gateway/app.js';
import { ProvisioningCredentials } from '../../../src/gateway/upstream/signing-credentials.js';
import { NO_OPERATION, readUsage, type UsageReport } from '../../../src/gateway/usage/usage-recorder.js';
import { AdminListener } from '../../../src/lib/admin/admin-listener.js';
import { newUuid } from '../../../src/lib/ids.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { parseInstant } from '../../../src/lib/time-text.js';
import { legacyToken } from '../../support/independent-signing.js';
import { UNLIMITED_LEGACY_RATE } from '../../support/legacy-harness.js';
import { sendTo, TEST_ISSUER, TEST_ISSUERS, V3Harness } from '../../support/v3-harness.js';

const WINDOW = { start: parseInstant('2026-12-10T15:00:00Z'), end: parseInstant('2026-12-10T16:00:00Z') };
const OPERATIONS = ['available_markets', 'balances', 'trades', 'generate_quote'] as const;
const QUOTE_BODY = '{"amount":100,"buy":"EUR","sell":"USD","referencedUnit":"EUR","quoteForSeconds":60}';
const REQUESTS = 1_000;

interface Gateway {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly admin: AdminListener;
}

interface Planned {
  readonly gateway: number;
  readonly key: number;
  readonly generation: 'v1' | 'v2';
  readonly operation: (typeof OPERATIONS)[number];
  readonly badToken: boolean;
}

/** Request i of the 1,000: every key, generation and operation on both gateways, every eleventh with a bad token. */
function planned(i: number): Planned {
  return {
    gateway: i % 2,
    key: Math.floor(i / 2) % 3,
    generation: Math.floor(i / 6) % 2 === 0 ? 'v1' : 'v2',
    operation: OPERATIONS[Math.floor(i / 12) % OPERATIONS.length]!,
    badToken: i % 11 === 5,
  };
}

describe('usage over two gateway processes sharing PostgreSQL', () => {
  let core: V3Harness;
  let keys: LoadedKey[];
  let keysDirs: string[] = [];
  const gateways: Gateway[] = [];
  const exemptOrg = newUuid();

  async function startGateway(): Promise<Gateway> {
    const keysDir = await mkdtemp(join(tmpdir(), 'fxgate-usage-keys-'));
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
        // Inside a v1 brownout; the first key's org is exempt.
        lifecycle: {
          v1: {
            deprecatedAt: parseInstant('2026-01-01T00:00:00Z'),
            sunsetAt: parseInstant('2026-12-31T23:59:59Z'),
            brownouts: [WINDOW],
            brownoutExempt: [exemptOrg],
          },
          now: () => WINDOW.start,
        },
        // Long enough that only the close and the admin route write: "after both flush" is the test's to decide.
        usage: { flushIntervalMs: 3_600_000 },
        rateLimits: UNLIMITED_LEGACY_RATE,
      },
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    await admin.build();
    return { app, url, admin };
  }

  async function send(gateway: Gateway, plan: Planned, n: number): Promise<number> {
    const key = keys[plan.key]!;
    const write = plan.operation === 'generate_quote';
    const response = await sendTo(gateway.url, {
      method: write ? 'POST' : 'GET',
      path: `/${plan.generation}/brokerage/${key.file.orgId}/${plan.operation}`,
      body: write ? QUOTE_BODY : undefined,
      headers: {
        authorization: `Bearer ${plan.badToken ? 'not.a.token' : legacyToken(key)}`,
        'x-app-mode': 'SANDBOX',
        ...(write ? { 'content-type': 'application/json', 'idempotency-key': `usage-${n}-${newUuid()}` } : {}),
      },
    });
    return response.status;
  }

  beforeAll(async () => {
    core = await V3Harness.start({
      driver: 'postgres',
      storeKind: 'redis',
      core: { rateLimits: { reads: 1_000_000, writes: 1_000_000 } },
    });
    // Three keys of three orgs; the third may only view.
    keys = [
      await core.createKey({ orgId: exemptOrg, scopes: ['view', 'trade'], mode: 'sandbox' }),
      await core.createKey({ scopes: ['view', 'trade'], mode: 'sandbox' }),
      await core.createKey({ scopes: ['view'], mode: 'sandbox' }),
    ];
    gateways.push(await startGateway(), await startGateway());
  });
  afterAll(async () => {
    for (const gateway of gateways) {
      await gateway.app.close();
      await gateway.admin.close();
    }
    await core?.close();
    await Promise.all(keysDirs.map((dir) => rm(dir, { recursive: true, force: true })));
    keysDirs = [];
  });

  it(
    'counts 1,000 mixed requests exactly, refused ones included, once both have flushed; a restart adds to the same rows',
    { timeout: 180_000 },
    async () => {
      const expected = new Map<string, { count: number; brownout: number }>();
      const expect1 = (orgId: string | null, keyName: string | null, plan: Planned, brownout: boolean) => {
        const row = `${plan.generation} ${orgId ?? '-'} ${keyName ?? '-'} ${plan.operation}`;
        const tally = expected.get(row) ?? { count: 0, brownout: 0 };
        tally.count += 1;
        if (brownout) tally.brownout += 1;
        expected.set(row, tally);
      };
      const statuses = new Map<string, number>();
      let next = 0;
      const worker = async () => {
        while (next < REQUESTS) {
          const n = next;
          next += 1;
          const plan = planned(n);
          const key = keys[plan.key]!;
          const status = await send(gateways[plan.gateway]!, plan, n);
          // What each request must have met, and where the report must count it.
          let outcome: string;
          if (plan.badToken) {
            outcome = 'bad token 401';
            expect1(null, null, plan, false);
          } else if (plan.key === 2 && plan.operation === 'generate_quote') {
            outcome = 'scope 401';
            expect1(key.file.orgId, key.file.name, plan, false);
          } else if (plan.generation === 'v1' && plan.key !== 0) {
            outcome = 'brownout 410';
            expect1(key.file.orgId, key.file.name, plan, true);
          } else {
            outcome = 'served 200';
            expect1(key.file.orgId, key.file.name, plan, false);
          }
          expect(status, `request ${n} (${JSON.stringify(plan)}): ${outcome}`).toBe(Number(outcome.slice(-3)));
          statuses.set(outcome, (statuses.get(outcome) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(REQUESTS);
      expect(statuses.size).toBe(4);

      // Nothing is written per request: with the flush interval an hour away, the table is still empty.
      expect((await readUsage(core.db)).rows).toEqual([]);

      // The second gateway flushes as it closes; the first when its admin route is read.
      await gateways[1]!.app.close();
      const answer = await (await gateways[0]!.admin.build()).inject({ method: 'GET', url: '/admin/usage' });
      expect(answer.statusCode).toBe(200);
      const report = answer.json<UsageReport>();
      const byRow = (rows: UsageReport['rows']) =>
        new Map(
          rows.map((row) => [
            `${row.generation} ${row.orgId ?? '-'} ${row.keyName ?? '-'} ${row.operation}`,
            { count: row.count, brownout: row.refusedInBrownout },
          ]),
        );
      expect(byRow(report.rows)).toEqual(expected);
      expect(report.rows.reduce((sum, row) => sum + row.count, 0)).toBe(REQUESTS);
      expect(report.rows.every((row) => row.refusedAfterSunset === 0 && row.lastAddress === '127.0.0.1')).toBe(true);
      // The unattributed rows: no org, no key, by generation and operation.
      expect(
        report.rows
          .filter((row) => row.orgId === null)
          .every((row) => row.keyName === null && row.operation !== NO_OPERATION),
      ).toBe(true);
      // ?generation=v1 holds the v1 rows alone.
      const v1 = (
        await (await gateways[0]!.admin.build()).inject({ method: 'GET', url: '/admin/usage?generation=v1&since=7d' })
      ).json<UsageReport>();
      expect(v1.rows.length).toBeGreaterThan(0);
      expect(v1.rows.every((row) => row.generation === 'v1')).toBe(true);

      // A restart: both gone, a new process adds to what they wrote.
      await gateways[0]!.app.close();
      const restarted = await startGateway();
      gateways.push(restarted);
      const again: Planned = { gateway: 2, key: 0, generation: 'v2', operation: 'balances', badToken: false };
      for (let n = 0; n < 5; n += 1) expect(await send(restarted, again, REQUESTS + n)).toBe(200);
      await restarted.app.close();
      const before = expected.get(`v2 ${keys[0]!.file.orgId} ${keys[0]!.file.name} balances`)!;
      const after = byRow((await readUsage(core.db)).rows);
      expect(after.get(`v2 ${keys[0]!.file.orgId} ${keys[0]!.file.name} balances`)).toEqual({
        count: before.count + 5,
        brownout: 0,
      });
      expect([...after.values()].reduce((sum, row) => sum + row.count, 0)).toBe(REQUESTS + 5);
    },
  );
});
