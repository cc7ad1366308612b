import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  credentialPath,
  KeyDirectoryCredentials,
  PROVISIONED_LABEL,
  ProvisioningCredentials,
} from '../../../src/gateway/upstream/signing-credentials.js';
import { UpstreamCredentialError } from '../../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../../src/lib/ids.js';
import { writeKeyFile } from '../../../src/lib/keys/key-file.js';
import { TEST_ISSUER, V3Harness } from '../../support/v3-harness.js';

let harness: V3Harness;
let dir: string;

beforeAll(async () => {
  harness = await V3Harness.start();
  dir = await mkdtemp(join(tmpdir(), 'fxgate-credentials-'));
});
afterAll(async () => {
  await harness?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function provisioning(): ProvisioningCredentials {
  return new ProvisioningCredentials({ registry: harness.registry, dir, issuer: TEST_ISSUER });
}

describe('ProvisioningCredentials', () => {
  it('creates one key per org and mode under 10 concurrent first uses, and writes it 0600', async () => {
    const orgId = newUuid();
    const credentials = provisioning();
    const signers = await Promise.all(Array.from({ length: 10 }, () => credentials.signerFor(orgId, 'sandbox')));
    expect(new Set(signers.map((s) => s.keyName)).size).toBe(1);
    const keys = await harness.registry.list(orgId);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({
      name: signers[0]!.keyName,
      mode: 'sandbox',
      scopes: ['view', 'trade', 'withdraw', 'webhooks'],
      label: PROVISIONED_LABEL,
      revokedAt: null,
    });
    const path = credentialPath(dir, orgId, 'sandbox');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
      name: signers[0]!.keyName,
      orgId,
      mode: 'sandbox',
    });
  });

  it('keeps sandbox and live apart', async () => {
    const orgId = newUuid();
    const credentials = provisioning();
    const [sandbox, live] = await Promise.all([
      credentials.signerFor(orgId, 'sandbox'),
      credentials.signerFor(orgId, 'live'),
    ]);
    expect(sandbox.keyName).not.toBe(live.keyName);
    const keys = await harness.registry.list(orgId);
    expect(keys.map((k) => k.mode).sort()).toEqual(['live', 'sandbox']);
  });

  it('reuses the key file across instances (a restart)', async () => {
    const orgId = newUuid();
    const first = await provisioning().signerFor(orgId, 'live');
    const again = await provisioning().signerFor(orgId, 'live');
    expect(again.keyName).toBe(first.keyName);
    expect(await harness.registry.list(orgId)).toHaveLength(1);
  });

  it('replaces a revoked key, once, and rewrites the file', async () => {
    const orgId = newUuid();
    const credentials = provisioning();
    const first = await credentials.signerFor(orgId, 'sandbox');
    expect(await harness.registry.revoke(first.keyName)).toBe(true);
    const replaced = await Promise.all(Array.from({ length: 10 }, () => credentials.signerFor(orgId, 'sandbox')));
    expect(new Set(replaced.map((s) => s.keyName)).size).toBe(1);
    expect(replaced[0]!.keyName).not.toBe(first.keyName);
    const keys = await harness.registry.list(orgId);
    expect(keys).toHaveLength(2);
    expect(keys.filter((k) => k.revokedAt === null).map((k) => k.name)).toEqual([replaced[0]!.keyName]);
    expect(JSON.parse(await readFile(credentialPath(dir, orgId, 'sandbox'), 'utf8')).name).toBe(replaced[0]!.keyName);
    // A fresh instance finds the new file and keeps it.
    expect((await provisioning().signerFor(orgId, 'sandbox')).keyName).toBe(replaced[0]!.keyName);
    expect(await harness.registry.list(orgId)).toHaveLength(2);
  });

  it('replaces a file whose key the registry does not know', async () => {
    const orgId = newUuid();
    const stranger = await harness.registry.createKey({ orgId, mode: 'sandbox', scopes: ['view'] });
    await harness.registry.revoke(stranger.name);
    await writeKeyFile(credentialPath(dir, orgId, 'sandbox'), stranger);
    const signer = await provisioning().signerFor(orgId, 'sandbox');
    expect(signer.keyName).not.toBe(stranger.name);
  });

  it('replaces, and then revokes, a key provisioned before the gateway needed the webhooks scope', async () => {
    const orgId = newUuid();
    const earlier = await harness.registry.createKey({
      orgId,
      mode: 'live',
      scopes: ['view', 'trade', 'withdraw'],
      label: PROVISIONED_LABEL,
    });
    await writeKeyFile(credentialPath(dir, orgId, 'live'), earlier);
    const signer = await provisioning().signerFor(orgId, 'live');
    expect(signer.keyName).not.toBe(earlier.name);
    const keys = await harness.registry.list(orgId);
    expect(keys.map((key) => [key.name, key.scopes, key.revokedAt === null])).toEqual(
      expect.arrayContaining([
        [earlier.name, ['view', 'trade', 'withdraw'], false],
        [signer.keyName, ['view', 'trade', 'withdraw', 'webhooks'], true],
      ]),
    );
    expect(JSON.parse(await readFile(credentialPath(dir, orgId, 'live'), 'utf8')).name).toBe(signer.keyName);
    // Kept from then on.
    expect((await provisioning().signerFor(orgId, 'live')).keyName).toBe(signer.keyName);
  });
});

