/**
 * One charge of one GCRA cell as both parts make it (src/lib/store/rate-limit-cell.ts): on the
 * in-process store with a fixed clock, the verdict and the header arithmetic (RateLimit-Reset,
 * Retry-After in whole seconds, at least 1); on a Redis nobody answers, the request let through
 * and the outage reported.
 */
import { describe, expect, it } from 'vitest';

import { MemoryStore } from '../../../src/cli/store/memory-store.js';
import { RedisStore } from '../../../src/cli/store/redis-store.js';
import { StoreUnavailableError } from '../../../src/lib/errors/internal-errors.js';
import {
  chargeCell,
  isOverLimit,
  RATE_LIMIT_PERIOD_MS,
  resetSeconds,
  retryAfterSeconds,
} from '../../../src/lib/store/rate-limit-cell.js';

const T0 = Date.UTC(2026, 11, 1);

describe('chargeCell', () => {
  it('admits the limit at once, then refuses with the seconds to wait; the reset counts to a full cell', async () => {
    let now = T0;
    const store = new MemoryStore({ now: () => now });
    const noOutage = () => {
      throw new Error('the store is up');
    };
    const charges = [];
    for (let i = 0; i < 4; i += 1) charges.push(await chargeCell(store, 'cell', 4, noOutage));
    expect(charges.map(isOverLimit)).toEqual([false, false, false, false]);
    // Each request takes a quarter of the period: 2.5, 5, 7.5 and 10 s until the cell is full.
    expect(charges.map(resetSeconds)).toEqual([3, 5, 8, 10]);
    const refused = await chargeCell(store, 'cell', 4, noOutage);
    expect(isOverLimit(refused)).toBe(true);
    expect(refused.limit).toBe(4);
    expect(retryAfterSeconds(refused.result!)).toBe(3);
    expect(resetSeconds(refused)).toBe(10);
    // Another cell is another budget.
    expect(isOverLimit(await chargeCell(store, 'other', 4, noOutage))).toBe(false);
    // One interval later, one request more.
    now = T0 + RATE_LIMIT_PERIOD_MS / 4;
    expect(isOverLimit(await chargeCell(store, 'cell', 4, noOutage))).toBe(false);
    expect(isOverLimit(await chargeCell(store, 'cell', 4, noOutage))).toBe(true);
    await store.close();
  });

  it('never says less than one second to wait', () => {
    expect(retryAfterSeconds({ allowed: false, remaining: 0, resetMs: 10, retryAfterMs: 1 })).toBe(1);
    expect(retryAfterSeconds({ allowed: false, remaining: 0, resetMs: 10, retryAfterMs: 0 })).toBe(1);
  });

  it('lets the request through when the store is down, and says so', async () => {
    // Nothing listens on port 1 of loopback.
    const store = new RedisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 100, connectTimeoutMs: 100 });
    const outages: StoreUnavailableError[] = [];
    try {
      const charge = await chargeCell(store, 'cell', 4, (error) => outages.push(error));
      expect(charge).toEqual({ limit: 4, result: null });
      expect(isOverLimit(charge)).toBe(false);
      expect(resetSeconds(charge)).toBe(0);
      expect(outages).toHaveLength(1);
      expect(outages[0]).toBeInstanceOf(StoreUnavailableError);
    } finally {
      await store.close();
    }
  });
});
