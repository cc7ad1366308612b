/**
 * The v3 client's retry rules (src/lib/client/retry.ts) as a pure function: each retry strategy
 * of the error catalog, Retry-After in both forms, the bounds, the jitter, and a write never
 * sent again without its Idempotency-Key. The same rules against a real core are in
 * client.test.ts.
 */
import { describe, expect, it } from 'vitest';

import { type AttemptOutcome, retryAfterMs, retryDelayMs, type RetryPolicy } from '../../../src/lib/client/retry.js';
import {
  ERROR_CATALOG,
  ERROR_CODES,
  type RetryStrategy,
  retryStrategyFor,
} from '../../../src/lib/errors/v3-error-catalog.js';

const POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 5_000 };
const NOW = Date.parse('2026-11-28T12:00:00Z');
const HIGHEST = () => 0.999_999;
const LOWEST = () => 0;

function answer(
  status: number,
  retryStrategy: RetryStrategy | undefined,
  retryAfter: string | null = null,
): AttemptOutcome {
  return { kind: 'response', status, retryStrategy, retryAfter };
}

function delay(
  outcome: AttemptOutcome,
  options: { attempt?: number; method?: string; key?: boolean; random?: () => number } = {},
): number | null {
  return retryDelayMs(
    {
      attempt: options.attempt ?? 1,
      method: options.method ?? 'GET',
      hasIdempotencyKey: options.key ?? false,
      outcome,
    },
    POLICY,
    NOW,
    options.random ?? HIGHEST,
  );
}

/** The strategies whose advice the client can follow itself, by sending the same request again. */
const CLIENT_RETRIES: readonly RetryStrategy[] = ['RETRY_WITH_BACKOFF', 'WAIT_THEN_RETRY_SAME_KEY'];

describe('retryDelayMs', () => {
  it('follows every code of the catalog, for a read and for a write with its key', () => {
    for (const code of ERROR_CODES)
      for (const write of [false, true]) {
        const strategy = retryStrategyFor(code, write);
        const outcome = answer(ERROR_CATALOG[code].status, strategy);
        const result = delay(outcome, { method: write ? 'POST' : 'GET', key: write });
        expect(result === null, `${code} (${write ? 'write' : 'read'}): ${strategy}`).toBe(
          !CLIENT_RETRIES.includes(strategy),
        );
      }
  });

  it('never sends a POST again without an Idempotency-Key, whatever the answer', () => {
    expect(delay(answer(503, 'RETRY_WITH_BACKOFF'), { method: 'POST', key: false })).toBeNull();
    expect(delay(answer(429, 'WAIT_THEN_RETRY_SAME_KEY', '1'), { method: 'POST', key: false })).toBeNull();
    expect(delay({ kind: 'network' }, { method: 'POST', key: false })).toBeNull();
    expect(delay({ kind: 'network' }, { method: 'POST', key: true })).not.toBeNull();
    expect(delay({ kind: 'network' }, { method: 'DELETE', key: false })).not.toBeNull();
  });

  it('waits what Retry-After asks, seconds or an HTTP date, plus at most one base delay of jitter', () => {
    expect(delay(answer(429, 'WAIT_THEN_RETRY_SAME_KEY', '2'), { random: LOWEST })).toBe(2_000);
    expect(delay(answer(429, 'WAIT_THEN_RETRY_SAME_KEY', '2'), { random: HIGHEST })).toBe(2_099);
    expect(delay(answer(503, 'RETRY_WITH_BACKOFF', 'Sat, 28 Nov 2026 12:00:03 GMT'), { random: LOWEST })).toBe(3_000);
  });

  it('hands the answer back when Retry-After asks for longer than maxDelayMs', () => {
    expect(delay(answer(429, 'WAIT_THEN_RETRY_SAME_KEY', '6'))).toBeNull();
  });

  it('backs off exponentially with full jitter, capped at maxDelayMs, for at most maxAttempts attempts', () => {
    const outcome = answer(503, 'RETRY_WITH_BACKOFF');
    expect([1, 2, 3].map((attempt) => delay(outcome, { attempt }))).toEqual([99, 199, 399]);
    expect(delay(outcome, { attempt: 1, random: LOWEST })).toBe(0);
    expect(delay(outcome, { attempt: 4 })).toBeNull();
    const long = retryDelayMs(
      { attempt: 9, method: 'GET', hasIdempotencyKey: false, outcome },
      { ...POLICY, maxAttempts: 20 },
      NOW,
      HIGHEST,
    );
    expect(long).toBe(4_999);
  });

  it('treats a proxy’s answer without an envelope by its status: 429 waits, 502 to 504 back off, others are final', () => {
    expect(delay(answer(429, undefined, '1'), { random: LOWEST })).toBe(1_000);
    for (const status of [502, 503, 504]) expect(delay(answer(status, undefined))).not.toBeNull();
    for (const status of [400, 404, 500]) expect(delay(answer(status, undefined))).toBeNull();
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates, a date in the past as no wait, and anything else as absent', () => {
    expect(retryAfterMs('0', NOW)).toBe(0);
    expect(retryAfterMs(' 7 ', NOW)).toBe(7_000);
    expect(retryAfterMs('Sat, 28 Nov 2026 11:59:00 GMT', NOW)).toBe(0);
    expect(retryAfterMs(null, NOW)).toBeNull();
    expect(retryAfterMs('soon', NOW)).toBeNull();
    expect(retryAfterMs('-1', NOW)).toBeNull();
  });
});
