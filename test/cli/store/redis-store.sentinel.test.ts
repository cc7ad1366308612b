/**
 * The Redis store through Sentinel, on real processes (test/support/throwaway-sentinel.ts): a
 * primary, a replica and a Sentinel on loopback ports, the store connecting as an ACL user with
 * only the permissions the operations guide lists. The contract suite runs on it; the primary
 * is killed under a stream of operations, which fail as unavailable and resume by themselves on
 * the promoted replica; and the epoch marker is made again on the new primary before a nonce the
 * old one had not replicated can be claimed as new.
 */
import { randomBytes, randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { primaryIdentity } from '../../../src/cli/store/primary-identity.js';
import type { RedisSentinelEndpoint } from '../../../src/cli/store/redis-connection.js';
import { NONCE_EPOCH_KEY, NONCE_EPOCH_PRIMARY_KEY, RedisStore } from '../../../src/cli/store/redis-store.js';
import type { VerifiedToken } from '../../../src/lib/auth/jwt.js';
import { singleUseVerdict } from '../../../src/lib/auth/single-use.js';
import { StoreUnavailableError } from '../../../src/lib/errors/internal-errors.js';
import { type EphemeralStore } from '../../../src/lib/store/ephemeral-store.js';
import { describeEphemeralStoreContract } from '../../lib/store/ephemeral-store.contract.js';
import { freePort } from '../../support/local-processes.js';
import { ThrowawaySentinelSet } from '../../support/throwaway-sentinel.js';

const PASSWORD = 'data-password';
const SENTINEL_PASSWORD = 'sentinel-password';
/** The store's user, with exactly the permissions docs/operations.md#redis-sentinel lists. */
const USER = {
  name: 'fxgate-app',
  password: 'app-password',
  rules: '~* +@read +@write +@scripting -@dangerous +info +ping +time',
};

function startSet(): Promise<ThrowawaySentinelSet> {
  return ThrowawaySentinelSet.start({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD, user: USER });
}

function endpointOf(set: ThrowawaySentinelSet): RedisSentinelEndpoint {
  return {
    sentinels: set.sentinels,
    name: set.masterName,
    username: USER.name,
    password: USER.password,
    sentinelPassword: SENTINEL_PASSWORD,
  };
}

/** Room for a Sentinel that a busy machine puts into TILT (30 s) before it fails over. */
const FAILOVER_TEST_TIMEOUT_MS = 90_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually<T>(attempt: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(50);
    }
  }
}

/** The identity the store records for the primary on `port`, read as the store reads it. */
async function identityOf(set: ThrowawaySentinelSet, port: number): Promise<string> {
  return set.onNode(port, async (client) =>
    primaryIdentity(await client.info('server'), await client.info('replication')),
  );
}