describe('KeyDirectoryCredentials', () => {
  it('signs with an operator-provisioned file, imported once', async () => {
    const orgId = newUuid();
    const file = await harness.registry.createKey({ orgId, mode: 'live', scopes: ['view', 'trade'] });
    await writeKeyFile(credentialPath(dir, orgId, 'live'), file);
    const credentials = new KeyDirectoryCredentials(dir, TEST_ISSUER);
    const [a, b] = await Promise.all([credentials.signerFor(orgId, 'live'), credentials.signerFor(orgId, 'live')]);
    expect(a).toBe(b);
    expect(a.keyName).toBe(file.name);
    const headers = await a.headers({ method: 'GET', pathAndQuery: '/v3/fx/pairs' });
    expect(headers.authorization).toMatch(/^Bearer /);
    expect(headers['x-request-signature']).toBeTruthy();
  });

  it('reports a missing file with a stable code, and picks the file up once provisioned', async () => {
    const orgId = newUuid();
    const credentials = new KeyDirectoryCredentials(dir, TEST_ISSUER);
    const error = await credentials.signerFor(orgId, 'sandbox').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamCredentialError);
    expect(error).toMatchObject({ code: 'FXGATE_UPSTREAM_CREDENTIAL_MISSING', orgId, mode: 'sandbox' });
    const file = await harness.registry.createKey({ orgId, mode: 'sandbox', scopes: ['view'] });
    await writeKeyFile(credentialPath(dir, orgId, 'sandbox'), file);
    expect((await credentials.signerFor(orgId, 'sandbox')).keyName).toBe(file.name);
  });

  it('refuses a file of another org or mode, a malformed file, and a bad org id', async () => {
    const credentials = new KeyDirectoryCredentials(dir, TEST_ISSUER);
    const orgId = newUuid();
    const otherMode = await harness.registry.createKey({ orgId, mode: 'sandbox', scopes: ['view'] });
    await writeKeyFile(credentialPath(dir, orgId, 'live'), otherMode);
    await expect(credentials.signerFor(orgId, 'live')).rejects.toMatchObject({
      code: 'FXGATE_UPSTREAM_CREDENTIAL_INVALID',
    });

    const garbled = newUuid();
    await writeFile(credentialPath(dir, garbled, 'sandbox'), '{"name": 1}');
    await expect(credentials.signerFor(garbled, 'sandbox')).rejects.toMatchObject({
      code: 'FXGATE_UPSTREAM_CREDENTIAL_INVALID',
    });

    await expect(credentials.signerFor('../../etc/passwd', 'sandbox')).rejects.toMatchObject({
      code: 'FXGATE_UPSTREAM_CREDENTIAL_BAD_REQUEST',
    });
  });
});
