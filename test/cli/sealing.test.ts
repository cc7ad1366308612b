/**
 * The keyring a process starts with (src/cli/sealing.ts), through the CLI run in process: on
 * PostgreSQL only a key given in the configuration, on the embedded database the key file beside
 * it; a database copied without its key opens nothing and stops every start; and the upgrade of a
 * database the version before the keyring made, all or nothing, after which deliveries are
 * signed with the secrets integrators were given.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { PGLITE_FOLDER, PGLITE_LOCK_FILE } from '../../src/cli/database.js';
import { openPglite } from '../../src/cli/db/pglite-database.js';
import { EMBEDDED_KEY_FILE } from '../../src/cli/sealing.js';
import { recordEvent } from '../../src/core/events/outbox.js';
import { WebhookDeliveryWorker } from '../../src/core/events/webhook-worker.js';
import { LegacyDeliveryWorker } from '../../src/gateway/webhooks/delivery-worker.js';
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import type { Database } from '../../src/lib/db/database.js';
import { armFailpoint, disarmAllFailpoints } from '../../src/lib/failpoints.js';
import { newUuid } from '../../src/lib/ids.js';
import { readKeyFile } from '../../src/lib/keys/key-file.js';
import { UPGRADE_FAILPOINT } from '../../src/lib/secrets/sealed-rows.js';
import { keyIdOf, openFormerSealed, sealedKeyId, SealingKeyring } from '../../src/lib/secrets/sealing-keyring.js';
import { keyEntriesOfFile, keyringOf } from '../../src/lib/secrets/sealing-keys.js';
import type { WebhookFetcher, WebhookRequest } from '../../src/lib/webhooks/delivery-attempt.js';
import { verifyLegacyWebhook, verifyWebhookSignature } from '../../src/lib/webhooks/signature.js';
import { copyTestPostgres, createTestPostgres, type TestDatabase } from '../support/databases.js';
import { FORMER_KEY_NAMES } from '../support/former-sealing.js';
import { everySealedValue, formerRows, sealedRows, sealingCliEnv, storedSecret } from '../support/sealed-fixtures.js';
import { fxgate, startFxgate, stopInProcessServers } from './in-process-cli.js';

/** Every key in service_secrets, as the version before the keyring would have read it. */
async function serviceSecretKeys(db: Pick<Database, 'query'>): Promise<{ name: string; key: Buffer }[]> {
  const { rows } = await db.query<{ name: string; value: string }>('SELECT name, value FROM service_secrets');
  return rows.map((row) => ({ name: row.name, key: Buffer.from(row.value, 'base64') }));
}

/** Whether a stored value opens under a key, in either format, whatever key id it names. */
function opensUnder(stored: string, binding: string, key: Buffer): boolean {
  const parts = stored.split('.');
  const attempts = [
    () => SealingKeyring.of([key]).open([parts[0], keyIdOf(key), ...parts.slice(2)].join('.'), binding),
    () => openFormerSealed(stored, binding, key),
  ];
  return attempts.some((attempt) => {
    try {
      attempt();
      return true;
    } catch {
      return false;
    }
  });
}

/** What a copy of the database gives away with nothing but itself: no sealing key, and no value that opens. */
async function expectNothingOpens(db: Database, secrets: readonly string[]): Promise<void> {
  const keys = await serviceSecretKeys(db);
  expect(keys.map((entry) => entry.name)).not.toContain(FORMER_KEY_NAMES.endpoints);
  expect(keys.map((entry) => entry.name)).not.toContain(FORMER_KEY_NAMES.legacy);
  const values = await everySealedValue(db);
  expect(values.length).toBeGreaterThanOrEqual(secrets.length);
  for (const { stored, binding } of values) {
    expect(stored).toMatch(/^v2\./);
    for (const secret of secrets) expect(stored).not.toContain(secret.slice(6));
    for (const { key } of keys) expect(opensUnder(stored, binding, key)).toBe(false);
  }
}

const keyText = (key: Buffer): string => key.toString('base64url');

