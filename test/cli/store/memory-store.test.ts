import { afterEach, describe, expect, it, vi } from 'vitest';

import { MEMORY_STORE_DEFAULTS, MemoryStore } from '../../../src/cli/store/memory-store.js';
import { StoreUnavailableError } from '../../../src/lib/errors/internal-errors.js';
import { describeEphemeralStoreContract } from '../../lib/store/ephemeral-store.contract.js';

/** A store on a clock that moves only when told to. */
function fakeClockStore(options: { maxEntries?: number } = {}): {
  store: MemoryStore;
  advance(ms: number): void;
  now(): number;
} {
  let now = 1_700_000_000_000;
  const store = new MemoryStore({ now: () => now, ...options });
  return {
    store,
    advance(ms) {
      now += ms;
    },
    now: () => now,
  };
}

describeEphemeralStoreContract('MemoryStore', async () => {
  const { store: first, advance, now } = fakeClockStore();
  let store = first;
  return {
    store,
    advanceTime: advance,
    now,
    // A restart's store: a new one, on the same clock.
    async empty() {
      await store.close();
      store = new MemoryStore({ now });
      return store;
    },
    cleanup: () => store.close(),
  };
});

describe('MemoryStore on a fake clock', () => {
  const opened: MemoryStore[] = [];
  function open(options: { maxEntries?: number } = {}): ReturnType<typeof fakeClockStore> {
    const made = fakeClockStore(options);
    opened.push(made.store);
    return made;
  }

  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  it('reports the exact remaining lock time, and at least 1 ms', async () => {
    const { store, advance } = open();
    const begin = { key: 'idem:{a}:k', fingerprint: 'fp', owner: 'o1', lockTtlMs: 1_000 };
    await store.idempotencyBegin(begin);
    advance(300);
    await expect(store.idempotencyBegin({ ...begin, owner: 'o2' })).resolves.toEqual({
      outcome: 'in_flight',
      retryAfterMs: 700,
    });
    advance(699);
    await expect(store.idempotencyBegin({ ...begin, owner: 'o3' })).resolves.toEqual({
      outcome: 'in_flight',
      retryAfterMs: 1,
    });
    advance(1);
    await expect(store.idempotencyBegin({ ...begin, owner: 'o4' })).resolves.toEqual({ outcome: 'acquired' });
  });

  it('computes exact GCRA numbers', async () => {
    const { store, advance } = open();
    const cell = { key: 'rl:{a}', limit: 5, periodMs: 500 };
    for (let i = 1; i <= 5; i++) {
      await expect(store.rateLimit(cell)).resolves.toEqual({
        allowed: true,
        remaining: 5 - i,
        resetMs: i * 100,
        retryAfterMs: 0,
      });
    }
    await expect(store.rateLimit(cell)).resolves.toEqual({
      allowed: false,
      remaining: 0,
      resetMs: 500,
      retryAfterMs: 100,
    });
    advance(99);
    await expect(store.rateLimit(cell)).resolves.toEqual({
      allowed: false,
      remaining: 0,
      resetMs: 401,
      retryAfterMs: 1,
    });
    advance(1);
    // Exactly at retryAfterMs the request is allowed.
    await expect(store.rateLimit(cell)).resolves.toEqual({
      allowed: true,
      remaining: 0,
      resetMs: 500,
      retryAfterMs: 0,
    });
    advance(250);
    // Two and a half intervals have drained: two whole requests are possible now.
    await expect(store.rateLimit(cell)).resolves.toEqual({
      allowed: true,
      remaining: 1,
      resetMs: 350,
      retryAfterMs: 0,
    });
  });

  it('rounds a fractional interval so that the burst is exactly `limit`', async () => {
    const { store, advance } = open();
    const thirds = { key: 'rl:{a}:thirds', limit: 3, periodMs: 1_000 };
    for (let i = 0; i < 3; i++) expect((await store.rateLimit(thirds)).allowed).toBe(true);
    const denied = await store.rateLimit(thirds);
    expect(denied).toEqual({ allowed: false, remaining: 0, resetMs: 1_000, retryAfterMs: 334 });
    advance(333);
    expect((await store.rateLimit(thirds)).allowed).toBe(false);
    advance(1);
    expect((await store.rateLimit(thirds)).allowed).toBe(true);
  });

  it('drops expired entries on access and on sweep, and idle rate cells vanish', async () => {
    const { store, advance } = open();
    await store.cacheSet('c:{a}:1', 'v', 100);
    await store.claimNonce('n:{a}:1', 100);
    await store.rateLimit({ key: 'rl:{a}', limit: 10, periodMs: 1_000 });
    await store.cacheSet('c:{a}:long', 'v', 10_000);
    expect(store.size).toBe(4);
    advance(100);
    await expect(store.cacheGet('c:{a}:1')).resolves.toBeNull();
    expect(store.size).toBe(3);
    store.sweepExpired();
    // The rate cell lived one interval (100 ms); only the long cache entry is left.
    expect(store.size).toBe(1);
  });

  it('sweeps on an unref’d timer, which close() clears', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let now = 0;
    const store = new MemoryStore({ now: () => now, sweepIntervalMs: 1_000 });
    opened.push(store);
    expect(vi.getTimerCount()).toBe(1);
    await store.cacheSet('c:{a}:1', 'v', 500);
    now = 600;
    expect(store.size).toBe(1);
    vi.advanceTimersByTime(1_000);
    expect(store.size).toBe(0);
    await store.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not keep the process alive with its timer', async () => {
    const spy = vi.spyOn(globalThis, 'setInterval');
    const store = new MemoryStore();
    opened.push(store);
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
  });

  it('refuses new keys beyond maxEntries until entries expire', async () => {
    const { store, advance } = open({ maxEntries: 3 });
    for (let i = 0; i < 3; i++) await store.cacheSet(`c:{a}:${i}`, 'v', 1_000);
    await expect(store.claimNonce('n:{a}:x', 1_000)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.rateLimit({ key: 'rl:{a}', limit: 1, periodMs: 1_000 })).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    // Rewriting a key that is already held does not grow the store.
    await expect(store.cacheSet('c:{a}:0', 'w', 1_000)).resolves.toBeUndefined();
    advance(1_000);
    await expect(store.claimNonce('n:{a}:x', 1_000)).resolves.toMatchObject({ fresh: true });
    expect(store.size).toBe(1);
  });

  it('has its creation time as its epoch marker, however late the first claim comes', async () => {
    const { store, advance, now } = open();
    const createdAt = now();
    advance(5_000);
    await expect(store.claimNonce('n:{a}:late', 1_000)).resolves.toEqual({ fresh: true, epochMs: createdAt });
  });

  it('defaults to a bounded size', () => {
    expect(MEMORY_STORE_DEFAULTS.maxEntries).toBeGreaterThan(0);
    expect(Number.isFinite(MEMORY_STORE_DEFAULTS.maxEntries)).toBe(true);
  });

  it('replays a copy: neither the caller nor a reader can change the stored response', async () => {
    const { store } = open();
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const sent = { statusCode: 201, headers, bodyBase64: 'e30=' };
    await store.idempotencyBegin({ key: 'idem:{a}:k', fingerprint: 'fp', owner: 'o1', lockTtlMs: 1_000 });
    await store.idempotencyComplete('idem:{a}:k', 'o1', sent, 60_000);
    headers['content-type'] = 'text/plain';
    const first = await store.idempotencyBegin({ key: 'idem:{a}:k', fingerprint: 'fp', owner: 'o2', lockTtlMs: 1_000 });
    if (first.outcome !== 'completed') throw new Error(`expected completed, got ${first.outcome}`);
    (first.response.headers as Record<string, string>)['x-extra'] = 'added';
    const second = await store.idempotencyBegin({
      key: 'idem:{a}:k',
      fingerprint: 'fp',
      owner: 'o3',
      lockTtlMs: 1_000,
    });
    expect(second).toEqual({
      outcome: 'completed',
      response: { statusCode: 201, headers: { 'content-type': 'application/json' }, bodyBase64: 'e30=' },
    });
  });
});
