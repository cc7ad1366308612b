/**
 * Legacy webhooks in a fleet: two gateways (two LegacyWebhooks, each on its own listener and
 * with its own v3 credentials) on one database in front of one real core, each advertising its
 * own callback URL, reconciling every 100 ms, under a stream of sandbox deposits. They agree on
 * one registration and never take it from each other; when the gateway of the registered URL
 * leaves (a rolling deploy that changes FXGATE_GATEWAY_WEBHOOK_URL), the registration moves to
 * the other URL, the old v3 endpoint is kept until its deliveries are made, and every event
 * reaches the integrator's receiver, none given up by v3 or by the gateway. Then the registrar's
 * move in detail: the old endpoint kept and its signature accepted, a base that comes back, a
 * retirement once the wait is over, a book whose last subscription goes; and `fxgate webhooks
 * add`, which registers at the fleet's URL whatever its own configuration says.
 *
 * Runs on PostgreSQL (several gateway processes share a PostgreSQL; PGlite opens in one).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import { Pool } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import { addWebhook, webhookOperations } from '../../../../src/cli/commands/webhooks.js';
import type { StateContext } from '../../../../src/cli/state/operation.js';
import { WebhookDeliveryWorker } from '../../../../src/core/events/webhook-worker.js';
import { buildGatewayApp } from '../../../../src/gateway/app.js';
import { loadLegacyMappings } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import { ProvisioningCredentials } from '../../../../src/gateway/upstream/signing-credentials.js';
import { V3Client } from '../../../../src/gateway/upstream/v3-client.js';
import { fleetCallbackBase } from '../../../../src/gateway/webhooks/fleet-callback.js';
import { compileLegacyWebhooks } from '../../../../src/gateway/webhooks/legacy-payload.js';
import { LegacyWebhooks } from '../../../../src/gateway/webhooks/legacy-webhooks.js';
import { receiveV3Delivery } from '../../../../src/gateway/webhooks/receiver.js';
import {
  LEGACY_WEBHOOK_PATH,
  registrationSecretBinding,
  registrationUrl,
  WebhookRegistrar,
} from '../../../../src/gateway/webhooks/registrations.js';
import { removeSubscription } from '../../../../src/gateway/webhooks/subscriptions.js';
import { loadConfig } from '../../../../src/lib/config.js';
import { idToLegacyUuid, newUuid } from '../../../../src/lib/ids.js';
import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { AllowedNetworks } from '../../../../src/lib/net/allowed-networks.js';
import { ExactDestinations } from '../../../../src/lib/net/destination-policy.js';
import { signWebhook } from '../../../../src/lib/webhooks/signature.js';
import { postData } from '../../../support/book-fixtures.js';
import { LegacyHarness } from '../../../support/legacy-harness.js';
import { LegacyWebhookReceiver } from '../../../support/legacy-webhook-receiver.js';
import { TEST_ISSUER, TEST_ISSUERS } from '../../../support/v3-harness.js';

/** Where the core may deliver: the gateways' own listeners, allowed one by one, as `fxgate all` allows its own. */
const gatewayListeners = new ExactDestinations();
/** The integrator's receiver is on this machine. */
const IN_HOUSE = AllowedNetworks.of(['127.0.0.1']);
const RECONCILE_MS = 100;
/** Long enough that a busy machine's late timer does not lose a lease; the withdrawal on stop is what moves it. */
const LEASE_MS = 5_000;
/** The test's v3 retry window: deliveries here take milliseconds, not days. */
const RETIRE_AFTER_MS = 2_000;

interface Gateway {
  readonly app: FastifyInstance;
  readonly webhooks: LegacyWebhooks;
  readonly base: string;
  readonly warnings: string[];
  close(): Promise<void>;
}

let h: LegacyHarness;
let coreWorker: WebhookDeliveryWorker;
let receiver: LegacyWebhookReceiver;
const started: Gateway[] = [];