describe('RedisStore through Sentinel', () => {
  let set: ThrowawaySentinelSet;

  beforeAll(async () => {
    set = await startSet();
  });
  afterAll(async () => {
    await set?.stop();
  });

  describeEphemeralStoreContract('RedisStore through Sentinel', async () => {
    const store = new RedisStore({ sentinel: endpointOf(set), keyPrefix: `fxgate-test:${randomUUID()}:` });
    const flushPrimary = async (): Promise<void> => {
      await set.onNode(await set.primaryPort(), (client) => client.flushdb());
    };
    return {
      store,
      // Redis's TIME and Date.now() read the same host clock.
      now: () => Date.now(),
      async empty() {
        await flushPrimary();
        return store;
      },
      async cleanup() {
        await store.close();
        await flushPrimary();
      },
    };
  });

  it('records the primary it checked the marker against, under the prefix', async () => {
    const keyPrefix = `fxgate-test:${randomUUID()}:`;
    const store = new RedisStore({ sentinel: endpointOf(set), keyPrefix });
    try {
      const epochMs = await store.nonceEpoch();
      const primary = await set.primaryPort();
      await set.onNode(primary, async (client) => {
        await expect(client.get(`${keyPrefix}${NONCE_EPOCH_KEY}`)).resolves.toBe(String(epochMs));
        await expect(client.get(`${keyPrefix}${NONCE_EPOCH_PRIMARY_KEY}`)).resolves.toBe(
          await identityOf(set, primary),
        );
      });
    } finally {
      await store.close();
    }
  });

  it('refuses a replica reached at a URL as unavailable: it would answer every write READONLY', async () => {
    const replica = set.other(await set.primaryPort());
    const store = new RedisStore({ url: `redis://:${PASSWORD}@127.0.0.1:${replica.port}` });
    try {
      const error = await store.claimNonce('nonce:{a}:on-a-replica', 1_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(/as a slave, not a primary/);
    } finally {
      await store.close();
    }
  });

  it('passes over a Sentinel that does not answer for the next in the list', async () => {
    const silent = { host: '127.0.0.1', port: await freePort() };
    const store = new RedisStore({ sentinel: { ...endpointOf(set), sentinels: [silent, ...set.sentinels] } });
    try {
      await expect(store.claimNonce(`nonce:{a}:${randomUUID()}`, 1_000)).resolves.toMatchObject({ fresh: true });
    } finally {
      await store.close();
    }
  });

  it('refuses a Sentinel group name it does not watch, as unavailable and quickly', async () => {
    const store = new RedisStore({ sentinel: { ...endpointOf(set), name: 'no-such-group' } });
    try {
      const started = performance.now();
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(1_500);
    } finally {
      await store.close();
    }
  });
});

function messageOf(error: unknown): string | undefined {
  return error instanceof Error ? error.message : error === undefined ? undefined : JSON.stringify(error);
}

/** One operation of the stream: when it was sent and how it ended. */
interface Outcome {
  readonly sentAt: number;
  readonly result: 'ok' | 'unavailable' | 'other';
  readonly epochMs?: number;
  readonly error?: unknown;
}

/** Claims a new nonce and begins a new idempotent write, as every write request does; one outcome for both. */
async function writeOnce(store: EphemeralStore): Promise<Outcome> {
  const sentAt = Date.now();
  try {
    const claim = await store.claimNonce(`nonce:{stream}:${randomBytes(8).toString('hex')}`, 60_000);
    const begun = await store.idempotencyBegin({
      key: `idem:{stream}:${randomUUID()}`,
      fingerprint: 'fp',
      owner: 'o',
      lockTtlMs: 60_000,
    });
    if (!claim.fresh || begun.outcome !== 'acquired') return { sentAt, result: 'other', error: { claim, begun } };
    return { sentAt, result: 'ok', epochMs: claim.epochMs };
  } catch (error) {
    return { sentAt, result: error instanceof StoreUnavailableError ? 'unavailable' : 'other', error };
  }
}

/**
 * A describe block's own throwaway Sentinel set (its failover must not touch another block's) and
 * a store through it under a fresh key prefix: started before the block's tests, closed after.
 */
function ownSetAndStore(): {
  readonly set: ThrowawaySentinelSet;
  readonly store: RedisStore;
  readonly keyPrefix: string;
} {
  let set: ThrowawaySentinelSet | undefined;
  let store: RedisStore | undefined;
  const keyPrefix = `fxgate-test:${randomUUID()}:`;
  beforeAll(async () => {
    set = await startSet();
    store = new RedisStore({ sentinel: endpointOf(set), keyPrefix });
  });
  afterAll(async () => {
    try {
      await store?.close();
    } finally {
      await set?.stop();
    }
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the set starts in beforeAll');
    return value;
  };
  return {
    get set() {
      return started(set);
    },
    get store() {
      return started(store);
    },
    keyPrefix,
  };
}

describe('RedisStore through Sentinel when the primary is killed', () => {
  const own = ownSetAndStore();

  it(
    'fails every write as unavailable until the replica is promoted, then carries on by itself with a new marker',
    { timeout: FAILOVER_TEST_TIMEOUT_MS },
    async () => {
      const epochBefore = await own.store.nonceEpoch();
      const outcomes: Outcome[] = [];
      let streaming = true;
      const stream = (async () => {
        while (streaming) {
          outcomes.push(await writeOnce(own.store));
          await sleep(20);
        }
      })();
      let killedAt = 0;
      let promotedPort = 0;
      try {
        await sleep(300);
        const formerPort = await own.set.killPrimary();
        // From here on no operation can reach the old primary; one sent just before may have.
        killedAt = own.set.killSentAt;
        promotedPort = await own.set.waitForPromotion(formerPort);
        // Until the stream has succeeded for a while on the new primary.
        await eventually(async () => {
          const recent = outcomes.slice(-10);
          if (recent.length < 10 || !recent.every((outcome) => outcome.result === 'ok' && outcome.sentAt > killedAt))
            throw new Error(
              `the stream has not recovered yet; last outcomes: ${JSON.stringify(
                recent.map((outcome) => [outcome.sentAt - killedAt, outcome.result, messageOf(outcome.error)]),
              )}`,
            );
        }, 20_000);
      } finally {
        streaming = false;
        await stream;
      }

      expect(outcomes.filter((outcome) => outcome.result === 'other')).toEqual([]);
      // Sent before the kill: done on the old primary under its marker, or (just before it) unavailable.
      const before = outcomes.filter((outcome) => outcome.sentAt < killedAt);
      expect(before.filter((outcome) => outcome.result === 'ok').length).toBeGreaterThan(5);
      expect(
        before.every(
          (outcome) => outcome.result === 'unavailable' || (outcome.result === 'ok' && outcome.epochMs === epochBefore),
        ),
      ).toBe(true);
      const after = outcomes.filter((outcome) => outcome.sentAt >= killedAt);
      const firstRecovered = after.findIndex((outcome) => outcome.result === 'ok');
      expect(firstRecovered).toBeGreaterThan(0);
      // Unavailable from the kill until the promotion, ok from then on: no flapping.
      const described = (outcome: Outcome) => [outcome.sentAt - killedAt, outcome.result, messageOf(outcome.error)];
      expect(
        after
          .slice(0, firstRecovered)
          .filter((outcome) => outcome.result !== 'unavailable')
          .map(described),
      ).toEqual([]);
      expect(
        after
          .slice(firstRecovered)
          .filter((outcome) => outcome.result !== 'ok')
          .map(described),
      ).toEqual([]);
      // Every claim on the new primary carries the marker made there, after the kill.
      const epochs = new Set(after.slice(firstRecovered).map((outcome) => outcome.epochMs));
      expect(epochs.size).toBe(1);
      const [epochAfter] = [...epochs] as [number];
      expect(epochAfter).toBeGreaterThanOrEqual(killedAt);
      await own.set.onNode(promotedPort, async (client) => {
        await expect(client.get(`${own.keyPrefix}${NONCE_EPOCH_PRIMARY_KEY}`)).resolves.toBe(
          await identityOf(own.set, promotedPort),
        );
      });
    },
  );
});

describe('RedisStore through Sentinel: a nonce the old primary had not replicated', () => {
  const own = ownSetAndStore();

  it(
    'is not taken for a fresh token on the promoted replica: the marker is made again there first',
    { timeout: FAILOVER_TEST_TIMEOUT_MS },
    async () => {
      const epochBefore = await own.store.nonceEpoch();
      // The marker and its primary are on the replica; from here on nothing more reaches it.
      await own.set.waitForReplication();
      await own.set.cutReplication();

      const nowSeconds = Math.floor(Date.now() / 1000);
      const token: VerifiedToken = {
        keyName: 'key-1',
        nonce: randomBytes(16).toString('hex'),
        issuedAt: nowSeconds,
        expiresAt: nowSeconds + 60,
      };
      const nonceKey = `nonce:{${token.keyName}}:${token.nonce}`;
      const first = await own.store.claimNonce(nonceKey, 60_000);
      expect(singleUseVerdict(token, first)).toBe('FRESH');

      const formerPort = await own.set.primaryPort();
      const replica = own.set.other(formerPort);
      // What the replica holds: the old marker, and not the nonce. On its own that would make a
      // second use of the token look fresh.
      await own.set.onNode(replica.port, async (client) => {
        await expect(client.get(`${own.keyPrefix}${NONCE_EPOCH_KEY}`)).resolves.toBe(String(epochBefore));
        await expect(client.exists(`${own.keyPrefix}${nonceKey}`)).resolves.toBe(0);
      });
      expect(singleUseVerdict(token, { fresh: true, epochMs: epochBefore })).toBe('FRESH');

      // The token's second has passed before the failover: the residual window is not what is tested.
      await sleep((token.issuedAt + 1) * 1000 - Date.now());
      await own.set.killPrimary();
      const promoted = await own.set.waitForPromotion(formerPort);
      expect(promoted).toBe(replica.port);

      const second = await eventually(() => own.store.claimNonce(nonceKey, 60_000), 20_000);
      expect(second.fresh).toBe(true);
      expect(second.epochMs).toBeGreaterThan(epochBefore);
      expect(singleUseVerdict(token, second)).toBe('SIGNED_BEFORE_STORE_RESET');
      await own.set.onNode(promoted, async (client) => {
        await expect(client.get(`${own.keyPrefix}${NONCE_EPOCH_PRIMARY_KEY}`)).resolves.toBe(
          await identityOf(own.set, promoted),
        );
      });
    },
  );
});
