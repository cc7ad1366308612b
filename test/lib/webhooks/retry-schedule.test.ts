/**
 * The backoff schedule both webhook workers follow (the core's v3 deliveries, the gateway's
 * legacy ones): exponential ceilings to a cap, "equal" jitter, and the deadline, under the
 * default policy and under one of seconds as the legacy tests use.
 */
import { describe, expect, it } from 'vitest';

import {
  DEFAULT_RETRY_POLICY,
  outcomeAfterAttempt,
  retryCeilingFor,
  retryDelayFor,
} from '../../../src/lib/webhooks/retry-schedule.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('the default policy', () => {
  it('is 5 min doubling to 24 h, for 72 h', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ baseMs: 5 * MINUTE, capMs: 24 * HOUR, maxAgeMs: 72 * HOUR });
    expect(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 40].map((failures) => retryCeilingFor(DEFAULT_RETRY_POLICY, failures)),
    ).toEqual([
      5 * MINUTE,
      10 * MINUTE,
      20 * MINUTE,
      40 * MINUTE,
      80 * MINUTE,
      160 * MINUTE,
      320 * MINUTE,
      640 * MINUTE,
      1280 * MINUTE,
      24 * HOUR,
      24 * HOUR,
      24 * HOUR,
    ]);
  });

  it('gives a receiver that never answers 12 to 15 attempts in the 72 hours, the last at the deadline', () => {
    // The shortest waits (half of each ceiling), the middle, the longest.
    for (const [random, expected] of [
      [() => 0, 15],
      [() => 0.5, 13],
      [() => 0.999_999, 12],
    ] as const) {
      const created = new Date(0);
      let now = created;
      let attempts = 0;
      for (;;) {
        attempts += 1;
        const outcome = outcomeAfterAttempt(DEFAULT_RETRY_POLICY, {
          succeeded: false,
          failures: attempts,
          now,
          eventCreatedAt: created,
          random,
        });
        if (outcome.status !== 'PENDING') break;
        now = outcome.nextAttemptAt;
      }
      expect(attempts).toBe(expected);
      expect(now.getTime()).toBe(72 * HOUR);
    }
  });
});

describe('a policy of seconds', () => {
  const policy = { baseMs: 300, capMs: 1_000, maxAgeMs: 60_000 };

  it('waits between half the ceiling and the ceiling, the ceiling doubling to the cap', () => {
    expect([1, 2, 3, 4, 30, 1_000].map((failures) => retryCeilingFor(policy, failures))).toEqual([
      300, 600, 1_000, 1_000, 1_000, 1_000,
    ]);
    expect(retryCeilingFor(policy, 0)).toBe(300);
    expect(retryDelayFor(policy, 1, () => 0)).toBe(150);
    expect(retryDelayFor(policy, 1, () => 0.5)).toBe(225);
    expect(retryDelayFor(policy, 2, () => 0.999_999)).toBe(599);
    for (let failures = 1; failures < 50; failures += 1) {
      const delay = retryDelayFor(policy, failures);
      expect(delay).toBeGreaterThanOrEqual(retryCeilingFor(policy, failures) / 2);
      expect(delay).toBeLessThan(retryCeilingFor(policy, failures));
    }
  });

  it('delivers on success, retries before the deadline (never after it) and gives up from it on', () => {
    const created = new Date(1_000_000);
    const at = (ms: number) => new Date(created.getTime() + ms);
    expect(
      outcomeAfterAttempt(policy, { succeeded: true, failures: 9, now: at(90_000), eventCreatedAt: created }),
    ).toEqual({ status: 'DELIVERED' });
    expect(
      outcomeAfterAttempt(policy, {
        succeeded: false,
        failures: 1,
        now: at(0),
        eventCreatedAt: created,
        random: () => 0,
      }),
    ).toEqual({ status: 'PENDING', nextAttemptAt: at(150) });
    expect(
      outcomeAfterAttempt(policy, {
        succeeded: false,
        failures: 5,
        now: at(59_900),
        eventCreatedAt: created,
        random: () => 0.99,
      }),
    ).toEqual({ status: 'PENDING', nextAttemptAt: at(60_000) });
    expect(
      outcomeAfterAttempt(policy, { succeeded: false, failures: 6, now: at(60_000), eventCreatedAt: created }),
    ).toEqual({ status: 'GAVE_UP' });
  });
});