beforeAll(async () => {
  h = await LegacyHarness.start({ core: { outbound: { exact: gatewayListeners } } });
  coreWorker = new WebhookDeliveryWorker({
    db: h.core.db,
    keyring: h.core.keyring,
    options: { pollIntervalMs: 50, requestTimeoutMs: 5_000 },
    outbound: { exact: gatewayListeners },
  });
  coreWorker.start();
  receiver = await LegacyWebhookReceiver.start();
});

// Each test's gateways stop with it, passed or not: a gateway left reconciling would move the next test's books.
afterEach(async () => {
  for (const gateway of started.splice(0)) await gateway.close();
});

afterAll(async () => {
  for (const gateway of started.splice(0)) await gateway.close();
  await coreWorker?.stop();
  await h?.close();
  await receiver?.close();
});

/** A gateway process of the fleet: its own listener (its callback URL), credentials and worker; the shared database. */
async function startGateway(): Promise<Gateway> {
  const keysDir = await mkdtemp(join(tmpdir(), 'fxgate-fleet-keys-'));
  let base = '';
  const webhooks = new LegacyWebhooks({
    db: h.core.db,
    keyring: h.core.keyring,
    callbackBaseUrl: (port) => {
      base = `http://127.0.0.1:${port}${LEGACY_WEBHOOK_PATH}`;
      gatewayListeners.allow(base);
      return base;
    },
    outbound: { networks: IN_HOUSE },
    worker: { pollIntervalMs: 50, requestTimeoutMs: 2_000, retry: { baseMs: 300, capMs: 1_000, maxAgeMs: 60_000 } },
    reconcileIntervalMs: RECONCILE_MS,
    leaseMs: LEASE_MS,
    retireAfterMs: RETIRE_AFTER_MS,
  });
  const app = await buildGatewayApp({
    upstreamUrl: h.core.baseUrl,
    logLevel: 'silent',
    legacy: {
      registry: h.core.registry,
      database: h.core.db,
      store: h.core.store,
      credentials: new ProvisioningCredentials({ registry: h.core.registry, dir: keysDir, issuer: TEST_ISSUER }),
      issuers: TEST_ISSUERS,
      webhooks,
    },
  });
  const warnings: string[] = [];
  vi.spyOn(app.log, 'warn').mockImplementation((...args: unknown[]) => {
    warnings.push(args.find((arg): arg is string => typeof arg === 'string') ?? '');
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  let closed = false;
  const gateway: Gateway = {
    app,
    webhooks,
    get base() {
      return base;
    },
    warnings,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await rm(keysDir, { recursive: true, force: true });
    },
  };
  started.push(gateway);
  return gateway;
}

interface EndpointRow {
  readonly id: string;
  readonly url: string;
  readonly status: string;
}

async function endpointsOf(orgId: string): Promise<EndpointRow[]> {
  const { rows } = await h.core.db.query<EndpointRow>(
    `SELECT id, url, status FROM webhook_endpoints WHERE org_id = $1 ORDER BY created_at, id`,
    [orgId],
  );
  return rows;
}

async function registrationsOf(orgId: string): Promise<{ url: string; status: string; endpoint_id: string }[]> {
  const { rows } = await h.core.db.query<{ url: string; status: string; endpoint_id: string }>(
    `SELECT url, status, endpoint_id FROM legacy_webhook_registrations WHERE org_id = $1 ORDER BY created_at`,
    [orgId],
  );
  return rows;
}

/** Given-up deliveries of the org's events, in v3's outbox and in the gateway's. */
async function givenUp(orgId: string): Promise<{ v3: number; legacy: number }> {
  const v3 = await h.core.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE w.org_id = $1 AND d.status = 'GAVE_UP'`,
    [orgId],
  );
  const legacy = await h.core.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM legacy_webhook_deliveries d JOIN legacy_webhook_subscriptions s ON s.id = d.subscription_id
      WHERE s.org_id = $1 AND d.status = 'GAVE_UP'`,
    [orgId],
  );
  return { v3: v3.rows[0]!.n, legacy: legacy.rows[0]!.n };
}

