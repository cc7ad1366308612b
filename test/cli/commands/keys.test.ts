import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { GATEWAY_CREDENTIAL_NOTE } from '../../../src/cli/key-table.js';
import { PROVISIONED_LABEL, ProvisioningCredentials } from '../../../src/gateway/upstream/signing-credentials.js';
import { keyFileSchema } from '../../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { fxgate } from '../in-process-cli.js';

const ORG = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';

describe('fxgate keys on PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-keys-'));
    env = { DATABASE_URL: database.url!, FXGATE_DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('creates, lists and revokes a key', async () => {
    const created = await fxgate(
      [
        'keys',
        'create',
        '--org',
        ORG.toUpperCase(),
        '--mode',
        'live',
        '--scopes',
        'trade,view',
        '--ip',
        '203.0.113.0/24',
        '--ip',
        '2001:db8::1',
        '--label',
        'ci',
      ],
      env,
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const name = /^name: (\S+)$/m.exec(created.stdout)![1]!;
    const path = /^file: (\S+)$/m.exec(created.stdout)![1]!;
    expect(name).toMatch(new RegExp(`^org/${ORG}/apiKey/[0-9a-f-]{36}$`));
    expect(path).toBe(join(dataDir, 'keys', `${name.split('/')[3]}.json`));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const file = keyFileSchema.parse(JSON.parse(await readFile(path, 'utf8')));
    expect(file).toMatchObject({ name, orgId: ORG, mode: 'live', scopes: ['view', 'trade'] });

    const { rows } = await database.db.query<{ ip_allowlist: string[]; label: string }>(
      'SELECT ip_allowlist, label FROM api_keys WHERE name = $1',
      [name],
    );
    expect(rows).toEqual([{ ip_allowlist: ['203.0.113.0/24', '2001:db8::1/128'], label: 'ci' }]);

    const listed = await fxgate(['keys', 'list', '--org', ORG], env);
    expect(listed.code).toBe(0);
    const [header, row, ...rest] = listed.stdout.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'MODE', 'SCOPES', 'IP ALLOWLIST', 'CREATED', 'REVOKED', 'LABEL']);
    expect(rest).toEqual([]);
    expect(row!.split(/\s{2,}/)).toEqual([
      name,
      'live',
      'view,trade',
      '203.0.113.0/24,2001:db8::1/128',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      '-',
      'ci',
    ]);

    const revoked = await fxgate(['keys', 'revoke', name], env);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked: ${name}\n` });
    const after = await fxgate(['keys', 'list'], env);
    expect(after.stdout).toMatch(
      new RegExp(`${name}.*\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+ci$`, 'm'),
    );

    const again = await fxgate(['keys', 'revoke', name], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no active key named ${name}`);
  });

  it("shows each key's label and marks the gateway's own credential, with a footnote saying what it is", async () => {
    const org = randomUUID();
    const registry = new KeyRegistry(database.db, { cacheTtlMs: 0 });
    const gateway = await new ProvisioningCredentials({
      registry,
      dir: join(dataDir, 'upstream'),
      issuer: 'fxgate',
    }).signerFor(org, 'sandbox');
    const created = await fxgate(
      ['keys', 'create', '--org', org, '--mode', 'sandbox', '--scopes', 'view', '--label', 'reporting job'],
      env,
    );
    expect(created.code).toBe(0);
    const unlabelled = await fxgate(['keys', 'create', '--org', org, '--mode', 'sandbox', '--scopes', 'view'], env);
    expect(unlabelled.code).toBe(0);

    const listed = await fxgate(['keys', 'list', '--org', org], env);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual(['', GATEWAY_CREDENTIAL_NOTE]);
    expect(GATEWAY_CREDENTIAL_NOTE).toMatch(
      /^\* the gateway's own v3 credential .*used by the gateway to call the core; do not revoke/,
    );
    const labels = new Map(lines.slice(1, -2).map((line) => [line.split(/\s{2,}/)[0], line.split(/\s{2,}/).at(-1)]));
    expect(labels).toEqual(
      new Map([
        [gateway.keyName, `${PROVISIONED_LABEL} *`],
        [/^name: (\S+)$/m.exec(created.stdout)![1], 'reporting job'],
        [/^name: (\S+)$/m.exec(unlabelled.stdout)![1], '-'],
      ]),
    );

    // Without a gateway credential in the list, no footnote.
    const others = await fxgate(['keys', 'list', '--org', ORG], env);
    expect(others.stdout).not.toContain(GATEWAY_CREDENTIAL_NOTE);
  });

  it("refuses the gateway credential's label for a key of one's own, with exit 2", async () => {
    const refused = await fxgate(
      ['keys', 'create', '--org', ORG, '--mode', 'sandbox', '--scopes', 'view', '--label', PROVISIONED_LABEL],
      env,
    );
    expect(refused).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `fxgate: the label "${PROVISIONED_LABEL}" marks the gateway's own credentials; choose another --label\n`,
    });
  });

  it('writes the key file where --out says, and never over an existing file', async () => {
    const out = join(dataDir, 'mine.json');
    const created = await fxgate(
      ['keys', 'create', '--org', ORG, '--mode', 'sandbox', '--scopes', 'view', '--out', out],
      env,
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(`file: ${out}\n`);
    const before = await database.db.query('SELECT name FROM api_keys');

    const refused = await fxgate(
      ['keys', 'create', '--org', ORG, '--mode', 'sandbox', '--scopes', 'view', '--out', out],
      env,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${out} already exists`);
    expect((await database.db.query('SELECT name FROM api_keys')).rowCount).toBe(before.rowCount);
  });

  // Each parser is tested in arguments.test.ts; these check that the CLI turns a bad value into exit 2.
  it.each([
    [
      ['--org', 'not-a-uuid', '--mode', 'live', '--scopes', 'view'],
      /--org <uuid>.*'not-a-uuid' is invalid\. An org id is a UUID/,
    ],
    [
      ['--org', ORG, '--mode', 'live', '--scopes', 'view', '--ip', '10.0.0.0/33'],
      /--ip <cidr>.*'10\.0\.0\.0\/33' is invalid/,
    ],
    [['--mode', 'live', '--scopes', 'view'], /required option '--org <uuid>' not specified/],
  ])('refuses bad input with exit 2: %j', async (args, message) => {
    const result = await fxgate(['keys', 'create', ...args], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('imports a public key under its existing name; a second run reports it unchanged and refuses a bad file', async () => {
    const orgId = randomUUID();
    const name = `org/${orgId}/apiKey/${randomUUID()}`;
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const file = join(dataDir, 'legacy-keys.jsonl');
    const record = {
      name,
      orgId: orgId.toUpperCase(),
      publicKey: publicKey.export({ type: 'spki', format: 'pem' }),
      scopes: 'View,Trade',
      mode: 'Sandbox',
    };
    await writeFile(file, `${JSON.stringify(record)}\n`);

    const imported = await fxgate(['keys', 'import', file], env);
    expect(imported).toMatchObject({
      code: 0,
      stderr: '',
      stdout: `imported: ${name}\nsummary: 1 imported, 0 unchanged, 0 files refused\n`,
    });
    // Again, beside a bad file: the first is unchanged, the second a usage error naming its line and field.
    const bad = join(dataDir, 'bad-keys.jsonl');
    await writeFile(
      bad,
      `${JSON.stringify({ ...record, name: `org/${orgId}/apiKey/${randomUUID()}`, mode: 'staging' })}\n`,
    );
    const refused = await fxgate(['keys', 'import', file, bad], env);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe(`unchanged: ${name}\nsummary: 0 imported, 1 unchanged, 1 file refused\n`);
    expect(refused.stderr).toContain(`${bad}:1: mode: must be sandbox or live`);
    const { rows } = await database.db.query<{ scopes: string[]; mode: string }>(
      'SELECT scopes, mode FROM api_keys WHERE org_id = $1',
      [orgId],
    );
    expect(rows).toEqual([{ scopes: ['view', 'trade'], mode: 'sandbox' }]);
  });

  it('refuses a malformed key name to revoke with exit 2', async () => {
    const result = await fxgate(['keys', 'revoke', 'org/x/apiKey/y'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('A key name is org/{orgId}/apiKey/{keyId}');
  });

  it('says so when an --out folder cannot be written, after registering the key', async () => {
    const blocker = join(dataDir, 'a-file');
    await writeFile(blocker, 'x');
    const result = await fxgate(
      ['keys', 'create', '--org', ORG, '--mode', 'live', '--scopes', 'view', '--out', join(blocker, 'k.json')],
      env,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /key org\/\S+ is registered, but writing .* failed: .*revoke it with `fxgate keys revoke org\//,
    );
  });
});
