/**
 * openStore from the configuration: the in-process store, Redis at REDIS_URL, or the primary the
 * Sentinels name, on real processes (test/support/throwaway-sentinel.ts) with a data user and
 * password and a Sentinel password, as a deployment gives them; FXGATE_REDIS_KEY_PREFIX on the
 * test Redis.
 */
import { randomUUID } from 'node:crypto';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Closers } from '../../src/cli/closers.js';
import { openStore, redisEndpointOf } from '../../src/cli/runtime.js';
import { MemoryStore } from '../../src/cli/store/memory-store.js';
import { NONCE_EPOCH_KEY, RedisStore } from '../../src/cli/store/redis-store.js';
import { loadConfig } from '../../src/lib/config.js';
import { StoreUnavailableError } from '../../src/lib/errors/internal-errors.js';
import { freePort } from '../support/local-processes.js';
import { testServices } from '../support/services.js';
import { makeTestCertificates, type TestCertificates } from '../support/test-certificates.js';
import { testKeyPrefix } from '../support/test-run.js';
import { ThrowawaySentinelSet } from '../support/throwaway-sentinel.js';

/** The user with exactly the permissions docs/operations.md#redis-sentinel lists. */
const USER = {
  name: 'fxgate-app',
  password: 'app-password',
  rules: '~* +@read +@write +@scripting -@dangerous +info +ping +time',
};
const SENTINEL_PASSWORD = 'sentinel-password';

describe('redisEndpointOf', () => {
  it('is null without Redis, the URL with REDIS_URL, and the group with FXGATE_REDIS_SENTINELS', () => {
    expect(redisEndpointOf(loadConfig({}))).toBeNull();
    expect(redisEndpointOf(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }))).toEqual({
      url: 'redis://127.0.0.1:6379',
    });
    expect(
      redisEndpointOf(
        loadConfig({
          FXGATE_REDIS_SENTINELS: '127.0.0.1:26379',
          FXGATE_REDIS_SENTINEL_NAME: 'fxgate',
          FXGATE_REDIS_PASSWORD: 'secret',
        }),
      ),
    ).toEqual({
      sentinel: {
        sentinels: [{ host: '127.0.0.1', port: 26379 }],
        name: 'fxgate',
        sentinelPassword: undefined,
        username: undefined,
        password: 'secret',
        tls: false,
      },
    });
  });
});

describe('openStore', () => {
  let set: ThrowawaySentinelSet;

  beforeAll(async () => {
    set = await ThrowawaySentinelSet.start({
      user: USER,
      password: 'default-password',
      sentinelPassword: SENTINEL_PASSWORD,
    });
  });
  afterAll(async () => {
    await set?.stop();
  });

  it('opens the in-process store without Redis, and closes it with the closers', async () => {
    const closers = new Closers();
    const store = await openStore(loadConfig({}), closers, () => {});
    expect(store).toBeInstanceOf(MemoryStore);
    await closers.closeAll();
    await expect(store.ping()).rejects.toThrow();
  });

  it('reaches the primary through Sentinel as the configured user, its marker made at opening', async () => {
    const closers = new Closers();
    const warnings: string[] = [];
    const store = await openStore(
      loadConfig({
        FXGATE_REDIS_SENTINELS: set.sentinelList,
        FXGATE_REDIS_SENTINEL_NAME: set.masterName,
        FXGATE_REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
        FXGATE_REDIS_USERNAME: USER.name,
        FXGATE_REDIS_PASSWORD: USER.password,
      }),
      closers,
      (line) => warnings.push(line),
    );
    try {
      expect(warnings).toEqual([]);
      expect(store).toBeInstanceOf(RedisStore);
      const nonce = `nonce:{runtime}:${randomUUID()}`;
      const claim = await store.claimNonce(nonce, 10_000);
      expect(claim.fresh).toBe(true);
      await set.onNode(await set.primaryPort(), async (client) => {
        // The store's own connection is the configured user's, on the primary.
        const clients = await client.call('CLIENT', 'LIST');
        expect(String(clients)).toMatch(new RegExp(`user=${USER.name}\\b`));
        await expect(client.get(NONCE_EPOCH_KEY)).resolves.toBe(String(claim.epochMs));
        await expect(client.exists(nonce)).resolves.toBe(1);
      });
    } finally {
      await closers.closeAll();
    }
  });

  it('starts all the same when no Sentinel answers, and says which Redis through which setting, without a password', async () => {
    const closers = new Closers();
    const warnings: string[] = [];
    const port = await freePort();
    const store = await openStore(
      loadConfig({
        FXGATE_REDIS_SENTINELS: `127.0.0.1:${port}`,
        FXGATE_REDIS_SENTINEL_NAME: 'fxgate',
        FXGATE_REDIS_PASSWORD: 'data-secret',
      }),
      closers,
      (line) => warnings.push(line),
    );
    try {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        new RegExp(
          `^fxgate: warning: Redis \\(FXGATE_REDIS_SENTINELS: the primary of fxgate \\(Sentinels 127\\.0\\.0\\.1:${port}\\)\\) does not answer yet: `,
        ),
      );
      expect(warnings[0]).not.toContain('data-secret');
      await expect(store.ping()).rejects.toThrow(/unavailable|unreachable|not ready/i);
    } finally {
      await closers.closeAll();
    }
  });
});

describe('openStore with FXGATE_REDIS_KEY_PREFIX', () => {
  it('writes every key under the prefix on the test Redis, and nothing outside it', async () => {
    const prefix = testKeyPrefix('runtime');
    const closers = new Closers();
    const store = await openStore(
      loadConfig({ REDIS_URL: testServices().redisUrl, FXGATE_REDIS_KEY_PREFIX: prefix }),
      closers,
      () => {},
    );
    const admin = new Redis(testServices().redisUrl);
    try {
      const nonce = `nonce:{runtime}:${randomUUID()}`;
      expect((await store.claimNonce(nonce, 10_000)).fresh).toBe(true);
      expect(await admin.exists(`${prefix}${nonce}`, `${prefix}${NONCE_EPOCH_KEY}`)).toBe(2);
      expect(await admin.exists(nonce)).toBe(0);
    } finally {
      await closers.closeAll();
      await admin.quit();
    }
  });
});

describe('openStore with FXGATE_REDIS_TLS=on', () => {
  let certificates: TestCertificates;
  let set: ThrowawaySentinelSet;
  beforeAll(async () => {
    certificates = await makeTestCertificates();
    set = await ThrowawaySentinelSet.start({ tls: certificates });
  });
  afterAll(async () => {
    try {
      await set?.stop();
    } finally {
      await certificates?.remove();
    }
  });

  // The same set is reached once its CA is added (NODE_EXTRA_CA_CERTS): test/cli/commands/core.test.ts.
  it("checks the Sentinels' certificates against the system's CAs: a private CA's are refused", async () => {
    const closers = new Closers();
    const warnings: string[] = [];
    const store = await openStore(
      loadConfig({
        FXGATE_REDIS_SENTINELS: set.sentinelList,
        FXGATE_REDIS_SENTINEL_NAME: set.masterName,
        FXGATE_REDIS_TLS: 'on',
      }),
      closers,
      (line) => warnings.push(line),
    );
    try {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/does not answer yet: Redis is unreachable: All sentinels are unreachable/);
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await closers.closeAll();
    }
  });
});
