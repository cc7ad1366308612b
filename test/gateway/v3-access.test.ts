/**
 * The gateway's way to v3 as the CLI builds it (src/gateway/v3-access.ts): none without an
 * upstream URL, a refused URL refused, and as configured a client that signs with the key file of
 * the org and mode and reaches a real v3 through the pool, which the caller closes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { credentialPath, KeyDirectoryCredentials } from '../../src/gateway/upstream/signing-credentials.js';
import { gatewayCredentials, openV3Access, type V3AccessConfig } from '../../src/gateway/v3-access.js';
import { WebhookRegistrar } from '../../src/gateway/webhooks/registrations.js';
import { InvalidUpstreamError } from '../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../src/lib/ids.js';
import { writeKeyFile } from '../../src/lib/keys/key-file.js';
import { TEST_ISSUER, V3Harness } from '../support/v3-harness.js';

let harness: V3Harness;
let dir: string;

beforeAll(async () => {
  harness = await V3Harness.start();
  dir = await mkdtemp(join(tmpdir(), 'fxgate-v3-access-'));
});
afterAll(async () => {
  await harness?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const configOf = (upstreamUrl: string | undefined): V3AccessConfig => ({
  FXGATE_UPSTREAM_URL: upstreamUrl,
  FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS: 2_000,
  FXGATE_UPSTREAM_TIMEOUT_MS: 5_000,
  FXGATE_UPSTREAM_DEADLINE_MS: 10_000,
  FXGATE_JWT_ISSUER: [TEST_ISSUER],
});

describe('openV3Access', () => {
  it('is none without FXGATE_UPSTREAM_URL, and refuses an upstream that is not an origin', () => {
    expect(openV3Access(configOf(undefined), dir)).toBeNull();
    expect(() => openV3Access(configOf('ftp://127.0.0.1'), dir)).toThrow(InvalidUpstreamError);
  });

  it("reaches v3 signed with the org and mode's key file, builds the registrar on that client, and closes its pool", async () => {
    const orgId = newUuid();
    await writeKeyFile(
      credentialPath(dir, orgId, 'sandbox'),
      await harness.registry.createKey({ orgId, mode: 'sandbox', scopes: ['view'] }),
    );
    const access = openV3Access(configOf(harness.baseUrl), dir)!;
    try {
      const answer = await access.client.request({
        orgId,
        mode: 'sandbox',
        method: 'GET',
        pathAndQuery: '/v3/fx/pairs',
      });
      expect(answer.status).toBe(200);
      expect(
        access.webhookRegistrar({ db: harness.db, keyring: harness.keyring, v3EventTypes: ['trade.executed'] }),
      ).toBeInstanceOf(WebhookRegistrar);
    } finally {
      await access.close();
    }
    expect(access.pool.closed).toBe(true);
  });
});

describe('gatewayCredentials', () => {
  it('are the key directory, signing as the first configured issuer', () => {
    expect(gatewayCredentials({ FXGATE_JWT_ISSUER: [TEST_ISSUER, 'other'] }, dir)).toBeInstanceOf(
      KeyDirectoryCredentials,
    );
  });
});
