/**
 * When the v3 client (client.ts) sends a request again, and after how long: the error
 * envelope's retryStrategy (the catalog's retry class, src/lib/errors/v3-error-catalog.ts, resolved by
 * the core for a read or a write), Retry-After, and bounds (attempts, longest wait, jitter). A
 * write is sent again only with its Idempotency-Key, the same one. Pure: no I/O, no clock.
 */
import type { RetryStrategy } from '../errors/v3-error-catalog.js';

export interface RetryPolicy {
  /** Attempts in all, the first included; 1 turns retries off. */
  readonly maxAttempts: number;
  /** The first backoff's ceiling; each further attempt doubles it (full jitter below it). */
  readonly baseDelayMs: number;
  /** The longest wait before an attempt; an answer asking for longer (Retry-After) is handed back instead. */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 250, maxDelayMs: 20_000 };

/** What an attempt ended with. */
export type AttemptOutcome =
  | {
      readonly kind: 'response';
      readonly status: number;
      /** The v3 envelope's retryStrategy; undefined for an answer that is not a v3 error (a proxy's). */
      readonly retryStrategy: RetryStrategy | undefined;
      /** The Retry-After header as received, null when absent. */
      readonly retryAfter: string | null;
    }
  /** No answer: the connection failed or was cut; the request may or may not have run. */
  | { readonly kind: 'network' };

export interface RetryInput {
  /** The attempt that just ended, from 1. */
  readonly attempt: number;
  readonly method: string;
  readonly hasIdempotencyKey: boolean;
  readonly outcome: AttemptOutcome;
}

/** Methods that do the same when sent twice (RFC 9110 9.2.2); any other needs an Idempotency-Key to be sent again. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Statuses of a gateway or proxy in front of the API that ran nothing it can tell of. */
const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

/** Seconds or an HTTP date (RFC 9110 10.2.3), as milliseconds from `nowMs`; null when absent or unreadable. */
export function retryAfterMs(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with the day's name; Date.parse alone would take "-1" for a year.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/** The strategy an answer gets: the envelope's, or for a proxy's answer the one its status implies. */
function strategyOf(outcome: AttemptOutcome): RetryStrategy | 'NETWORK' {
  if (outcome.kind === 'network') return 'NETWORK';
  if (outcome.retryStrategy !== undefined) return outcome.retryStrategy;
  if (outcome.status === 429) return 'WAIT_THEN_RETRY_SAME_KEY';
  return UNAVAILABLE_STATUSES.has(outcome.status) ? 'RETRY_WITH_BACKOFF' : 'TERMINAL';
}

/** Whether the strategy lets the client itself send the request again, unchanged. */
function retryable(strategy: RetryStrategy | 'NETWORK'): boolean {
  switch (strategy) {
    case 'RETRY_WITH_BACKOFF':
    case 'WAIT_THEN_RETRY_SAME_KEY':
    case 'NETWORK':
      return true;
    // The request must change, or the caller must first look at what happened (details.resourceId).
    case 'TERMINAL':
    case 'FIX_AND_RESUBMIT':
    case 'CHECK_STATE_THEN_RETRY':
      return false;
  }
}

/**
 * How long to wait before the next attempt, or null for none: the answer is final. `random`
 * returns [0, 1) and spreads the waits of many clients (full jitter on backoff, up to one base
 * delay on top of Retry-After).
 */
export function retryDelayMs(
  input: RetryInput,
  policy: RetryPolicy,
  nowMs: number,
  random: () => number = Math.random,
): number | null {
  if (input.attempt >= policy.maxAttempts) return null;
  if (!retryable(strategyOf(input.outcome))) return null;
  // A write sent again without its key could run twice.
  if (!IDEMPOTENT_METHODS.has(input.method.toUpperCase()) && !input.hasIdempotencyKey) return null;
  const asked = input.outcome.kind === 'response' ? retryAfterMs(input.outcome.retryAfter, nowMs) : null;
  if (asked !== null) {
    if (asked > policy.maxDelayMs) return null;
    return Math.min(policy.maxDelayMs, asked + Math.floor(random() * policy.baseDelayMs));
  }
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (input.attempt - 1));
  return Math.floor(random() * ceiling);
}
