/**
 * Legacy webhooks across a gateway crash: a stand-alone `fxgate gateway` process (its own
 * PostgreSQL database, in front of the real core) receives v3 events and is SIGKILLed while it
 * delivers the first of them, after v3 has been told every one was received. Restarted, it
 * delivers every event, each at least once, none lost. The subscription is made with
 * `fxgate webhooks add`, which registers the gateway with v3 itself, and removed with
 * `fxgate webhooks remove`, which deletes the v3 endpoint.
 *
 * The receiver does the killing when the first delivery reaches it: no hook in the gateway's code.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { WebhookDeliveryWorker } from '../../../../src/core/events/webhook-worker.js';
import { LEGACY_WEBHOOK_PATH } from '../../../../src/gateway/webhooks/registrations.js';
import { idToLegacyUuid, newUuid } from '../../../../src/lib/ids.js';
import { type LoadedKey, loadKey } from '../../../../src/lib/keys/key-file.js';
import { generateSealingKey } from '../../../../src/lib/secrets/sealing-keys.js';
import { verifyLegacyWebhook } from '../../../../src/lib/webhooks/signature.js';
import { type CliProcess, killAllCliProcesses, runCli, startCli } from '../../../cli/cli-process.js';
import { FEDWIRE_ACCOUNT, postData, postEmpty } from '../../../support/book-fixtures.js';
import { createTestPostgres, type TestDatabase } from '../../../support/databases.js';
import { LegacyWebhookReceiver } from '../../../support/legacy-webhook-receiver.js';
import { testRedisEnv } from '../../../support/test-run.js';
import { TEST_ISSUER, V3Harness } from '../../../support/v3-harness.js';

let core: V3Harness;
let coreWorker: WebhookDeliveryWorker;
let gatewayDb: TestDatabase;
let keysDir: string;
let receiver: LegacyWebhookReceiver;
let gateway: CliProcess | null = null;
let port: number;
let env: Record<string, string>;
let v3Key: LoadedKey;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return free;
}

async function startGateway(): Promise<void> {
  gateway = startCli(['gateway', '--upstream', core.baseUrl], {
    ...env,
    HOST: '127.0.0.1',
    PORT: String(port),
    FXGATE_WEBHOOK_POLL_MS: '100',
  });
  await gateway.waitFor(/^fxgate gateway: listening on (http:\/\/\S+),/m);
}

/** Core deliveries to the gateway that it answered 2xx, for this org's events. */
async function acknowledgedByGateway(): Promise<number> {
  const { rows } = await core.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.org_id = $1 AND d.status = 'DELIVERED'`,
    [v3Key.file.orgId],
  );
  return rows[0]!.n;
}

beforeAll(async () => {
  core = await V3Harness.start({ driver: 'postgres', storeKind: 'redis' });
  coreWorker = new WebhookDeliveryWorker({
    db: core.db,
    keyring: core.keyring,
    options: { pollIntervalMs: 50, requestTimeoutMs: 5_000 },
  });
  coreWorker.start();
  gatewayDb = await createTestPostgres();
  keysDir = await mkdtemp(join(tmpdir(), 'fxgate-webhook-crash-keys-'));
  receiver = await LegacyWebhookReceiver.start();
  port = await freePort();

  // The gateway's own v3 credential for the org, as an operator provisions it: with the webhooks scope.
  const orgId = newUuid();
  const credential = await core.registry.createKey({
    orgId,
    scopes: ['view', 'trade', 'withdraw', 'webhooks'],
    mode: 'sandbox',
  });
  await writeFile(join(keysDir, `${orgId}.sandbox.json`), JSON.stringify(credential), { mode: 0o600 });
  v3Key = loadKey(await core.registry.createKey({ orgId, scopes: ['view', 'trade', 'withdraw'], mode: 'sandbox' }));
  env = {
    DATABASE_URL: gatewayDb.url!,
    ...testRedisEnv(),
    FXGATE_UPSTREAM_URL: core.baseUrl,
    FXGATE_UPSTREAM_KEYS_DIR: keysDir,
    FXGATE_GATEWAY_WEBHOOK_URL: `http://127.0.0.1:${port}${LEGACY_WEBHOOK_PATH}`,
    FXGATE_JWT_ISSUER: TEST_ISSUER,
    // The gateway's own key: its database is not the core's.
    FXGATE_SECRETS_KEY: generateSealingKey(),
  };
});

afterAll(async () => {
  await killAllCliProcesses();
  await coreWorker?.stop();
  await receiver?.close();
  await core?.close();
  await gatewayDb?.drop();
  if (keysDir) await rm(keysDir, { recursive: true, force: true });
});

