/**
 * What a measured run yields, and the rules every load generator of the bench (autocannon in
 * load.ts, the chained loop in chained-load.ts) follows: pool headroom, token lifetime, timeout.
 */
import type { Dispatcher } from 'undici';

import type { ChainedStats } from './chained-load.js';
import type { PoolStats, PreparedRequest, ReceivedResponse, RequestPool } from './requests.js';

export interface LoadSettings {
  readonly connections: number;
  readonly pipelining: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** Rounds of a side-by-side case (load.ts measureSideBySide). */
  readonly rounds: number;
  /** Where fixed-rate runs write their per-request samples; none when undefined. */
  readonly samplesDir: string | undefined;
}

/** One kind of request of a measured run: a row of the report. */
export interface RowMeasurement {
  /** What the row counts when a case has several (a chained plan's 'quotes', 'trades'); null for a case's only row. */
  readonly label: string | null;
  /** Responses per second: autocannon's mean of its per-second counts, or the count over the run for a chained plan. */
  readonly requestsPerSecond: number;
  /** Latency percentiles of the 2xx responses, in milliseconds, at microsecond resolution. */
  readonly latencyMs: { readonly p50: number; readonly p99: number };
  /** Requests without an answer: connection errors, timeouts included. */
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  /** Responses by status code. */
  readonly statusCodes: Readonly<Record<string, number>>;
  /** For a fixed-rate run (paced-load.ts): the requests per second offered; absent for a run at full speed. */
  readonly offeredRate?: number;
  /**
   * For a fixed-rate run whose every 2xx answer carried the gateway's Server-Timing: percentiles
   * of each request's latency less its upstream time, i.e. what the gateway added to that request.
   */
  readonly addedMs?: { readonly p50: number; readonly p99: number };
  /** Same runs: percentiles of the gateway's own handler time (Server-Timing `gateway`), the part of addedMs it spent working. */
  readonly gatewayMs?: { readonly p50: number; readonly p99: number };
  /**
   * For a row of a side-by-side case (load.ts measureSideBySide): its rate in each round, in
   * round order, so that a row is compared with its baseline round by round.
   */
  readonly roundRates?: readonly number[];
  /** Same rows: the CPU time one of its requests cost each server process, in microseconds, in the order the case gave the servers. */
  readonly cpuMicrosPerRequest?: readonly number[];
  /** Same rows: requests sent from an empty pool of signed requests over the rounds (each to a path that answers 404). */
  readonly poolDry?: number;
}

export interface CaseMeasurement {
  /** One row per kind of request, the case's own first. */
  readonly rows: readonly RowMeasurement[];
  /**
   * Requests (pairs, for a chained plan; deliveries, for a webhook backlog) per second the server
   * took in each warm-up round (one for reusable requests).
   */
  readonly warmupRates: readonly number[];
  /** For single-use requests and the first requests of a chained plan: the measured run's pool. */
  readonly pool: PoolStats | null;
  /** For chained plans: what the loop did besides the rows. */
  readonly chained: ChainedStats | null;
  /** What else the report says about the run, a line each (a self-measured case's method and side figures). */
  readonly notes: readonly string[];
}

/**
 * The measured pool holds this many times the last warm-up rate: the machine is shared, and
 * rates jump. Spare requests cost only signing time (about 0.1 ms each) and memory.
 */
export const MEASURED_POOL_HEADROOM = 3;
/** Seconds a request must still be valid for after the measured run ends (margin for clock granularity and slow responses). */
export const TOKEN_SAFETY_SECONDS = 10;
/** Seconds a request may wait for its answer; beyond it the load generator counts a timeout (an error). */
export const REQUEST_TIMEOUT_SECONDS = 10;
/** Failures a run keeps the text of, for its report. */
export const FAILURE_SAMPLES = 5;

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Sends one prepared request through an undici pool of a load run, with the bench's timeouts; its status and whole body. */
export async function sendPrepared(pool: Dispatcher, request: PreparedRequest): Promise<ReceivedResponse> {
  const response = await pool.request({
    method: request.method,
    path: request.path,
    headers: request.headers,
    body: request.body ?? null,
    headersTimeout: REQUEST_TIMEOUT_SECONDS * 1000,
    bodyTimeout: REQUEST_TIMEOUT_SECONDS * 1000,
  });
  const body = await response.body.text();
  const header = response.headers['server-timing'];
  const upstreamMs = serverTimingMs(header, UPSTREAM_TIMING);
  const gatewayMs = serverTimingMs(header, GATEWAY_TIMING);
  return {
    statusCode: response.statusCode,
    body,
    ...(upstreamMs === undefined ? {} : { upstreamMs }),
    ...(gatewayMs === undefined ? {} : { gatewayMs }),
  };
}

/** The two metrics of the gateway's Server-Timing, compiled once: every answer of a paced run is read with them. */
const UPSTREAM_TIMING = /(?:^|,)\s*upstream\s*;(?:[^,]*;)?\s*dur=([0-9.]+)/;
const GATEWAY_TIMING = /(?:^|,)\s*gateway\s*;(?:[^,]*;)?\s*dur=([0-9.]+)/;

/** A metric's duration in a Server-Timing header, by its pattern. */
function serverTimingMs(header: string | string[] | undefined, metric: RegExp): number | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  const match = text === undefined ? null : metric.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** True when sendPrepared failed because the answer (its headers or its body) did not come in time. */
export function isTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TIMEOUT_CODES.has(code);
}

export interface RunShape {
  readonly url: string;
  readonly settings: LoadSettings;
}

/** Nearest rank over sorted values: the smallest value at or above which the fraction p of them fall. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
}

/** A pool's last request may be sent at the end of the run: it must still be valid then. */
export function assertPoolLastsTheRun(pool: RequestPool, durationSeconds: number, lifetimeSeconds: number): void {
  const ageAtEnd = pool.ageSeconds() + durationSeconds;
  if (ageAtEnd > lifetimeSeconds - TOKEN_SAFETY_SECONDS) {
    throw new Error(
      `${pool.size} single-use requests took ${pool.ageSeconds().toFixed(1)} s to make; with a ${durationSeconds} s run the oldest would be ` +
        `${ageAtEnd.toFixed(0)} s old at the end, too close to their ${lifetimeSeconds} s lifetime. Shorten BENCH_DURATION.`,
    );
  }
}