/** Sandbox deposits one after another until stopped; their legacy ids. */
function depositStream(key: LoadedKey): { made(): number; stop(): Promise<string[]> } {
  const ids: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const deposit = await postData(h.core, key, '/v3/fx/sandbox/deposits', { currency: 'USD', amount: '1.00' });
      ids.push(idToLegacyUuid('deposit', deposit.id!)!);
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
  })();
  return {
    made: () => ids.length,
    async stop() {
      running = false;
      await loop;
      return ids;
    },
  };
}

function waitUntil(check: () => Promise<boolean>, timeout = 15_000): Promise<void> {
  return expect.poll(check, { timeout, interval: 50 }).toBe(true);
}

describe('legacy webhooks in a fleet of gateways', () => {
  it('two gateways advertising different URLs agree on one; when its gateway leaves, the registration moves and no event is lost', async () => {
    const first = await startGateway();
    // The first gateway's decision is made before the second starts: the fleet's URL is its.
    await waitUntil(async () => first.webhooks.decision !== null);
    const second = await startGateway();
    await waitUntil(async () => second.webhooks.decision !== null);
    expect(first.base).not.toBe(second.base);

    const key = await h.core.createKey({ mode: 'sandbox' });
    const orgId = key.file.orgId;
    const path = `/hooks/fleet-${newUuid()}`;
    // As the CLI runs it: at the fleet's URL, whichever gateway's configuration it has.
    const added = await addWebhook(
      {
        db: h.core.db,
        keyring: h.core.keyring,
        events: { names: second.webhooks.builder.eventNames, defaults: second.webhooks.builder.defaultEvents },
        registration: {
          registrar: second.webhooks.registrar,
          base: (await fleetCallbackBase(h.core.db)) ?? second.base,
        },
        outbound: { networks: IN_HOUSE },
      },
      { org: orgId, mode: 'sandbox', url: receiver.url(path), events: ['deposits'] },
    );
    expect(added.note).toMatchObject({
      state: 'registered',
      registration: { url: registrationUrl(first.base, orgId, 'sandbox') },
    });

    const stream = depositStream(key);
    // Both reconcile while events flow, rounds awaited rather than timed (a call joins a running one, so the
    // later rounds are fresh): the one endpoint stays, at the first gateway's URL.
    for (let round = 0; round < 3; round += 1) {
      await first.webhooks.reconcile();
      await second.webhooks.reconcile();
    }
    expect(await endpointsOf(orgId)).toEqual([
      { id: expect.any(String), url: registrationUrl(first.base, orgId, 'sandbox'), status: 'ACTIVE' },
    ]);
    expect(first.webhooks.decision).toMatchObject({ base: first.base, own: first.base });
    expect(second.webhooks.decision).toMatchObject({ base: first.base, own: second.base });
    // The second gateway said so once, naming both URLs, and the first said nothing.
    const heldElsewhere = second.warnings.filter((warning) => warning.includes('but v3 delivers to'));
    expect(heldElsewhere).toHaveLength(1);
    expect(heldElsewhere[0]).toContain(second.base);
    expect(heldElsewhere[0]).toContain(first.base);
    expect(first.warnings).toEqual([]);
    const [old] = await endpointsOf(orgId);

    // A rolling deploy: the first gateway drains (its reconciliation stops, its lease is given
    // up) while its listener still answers at the old URL, as the old URL must keep reaching the fleet.
    // Events flowed before the move, and go on after it (counted, not timed: a busy machine makes fewer).
    await waitUntil(async () => stream.made() > 0);
    const stopped = Date.now();
    await first.webhooks.stop();
    await waitUntil(async () =>
      (await registrationsOf(orgId)).some(
        (row) => row.status === 'ACTIVE' && row.url === registrationUrl(second.base, orgId, 'sandbox'),
      ),
    );
    const moved = Date.now();
    // At once, not when the lease would have run out: the stopping gateway gave it up.
    expect(moved - stopped).toBeLessThan(LEASE_MS - 2_000);
    // The new endpoint first; the old one still ACTIVE at v3, its registration RETIRING.
    expect((await endpointsOf(orgId)).map((row) => [row.url, row.status])).toEqual([
      [old!.url, 'ACTIVE'],
      [registrationUrl(second.base, orgId, 'sandbox'), 'ACTIVE'],
    ]);
    expect((await registrationsOf(orgId)).map((row) => [row.status, row.endpoint_id])).toEqual([
      ['RETIRING', old!.id],
      ['ACTIVE', expect.any(String)],
    ]);
    expect(second.warnings.some((warning) => warning.includes(`no running gateway advertises ${first.base}`))).toBe(
      true,
    );

    const madeBeforeMove = stream.made();
    await waitUntil(async () => stream.made() >= madeBeforeMove + 5);
    const deposits = await stream.stop();
    // Retired once the wait is over, and not before.
    await waitUntil(async () => (await endpointsOf(orgId))[0]!.status === 'DELETED', 10_000);
    const { rows: times } = await h.core.db.query<{ created_at: Date; deleted_at: Date | null }>(
      'SELECT created_at, deleted_at FROM webhook_endpoints WHERE org_id = $1 ORDER BY created_at, id',
      [orgId],
    );
    expect(times[0]!.deleted_at!.getTime() - times[1]!.created_at.getTime()).toBeGreaterThanOrEqual(RETIRE_AFTER_MS);

    // Every deposit reached the integrator, at least once; nothing was given up anywhere.
    const delivered = () =>
      new Set(receiver.received.filter((hit) => hit.path === path).map((hit) => hit.body.data[0]?.id));
    await receiver.waitFor(() => deposits.every((id) => delivered().has(id)), 20_000);
    expect(await givenUp(orgId)).toEqual({ v3: 0, legacy: 0 });
    // Two endpoints in all: no flapping.
    expect((await endpointsOf(orgId)).map((row) => [row.url, row.status])).toEqual([
      [old!.url, 'DELETED'],
      [registrationUrl(second.base, orgId, 'sandbox'), 'ACTIVE'],
    ]);
    // The retired registration's row goes once its endpoint is deleted, a step later.
    await waitUntil(async () => (await registrationsOf(orgId)).length === 1);
    expect((await registrationsOf(orgId)).map((row) => row.status)).toEqual(['ACTIVE']);
    await first.close();
    await second.close();
  });
});