describe('a gateway killed between receipt and delivery', () => {
  it('delivers every event after a restart, each at least once, none lost', { timeout: 120_000 }, async () => {
    const orgId = v3Key.file.orgId;
    const added = await runCli(
      [
        'webhooks',
        'add',
        '--org',
        orgId,
        '--mode',
        'sandbox',
        '--url',
        receiver.url('/hooks/crash'),
        '--events',
        'deposits,withdrawals,failed-withdrawals',
        '--json',
      ],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    const subscription = JSON.parse(added.stdout) as {
      id: string;
      orgId: string;
      mode: string;
      url: string;
      events: string[];
      secret: string;
    };
    expect(Object.keys(subscription)).toEqual(['id', 'orgId', 'mode', 'url', 'events', 'secret']);
    expect(subscription).toMatchObject({
      orgId,
      mode: 'sandbox',
      url: receiver.url('/hooks/crash'),
      events: ['deposits', 'withdrawals', 'failed-withdrawals'],
    });
    expect(added.stderr).toMatch(
      new RegExp(
        `^fxgate: v3 endpoint: whe_[0-9a-f]{32} delivers org ${orgId} \\(sandbox\\) to http://127\\.0\\.0\\.1:${port}${LEGACY_WEBHOOK_PATH}/${orgId}/sandbox\\n$`,
      ),
    );

    // Seven events: five deposits, a withdrawal paid and one failed.
    const expected = 7;
    let killing: Promise<void> | null = null;
    let killed = false;
    receiver.answer = async () => {
      if (killed) return 200;
      // Every attempt of the first process is held and dropped: it delivers several at once.
      killing ??= (async () => {
        // Only once v3 has every event acknowledged by the gateway: they are all stored, none delivered.
        const deadline = Date.now() + 20_000;
        while ((await acknowledgedByGateway()) < expected && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 20));
        gateway!.child.kill('SIGKILL');
        await gateway!.exited;
        killed = true;
      })();
      await killing;
      return 'drop';
    };
    await startGateway();

    const deposits: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      deposits.push(
        (await postData(core, v3Key, '/v3/fx/sandbox/deposits', { currency: 'USD', amount: `${100 + index}.00` })).id!,
      );
    }
    const account = await postData(core, v3Key, '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT);
    await postEmpty(core, v3Key, `/v3/fx/sandbox/withdrawal-accounts/${account.id}/verify`);
    const paid = await postData(core, v3Key, '/v3/fx/withdrawals', {
      withdrawalAccountId: account.id,
      withdrawalAmount: '20.00',
      currency: 'USD',
    });
    const refused = await postData(core, v3Key, '/v3/fx/withdrawals', {
      withdrawalAccountId: account.id,
      withdrawalAmount: '30.00',
      currency: 'USD',
    });
    await postEmpty(core, v3Key, `/v3/fx/sandbox/withdrawals/${paid.id}/complete`);
    await postEmpty(core, v3Key, `/v3/fx/sandbox/withdrawals/${refused.id}/fail`);

    const crashed = await gateway!.exited;
    expect(crashed.signal).toBe('SIGKILL');
    expect(await acknowledgedByGateway()).toBe(expected);
    expect(receiver.received).toHaveLength(0);
    const { rows: stored } = await gatewayDb.db.query<{ events: number; pending: number }>(
      `SELECT (SELECT count(*)::int FROM legacy_webhook_events) AS events, (SELECT count(*)::int FROM legacy_webhook_deliveries WHERE status = 'PENDING') AS pending`,
    );
    expect(stored).toEqual([{ events: expected, pending: expected }]);

    await startGateway();
    const restarted = Date.now();
    const wanted = [
      ...deposits.map((id) => `Completed Deposits ${idToLegacyUuid('deposit', id)}`),
      `Completed Withdrawals ${idToLegacyUuid('withdrawal', paid.id!)}`,
      `Failed Withdrawals ${idToLegacyUuid('withdrawal', refused.id!)}`,
    ];
    const seen = () => new Set(receiver.received.map((hit) => `${hit.body.message} ${String(hit.body.data[0]!.id)}`));
    await receiver.waitFor(() => wanted.every((entry) => seen().has(entry)), 30_000);
    if (process.env.FXGATE_PRINT_TIMINGS === '1')
      process.stdout.write(
        `restarted gateway delivered all ${expected} events ${Date.now() - restarted} ms after it printed that it listens\n`,
      );
    for (const hit of receiver.received)
      expect(verifyLegacyWebhook(hit.rawBody, hit.headers['x-webhook-signature'], subscription.secret)).toEqual({
        ok: true,
      });
    expect(new Set(receiver.received.map((hit) => hit.body.eventId)).size).toBe(expected);
    await expect
      .poll(
        async () =>
          (
            await gatewayDb.db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM legacy_webhook_deliveries WHERE status = 'DELIVERED'`,
            )
          ).rows[0]!.n,
        { timeout: 5_000 },
      )
      .toBe(expected);

    // While it runs, the CLI lists and removes (on PostgreSQL the two share the database); the last removal deletes the v3 endpoint.
    const listed = await runCli(['webhooks', 'list', '--org', orgId, '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id: subscription.id, v3EndpointId: expect.stringMatching(/^whe_/) }),
    ]);
    expect(listed.stdout).not.toContain(subscription.secret);
    const removed = await runCli(['webhooks', 'remove', subscription.id], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(
      new RegExp(
        `^removed: ${subscription.id}\\nv3 endpoint deleted: whe_[0-9a-f]{32} \\(no subscription of the org and mode is left\\)\\n$`,
      ),
    );
    const { rows: endpoints } = await core.db.query<{ status: string }>(
      'SELECT status FROM webhook_endpoints WHERE org_id = $1',
      [orgId],
    );
    expect(endpoints).toEqual([{ status: 'DELETED' }]);
    await gateway!.stop();
  });
});
