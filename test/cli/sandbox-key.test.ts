import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensureSandboxKey } from '../../src/cli/sandbox-key.js';
import { readKeyFile } from '../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import { createTestPostgres, type TestDatabase } from '../support/databases.js';

describe('ensureSandboxKey', () => {
  let database: TestDatabase;
  let registry: KeyRegistry;
  let dataDir: string;
  beforeAll(async () => {
    database = await createTestPostgres();
    registry = new KeyRegistry(database.db, { cacheTtlMs: 0 });
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-sandbox-'));
  });
  afterAll(async () => {
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('creates a sandbox org and an all-scope sandbox key once, then reuses them', async () => {
    const first = await ensureSandboxKey(dataDir, registry);
    expect(first.created).toBe(true);
    expect(first.path).toBe(join(dataDir, 'keys', `${first.orgId}.json`));
    expect((await stat(first.path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(dataDir, 'sandbox.json'), 'utf8'))).toEqual({ orgId: first.orgId });
    const { file } = await readKeyFile(first.path);
    expect(file).toMatchObject({
      name: first.keyName,
      orgId: first.orgId,
      mode: 'sandbox',
      scopes: ['view', 'trade', 'withdraw', 'webhooks'],
    });

    const second = await ensureSandboxKey(dataDir, registry);
    expect(second).toEqual({ ...first, created: false });
  });

  it('replaces the key of the same org when the recorded one was revoked', async () => {
    const before = await ensureSandboxKey(dataDir, registry);
    await registry.revoke(before.keyName);
    const after = await ensureSandboxKey(dataDir, registry);
    expect(after).toMatchObject({ orgId: before.orgId, path: before.path, created: true });
    expect(after.keyName).not.toBe(before.keyName);
    expect((await readKeyFile(after.path)).file.name).toBe(after.keyName);
  });
});
