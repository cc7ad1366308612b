import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { newUuid } from '../../../src/lib/ids.js';
import { loadKey } from '../../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { generateSealingKey } from '../../../src/lib/secrets/sealing-keys.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { expectRawV3Error, rawExchange } from '../../support/raw-http.js';
import { makeTestCertificates, type TestCertificates } from '../../support/test-certificates.js';
import { testRedisEnv } from '../../support/test-run.js';
import { ThrowawaySentinelSet } from '../../support/throwaway-sentinel.js';
import { TEST_ISSUER } from '../../support/v3-harness.js';
import { killAllCliProcesses, startCli } from '../cli-process.js';

describe('fxgate core on PostgreSQL and Redis', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestPostgres();
  });
  afterAll(async () => {
    await killAllCliProcesses();
    await database?.drop();
  });

  it('serves v3 on HOST:PORT with the configured issuer, and stops cleanly on SIGINT', async () => {
    const core = startCli(['core'], {
      DATABASE_URL: database.url!,
      FXGATE_SECRETS_KEY: generateSealingKey(),
      ...testRedisEnv(),
      HOST: '127.0.0.1',
      PORT: '0',
      FXGATE_JWT_ISSUER: 'acme-fx',
      FXGATE_REQUEST_TIMEOUT_MS: '1500',
    });
    const [, url] = await core.waitFor(/^fxgate core: listening on (http:\/\/\S+)$/m);
    const registry = new KeyRegistry(database.db);
    const key = loadKey(await registry.createKey({ orgId: newUuid(), scopes: ['view'], mode: 'live' }));
    const signer = new V3RequestSigner(key, { issuer: 'acme-fx' });
    const response = await request(`${url}/v3/fx/pairs`, {
      headers: await signer.headers({ method: 'GET', pathAndQuery: '/v3/fx/pairs' }),
    });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    expect((await request(`${url}/readyz`)).statusCode).toBe(200);
    // FXGATE_REQUEST_TIMEOUT_MS bounds a request's arrival; what the parser refuses is the v3 envelope.
    const [silent, oversized] = await Promise.all([
      rawExchange(url!, { steps: [] }),
      rawExchange(url!, {
        steps: [`GET /v3/fx/pairs HTTP/1.1\r\nHost: fxgate\r\nX-Filler: ${'a'.repeat(17 * 1024)}\r\n\r\n`],
      }),
    ]);
    expectRawV3Error(silent, 'REQUEST_TIMEOUT');
    expect(silent.answeredAfterMs).toBeGreaterThanOrEqual(1_480);
    expect(silent.answeredAfterMs).toBeLessThanOrEqual(2_500);
    expectRawV3Error(oversized, 'REQUEST_HEADERS_TOO_LARGE');
    expect((await core.stop('SIGINT')).code).toBe(0);
  });
});

describe('fxgate core on Redis through Sentinel over TLS', () => {
  const password = 'data-password';
  const sentinelPassword = 'sentinel-password';
  let database: TestDatabase;
  let certificates: TestCertificates;
  let set: ThrowawaySentinelSet;
  beforeAll(async () => {
    database = await createTestPostgres();
    certificates = await makeTestCertificates();
    set = await ThrowawaySentinelSet.start({ tls: certificates, password, sentinelPassword });
  });
  afterAll(async () => {
    try {
      await killAllCliProcesses();
      await database?.drop();
    } finally {
      await set?.stop();
      await certificates?.remove();
    }
  });

  it('reaches the primary the Sentinels name, both over TLS with the certificates checked, and serves writes', async () => {
    const core = startCli(['core'], {
      DATABASE_URL: database.url!,
      FXGATE_SECRETS_KEY: generateSealingKey(),
      FXGATE_REDIS_SENTINELS: set.sentinelList,
      FXGATE_REDIS_SENTINEL_NAME: set.masterName,
      FXGATE_REDIS_SENTINEL_PASSWORD: sentinelPassword,
      FXGATE_REDIS_PASSWORD: password,
      FXGATE_REDIS_TLS: 'on',
      // The test authority, as an operator adds a private CA: the certificates are checked against it.
      NODE_EXTRA_CA_CERTS: certificates.caFile,
      HOST: '127.0.0.1',
      PORT: '0',
    });
    const [, url] = await core.waitFor(/^fxgate core: listening on (http:\/\/\S+)$/m);
    const registry = new KeyRegistry(database.db);
    const key = loadKey(await registry.createKey({ orgId: newUuid(), scopes: ['view', 'trade'], mode: 'sandbox' }));
    const body = JSON.stringify({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10.00', amountCurrency: 'EUR' });
    const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
    const idempotencyKey = 'tls-quote-1';
    const response = await request(`${url}/v3/fx/quotes`, {
      method: 'POST',
      body,
      headers: {
        ...(await signer.headers({ method: 'POST', pathAndQuery: '/v3/fx/quotes', body, idempotencyKey })),
        'idempotency-key': idempotencyKey,
        'content-type': 'application/json',
      },
    });
    // A write needs the store: its idempotency record is on the primary, reached over TLS.
    expect(response.statusCode, await response.body.text()).toBe(200);
    const records = await set.onNode(await set.primaryPort(), (client) => client.keys(`idem:*:${idempotencyKey}`));
    expect(records).toHaveLength(1);
    expect(core.stderr).not.toMatch(/does not answer yet/);
    expect((await core.stop('SIGINT')).code).toBe(0);
  });
});
