/**
 * The key import (src/cli/key-import.ts): the three file forms, the dashboard's words, the
 * refusals (each naming file, line and field), a file imported whole or not at all, re-imports,
 * and a token signed with an imported key's private half accepted by the registry and verifier.
 * The registering half runs on real PostgreSQL and on PGlite.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { importKeyFile, parseKeyImport } from '../../src/cli/key-import.js';
import { keyName } from '../../src/lib/auth/credential-vocabulary.js';
import { signApiToken, verifyApiToken } from '../../src/lib/auth/jwt.js';
import { DEFAULT_JWT_ISSUERS } from '../../src/lib/config.js';
import {
  KeyImportConflictError,
  KeyImportError,
  KeyImportInvalidError,
  type KeyImportProblem,
} from '../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../src/lib/ids.js';
import { KeyRegistry, SANDBOX_CREDIT_LINE_USD } from '../../src/lib/keys/key-registry.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../support/databases.js';

/** A key pair as an integrator holds it; only `publicPem` is ever imported. */
interface Pair {
  readonly privateKey: KeyObject;
  readonly publicPem: string;
}

function newPair(): Pair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** A good record of a new key in a new org; a test overrides single fields. */
function record(
  pair: Pair = newPair(),
  overrides: Record<string, unknown> = {},
): Record<string, unknown> & { name: string; orgId: string } {
  const orgId = newUuid();
  return {
    name: keyName(orgId, newUuid()),
    orgId,
    publicKey: pair.publicPem,
    scopes: ['view'],
    mode: 'live',
    ...overrides,
  };
}