describe('fxgate webhooks add in front of a fleet', () => {
  it("registers at the fleet's URL, not the one in its own configuration", async () => {
    const fleetBase = await fleetCallbackBase(h.core.db);
    expect(fleetBase).not.toBeNull();
    const own = 'http://127.0.0.1:3/_fxgate/webhooks/v3';
    const keysDir = await mkdtemp(join(tmpdir(), 'fxgate-fleet-cli-'));
    try {
      // The gateway's v3 credential for the org, as an operator provisions it.
      const orgId = newUuid();
      const credential = await h.core.registry.createKey({
        orgId,
        scopes: ['view', 'trade', 'withdraw', 'webhooks'],
        mode: 'sandbox',
      });
      await writeFile(join(keysDir, `${orgId}.sandbox.json`), JSON.stringify(credential), { mode: 0o600 });
      const context: StateContext = {
        db: h.core.db,
        registry: h.core.registry,
        sealing: {
          keyring: async () => ({ keyring: h.core.keyring, source: 'test' }),
          resolve: async () => ({ keyring: h.core.keyring, source: 'test' }),
          given: async () => ({ keyring: h.core.keyring, source: 'test' }),
        },
        config: loadConfig({
          FXGATE_UPSTREAM_URL: h.core.baseUrl,
          FXGATE_UPSTREAM_KEYS_DIR: keysDir,
          FXGATE_GATEWAY_WEBHOOK_URL: own,
          FXGATE_JWT_ISSUER: TEST_ISSUER,
          FXGATE_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1',
        }),
      };
      const added = await webhookOperations.add.run(context, {
        org: orgId,
        mode: 'sandbox',
        url: receiver.url('/hooks/cli'),
      });
      expect(added.note).toEqual({
        state: 'registered',
        registration: {
          orgId,
          mode: 'sandbox',
          endpointId: expect.any(String),
          url: registrationUrl(fleetBase!, orgId, 'sandbox'),
        },
      });
      expect((await endpointsOf(orgId)).map((row) => row.url)).toEqual([registrationUrl(fleetBase!, orgId, 'sandbox')]);
      await webhookOperations.remove.run(context, { id: added.subscription.id });
      expect((await endpointsOf(orgId)).map((row) => row.status)).toEqual(['DELETED']);
    } finally {
      await rm(keysDir, { recursive: true, force: true });
    }
  });
});

