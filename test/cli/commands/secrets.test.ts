/**
 * `fxgate secrets status | reseal | generate-key`, in process: a rotation on PostgreSQL from key A
 * to key B (A seals; then B,A: the rows still open and new ones are sealed with B; reseal moves
 * every row under B; then B alone starts and opens every row, and A alone is refused), what the
 * commands say and how they end, and a reseal through the admin listener of a running `fxgate all`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ALL_SEALED_COLUMNS, EMBEDDED_KEY_FILE } from '../../../src/cli/sealing.js';
import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { configuredKeyring, loadConfig } from '../../../src/lib/config.js';
import { newUuid } from '../../../src/lib/ids.js';
import { loadKey } from '../../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { countSealedRows, rowsByKeyId } from '../../../src/lib/secrets/sealed-rows.js';
import { keyIdOf, sealedKeyId, SealingKeyring } from '../../../src/lib/secrets/sealing-keyring.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { everySealedValue, sealedRows, sealingCliEnv, storedSecret } from '../../support/sealed-fixtures.js';
import { fxgate, startFxgate, stopInProcessServers } from '../in-process-cli.js';

const text = (key: Buffer): string => key.toString('base64url');

describe('fxgate secrets generate-key', () => {
  it('prints a new key a configuration accepts, and on stderr what to do with it', async () => {
    const [first, second] = [await fxgate(['secrets', 'generate-key']), await fxgate(['secrets', 'generate-key'])];
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    expect(second.stdout).not.toBe(first.stdout);
    expect(first.stderr).toBe(
      'fxgate: give it first in FXGATE_SECRETS_KEY (before the keys in use, which still open what they sealed), then run `fxgate secrets reseal`; keep it apart from the database and its backups\n',
    );
    const keyring = configuredKeyring(loadConfig({ FXGATE_SECRETS_KEY: first.stdout.trim() }));
    expect(keyring?.sealingKeyId).toBe(keyIdOf(Buffer.from(first.stdout.trim(), 'base64url')));
  });

  it('is one of the subcommands the help lists', async () => {
    const help = await fxgate(['secrets', '--help']);
    expect(help.code).toBe(0);
    for (const command of ['status', 'reseal', 'generate-key'])
      expect(help.stdout).toMatch(new RegExp(`^ {2}${command}\\b`, 'm'));
    const reseal = await fxgate(['secrets', 'reseal', '--help']);
    expect(reseal.stdout).toContain('FXGATE_SECRETS_KEY=<new>,<old>');
  });
});

describe('a rotation on PostgreSQL', () => {
  const [a, b, c] = [randomBytes(32), randomBytes(32), randomBytes(32)];
  const [idA, idB, idC] = [keyIdOf(a), keyIdOf(b), keyIdOf(c)];
  let database: TestDatabase;
  let dataDir: string;
  beforeAll(async () => {
    database = await createTestPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-secrets-'));
  });
  afterAll(async () => {
    await stopInProcessServers();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  const env = (keys?: string) => sealingCliEnv(database.url!, dataDir, keys);
  const keyIdsInUse = async () => rowsByKeyId(await countSealedRows(database.db, ALL_SEALED_COLUMNS));

  it('moves every row from key A to key B, and then A alone no longer starts', { timeout: 120_000 }, async () => {
    // Key A seals: a v3 endpoint, a legacy subscription, the gateway's registration (in place: no server asks v3 for one).
    const orgId = newUuid();
    const rows = await sealedRows(database.db, SealingKeyring.of([a]), orgId);
    const statusA = await fxgate(['secrets', 'status'], env(text(a)));
    expect(statusA).toMatchObject({ code: 0, stderr: '' });
    expect(statusA.stdout.split('\n').map((line) => line.split(/\s{2,}/))).toEqual([
      [`sealing key: ${idA} (FXGATE_SECRETS_KEY)`],
      ['KEY ID', 'ROWS', 'GIVEN'],
      [idA, '3', 'yes, seals'],
      [''],
    ]);

    // B,A: the server starts (the rows open), and what it seals now is under B.
    const core = await startFxgate(['core'], env(`${text(b)},${text(a)}`));
    const [, url] = core.stdout.match(/^fxgate core: listening on (http:\/\/\S+)$/m)!;
    const key = loadKey(await new KeyRegistry(database.db).createKey({ orgId, scopes: ['webhooks'], mode: 'sandbox' }));
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/rotated' });
    const signer = new V3RequestSigner(key, { issuer: 'fx-service' });
    const created = await request(`${url}/v3/fx/webhook-endpoints`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(await signer.headers({
          method: 'POST',
          pathAndQuery: '/v3/fx/webhook-endpoints',
          body,
          idempotencyKey: 'rot-1',
        })),
      },
      body,
    });
    expect(created.statusCode).toBe(200);
    const endpoint = ((await created.body.json()) as { data: { id: string; secret: string } }).data;
    await core.stop();
    expect(sealedKeyId(await storedSecret(database.db, { table: 'webhook_endpoints', id: endpoint.id }))).toBe(idB);
    const added = await fxgate(
      [
        'webhooks',
        'add',
        '--org',
        key.file.orgId,
        '--mode',
        'sandbox',
        '--url',
        'https://example.com/rotated',
        '--json',
      ],
      env(`${text(b)},${text(a)}`),
    );
    expect(added.code, added.stderr).toBe(0);
    const subscription = JSON.parse(added.stdout) as { id: string; secret: string };
    expect(
      sealedKeyId(await storedSecret(database.db, { table: 'legacy_webhook_subscriptions', id: subscription.id })),
    ).toBe(idB);
    expect(await keyIdsInUse()).toEqual(
      new Map([
        [idA, 3],
        [idB, 2],
      ]),
    );
    const statusBA = await fxgate(['secrets', 'status'], env(`${text(b)},${text(a)}`));
    expect(statusBA.stdout).toContain(`sealing key: ${idB} (FXGATE_SECRETS_KEY)\n`);
    expect(statusBA.stdout).toMatch(new RegExp(`^${idB} +2 +yes, seals$`, 'm'));
    expect(statusBA.stdout).toMatch(new RegExp(`^${idA} +3 +yes, opens$`, 'm'));

    // The reseal moves every row under B, and says A can go.
    const resealed = await fxgate(['secrets', 'reseal'], env(`${text(b)},${text(a)}`));
    expect(resealed).toEqual({
      code: 0,
      stdout:
        `sealing key: ${idB} (FXGATE_SECRETS_KEY)\n` +
        're-sealed: 3 rows\n' +
        `every sealed secret is under key ${idB}: key ${idA} can be removed from the configuration\n`,
      stderr: '',
    });
    expect(await keyIdsInUse()).toEqual(new Map([[idB, 5]]));
    const onlyB = SealingKeyring.of([b]);
    for (const row of rows) expect(onlyB.open(await storedSecret(database.db, row), row.binding)).toBe(row.secret);
    const again = await fxgate(['secrets', 'reseal', '--json'], env(`${text(b)},${text(a)}`));
    expect(JSON.parse(again.stdout)).toMatchObject({ resealed: 0, unknownKeys: [], keys: { sealingKeyId: idB } });

    // B alone starts; A alone is refused, naming B and its rows.
    const withB = await startFxgate(['all'], env(text(b)));
    expect(withB.stderr).toBe('');
    await withB.stop();
    for (const { stored, binding } of await everySealedValue(database.db))
      expect(() => onlyB.open(stored, binding)).not.toThrow();
    const withA = await fxgate(['all'], env(text(a)));
    expect(withA.code).toBe(2);
    expect(withA.stderr).toContain(
      `sealed under keys this process was not given: key ${idB} (5 rows); it holds key ${idA}`,
    );
  });

  it('leaves rows under a key it was not given, says which, and ends with 1; status shows them without a key', async () => {
    await sealedRows(database.db, SealingKeyring.of([c]));
    const result = await fxgate(['secrets', 'reseal'], env(text(b)));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`sealing key: ${idB} (FXGATE_SECRETS_KEY)\nre-sealed: 0 rows\n`);
    expect(result.stderr).toBe(
      `fxgate: 3 rows are sealed under key ${idC}, which was not given: add it to FXGATE_SECRETS_KEY (after the sealing key) and run reseal again\n` +
        `fxgate: 3 rows are not under key ${idB}; keep the keys that open them\n`,
    );
    const json = await fxgate(['secrets', 'reseal', '--json'], env(text(b)));
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ unknownKeys: [{ keyId: idC, rows: 3 }] });

    // Without a key on PostgreSQL: status still tells what is there; reseal cannot run.
    const status = await fxgate(['secrets', 'status'], env());
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(
      'sealing key: none given (FXGATE_SECRETS_KEY and FXGATE_SECRETS_KEY_FILE are unset',
    );
    expect(status.stdout).toMatch(new RegExp(`^${idB} +5 +no: these do not open$`, 'm'));
    expect(status.stdout).toMatch(new RegExp(`^${idC} +3 +no: these do not open$`, 'm'));
    expect(status.stdout).toContain(
      `not given: key ${[idB, idC].sort().join(', ')}; a server refuses to start without them\n`,
    );
    const statusJson = JSON.parse((await fxgate(['secrets', 'status', '--json'], env())).stdout) as { keys: unknown };
    expect(statusJson.keys).toBeNull();
    const keyless = await fxgate(['secrets', 'reseal'], env());
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toMatch(/^fxgate: webhook secrets are sealed with a key kept out of the database/);
  });
});

describe('a reseal while fxgate all runs on the embedded database', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-secrets-embedded-'));
  });
  afterAll(async () => {
    await stopInProcessServers();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("goes through the server's admin listener, with the server's keys", { timeout: 120_000 }, async () => {
    const env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
    const first = await startFxgate(['all'], env);
    const added = await fxgate(
      [
        'webhooks',
        'add',
        '--org',
        '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c',
        '--mode',
        'sandbox',
        '--url',
        'http://127.0.0.1:9/h',
      ],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    await first.stop();
    const embeddedKey = (await readFile(join(dataDir, EMBEDDED_KEY_FILE), 'utf8')).trim().split('\n').at(-1)!;
    const embeddedId = keyIdOf(Buffer.from(embeddedKey, 'base64url'));

    // Rotating: the server is given a new key first and the embedded one after it; the command is given none.
    const fresh = randomBytes(32);
    const server = await startFxgate(['all'], { ...env, FXGATE_SECRETS_KEY: `${text(fresh)},${embeddedKey}` });
    const resealed = await fxgate(['secrets', 'reseal'], env);
    expect(resealed.code, resealed.stderr).toBe(0);
    expect(resealed.stdout).toMatch(
      new RegExp(
        `^sealing key: ${keyIdOf(fresh)} \\(FXGATE_SECRETS_KEY, the keys of fxgate \\(pid ${process.pid}\\), which holds the data folder\\)\n` +
          're-sealed: [1-9]\\d* rows\n' +
          `every sealed secret is under key ${keyIdOf(fresh)}: key ${embeddedId} can be removed from the configuration\n$`,
      ),
    );
    const status = await fxgate(['secrets', 'status', '--json'], env);
    const counts = (JSON.parse(status.stdout) as { counts: { state: string; keyId: string | null }[] }).counts;
    expect(counts.length).toBeGreaterThan(0);
    expect(counts.every((count) => count.state === 'key' && count.keyId === keyIdOf(fresh))).toBe(true);
    await server.stop();
    // Stopped, the folder's own key file alone no longer opens the rows: the new key has to stay given.
    const refused = await fxgate(['all'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`not given: key ${keyIdOf(fresh)} (`);
  });
});
