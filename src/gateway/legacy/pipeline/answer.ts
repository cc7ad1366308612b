/**
 * What a legacy request builds on its way through the steps: the answer about to be sent (kept
 * whole so that it can be stored for replay first) and what the request learned from v3 so far.
 */
import type { StoredResponse } from '../../../lib/store/ephemeral-store.js';
import { SharedDeadline } from '../../upstream/v3-client.js';
import type { LegacyRateLimitCharge } from '../runtime/legacy-rate-limits.js';

export interface LegacyAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string>;
  /** The legacy `error.code`, for the replay decision. */
  readonly legacyCode?: string;
  /** The v3 error a failure stands for, for the readiness check (blockers.ts): what the next generation would answer to it. */
  readonly v3Error?: { readonly code: string; readonly type?: string };
}

export interface RequestState {
  /** The v3 headers to pass on (the trace id, and Retry-After for the answers that mean "wait"), even on failure. */
  upstreamHeaders: Record<string, string>;
  /** The request's own rate-limit charge, once made: its cell's headers go on the answer. */
  rateLimit: LegacyRateLimitCharge | null;
  /** Time spent waiting on v3 answers, summed over this request's calls. */
  upstreamMs: number;
  /** When the handler took the request (performance.now()). */
  readonly startedAt: number;
  /** What bounds this request's v3 calls together, from the first one's sending. */
  readonly upstreamDeadline: SharedDeadline;
}

export function newRequestState(): RequestState {
  return {
    upstreamHeaders: {},
    rateLimit: null,
    upstreamMs: 0,
    startedAt: performance.now(),
    upstreamDeadline: new SharedDeadline(),
  };
}

export function replayed(response: StoredResponse): LegacyAnswer {
  return {
    status: response.statusCode,
    body: Buffer.from(response.bodyBase64, 'base64').toString('utf8'),
    headers: { ...response.headers, 'idempotency-replayed': 'true' },
  };
}

/**
 * `Server-Timing: upstream;dur=..., gateway;dur=...` (W3C Server Timing) on every legacy answer:
 * how long the request waited on v3, and the handler's own time besides (authentication, the
 * idempotency record, signing, translation). Operators can watch both per request.
 */
export function serverTiming(state: RequestState): string {
  const own = Math.max(0, performance.now() - state.startedAt - state.upstreamMs);
  return `upstream;dur=${state.upstreamMs.toFixed(3)}, gateway;dur=${own.toFixed(3)}`;
}