describe("the registrar's move from one URL to another", () => {
  const A = 'http://127.0.0.1:1/_fxgate/webhooks/v3';
  const B = 'http://127.0.0.1:2/_fxgate/webhooks/v3';
  let pool: Pool;
  let keysDir: string;
  let clock = Date.now();

  beforeAll(async () => {
    gatewayListeners.allow(A);
    gatewayListeners.allow(B);
    keysDir = await mkdtemp(join(tmpdir(), 'fxgate-fleet-registrar-'));
    pool = new Pool(h.core.baseUrl);
  });
  afterAll(async () => {
    await pool?.close();
    await rm(keysDir, { recursive: true, force: true });
  });

  /** A registrar with its own clock, waiting an hour before it retires a replaced endpoint. */
  function registrar(): WebhookRegistrar {
    return new WebhookRegistrar({
      db: h.core.db,
      client: new V3Client({
        dispatcher: pool,
        credentials: new ProvisioningCredentials({ registry: h.core.registry, dir: keysDir, issuer: TEST_ISSUER }),
      }),
      keyring: h.core.keyring,
      v3EventTypes: ['deposit.completed'],
      retireAfterMs: 3_600_000,
      now: () => new Date(clock),
    });
  }

  async function subscribedOrg(): Promise<{ orgId: string; subscriptionId: string }> {
    const key = await h.core.createKey({ mode: 'sandbox' });
    const added = await addWebhook(
      {
        db: h.core.db,
        keyring: h.core.keyring,
        events: { names: ['deposits'], defaults: ['deposits'] },
        registration: null,
        outbound: { networks: IN_HOUSE },
      },
      { org: key.file.orgId, mode: 'sandbox', url: receiver.url('/hooks/registrar'), events: ['deposits'] },
    );
    return { orgId: key.file.orgId, subscriptionId: added.subscription.id };
  }

  async function secretOf(orgId: string, endpointId: string): Promise<string> {
    const { rows } = await h.core.db.query<{ id: string; secret: string }>(
      'SELECT id, secret FROM legacy_webhook_registrations WHERE org_id = $1 AND endpoint_id = $2',
      [orgId, endpointId],
    );
    return h.core.keyring.open(rows[0]!.secret, registrationSecretBinding(rows[0]!.id));
  }

  it('registers the new endpoint first, keeps the old one (its signature still accepted), revives it when its URL comes back, and retires a replaced one after the wait', async () => {
    const { orgId } = await subscribedOrg();
    const gateway = registrar();
    const atA = await gateway.ensure(orgId, 'sandbox', A);
    const atB = await gateway.ensure(orgId, 'sandbox', B);
    expect(atB.endpointId).not.toBe(atA.endpointId);
    expect(atB.url).toBe(registrationUrl(B, orgId, 'sandbox'));
    expect((await endpointsOf(orgId)).map((row) => [row.id, row.status])).toEqual([
      [atA.endpointId, 'ACTIVE'],
      [atB.endpointId, 'ACTIVE'],
    ]);
    const { rows: retiring } = await h.core.db.query<{ retire_after: Date }>(
      `SELECT retire_after FROM legacy_webhook_registrations WHERE org_id = $1 AND status = 'RETIRING'`,
      [orgId],
    );
    expect(retiring.map((row) => row.retire_after.getTime())).toEqual([clock + 3_600_000]);

    // A delivery v3 still makes to the old endpoint is received: signed with its secret, it verifies.
    const mappings = await loadLegacyMappings();
    const deps = {
      db: h.core.db,
      keyring: h.core.keyring,
      builder: compileLegacyWebhooks(mappings.webhooks, mappings.maps),
    };
    const body = Buffer.from(
      JSON.stringify({
        id: `evt_${newUuid().replaceAll('-', '')}`,
        type: 'deposits',
        eventType: 'deposit.pending',
        createdAt: new Date().toISOString(),
        data: {},
      }),
    );
    const delivery = (secret: string) => ({
      orgId,
      mode: 'sandbox',
      rawBody: body,
      headers: { ...signWebhook(secret, body, Math.floor(Date.now() / 1000)) },
    });
    expect(await receiveV3Delivery(deps, delivery(await secretOf(orgId, atA.endpointId)))).toMatchObject({
      outcome: 'ignored',
    });
    await expect(receiveV3Delivery(deps, delivery('whsec_forged'))).rejects.toMatchObject({
      code: 'AUTH_TOKEN_INVALID_CONFIG',
    });

    // Ensuring again changes nothing, at any clock before the wait is over.
    clock += 3_599_000;
    expect(await gateway.ensure(orgId, 'sandbox', B)).toEqual(atB);
    expect((await endpointsOf(orgId)).filter((row) => row.status === 'ACTIVE')).toHaveLength(2);

    // A comes back before its endpoint went: that endpoint is active again, none is made, and B's waits.
    const back = await gateway.ensure(orgId, 'sandbox', A);
    expect(back.endpointId).toBe(atA.endpointId);
    expect(await endpointsOf(orgId)).toHaveLength(2);
    expect((await registrationsOf(orgId)).map((row) => [row.endpoint_id, row.status])).toEqual([
      [atA.endpointId, 'ACTIVE'],
      [atB.endpointId, 'RETIRING'],
    ]);

    // The wait over, the replaced endpoint is deleted at v3 and forgotten; the active one stays.
    clock += 3_600_000;
    const report = await gateway.reconcile(A);
    expect(report.failed).toEqual([]);
    expect(report.removed).toEqual([atB.endpointId]);
    expect((await endpointsOf(orgId)).map((row) => [row.id, row.status])).toEqual([
      [atA.endpointId, 'ACTIVE'],
      [atB.endpointId, 'DELETED'],
    ]);
    expect((await registrationsOf(orgId)).map((row) => [row.endpoint_id, row.status])).toEqual([
      [atA.endpointId, 'ACTIVE'],
    ]);
  });

  it('the last subscription gone, the retiring endpoints go at once with the active one', async () => {
    const { orgId, subscriptionId } = await subscribedOrg();
    const gateway = registrar();
    await gateway.ensure(orgId, 'sandbox', A);
    await gateway.ensure(orgId, 'sandbox', B);
    await removeSubscription(h.core.db, subscriptionId, new Date());
    const removed = await gateway.releaseIfUnused(orgId, 'sandbox');
    expect(removed).toHaveLength(2);
    expect((await endpointsOf(orgId)).map((row) => row.status)).toEqual(['DELETED', 'DELETED']);
    expect(await registrationsOf(orgId)).toEqual([]);
  });

  it('two registrars moving one book at once make one new endpoint and keep the old one', async () => {
    const { orgId } = await subscribedOrg();
    const atA = await registrar().ensure(orgId, 'sandbox', A);
    const [mine, theirs] = await Promise.all([
      registrar().ensure(orgId, 'sandbox', B),
      registrar().ensure(orgId, 'sandbox', B),
    ]);
    expect(theirs.endpointId).toBe(mine.endpointId);
    expect((await endpointsOf(orgId)).map((row) => [row.id, row.status])).toEqual([
      [atA.endpointId, 'ACTIVE'],
      [mine.endpointId, 'ACTIVE'],
    ]);
    expect((await registrationsOf(orgId)).map((row) => row.status).sort()).toEqual(['ACTIVE', 'RETIRING']);
  });
});
