import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { newUuid } from '../../../src/lib/ids.js';
import { loadKey } from '../../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { generateSealingKey } from '../../../src/lib/secrets/sealing-keys.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { expectRawV3Error, rawExchange } from '../../support/raw-http.js';
import { testServices } from '../../support/services.js';
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
      REDIS_URL: testServices().redisUrl,
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
