/**
 * The legacy limiter (src/gateway/legacy/runtime/legacy-rate-limits.ts) on the in-process store with a fixed
 * clock: a cell per key or client address and per class, apart from the core's v3 cells, with
 * the configured limits, and the two headers a legacy answer carries.
 */
import { describe, expect, it } from 'vitest';

import { MemoryStore } from '../../../../src/cli/store/memory-store.js';
import {
  legacyCellKey,
  LegacyRateLimiter,
  legacyRateLimitHeaders,
  type LegacyRateLimitSubject,
} from '../../../../src/gateway/legacy/runtime/legacy-rate-limits.js';

const KEY: LegacyRateLimitSubject = { kind: 'key', keyName: 'org/o1/apiKey/k1' };
const OTHER_KEY: LegacyRateLimitSubject = { kind: 'key', keyName: 'org/o1/apiKey/k2' };
const ADDRESS: LegacyRateLimitSubject = { kind: 'address', address: '2001:db8::7' };

describe('legacyCellKey', () => {
  it("names the gateway's own cells, by key or address and class, never the core's rl: cells", () => {
    expect(legacyCellKey(KEY, 'read')).toBe('lrl:{key:org/o1/apiKey/k1}:r');
    expect(legacyCellKey(KEY, 'write')).toBe('lrl:{key:org/o1/apiKey/k1}:w');
    expect(legacyCellKey(ADDRESS, 'read')).toBe('lrl:{ip:2001:db8::7}:r');
  });
});

describe('LegacyRateLimiter', () => {
  it('charges each key, address and class its own budget, with the limit of the class', async () => {
    const store = new MemoryStore({ now: () => Date.UTC(2026, 11, 1) });
    const limiter = new LegacyRateLimiter({ store, limits: { reads: 2, writes: 1 } });
    const allowed = async (subject: LegacyRateLimitSubject, rateClass: 'read' | 'write') =>
      (await limiter.charge(subject, rateClass)).result!.allowed;
    expect([await allowed(KEY, 'read'), await allowed(KEY, 'read'), await allowed(KEY, 'read')]).toEqual([
      true,
      true,
      false,
    ]);
    expect([await allowed(KEY, 'write'), await allowed(KEY, 'write')]).toEqual([true, false]);
    expect(await allowed(OTHER_KEY, 'read')).toBe(true);
    expect(await allowed(ADDRESS, 'read')).toBe(true);
    const charge = await limiter.charge(ADDRESS, 'write');
    expect(charge).toMatchObject({ subject: 'address', class: 'write', limit: 1 });
    expect(legacyRateLimitHeaders(charge)).toEqual({ 'ratelimit-limit': '1', 'ratelimit-reset': '10' });
    await store.close();
  });
});
