/**
 * The contract every EphemeralStore passes. Each implementation's test file registers it with a
 * factory; behaviour that differs between stores is a bug in one of them.
 *
 * Stores with an injectable clock pass advanceTime and the suite moves time instantly; for the
 * others it sleeps, so timing tests use short real TTLs and assert ranges that hold either way.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { InvalidStoreInputError, StoreUnavailableError } from '../../../src/lib/errors/internal-errors.js';
import { type EphemeralStore, type StoredResponse } from '../../../src/lib/store/ephemeral-store.js';

export interface StoreHarness {
  readonly store: EphemeralStore;
  /** Moves the store's clock forward; absent when the store runs on real time. */
  advanceTime?(ms: number): void;
  /** The store's clock, in ms since the epoch. */
  now(): number;
  /**
   * Empties the store as its loss would (Redis: FLUSHDB on the harness's own server; in-process:
   * a new store, as a restart makes) and gives the store to use from then on; cleanup closes it.
   */
  empty(): Promise<EphemeralStore>;
  cleanup(): Promise<void>;
}

export type StoreFactory = () => Promise<StoreHarness>;

const KEY = 'idem:{acct-1:test}:order-42';

function response(body: string, statusCode = 201): StoredResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', 'x-request-id': `req-${body}` },
    bodyBase64: Buffer.from(JSON.stringify({ body })).toString('base64'),
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function describeEphemeralStoreContract(name: string, factory: StoreFactory): void {
  describe(`${name}: EphemeralStore contract`, () => {
    let harness: StoreHarness;
    let store: EphemeralStore;

    /** Lets ms pass for the store: instantly on a fake clock, by sleeping on a real one. */
    async function passTime(ms: number): Promise<void> {
      if (harness.advanceTime) harness.advanceTime(ms);
      else await sleep(ms);
    }

    beforeEach(async () => {
      harness = await factory();
      store = harness.store;
    });

    afterEach(async () => {
      await harness.cleanup();
    });

    describe('idempotencyBegin', () => {
      it('acquires a fresh key', async () => {
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'acquired',
        });
      });

      it('reports in_flight with the remaining lock TTL for the same fingerprint', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 1_000 });
        const first = await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 1_000 });
        expect(first.outcome).toBe('in_flight');
        if (first.outcome !== 'in_flight') return;
        expect(first.retryAfterMs).toBeGreaterThan(900);
        expect(first.retryAfterMs).toBeLessThanOrEqual(1_000);

        await passTime(300);
        const later = await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o3', lockTtlMs: 1_000 });
        expect(later.outcome).toBe('in_flight');
        if (later.outcome !== 'in_flight') return;
        expect(later.retryAfterMs).toBeGreaterThan(400);
        expect(later.retryAfterMs).toBeLessThanOrEqual(700);
      });

      it('reports a mismatch with the original fingerprint while in flight', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-b', owner: 'o2', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'mismatch',
          originalFingerprint: 'fp-a',
        });
      });

      it('replays the completed response for the same fingerprint', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await store.idempotencyComplete(KEY, 'o1', response('done'), 60_000);
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'completed',
          response: response('done'),
        });
      });

      it('reports a mismatch with the original fingerprint once completed', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await store.idempotencyComplete(KEY, 'o1', response('done'), 60_000);
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-b', owner: 'o2', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'mismatch',
          originalFingerprint: 'fp-a',
        });
      });

      it('keeps keys independent', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await expect(
          store.idempotencyBegin({
            key: 'idem:{acct-1:test}:order-43',
            fingerprint: 'fp-b',
            owner: 'o2',
            lockTtlMs: 10_000,
          }),
        ).resolves.toEqual({ outcome: 'acquired' });
      });

      it('lets another attempt acquire once the lock expires', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 150 });
        await passTime(220);
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-b', owner: 'o2', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'acquired',
        });
      });

      it('forgets a completed response after its TTL', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await store.idempotencyComplete(KEY, 'o1', response('done'), 150);
        expect(
          (await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 10_000 })).outcome,
        ).toBe('completed');
        await passTime(220);
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o3', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'acquired',
        });
      });

      it('gives exactly one of 100 concurrent attempts the key', async () => {
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: `o${i}`, lockTtlMs: 10_000 }),
          ),
        );
        expect(results.filter((r) => r.outcome === 'acquired')).toHaveLength(1);
        expect(results.filter((r) => r.outcome === 'in_flight')).toHaveLength(99);
      });
    });

    describe('idempotencyComplete', () => {
      it('stores the response when the owner completes', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await expect(store.idempotencyComplete(KEY, 'o1', response('done', 200), 60_000)).resolves.toBe(true);
        const replay = await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 10_000 });
        expect(replay).toEqual({ outcome: 'completed', response: response('done', 200) });
      });

      it('keeps the record in flight when another owner tries to complete it', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await expect(store.idempotencyComplete(KEY, 'intruder', response('forged'), 60_000)).resolves.toBe(false);
        expect(
          (await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 10_000 })).outcome,
        ).toBe('in_flight');
        await expect(store.idempotencyComplete(KEY, 'o1', response('real'), 60_000)).resolves.toBe(true);
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o3', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'completed',
          response: response('real'),
        });
      });

      it('returns false and creates nothing for a missing key', async () => {
        await expect(store.idempotencyComplete(KEY, 'o1', response('ghost'), 60_000)).resolves.toBe(false);
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'acquired',
        });
      });

      it('does not overwrite a completed record, even for its owner', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await expect(store.idempotencyComplete(KEY, 'o1', response('first'), 60_000)).resolves.toBe(true);
        await expect(store.idempotencyComplete(KEY, 'o1', response('second'), 60_000)).resolves.toBe(false);
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'completed',
          response: response('first'),
        });
      });

      it('refuses a stale owner whose lock expired and was taken by another', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'stale', lockTtlMs: 150 });
        await passTime(220);
        expect(
          (await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'fresh', lockTtlMs: 10_000 })).outcome,
        ).toBe('acquired');

        await expect(store.idempotencyComplete(KEY, 'stale', response('stale'), 60_000)).resolves.toBe(false);
        await store.idempotencyRelease(KEY, 'stale');
        expect(
          (await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'other', lockTtlMs: 10_000 })).outcome,
        ).toBe('in_flight');

        await expect(store.idempotencyComplete(KEY, 'fresh', response('fresh'), 60_000)).resolves.toBe(true);
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'late', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'completed',
          response: response('fresh'),
        });
      });

      it('refuses an owner whose lock expired with nobody else holding it', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 150 });
        await passTime(220);
        await expect(store.idempotencyComplete(KEY, 'o1', response('late'), 60_000)).resolves.toBe(false);
        expect(
          (await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 10_000 })).outcome,
        ).toBe('acquired');
      });
    });

    describe('idempotencyRelease', () => {
      it("drops the owner's lock so that any request may run again", async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await store.idempotencyRelease(KEY, 'o1');
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-b', owner: 'o2', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'acquired',
        });
      });

      it("leaves another owner's lock alone", async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await store.idempotencyRelease(KEY, 'intruder');
        expect(
          (await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 10_000 })).outcome,
        ).toBe('in_flight');
        await expect(store.idempotencyComplete(KEY, 'o1', response('done'), 60_000)).resolves.toBe(true);
      });

      it('leaves a completed record alone, even for its owner', async () => {
        await store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o1', lockTtlMs: 10_000 });
        await store.idempotencyComplete(KEY, 'o1', response('done'), 60_000);
        await store.idempotencyRelease(KEY, 'o1');
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp-a', owner: 'o2', lockTtlMs: 10_000 }),
        ).resolves.toEqual({
          outcome: 'completed',
          response: response('done'),
        });
      });

      it('resolves for a missing key', async () => {
        await expect(store.idempotencyRelease(KEY, 'o1')).resolves.toBeUndefined();
      });
    });

    describe('claimNonce', () => {
      const fresh = async (key: string, ttlMs = 60_000): Promise<boolean> => (await store.claimNonce(key, ttlMs)).fresh;

      it('is fresh the first time only', async () => {
        await expect(fresh('nonce:{iss-1}:abc')).resolves.toBe(true);
        await expect(fresh('nonce:{iss-1}:abc')).resolves.toBe(false);
        await expect(fresh('nonce:{iss-1}:abc')).resolves.toBe(false);
        await expect(fresh('nonce:{iss-1}:def')).resolves.toBe(true);
      });

      it('can be claimed again after the TTL', async () => {
        await expect(fresh('nonce:{iss-1}:abc', 150)).resolves.toBe(true);
        await expect(fresh('nonce:{iss-1}:abc', 150)).resolves.toBe(false);
        await passTime(220);
        await expect(fresh('nonce:{iss-1}:abc', 150)).resolves.toBe(true);
      });

      it('gives exactly one of 100 concurrent claims fresh', async () => {
        const results = await Promise.all(Array.from({ length: 100 }, () => fresh('nonce:{iss-1}:race')));
        expect(results.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('claimNonce: the epoch marker', () => {
      it('has one from the first claim on an empty store, no later than that claim', async () => {
        const claim = await store.claimNonce('nonce:{iss-1}:first', 60_000);
        expect(claim.fresh).toBe(true);
        expect(Number.isSafeInteger(claim.epochMs)).toBe(true);
        expect(claim.epochMs).toBeLessThanOrEqual(harness.now());
        // Made for this test's store, not left over from an earlier one.
        expect(claim.epochMs).toBeGreaterThan(harness.now() - 10_000);
      });

      it('returns the same marker with every later claim, fresh or not, as time passes', async () => {
        const { epochMs } = await store.claimNonce('nonce:{iss-1}:a', 60_000);
        await passTime(50);
        await expect(store.claimNonce('nonce:{iss-1}:a', 60_000)).resolves.toEqual({ fresh: false, epochMs });
        await expect(store.claimNonce('nonce:{iss-2}:b', 60_000)).resolves.toEqual({ fresh: true, epochMs });
        const concurrent = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.claimNonce(`nonce:{iss-3}:${i}`, 60_000)),
        );
        expect(new Set(concurrent.map((claim) => claim.epochMs))).toEqual(new Set([epochMs]));
      });

      it('forgets its nonces when emptied, and then has a new marker, from no earlier than the loss', async () => {
        const before = await store.claimNonce('nonce:{iss-1}:spent', 60_000);
        await passTime(50);
        const emptiedFrom = harness.now();
        store = await harness.empty();
        const after = await store.claimNonce('nonce:{iss-1}:spent', 60_000);
        // The store cannot tell this nonce was spent: only the later marker says so.
        expect(after.fresh).toBe(true);
        expect(after.epochMs).toBeGreaterThan(before.epochMs);
        expect(after.epochMs).toBeGreaterThanOrEqual(emptiedFrom);
        expect(after.epochMs).toBeLessThanOrEqual(harness.now());
        await expect(store.claimNonce('nonce:{iss-1}:other', 60_000)).resolves.toEqual({
          fresh: true,
          epochMs: after.epochMs,
        });
      });
    });

    describe('nonceEpoch', () => {
      it('is the marker every claim then carries, made by the first call on an empty store', async () => {
        const marker = await store.nonceEpoch();
        expect(marker).toBeLessThanOrEqual(harness.now());
        expect(marker).toBeGreaterThan(harness.now() - 10_000);
        await passTime(50);
        await expect(store.nonceEpoch()).resolves.toBe(marker);
        await expect(store.claimNonce('nonce:{iss-1}:after-epoch', 60_000)).resolves.toEqual({
          fresh: true,
          epochMs: marker,
        });
      });

      it('after the store is emptied, makes a new marker before any claim', async () => {
        const before = await store.nonceEpoch();
        await passTime(50);
        const emptiedFrom = harness.now();
        store = await harness.empty();
        const after = await store.nonceEpoch();
        expect(after).toBeGreaterThan(before);
        expect(after).toBeGreaterThanOrEqual(emptiedFrom);
        await expect(store.claimNonce('nonce:{iss-1}:later', 60_000)).resolves.toEqual({ fresh: true, epochMs: after });
      });
    });

    describe('rateLimit (GCRA)', () => {
      // T = 1 s: a burst completes well within one interval, even on a busy machine.
      const cell = { key: 'rl:{acct-1}:orders', limit: 5, periodMs: 5_000 };
      // T = 200 ms, for the tests that wait.
      const quick = { key: 'rl:{acct-1}:quick', limit: 4, periodMs: 800 };

      it('allows a burst of `limit`, counting down, then denies', async () => {
        for (let i = 1; i <= 5; i++) {
          const result = await store.rateLimit(cell);
          expect(result).toMatchObject({ allowed: true, remaining: 5 - i, retryAfterMs: 0 });
          // The bucket is full again i intervals after this request.
          expect(result.resetMs).toBeGreaterThan((i - 1) * 1_000);
          expect(result.resetMs).toBeLessThanOrEqual(i * 1_000);
        }
        const denied = await store.rateLimit(cell);
        expect(denied.allowed).toBe(false);
        expect(denied.remaining).toBe(0);
        expect(denied.retryAfterMs).toBeGreaterThan(0);
        expect(denied.retryAfterMs).toBeLessThanOrEqual(1_000);
        expect(denied.resetMs).toBeGreaterThan(4_000);
        expect(denied.resetMs).toBeLessThanOrEqual(5_000);
      });

      it('does not count denied requests, and admits one more after retryAfterMs', async () => {
        for (let i = 0; i < 4; i++) await store.rateLimit(quick);
        let denied = await store.rateLimit(quick);
        for (let i = 0; i < 10; i++) {
          denied = await store.rateLimit(quick);
          expect(denied.allowed).toBe(false);
        }
        await passTime(denied.retryAfterMs + 10);
        const next = await store.rateLimit(quick);
        expect(next.allowed).toBe(true);
        expect(next.remaining).toBe(0);
        const after = await store.rateLimit(quick);
        expect(after.allowed).toBe(false);
        expect(after.retryAfterMs).toBeGreaterThan(0);
      });

      it('refills fully after one period', async () => {
        for (let i = 0; i < 4; i++) await store.rateLimit(quick);
        expect((await store.rateLimit(quick)).allowed).toBe(false);
        await passTime(820);
        for (let i = 1; i <= 4; i++) {
          expect(await store.rateLimit(quick)).toMatchObject({ allowed: true, remaining: 4 - i });
        }
        expect((await store.rateLimit(quick)).allowed).toBe(false);
      });

      it('keeps cells independent', async () => {
        for (let i = 0; i < 5; i++) await store.rateLimit(cell);
        expect((await store.rateLimit(cell)).allowed).toBe(false);
        expect(await store.rateLimit({ ...cell, key: 'rl:{acct-2}:orders' })).toMatchObject({
          allowed: true,
          remaining: 4,
        });
      });

      it('admits exactly `limit` requests when the interval is not a whole number of milliseconds', async () => {
        const thirds = { key: 'rl:{acct-1}:thirds', limit: 3, periodMs: 1_000 };
        const results = [];
        const startedAt = harness.now();
        for (let i = 0; i < 4; i++) results.push(await store.rateLimit(thirds));
        // On a real clock the four calls take time, and the wait shrinks by it.
        const elapsedMs = harness.now() - startedAt;
        expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
        expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
        expect(results[3]?.retryAfterMs).toBeGreaterThanOrEqual(333 - elapsedMs);
        expect(results[3]?.retryAfterMs).toBeLessThanOrEqual(334);
      });

      it('with a limit of 1, waits about a whole period', async () => {
        const single = { key: 'rl:{acct-1}:single', limit: 1, periodMs: 10_000 };
        expect(await store.rateLimit(single)).toEqual({
          allowed: true,
          remaining: 0,
          resetMs: 10_000,
          retryAfterMs: 0,
        });
        const denied = await store.rateLimit(single);
        expect(denied.allowed).toBe(false);
        expect(denied.retryAfterMs).toBeGreaterThan(9_500);
        expect(denied.retryAfterMs).toBeLessThanOrEqual(10_000);
      });

      it('admits exactly `limit` of many concurrent requests', async () => {
        const busy = { key: 'rl:{acct-1}:busy', limit: 10, periodMs: 60_000 };
        const results = await Promise.all(Array.from({ length: 40 }, () => store.rateLimit(busy)));
        expect(results.filter((r) => r.allowed)).toHaveLength(10);
        expect(
          results
            .filter((r) => r.allowed)
            .map((r) => r.remaining)
            .sort((a, b) => a - b),
        ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      });

      it('rejects a limit or period no store can honour', async () => {
        await expect(store.rateLimit({ ...cell, limit: 0 })).rejects.toBeInstanceOf(InvalidStoreInputError);
        await expect(store.rateLimit({ ...cell, periodMs: 1.5 })).rejects.toBeInstanceOf(InvalidStoreInputError);
        await expect(store.rateLimit({ ...cell, limit: 1_001, periodMs: 1 })).rejects.toBeInstanceOf(
          InvalidStoreInputError,
        );
        await expect(store.rateLimit({ ...cell, limit: 1_000, periodMs: 1 })).resolves.toMatchObject({
          allowed: true,
          remaining: 999,
        });
      });
    });

    describe('cache', () => {
      it('returns null for a missing key, then the latest value', async () => {
        await expect(store.cacheGet('cursor:{acct-1}:p1')).resolves.toBeNull();
        await store.cacheSet('cursor:{acct-1}:p1', 'first', 60_000);
        await expect(store.cacheGet('cursor:{acct-1}:p1')).resolves.toBe('first');
        await store.cacheSet('cursor:{acct-1}:p1', 'second ✓', 60_000);
        await expect(store.cacheGet('cursor:{acct-1}:p1')).resolves.toBe('second ✓');
      });

      it('forgets a value after its TTL', async () => {
        await store.cacheSet('cursor:{acct-1}:p1', 'soon gone', 150);
        await expect(store.cacheGet('cursor:{acct-1}:p1')).resolves.toBe('soon gone');
        await passTime(220);
        await expect(store.cacheGet('cursor:{acct-1}:p1')).resolves.toBeNull();
      });
    });

    describe('arguments', () => {
      it('rejects TTLs that are not positive whole milliseconds', async () => {
        await expect(store.claimNonce('nonce:{iss-1}:x', 0)).rejects.toBeInstanceOf(InvalidStoreInputError);
        await expect(store.cacheSet('cursor:{acct-1}:x', 'v', -5)).rejects.toBeInstanceOf(InvalidStoreInputError);
        await expect(
          store.idempotencyBegin({ key: KEY, fingerprint: 'fp', owner: 'o', lockTtlMs: 0.5 }),
        ).rejects.toBeInstanceOf(InvalidStoreInputError);
        await expect(store.idempotencyComplete(KEY, 'o', response('x'), Number.NaN)).rejects.toBeInstanceOf(
          InvalidStoreInputError,
        );
        // Nothing was written by the rejected calls.
        await expect(store.claimNonce('nonce:{iss-1}:x', 1_000)).resolves.toMatchObject({ fresh: true });
      });
    });

    describe('lifecycle', () => {
      it('answers ping while open and is unavailable once closed', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
        await store.close();
        await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store.claimNonce('nonce:{iss-1}:after-close', 1_000)).rejects.toBeInstanceOf(
          StoreUnavailableError,
        );
        await expect(store.close()).resolves.toBeUndefined();
      });
    });
  });
}
