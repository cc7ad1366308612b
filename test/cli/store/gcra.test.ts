import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { gcraStep } from '../../../src/cli/store/gcra.js';

/** Runs `count` requests at one instant, threading the stored TAT like a store does. */
function burst(
  limit: number,
  periodMs: number,
  nowMs: number,
  count: number,
): { results: ReturnType<typeof gcraStep>[]; tatUs?: number } {
  let tatUs: number | undefined;
  const results = [];
  for (let i = 0; i < count; i++) {
    const step = gcraStep(tatUs, nowMs * 1000, limit, periodMs);
    if (step.store) tatUs = step.store.tatUs;
    results.push(step);
  }
  return { results, tatUs };
}

/** Every input the stores accept (at most one request per microsecond), now up to the year 2100. */
const inputs = fc
  .record({ periodMs: fc.integer({ min: 1, max: 86_400_000 }), nowMs: fc.integer({ min: 0, max: 4_102_444_800_000 }) })
  .chain(({ periodMs, nowMs }) =>
    fc.integer({ min: 1, max: Math.min(2_000, periodMs * 1000) }).map((limit) => ({ limit, periodMs, nowMs })),
  );

describe('gcraStep', () => {
  it('admits exactly `limit` at once from a full bucket, counting remaining down to 0', () => {
    fc.assert(
      fc.property(inputs, ({ limit, periodMs, nowMs }) => {
        const { results } = burst(limit, periodMs, nowMs, limit + 1);
        const allowed = results.slice(0, limit);
        expect(allowed.every((s) => s.result.allowed)).toBe(true);
        expect(allowed.map((s) => s.result.remaining)).toEqual(Array.from({ length: limit }, (_, i) => limit - 1 - i));
        const denied = results[limit]?.result;
        expect(denied?.allowed).toBe(false);
        expect(denied?.remaining).toBe(0);
        expect(denied?.retryAfterMs).toBeGreaterThanOrEqual(1);
        expect(denied?.retryAfterMs).toBeLessThanOrEqual(Math.ceil(periodMs / limit));
        expect(denied?.resetMs).toBeLessThanOrEqual(periodMs);
      }),
      { numRuns: 200 },
    );
  });

  it('admits one more request exactly when retryAfterMs has passed, and not a millisecond before', () => {
    fc.assert(
      fc.property(inputs, ({ limit, periodMs, nowMs }) => {
        const { results, tatUs } = burst(limit, periodMs, nowMs, limit + 1);
        const wait = results[limit]?.result.retryAfterMs ?? 0;
        expect(gcraStep(tatUs, (nowMs + wait - 1) * 1000, limit, periodMs).result.allowed).toBe(false);
        expect(gcraStep(tatUs, (nowMs + wait) * 1000, limit, periodMs).result.allowed).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('stores the TAT only for allowed requests, with a TTL that ends when the bucket is full again', () => {
    const allowed = gcraStep(undefined, 5_000_000, 4, 1_000);
    expect(allowed.store).toEqual({ tatUs: 5_250_000, ttlMs: 250 });
    expect(allowed.result.resetMs).toBe(250);
    const full = burst(4, 1_000, 5_000, 5);
    expect(full.results[4]?.store).toBeUndefined();
    expect(full.tatUs).toBe(6_000_000);
  });

  it('forgets a TAT from the past: an idle cell is a full bucket', () => {
    expect(gcraStep(1_000_000, 9_000_000, 4, 1_000).result).toEqual({
      allowed: true,
      remaining: 3,
      resetMs: 250,
      retryAfterMs: 0,
    });
  });
});