const jsonLines = (...records: unknown[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;

/** The problems a text is refused with (parseKeyImport), or a failure when it was accepted. */
function problemsOf(text: string, file = 'keys.jsonl'): readonly KeyImportProblem[] {
  try {
    parseKeyImport(text, file);
  } catch (error) {
    expect(error).toBeInstanceOf(KeyImportInvalidError);
    return (error as KeyImportInvalidError).problems;
  }
  throw new Error(`accepted ${text}`);
}

let dir: string;
let fileCount = 0;

async function fileWith(text: string, extension = 'jsonl'): Promise<string> {
  fileCount += 1;
  const path = join(dir, `keys-${fileCount}.${extension}`);
  await writeFile(path, text);
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fxgate-key-import-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('reading key records', () => {
  it('reads a single object, an array and JSON lines alike, each record with its line', () => {
    const [a, b, c] = [record(), record(), record()];
    expect(parseKeyImport(JSON.stringify(a, null, 2), 'one.json').map((r) => [r.name, r.line])).toEqual([[a.name, 1]]);
    // A pretty-printed array: each record at the line of its opening brace.
    const array = `\n[\n  ${JSON.stringify(a)},\n${JSON.stringify(b, null, 2)}, ${JSON.stringify(c)}\n]\n`;
    expect(parseKeyImport(array, 'many.json').map((r) => [r.name, r.line])).toEqual([
      [a.name, 3],
      [b.name, 4],
      [c.name, 4 + JSON.stringify(b, null, 2).split('\n').length - 1],
    ]);
    // JSON lines, blank lines and CRLF included, and a byte order mark before the first.
    const lines = `\uFEFF${JSON.stringify(a)}\r\n\r\n${JSON.stringify(b)}\r\n${JSON.stringify(c)}`;
    expect(parseKeyImport(lines, 'lines.jsonl').map((r) => [r.name, r.line])).toEqual([
      [a.name, 1],
      [b.name, 3],
      [c.name, 4],
    ]);
  });

  it("reads fxgate's and the dashboard's scopes in any case, as an array or comma-separated, repeats collapsed", () => {
    const scopesOf = (scopes: unknown) =>
      parseKeyImport(JSON.stringify(record(undefined, { scopes })), 'k.json')[0]!.scopes;
    expect(scopesOf(['View'])).toEqual(['view']);
    // The dashboard's Trade is trading plus the trade history and balances.
    expect(scopesOf(['Trade'])).toEqual(['view', 'trade']);
    expect(scopesOf('View, Trade')).toEqual(['view', 'trade']);
    expect(scopesOf('TRADE,trade,view,View')).toEqual(['view', 'trade']);
    expect(scopesOf(['webhooks', 'Withdraw', 'VIEW'])).toEqual(['view', 'withdraw', 'webhooks']);
    expect(scopesOf(['view', 'trade', 'withdraw', 'webhooks'])).toEqual(['view', 'trade', 'withdraw', 'webhooks']);
  });

  it('reads the mode in any case, normalises the allowlist, and keeps names and org ids in lower case', () => {
    const upper = record(undefined, {
      mode: 'Sandbox',
      ipAllowlist: [' 203.0.113.0/24', '2001:db8::1', '203.0.113.0/24'],
    });
    const text = JSON.stringify({
      ...upper,
      name: upper.name.toUpperCase().replace('ORG/', 'org/').replace('/APIKEY/', '/apiKey/'),
      orgId: upper.orgId.toUpperCase(),
    });
    const [read] = parseKeyImport(text, 'k.json');
    expect(read).toMatchObject({
      name: upper.name,
      orgId: upper.orgId,
      mode: 'sandbox',
      ipAllowlist: ['203.0.113.0/24', '2001:db8::1/128'],
    });
    expect(
      parseKeyImport(
        JSON.stringify(record(undefined, { mode: 'LIVE', ipAllowlist: '10.0.0.0/8, 10.1.2.3' })),
        'k.json',
      )[0],
    ).toMatchObject({
      mode: 'live',
      ipAllowlist: ['10.0.0.0/8', '10.1.2.3/32'],
    });
    expect(parseKeyImport(JSON.stringify(record(undefined, { ipAllowlist: null })), 'k.json')[0]!.ipAllowlist).toEqual(
      [],
    );
  });

  it('refuses a record that carries a private key, saying why and how to export the public key', () => {
    const { privateKey, publicPem } = newPair();
    const withPrivate = record(
      { privateKey, publicPem },
      { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    );
    expect(problemsOf(jsonLines(record(), withPrivate))).toEqual([
      {
        line: 2,
        field: 'privateKey',
        message: expect.stringMatching(/private key never leaves its owner.*openssl pkey -in key\.pem -pubout/),
      },
    ]);
    // The private key in the publicKey field is refused too, never turned into its public half.
    const inPlace = record(undefined, { publicKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() });
    expect(problemsOf(JSON.stringify(inPlace))).toEqual([
      { line: 1, field: 'publicKey', message: expect.stringMatching(/holds a private key/) },
    ]);
  });

  it("refuses a name whose org is not the record's orgId, as a record changed by hand would be", () => {
    const tampered = { ...record(), orgId: newUuid() };
    expect(problemsOf(jsonLines(record(), record(), tampered))).toEqual([
      { line: 3, field: 'orgId', message: expect.stringMatching(/is not the org of the key name/) },
    ]);
  });

  it.each<[string, () => Record<string, unknown>, string, RegExp]>([
    [
      'a P-384 key',
      () =>
        record(undefined, {
          publicKey: generateKeyPairSync('ec', { namedCurve: 'P-384' })
            .publicKey.export({ type: 'spki', format: 'pem' })
            .toString(),
        }),
      'publicKey',
      /secp384r1.*P-256/,
    ],
    [
      'an RSA key',
      () =>
        record(undefined, {
          publicKey: generateKeyPairSync('rsa', { modulusLength: 1024 })
            .publicKey.export({ type: 'spki', format: 'pem' })
            .toString(),
        }),
      'publicKey',
      /an rsa key.*P-256/,
    ],
    [
      'a PKCS#1 public key',
      () =>
        record(undefined, {
          publicKey: generateKeyPairSync('rsa', { modulusLength: 1024 })
            .publicKey.export({ type: 'pkcs1', format: 'pem' })
            .toString(),
        }),
      'publicKey',
      /must be SPKI PEM/,
    ],
    [
      'a public key of garbage',
      () => record(undefined, { publicKey: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' }),
      'publicKey',
      /not a readable public key/,
    ],
    ['no public key', () => record(undefined, { publicKey: undefined }), 'publicKey', /SPKI PEM/],
    [
      'a malformed name',
      () => record(undefined, { name: 'org/x/apiKey/y' }),
      'name',
      /org\/\{orgId\}\/apiKey\/\{keyId\}/,
    ],
    ['an org id that is no UUID', () => record(undefined, { orgId: 'acme' }), 'orgId', /UUID/],
    ['an unknown scope', () => record(undefined, { scopes: ['view', 'admin'] }), 'scopes', /unknown scope "admin"/],
    [
      'a scope named like an object property',
      () => record(undefined, { scopes: 'constructor' }),
      'scopes',
      /unknown scope "constructor"/,
    ],
    ['no scope', () => record(undefined, { scopes: ' , ' }), 'scopes', /at least one scope/],
    ['scopes that are not names', () => record(undefined, { scopes: [1] }), 'scopes', /list of scope names/],
    ['another mode', () => record(undefined, { mode: 'test' }), 'mode', /sandbox or live/],
    [
      'a bad allowlist entry',
      () => record(undefined, { ipAllowlist: ['10.0.0.0/33'] }),
      'ipAllowlist',
      /"10\.0\.0\.0\/33" is not an IPv4 or IPv6 address/,
    ],
    ['a misspelt field', () => record(undefined, { ipAllowList: ['10.0.0.0/8'] }), 'ipAllowList', /unknown field/],
  ])('refuses %s, naming its line and field', (_name, make, field, message) => {
    expect(problemsOf(jsonLines(record(), make()))).toEqual([
      { line: 2, field, message: expect.stringMatching(message) },
    ]);
  });

  it('refuses a key id given twice, even under two orgs', () => {
    const first = record();
    const keyId = first.name.split('/')[3]!;
    const again = record(undefined, {});
    const sameId = { ...again, name: keyName(again.orgId, keyId) };
    expect(problemsOf(jsonLines(first, sameId))).toEqual([
      { line: 2, field: 'name', message: expect.stringMatching(/also on line 1/) },
    ]);
  });

  it('refuses what is no list of key records, naming the line', () => {
    expect(problemsOf('')).toEqual([{ line: null, field: null, message: expect.stringMatching(/empty/) }]);
    expect(problemsOf('[]')).toEqual([{ line: 1, field: null, message: expect.stringMatching(/no key records/) }]);
    expect(problemsOf('"keys"')).toEqual([
      { line: 1, field: null, message: expect.stringMatching(/one JSON object, a JSON array of objects/) },
    ]);
    expect(problemsOf(`[\n${JSON.stringify(record())},\n"x"\n]`)).toEqual([
      { line: 3, field: null, message: expect.stringMatching(/is a JSON object/) },
    ]);
    expect(problemsOf(`[\n${JSON.stringify(record())}\n${JSON.stringify(record())}\n]`)).toEqual([
      { line: 3, field: null, message: expect.stringMatching(/not valid JSON/) },
    ]);
    // A pretty-printed object that is broken: reported as one object, not as lines.
    expect(problemsOf(`{\n  "name": "x",\n  "orgId" "y"\n}`)).toEqual([
      { line: 3, field: null, message: expect.stringMatching(/not valid JSON/) },
    ]);
    expect(problemsOf(`${JSON.stringify(record())}\n${JSON.stringify(record())}\n{"name": \n`)).toEqual([
      { line: 3, field: null, message: expect.stringMatching(/not valid JSON/) },
    ]);
  });

  it('refuses a key repeated in a record, in every form of file, at the line and path of the repeat', () => {
    const good = record();
    // The second mode would make a live key of what another reader takes as sandbox.
    const repeated = JSON.stringify(good).replace(/}$/, ',"mode":"sandbox"}');
    const same = JSON.stringify(good).replace(/}$/, `,"orgId":${JSON.stringify(good.orgId)}}`);
    const message = expect.stringMatching(/appears more than once in the same object/);
    expect(problemsOf(repeated, 'one.json')).toEqual([{ line: 1, field: 'mode', message }]);
    expect(problemsOf(same, 'one.json')).toEqual([{ line: 1, field: 'orgId', message }]);
    expect(problemsOf(`${JSON.stringify(record())}\n${repeated}\n`)).toEqual([{ line: 2, field: 'mode', message }]);
    expect(problemsOf(`[\n${JSON.stringify(record())},\n${same}\n]`, 'many.json')).toEqual([
      { line: 3, field: '[1].orgId', message },
    ]);
    const pretty = `${JSON.stringify(good, null, 2).replace(/\n}$/, ',\n  "scopes": ["view", "trade"]\n}')}`;
    expect(problemsOf(pretty, 'pretty.json')).toEqual([
      { line: pretty.split('\n').length - 1, field: 'scopes', message },
    ]);
    expect(
      problemsOf(JSON.stringify({ ...good, ipAllowlist: [] }).replace(/}$/, ',"__proto__":{}}'), 'one.json'),
    ).toEqual([{ line: 1, field: '__proto__', message: expect.stringMatching(/__proto__/) }]);
  });

  it('names the file, the line and the field in its message, as file:line: field:', () => {
    let caught: unknown;
    try {
      parseKeyImport(jsonLines(record(), record(), record(undefined, { scopes: ['admin'] })), 'legacy/keys.jsonl');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(KeyImportError);
    expect((caught as Error).message).toMatch(
      /^legacy\/keys\.jsonl: nothing imported:\n {2}- legacy\/keys\.jsonl:3: scopes: unknown scope "admin"; scopes are view, trade, withdraw, webhooks/,
    );
  });
});

describe.each(DATABASE_DRIVERS)('importing keys on $driver', ({ create }) => {
  let database: TestDatabase;
  let registry: KeyRegistry;

  beforeAll(async () => {
    database = await create();
    registry = new KeyRegistry(database.db, { cacheTtlMs: 0 });
  });
  afterAll(async () => {
    await database?.drop();
  });

  const keyRow = async (name: string) =>
    (
      await database.db.query<{
        org_id: string;
        scopes: string[];
        mode: string;
        ip_allowlist: string[];
        label: string | null;
      }>('SELECT org_id, scopes, mode, ip_allowlist, label FROM api_keys WHERE name = $1', [name])
    ).rows[0];
  const keyCount = async () =>
    Number((await database.db.query<{ n: string }>('SELECT count(*) AS n FROM api_keys')).rows[0]!.n);
  const orgExists = async (orgId: string) =>
    (await database.db.query('SELECT 1 FROM orgs WHERE id = $1', [orgId])).rowCount === 1;

  it('imports a single object, creating its org with both books as keys create does', async () => {
    const one = record(undefined, { scopes: 'Trade', mode: 'Sandbox', ipAllowlist: ['203.0.113.0/24'] });
    const path = await fileWith(JSON.stringify(one, null, 2), 'json');
    expect(await importKeyFile(database.db, path)).toEqual({
      file: path,
      keys: [{ name: one.name, outcome: 'imported' }],
    });
    expect(await keyRow(one.name)).toEqual({
      org_id: one.orgId,
      scopes: ['view', 'trade'],
      mode: 'sandbox',
      ip_allowlist: ['203.0.113.0/24'],
      label: null,
    });
    const books = await database.db.query<{ environment: string; credit_line_usd: string }>(
      'SELECT environment, credit_line_usd FROM org_environments WHERE org_id = $1 ORDER BY environment',
      [one.orgId],
    );
    expect(books.rows.map((row) => [row.environment, Number(row.credit_line_usd)])).toEqual([
      ['live', 0],
      ['sandbox', Number(SANDBOX_CREDIT_LINE_USD)],
    ]);
  });

  it('imports a JSON array and JSON lines, into an org that exists and orgs that do not', async () => {
    const existing = await registry.createKey({ orgId: newUuid(), scopes: ['view'], mode: 'live' });
    const intoExisting = { ...record(), orgId: existing.orgId, name: keyName(existing.orgId, newUuid()) };
    const [a, b, c] = [
      record(),
      record(undefined, { scopes: ['View'] }),
      record(undefined, { scopes: 'withdraw,webhooks' }),
    ];
    const arrayFile = await fileWith(JSON.stringify([intoExisting, a], null, 2), 'json');
    const linesFile = await fileWith(jsonLines(b, c));
    expect((await importKeyFile(database.db, arrayFile)).keys).toEqual([
      { name: intoExisting.name, outcome: 'imported' },
      { name: a.name, outcome: 'imported' },
    ]);
    expect((await importKeyFile(database.db, linesFile)).keys).toEqual([
      { name: b.name, outcome: 'imported' },
      { name: c.name, outcome: 'imported' },
    ]);
    expect((await keyRow(c.name))?.scopes).toEqual(['withdraw', 'webhooks']);
    expect((await registry.list(existing.orgId)).map((key) => key.name).sort()).toEqual(
      [existing.name, intoExisting.name].sort(),
    );
  });

  it('imports nothing of a JSON-lines file whose line 3 is bad, naming the file, the line and the field', async () => {
    const [a, b] = [record(), record()];
    const bad = record(undefined, { mode: 'staging' });
    const path = await fileWith(jsonLines(a, b, bad, record()));
    const before = await keyCount();
    const error = await importKeyFile(database.db, path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KeyImportInvalidError);
    expect((error as KeyImportError).message).toContain(`${path}:3: mode: must be sandbox or live`);
    expect((error as KeyImportError).problems).toEqual([{ line: 3, field: 'mode', message: expect.any(String) }]);
    expect(await keyCount()).toBe(before);
    expect(await orgExists(a.orgId)).toBe(false);
  });

  it('refuses a file with a private key, and a tampered name, importing none of their keys', async () => {
    const good = record();
    const { privateKey, publicPem } = newPair();
    const withPrivate = record(
      { privateKey, publicPem },
      { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    );
    const tampered = { ...record(), orgId: good.orgId };
    for (const [bad, field] of [
      [withPrivate, 'privateKey'],
      [tampered, 'orgId'],
    ] as const) {
      const path = await fileWith(jsonLines(good, bad));
      await expect(importKeyFile(database.db, path)).rejects.toMatchObject({ problems: [{ line: 2, field }] });
      expect(await keyRow(good.name)).toBeUndefined();
    }
  });

  it('reports a re-import unchanged, however the same record is spelt', async () => {
    const pair = newPair();
    const first = record(pair, {
      scopes: ['view', 'trade'],
      mode: 'live',
      ipAllowlist: ['10.0.0.0/8', '2001:db8::/32'],
    });
    expect((await importKeyFile(database.db, await fileWith(jsonLines(first)))).keys).toEqual([
      { name: first.name, outcome: 'imported' },
    ]);
    const again = {
      ...first,
      scopes: 'Trade',
      mode: 'LIVE',
      ipAllowlist: ['2001:db8::/32', '10.0.0.0/8'],
      publicKey: pair.publicPem.replace(/\n/g, '\r\n'),
    };
    const fresh = record();
    const before = await keyCount();
    expect((await importKeyFile(database.db, await fileWith(jsonLines(again, fresh)))).keys).toEqual([
      { name: first.name, outcome: 'unchanged' },
      { name: fresh.name, outcome: 'imported' },
    ]);
    expect(await keyCount()).toBe(before + 1);
  });

  it('refuses a re-import that differs, naming the key and what differs, and rolls back the rest of the file', async () => {
    const first = record(undefined, { scopes: ['view'] });
    await importKeyFile(database.db, await fileWith(jsonLines(first)));
    const fresh = record();
    for (const [changed, difference] of [
      [{ ...first, publicKey: newPair().publicPem }, /another public key/],
      [{ ...first, scopes: ['view', 'withdraw'] }, /scopes view \(the file: view,withdraw\)/],
      [{ ...first, mode: 'sandbox' }, /mode live \(the file: sandbox\)/],
      [{ ...first, ipAllowlist: ['10.0.0.0/8'] }, /IP allowlist any address \(the file: 10\.0\.0\.0\/8\)/],
    ] as const) {
      const path = await fileWith(jsonLines(fresh, changed));
      const error = await importKeyFile(database.db, path).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(KeyImportConflictError);
      const [problem] = (error as KeyImportConflictError).problems;
      expect(problem).toMatchObject({ line: 2, field: 'name' });
      expect(problem!.message).toContain(`${first.name} is already registered with `);
      expect(problem!.message).toMatch(difference);
      expect(problem!.message).toMatch(/never replaces a registered key/);
      // The first record was registered in the same transaction, and rolled back with it.
      expect(await keyRow(fresh.name)).toBeUndefined();
      expect(await orgExists(fresh.orgId)).toBe(false);
    }
  });

  it('refuses a revoked key, and a key id registered under another name', async () => {
    const revoked = await registry.createKey({ orgId: newUuid(), scopes: ['view'], mode: 'live' });
    await registry.revoke(revoked.name);
    const again = {
      name: revoked.name,
      orgId: revoked.orgId,
      publicKey: revoked.publicKey,
      scopes: ['view'],
      mode: 'live',
    };
    await expect(importKeyFile(database.db, await fileWith(jsonLines(again)))).rejects.toThrow(
      /was revoked at .*does not bring a revoked key back/,
    );

    const live = await registry.createKey({ orgId: newUuid(), scopes: ['view'], mode: 'live' });
    const otherOrg = newUuid();
    const sameId = { ...record(), orgId: otherOrg, name: keyName(otherOrg, live.name.split('/')[3]!) };
    await expect(importKeyFile(database.db, await fileWith(jsonLines(sameId)))).rejects.toThrow(
      `is already registered as ${live.name}`,
    );
  });

  it('a token signed with the private half of an imported key is accepted by the registry and the verifier', async () => {
    const pair = newPair();
    // Only the public half goes into the file, written in the dashboard's words.
    const legacy = record(pair, { scopes: 'Trade', mode: 'Live' });
    await importKeyFile(database.db, await fileWith(JSON.stringify(legacy)));
    const active = await registry.findActive(legacy.name);
    expect(active?.record).toMatchObject({
      name: legacy.name,
      orgId: legacy.orgId,
      scopes: ['view', 'trade'],
      mode: 'live',
      revokedAt: null,
    });

    // What the integrator's client already sends: its own name, the legacy service's issuer, 120 s.
    const { token, nonce } = await signApiToken({
      privateKey: pair.privateKey,
      keyName: legacy.name,
      issuer: 'openfx',
      lifetimeSeconds: 120,
    });
    const verified = await verifyApiToken(token, {
      issuers: DEFAULT_JWT_ISSUERS,
      maxLifetimeSeconds: 120,
      resolveKey: async (name) => (await registry.findActive(name))?.publicKey ?? null,
    });
    expect(verified).toMatchObject({ keyName: legacy.name, nonce });

    // Another private key under the same name is refused.
    const forged = await signApiToken({
      privateKey: newPair().privateKey,
      keyName: legacy.name,
      issuer: 'openfx',
      lifetimeSeconds: 120,
    });
    await expect(
      verifyApiToken(forged.token, {
        issuers: DEFAULT_JWT_ISSUERS,
        maxLifetimeSeconds: 120,
        resolveKey: async (name) => (await registry.findActive(name))?.publicKey ?? null,
      }),
    ).rejects.toMatchObject({ failure: 'SIGNATURE_INVALID' });
  });

  it('names a file it cannot read', async () => {
    const missing = join(dir, 'missing.jsonl');
    await expect(importKeyFile(database.db, missing)).rejects.toThrow(
      new RegExp(`^${missing}: nothing imported:\\n  - ${missing}: cannot read the file`),
    );
  });
});