describe('on PostgreSQL', () => {
  const [a, b] = [randomBytes(32), randomBytes(32)];
  let database: TestDatabase;
  let copy: TestDatabase | null = null;
  let dataDir: string;
  beforeAll(async () => {
    database = await createTestPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-sealing-pg-'));
  });
  afterEach(() => disarmAllFailpoints());
  afterAll(async () => {
    await stopInProcessServers();
    await copy?.drop();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  const env = (url: string, keys?: string) => sealingCliEnv(url, dataDir, keys);

  it('refuses to start a server without a key, naming both settings and generate-key (exit 2)', async () => {
    for (const args of [['core'], ['all'], ['gateway', '--upstream', 'http://127.0.0.1:9']]) {
      const result = await fxgate(args, env(database.url!));
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toBe(
        'fxgate: webhook secrets are sealed with a key kept out of the database, and on PostgreSQL (DATABASE_URL) it must be given: ' +
          'set FXGATE_SECRETS_KEY to a key made by `fxgate secrets generate-key` (or FXGATE_SECRETS_KEY_FILE to a file holding it), ' +
          'the same in every process of the deployment, and keep it apart from the database and its backups\n',
      );
    }
  });

  it('a copy of the database without the key opens nothing, and refuses every start naming key ids only', async () => {
    const server = await startFxgate(['all'], env(database.url!, keyText(a)));
    await server.stop();
    const rows = await sealedRows(database.db, SealingKeyring.of([a]));
    copy = await copyTestPostgres(database);
    await expectNothingOpens(
      copy.db,
      rows.map((row) => row.secret),
    );

    // Another key: every part refuses, naming the key id the rows are under and how many, never a key.
    const idA = keyIdOf(a);
    for (const [args, count] of [
      [['all'], '3 rows'],
      [['core'], '1 row'],
      [['gateway', '--upstream', 'http://127.0.0.1:9'], '2 rows'],
    ] as const) {
      const refused = await fxgate(args, env(copy.url!, keyText(b)));
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toBe(
        `fxgate: the database holds webhook secrets sealed under keys this process was not given: key ${idA} (${count}); ` +
          `it holds key ${keyIdOf(b)} (FXGATE_SECRETS_KEY). Give the key that sealed them in FXGATE_SECRETS_KEY, after the new one while rotating ` +
          '(FXGATE_SECRETS_KEY=<new key>,<old key>), then run `fxgate secrets reseal` to move every row under the new one. `fxgate secrets status` lists the key ids in use.\n',
      );
      for (const key of [a, b])
        for (const encoding of ['base64', 'base64url'] as const)
          expect(refused.stderr).not.toContain(key.toString(encoding));
    }
    // The refusals changed nothing; the key that sealed them opens them.
    await expectNothingOpens(
      copy.db,
      rows.map((row) => row.secret),
    );
    const withA = await startFxgate(['all'], env(copy.url!, keyText(a)));
    expect(withA.stderr).toBe('');
    await withA.stop();
    for (const row of rows)
      expect(SealingKeyring.of([a]).open(await storedSecret(copy.db, row), row.binding)).toBe(row.secret);
  });
});

describe('the upgrade of a database the version before the keyring made', () => {
  const key = randomBytes(32);
  const keyring = SealingKeyring.of([key]);
  let database: TestDatabase;
  let dataDir: string;
  beforeAll(async () => {
    database = await createTestPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-sealing-upgrade-'));
  });
  afterEach(() => disarmAllFailpoints());
  afterAll(async () => {
    await stopInProcessServers();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('seals every row under the given key and deletes the in-database keys, all or nothing; deliveries sign with the original secrets', async () => {
    const orgId = newUuid();
    const rows = await formerRows(database.db, orgId);
    const env = sealingCliEnv(database.url!, dataDir, keyText(key));
    const names = async () =>
      (await serviceSecretKeys(database.db)).map((entry) => entry.name).filter((name) => name !== 'cursor-hmac');

    // A failure half-way (after the endpoints are rewritten): the start fails, the database is as it was.
    const before = await everySealedValue(database.db);
    armFailpoint(UPGRADE_FAILPOINT);
    const failed = await fxgate(['all'], env);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('failpoint sealed-rows.upgrade triggered');
    expect(await everySealedValue(database.db)).toEqual(before);
    expect((await names()).sort()).toEqual(Object.values(FORMER_KEY_NAMES).sort());

    const server = await startFxgate(['all'], env);
    expect(server.stderr).toBe(
      `fxgate: sealed 4 webhook secrets an earlier version stored (3 under the keys it kept in the database, 1 as it was) under key ${keyring.sealingKeyId} (FXGATE_SECRETS_KEY); ` +
        `the sealing keys it kept in the database (${Object.values(FORMER_KEY_NAMES).sort().join(', ')}) are deleted\n`,
    );
    await server.stop();
    expect(await names()).toEqual([]);
    for (const row of rows) {
      const stored = await storedSecret(database.db, row);
      expect(sealedKeyId(stored)).toBe(keyring.sealingKeyId);
      expect(keyring.open(stored, row.binding)).toBe(row.secret);
    }
    const restarted = await startFxgate(['all'], env);
    expect(restarted.stderr).toBe('');
    await restarted.stop();

    // Deliveries made after the upgrade, with nothing but the given key: signed with the secrets integrators hold.
    const sent: WebhookRequest[] = [];
    const fetcher: WebhookFetcher = async (sending) => {
      sent.push(sending);
      return { statusCode: 200 };
    };
    await database.db.transaction((tx) =>
      recordEvent(tx, {
        orgId,
        environment: 'sandbox',
        type: 'deposits',
        eventType: 'deposit.completed',
        data: { id: 'dep_upgrade' },
        at: new Date(),
      }),
    );
    const coreWorker = new WebhookDeliveryWorker({ db: database.db, keyring, fetcher });
    expect(await coreWorker.runOnce()).toBe(2);
    await coreWorker.stop();
    const endpoints = rows.filter((row) => row.table === 'webhook_endpoints');
    expect(sent).toHaveLength(2);
    for (const endpoint of endpoints) {
      const { rows: found } = await database.db.query<{ url: string }>(
        'SELECT url FROM webhook_endpoints WHERE id = $1',
        [endpoint.id],
      );
      const delivery = sent.find((candidate) => candidate.url === found[0]!.url)!;
      expect(
        verifyWebhookSignature({
          secret: endpoint.secret,
          rawBody: delivery.body,
          header: delivery.headers['x-service-signature'],
        }),
      ).toEqual({ ok: true });
    }
    const subscription = rows.find((row) => row.table === 'legacy_webhook_subscriptions')!;
    const eventId = newUuid();
    await database.db.query(
      `INSERT INTO legacy_webhook_events (id, v3_event_id, org_id, mode, v3_event_type, legacy_event, body, created_at, received_at)
       VALUES ($1, 'evt_upgrade', $2, 'sandbox', 'deposit.completed', 'deposits', '{"type":"deposits"}', now(), now())`,
      [eventId, orgId],
    );
    await database.db.query(
      `INSERT INTO legacy_webhook_deliveries (event_id, subscription_id, status, next_attempt_at, created_at) VALUES ($1, $2, 'PENDING', now(), now())`,
      [eventId, subscription.id],
    );
    sent.length = 0;
    const legacyWorker = new LegacyDeliveryWorker({ db: database.db, keyring, fetcher });
    expect(await legacyWorker.runOnce()).toBe(1);
    await legacyWorker.stop();
    expect(verifyLegacyWebhook(sent[0]!.body, sent[0]!.headers['x-webhook-signature'], subscription.secret)).toEqual({
      ok: true,
    });
  });
});

describe('rows an old process sealed during a rolling upgrade, on a database already upgraded', () => {
  const [a, b] = [randomBytes(32), randomBytes(32)];
  let database: TestDatabase;
  let dataDir: string;
  beforeAll(async () => {
    database = await createTestPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-sealing-rolling-'));
  });
  afterAll(async () => {
    await stopInProcessServers();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('a wrong key seals nothing before it is refused; the right one seals them; those whose key is gone are reported', async () => {
    const env = (key: Buffer) => sealingCliEnv(database.url!, dataDir, keyText(key));
    const current = await sealedRows(database.db, SealingKeyring.of([a]));
    // An old process, started after the upgrade, made its key again and sealed with it.
    const former = await formerRows(database.db);
    const before = await everySealedValue(database.db);
    const refused = await fxgate(['all'], env(b));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`sealed under keys this process was not given: key ${keyIdOf(a)} (3 rows)`);
    expect(await everySealedValue(database.db)).toEqual(before);

    // The subscription's old key lost meanwhile: its row can never open, and the start says so.
    await database.db.query('DELETE FROM service_secrets WHERE name = $1', [FORMER_KEY_NAMES.legacy]);
    const server = await startFxgate(['all'], env(a));
    expect(server.stderr).toBe(
      `fxgate: sealed 2 webhook secrets an earlier version stored (1 under the keys it kept in the database, 1 as it was) under key ${keyIdOf(a)} (FXGATE_SECRETS_KEY); ` +
        `the sealing keys it kept in the database (${FORMER_KEY_NAMES.endpoints}) are deleted\n` +
        'fxgate: warning: 2 webhook secrets are sealed by an earlier version under a key it kept in the database that is gone (or does not open them): ' +
        'their deliveries fail (nothing is sent); make the v3 endpoint or the legacy subscription again\n',
    );
    await server.stop();
    const keyringA = SealingKeyring.of([a]);
    for (const row of [...current, ...former.filter((row) => row.table === 'webhook_endpoints')])
      expect(keyringA.open(await storedSecret(database.db, row), row.binding)).toBe(row.secret);
    for (const row of former.filter((row) => row.table !== 'webhook_endpoints'))
      expect(await storedSecret(database.db, row)).toMatch(/^v1\./);
  });
});

describe('the embedded default', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'fxgate-sealing-embedded-'));
  });
  afterAll(async () => {
    await stopInProcessServers();
    if (parent) await rm(parent, { recursive: true, force: true });
  });

  it(
    'makes secrets.key (0600) at the first start and reads it later; a copy of the folder without it opens nothing',
    { timeout: 120_000 },
    async () => {
      const dataDir = join(parent, 'data');
      const env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
      const server = await startFxgate(['all'], env);
      expect(server.stderr).toBe('');
      const keyPath = join(dataDir, EMBEDDED_KEY_FILE);
      expect((await stat(keyPath)).mode & 0o777).toBe(0o600);
      const text = await readFile(keyPath, 'utf8');
      expect(text).toMatch(
        /^# .*\n# Keep it apart from backups of this folder: together they open every secret; without it, none opens\.\n[A-Za-z0-9_-]{43}\n$/,
      );
      const made = keyringOf(keyEntriesOfFile(text, keyPath));
      if (!('keyring' in made)) throw new Error(made.problems.join('; '));
      const { keyring } = made;

      // A v3 endpoint through the API, and a legacy subscription through the running server.
      const [, url] = server.stdout.match(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m)!;
      const [, sandboxKey] = server.stdout.match(/^fxgate: sandbox key created: (\S+)$/m)!;
      const signer = new V3RequestSigner(await readKeyFile(sandboxKey!), { issuer: 'fx-service' });
      const body = JSON.stringify({ url: 'http://127.0.0.1:9/hook' });
      const created = await request(`${url}/v3/fx/webhook-endpoints`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(await signer.headers({
            method: 'POST',
            pathAndQuery: '/v3/fx/webhook-endpoints',
            body,
            idempotencyKey: 'e-1',
          })),
        },
        body,
      });
      expect(created.statusCode).toBe(200);
      const endpointSecret = ((await created.body.json()) as { data: { secret: string } }).data.secret;
      const orgId = basename(sandboxKey!, '.json');
      const added = await fxgate(
        ['webhooks', 'add', '--org', orgId, '--mode', 'sandbox', '--url', 'http://127.0.0.1:9/legacy', '--json'],
        env,
      );
      expect(added.code, added.stderr).toBe(0);
      const subscriptionSecret = (JSON.parse(added.stdout) as { secret: string }).secret;
      await server.stop();

      // The key file is read again, not replaced: what was sealed still opens.
      const again = await startFxgate(['all'], env);
      expect(again.stderr).toBe('');
      await again.stop();
      expect(await readFile(keyPath, 'utf8')).toBe(text);

      // The folder copied as a backup would be, without secrets.key.
      const copyDir = join(parent, 'copy');
      await cp(dataDir, copyDir, {
        recursive: true,
        filter: (source) => ![EMBEDDED_KEY_FILE, PGLITE_LOCK_FILE].includes(basename(source)),
      });
      const copyEnv = { ...env, FXGATE_DATA_DIR: copyDir };
      const refused = await fxgate(['all'], copyEnv);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^fxgate: the embedded database holds webhook secrets sealed under key ${keyring.sealingKeyId} \\(\\d rows\\), and ${join(copyDir, EMBEDDED_KEY_FILE)}, the key file that opens them, is missing\\. ` +
            'Put back the secrets.key kept apart from this data folder \\(or give its key in FXGATE_SECRETS_KEY\\); no new key is made while secrets sealed under another are there\\.\n$',
        ),
      );
      await expect(stat(join(copyDir, EMBEDDED_KEY_FILE))).rejects.toThrow(/ENOENT/);
      const copied = await openPglite(join(copyDir, PGLITE_FOLDER));
      try {
        await expectNothingOpens(copied, [endpointSecret, subscriptionSecret]);
        const sealed = await everySealedValue(copied);
        // The endpoint, the subscription, and the gateway's own registration with v3.
        expect(sealed.length).toBeGreaterThanOrEqual(2);
        for (const { stored, binding } of sealed) expect(() => keyring.open(stored, binding)).not.toThrow();
      } finally {
        await copied.close();
      }
      // With its key given back, the copy starts.
      const restored = await startFxgate(['all'], { ...copyEnv, FXGATE_SECRETS_KEY: text.trim().split('\n').at(-1)! });
      await restored.stop();
    },
  );
});
