import { createHash } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import { REDIS_SCRIPTS } from '../../../src/cli/store/redis-scripts.js';
import {
  NONCE_EPOCH_KEY,
  NONCE_EPOCH_PRIMARY_KEY,
  REDIS_STORE_DEFAULTS,
  RedisStore,
} from '../../../src/cli/store/redis-store.js';
import {
  CorruptStoreRecordError,
  InvalidStoreInputError,
  StoreUnavailableError,
} from '../../../src/lib/errors/internal-errors.js';
import { type EphemeralStore } from '../../../src/lib/store/ephemeral-store.js';
import { describeEphemeralStoreContract } from '../../lib/store/ephemeral-store.contract.js';
import type { ThrowawayServer } from '../../support/local-processes.js';
import { testServices } from '../../support/services.js';
import { testKeyPrefix } from '../../support/test-run.js';
import { startThrowawayRedis } from '../../support/throwaway-redis.js';

const { redisUrl } = testServices();

/** A raw client for inspecting and cleaning up; never FLUSHALL, other suites share this Redis. */
let admin: Redis;

/** A unique prefix per test, so that parallel test files and reruns never see each other's keys. */
function uniquePrefix(): string {
  return testKeyPrefix();
}

async function deleteKeys(prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/**
 * The contract's own Redis: its tests empty the store (FLUSHDB) as a restarted Redis would be,
 * which the shared server must never see.
 */
let own: ThrowawayServer;
let ownAdmin: Redis;

beforeAll(async () => {
  admin = new Redis(redisUrl, { lazyConnect: false });
  own = await startThrowawayRedis();
  ownAdmin = new Redis(own.url, { lazyConnect: false });
});

afterAll(async () => {
  await admin.quit();
  await ownAdmin?.quit();
  await own?.stop();
});

describeEphemeralStoreContract('RedisStore', async () => {
  const keyPrefix = uniquePrefix();
  const store = new RedisStore({ url: own.url, keyPrefix });
  return {
    store,
    // Redis's TIME and Date.now() read the same host clock.
    now: () => Date.now(),
    async empty() {
      await ownAdmin.flushdb();
      return store;
    },
    async cleanup() {
      await store.close();
      await ownAdmin.flushdb();
    },
  };
});

describe('RedisStore on a Redis that comes back empty', () => {
  it('makes the epoch marker as soon as it reconnects, before any claim', async () => {
    const keyPrefix = uniquePrefix();
    const store = new RedisStore({ url: own.url, keyPrefix });
    try {
      const first = await store.nonceEpoch();
      // A Redis restarted empty, as the store sees it: its data gone and its connection dropped.
      await ownAdmin.flushdb();
      await ownAdmin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      const marker = `${keyPrefix}${NONCE_EPOCH_KEY}`;
      const deadline = Date.now() + 5_000;
      let made: string | null = null;
      while (made === null && Date.now() < deadline) {
        made = await ownAdmin.get(marker);
        if (made === null) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(made).not.toBeNull();
      expect(Number(made)).toBeGreaterThan(first);
      await expect(store.claimNonce('nonce:{a}:after-restart', 1_000)).resolves.toEqual({
        fresh: true,
        epochMs: Number(made),
      });
    } finally {
      await store.close();
      await ownAdmin.flushdb();
    }
  });
});

describe('RedisStore checking the primary it reached', () => {
  it('makes the marker again at the next connection when it is not a number, or was made by another primary', async () => {
    const keyPrefix = uniquePrefix();
    const store = new RedisStore({ url: own.url, keyPrefix });
    try {
      const first = await store.nonceEpoch();
      const marker = `${keyPrefix}${NONCE_EPOCH_KEY}`;
      const primary = `${keyPrefix}${NONCE_EPOCH_PRIMARY_KEY}`;
      const identity = await ownAdmin.get(primary);
      expect(identity).toMatch(/^[0-9a-f]{40}:[0-9a-f]{40}$/);
      const reconnected = async (): Promise<number> => {
        await ownAdmin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
        // The store answers again once its new connection has checked the marker.
        const deadline = Date.now() + 5_000;
        for (;;) {
          try {
            return await store.nonceEpoch();
          } catch (error) {
            if (Date.now() > deadline) throw error;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }
      };
      // The same primary, the marker intact: kept.
      await expect(reconnected()).resolves.toBe(first);
      // Another primary's marker (as a promoted replica holds it): made again, and this primary recorded.
      await ownAdmin.set(primary, 'another-run-id:another-replid');
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await reconnected();
      expect(second).toBeGreaterThan(first);
      await expect(ownAdmin.get(primary)).resolves.toBe(identity);
      // A spoilt marker: made again rather than refused at every call.
      await ownAdmin.set(marker, 'yesterday');
      await new Promise((resolve) => setTimeout(resolve, 5));
      await expect(reconnected()).resolves.toBeGreaterThan(second);
    } finally {
      await store.close();
    }
  });

  it('connects again by itself when its client ends without the store being closed', async () => {
    const store = new RedisStore({ url: own.url, keyPrefix: uniquePrefix() });
    try {
      await store.ping();
      // What ioredis does in a few races: the connection ended for good, no reconnection planned.
      const client = (store as unknown as { client: Redis }).client;
      const ended = new Promise((resolve) => client.once('end', resolve));
      client.disconnect(false);
      await ended;
      const deadline = Date.now() + 5_000;
      let answered = false;
      while (!answered && Date.now() < deadline) {
        answered = await store.ping().then(
          () => true,
          () => false,
        );
        if (!answered) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(answered).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('refuses every call as unavailable, naming why, when its user may not read INFO', async () => {
    await ownAdmin.call('ACL', 'SETUSER', 'no-info', 'on', '>no-info-password', '~*', '+@all', '-info');
    const url = new URL(own.url);
    url.username = 'no-info';
    url.password = 'no-info-password';
    const store = new RedisStore({ url: url.toString(), keyPrefix: uniquePrefix() });
    try {
      const error = await store.claimNonce('nonce:{a}:no-info', 1_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(/^Redis's primary could not be checked: NOPERM/);
    } finally {
      await store.close();
      await ownAdmin.call('ACL', 'DELUSER', 'no-info');
    }
  });
});

describe('RedisStore against a live Redis', () => {
  const opened: { store: RedisStore; prefix: string }[] = [];
  function open(options: { keyPrefix?: string } = {}): RedisStore {
    const prefix = options.keyPrefix ?? uniquePrefix();
    const store = new RedisStore({ url: redisUrl, ...options, keyPrefix: prefix });
    opened.push({ store, prefix });
    return store;
  }

  afterEach(async () => {
    vi.useRealTimers();
    const stores = opened.splice(0);
    await Promise.all(stores.map(({ store }) => store.close()));
    await Promise.all([...new Set(stores.map(({ prefix }) => prefix))].map(deleteKeys));
  });

  /** Several connections on one prefix: the closest a test gets to several processes. */
  function openProcesses(count: number): RedisStore[] {
    const keyPrefix = uniquePrefix();
    return Array.from({ length: count }, () => open({ keyPrefix }));
  }

  it('exports its defaults', () => {
    expect(REDIS_STORE_DEFAULTS).toEqual({ keyPrefix: '', commandTimeoutMs: 500, connectTimeoutMs: 2_000 });
  });

  it('admits one idempotencyBegin of 100 spread over 5 connections', async () => {
    const stores = openProcesses(5);
    await Promise.all(stores.map((store) => store.ping()));
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (stores[i % 5] as RedisStore).idempotencyBegin({
          key: 'idem:{acct}:race',
          fingerprint: 'fp',
          owner: `o${i}`,
          lockTtlMs: 10_000,
        }),
      ),
    );
    expect(results.filter((r) => r.outcome === 'acquired')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'in_flight')).toHaveLength(99);
  });

  it('admits exactly `limit` of 60 rate-limited requests spread over 5 connections', async () => {
    const stores = openProcesses(5);
    await Promise.all(stores.map((store) => store.ping()));
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (stores[i % 5] as RedisStore).rateLimit({ key: 'rl:{acct}:race', limit: 12, periodMs: 60_000 }),
      ),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(12);
  });

  it('lets exactly one of several connections complete, and the others see the same replay', async () => {
    const stores = openProcesses(4);
    const [first, ...others] = stores as [RedisStore, ...RedisStore[]];
    await first.idempotencyBegin({ key: 'idem:{acct}:k', fingerprint: 'fp', owner: 'winner', lockTtlMs: 10_000 });
    const response = { statusCode: 200, headers: { a: 'b' }, bodyBase64: 'AAEC' };
    const completions = await Promise.all([
      first.idempotencyComplete('idem:{acct}:k', 'winner', response, 60_000),
      ...others.map((store) =>
        store.idempotencyComplete('idem:{acct}:k', 'loser', { ...response, statusCode: 500 }, 60_000),
      ),
    ]);
    expect(completions).toEqual([true, false, false, false]);
    for (const store of others) {
      await expect(
        store.idempotencyBegin({ key: 'idem:{acct}:k', fingerprint: 'fp', owner: 'x', lockTtlMs: 1_000 }),
      ).resolves.toEqual({
        outcome: 'completed',
        response,
      });
    }
  });

  it('rate-limits on the Redis clock, not the client clock', async () => {
    const store = open();
    const cell = { key: 'rl:{acct}:clock', limit: 2, periodMs: 60_000 };
    await store.rateLimit(cell);
    await store.rateLimit(cell);
    // Only Date is faked: ioredis's own timers keep running.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 3_600_000);
    const skewed = await store.rateLimit(cell);
    expect(skewed.allowed).toBe(false);
    expect(skewed.retryAfterMs).toBeGreaterThan(25_000);
  });

  it('makes the epoch marker on the Redis clock, not the client clock, and reads it from one prefix in every process', async () => {
    const [first, second] = openProcesses(2);
    const realNow = Date.now();
    // Only Date is faked: ioredis's own timers keep running.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(realNow + 3_600_000);
    const claim = await first!.claimNonce('nonce:{a}:clock', 60_000);
    expect(claim.epochMs).toBeGreaterThanOrEqual(realNow);
    expect(claim.epochMs).toBeLessThan(realNow + 60_000);
    await expect(second!.claimNonce('nonce:{a}:clock', 60_000)).resolves.toEqual({
      fresh: false,
      epochMs: claim.epochMs,
    });
  });

  it('refuses a marker it cannot read as a whole number of milliseconds', async () => {
    const keyPrefix = uniquePrefix();
    const store = open({ keyPrefix });
    // Once the connection has checked its marker: a marker spoilt after that is what the claim meets.
    await store.ping();
    await admin.set(`${keyPrefix}${NONCE_EPOCH_KEY}`, 'yesterday');
    await expect(store.claimNonce('nonce:{a}:bad-marker', 1_000)).rejects.toBeInstanceOf(CorruptStoreRecordError);
  });

  it('writes under the prefix, keeping the caller’s hash tag, with the TTLs asked for', async () => {
    const keyPrefix = uniquePrefix();
    const store = open({ keyPrefix });
    await store.idempotencyBegin({ key: 'idem:{acct}:k', fingerprint: 'fp', owner: 'o', lockTtlMs: 5_000 });
    await store.rateLimit({ key: 'rl:{acct}', limit: 4, periodMs: 2_000 });
    const { epochMs } = await store.claimNonce('nonce:{iss}:n', 7_000);
    await store.cacheSet('cursor:{acct}:c', 'v', 9_000);

    const lockTtl = await admin.pttl(`${keyPrefix}idem:{acct}:k`);
    expect(lockTtl).toBeGreaterThan(4_000);
    expect(lockTtl).toBeLessThanOrEqual(5_000);
    await expect(admin.hgetall(`${keyPrefix}idem:{acct}:k`)).resolves.toEqual({
      state: 'in_flight',
      fingerprint: 'fp',
      owner: 'o',
    });
    // One request on a 4-per-2s cell: the TAT lies one interval (500 ms) ahead and expires then.
    const cellTtl = await admin.pttl(`${keyPrefix}rl:{acct}`);
    expect(cellTtl).toBeGreaterThan(0);
    expect(cellTtl).toBeLessThanOrEqual(500);
    expect(await admin.get(`${keyPrefix}rl:{acct}`)).toMatch(/^\d{16,}$/);
    expect(await admin.pttl(`${keyPrefix}nonce:{iss}:n`)).toBeGreaterThan(6_000);
    // The epoch marker lives under the prefix too, and never expires.
    await expect(admin.get(`${keyPrefix}${NONCE_EPOCH_KEY}`)).resolves.toBe(String(epochMs));
    await expect(admin.pttl(`${keyPrefix}${NONCE_EPOCH_KEY}`)).resolves.toBe(-1);
    expect(await admin.pttl(`${keyPrefix}cursor:{acct}:c`)).toBeGreaterThan(8_000);

    await store.idempotencyComplete('idem:{acct}:k', 'o', { statusCode: 201, headers: {}, bodyBase64: '' }, 30_000);
    const recordTtl = await admin.pttl(`${keyPrefix}idem:{acct}:k`);
    expect(recordTtl).toBeGreaterThan(29_000);
    const record = await admin.hgetall(`${keyPrefix}idem:{acct}:k`);
    expect(record).toMatchObject({ state: 'completed', fingerprint: 'fp' });
    expect(record).not.toHaveProperty('owner');
  });

  it('runs its scripts by EVALSHA from the script cache', async () => {
    const store = open();
    await store.rateLimit({ key: 'rl:{acct}', limit: 1, periodMs: 1_000 });
    const sha = createHash('sha1').update(REDIS_SCRIPTS.rateLimit).digest('hex');
    await expect(admin.script('EXISTS', sha)).resolves.toEqual([1]);
  });

  it('sends the commands of one tick in one write to the socket, each answered as if sent alone', async () => {
    const store = open();
    await store.ping();
    const socket = (store as unknown as { client: Redis }).client.stream as Socket;
    const writes = vi.spyOn(socket, '_writev');
    const single = vi.spyOn(socket, '_write');
    const [charge, claim, replay] = await Promise.all([
      store.rateLimit({ key: 'rl:{acct}:r', limit: 5, periodMs: 10_000 }),
      store.claimNonce('nonce:{acct}:n1', 60_000),
      store.claimNonce('nonce:{acct}:n1', 60_000),
    ]);
    expect(charge).toMatchObject({ allowed: true, remaining: 4 });
    expect(claim.fresh).toBe(true);
    expect(replay.fresh).toBe(false);
    expect(writes).toHaveBeenCalledTimes(1);
    expect(writes.mock.calls[0]![0]).toHaveLength(3);
    expect(single).not.toHaveBeenCalled();
    // The next tick's command is not held back: it goes out (and is answered) on its own.
    await expect(store.claimNonce('nonce:{acct}:n2', 60_000)).resolves.toMatchObject({ fresh: true });
    expect(writes.mock.calls.length + single.mock.calls.length).toBe(2);
  });

  it('refuses a key prefix that would move the caller’s hash tag', () => {
    expect(() => new RedisStore({ url: redisUrl, keyPrefix: 'tenant-{x}:' })).toThrow(InvalidStoreInputError);
  });

  it('refuses to replay a record it cannot read', async () => {
    const keyPrefix = uniquePrefix();
    const store = open({ keyPrefix });
    await admin.hset(`${keyPrefix}idem:{acct}:bad`, {
      state: 'completed',
      fingerprint: 'fp',
      response: '{"statusCode":"oops"}',
    });
    await admin.pexpire(`${keyPrefix}idem:{acct}:bad`, 10_000);
    await expect(
      store.idempotencyBegin({ key: 'idem:{acct}:bad', fingerprint: 'fp', owner: 'o', lockTtlMs: 1_000 }),
    ).rejects.toBeInstanceOf(CorruptStoreRecordError);
  });
});

/** A TCP proxy in front of the real Redis that a test can stall or take down, as an outage would. */
class FaultyProxy {
  private readonly server: Server;
  private readonly pairs = new Set<[Socket, Socket]>();
  private mode: 'up' | 'stalled' | 'down' = 'up';

  private constructor(private readonly target: URL) {
    this.server = createServer((client) => this.accept(client));
  }

  static async start(targetUrl: string): Promise<{ proxy: FaultyProxy; url: string }> {
    const proxy = new FaultyProxy(new URL(targetUrl));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    const address = proxy.server.address();
    if (address === null || typeof address === 'string') throw new Error('The proxy has no port');
    return { proxy, url: `redis://127.0.0.1:${address.port}` };
  }

  /** Holds every byte from clients unread, like a Redis stuck in a long command. */
  stall(): void {
    this.mode = 'stalled';
    for (const [client] of this.pairs) client.pause();
  }

  /** Drops every connection and refuses new ones, like a crashed Redis. */
  down(): void {
    this.mode = 'down';
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
  }

  up(): void {
    this.mode = 'up';
    for (const [client] of this.pairs) client.resume();
  }

  async stop(): Promise<void> {
    this.down();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.mode === 'down') {
      client.destroy();
      return;
    }
    const upstream = connect(Number(this.target.port || 6379), this.target.hostname);
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const drop = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) {
      socket.on('error', drop);
      socket.on('close', drop);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    if (this.mode === 'stalled') client.pause();
  }
}

describe('RedisStore when Redis does not answer', () => {
  /** Every operation, so that none of them can hang or leak a raw ioredis error. */
  const operations: [string, (store: EphemeralStore) => Promise<unknown>][] = [
    ['ping', (s) => s.ping()],
    [
      'idempotencyBegin',
      (s) => s.idempotencyBegin({ key: 'idem:{a}:k', fingerprint: 'fp', owner: 'o', lockTtlMs: 1_000 }),
    ],
    [
      'idempotencyComplete',
      (s) => s.idempotencyComplete('idem:{a}:k', 'o', { statusCode: 200, headers: {}, bodyBase64: '' }, 1_000),
    ],
    ['idempotencyRelease', (s) => s.idempotencyRelease('idem:{a}:k', 'o')],
    ['claimNonce', (s) => s.claimNonce('nonce:{a}:n', 1_000)],
    ['rateLimit', (s) => s.rateLimit({ key: 'rl:{a}', limit: 1, periodMs: 1_000 })],
    ['cacheGet', (s) => s.cacheGet('cursor:{a}:c')],
    ['cacheSet', (s) => s.cacheSet('cursor:{a}:c', 'v', 1_000)],
  ];

  /** Runs every operation at once (to keep the suite fast) and times each one on its own. */
  async function expectFastUnavailable(store: EphemeralStore): Promise<void> {
    const outcomes = await Promise.all(
      operations.map(async ([name, call]) => {
        const started = performance.now();
        const error = await call(store).then(
          () => undefined,
          (e: unknown) => e,
        );
        return { name, error, elapsed: performance.now() - started };
      }),
    );
    for (const { name, error, elapsed } of outcomes) {
      expect(error, name).toBeInstanceOf(StoreUnavailableError);
      expect(elapsed, name).toBeLessThan(1_500);
    }
  }

  async function eventually(check: () => Promise<void>, withinMs: number): Promise<void> {
    const deadline = performance.now() + withinMs;
    for (;;) {
      try {
        return await check();
      } catch (error) {
        if (performance.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  it('rejects every operation quickly when nothing listens on the port, again and again', async () => {
    const store = new RedisStore({ url: 'redis://127.0.0.1:1' });
    try {
      await expectFastUnavailable(store);
      await expectFastUnavailable(store);
    } finally {
      await store.close();
    }
  });

  describe('behind a faulty proxy', () => {
    let proxy: FaultyProxy;
    let url: string;
    let store: RedisStore;

    beforeAll(async () => {
      ({ proxy, url } = await FaultyProxy.start(redisUrl));
    });

    afterEach(async () => {
      await store.close();
      proxy.up();
    });

    afterAll(async () => {
      await proxy.stop();
    });

    it('rejects every operation when connections are accepted but never answered', async () => {
      proxy.stall();
      store = new RedisStore({ url, keyPrefix: uniquePrefix() });
      await expectFastUnavailable(store);
    });

    it('times out a connected Redis that stops answering, and carries on once it answers again', async () => {
      store = new RedisStore({ url, keyPrefix: uniquePrefix() });
      await store.ping();
      proxy.stall();
      await expectFastUnavailable(store);
      proxy.up();
      await eventually(() => store.ping(), 2_000);
      await expect(store.claimNonce('nonce:{a}:after-stall', 1_000)).resolves.toMatchObject({ fresh: true });
      await expect(store.cacheGet('cursor:{a}:never-set')).resolves.toBeNull();
    });

    it('fails fast while Redis is down and reconnects by itself when it is back', async () => {
      store = new RedisStore({ url, keyPrefix: uniquePrefix() });
      await store.ping();
      proxy.down();
      await expectFastUnavailable(store);
      proxy.up();
      await eventually(() => store.ping(), 2_000);
      await expect(store.claimNonce('nonce:{a}:after-outage', 1_000)).resolves.toMatchObject({ fresh: true });
    });
  });
});
