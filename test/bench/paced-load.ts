/**
 * Fixed-rate runs: latency at a given offered load (a fraction of a case's peak), rather than at
 * saturation. Requests are sent open loop on an even schedule, request i at start + i/rate,
 * whatever the answers do, over an undici Pool of `connections` connections (one request in
 * flight each); the schedule is kept by a loop that wakes about every millisecond and sends
 * what is due.
 *
 * Not autocannon's `overallRate`: autocannon 8 paces per connection and per second (each
 * connection sends its share of the second back to back as soon as the second starts, then
 * waits), so at half of peak every second begins with half a second at full concurrency, and
 * its latencies are saturation latencies. Here the offered load is spread over the second.
 *
 * Latency is from dispatch to the last byte of the answer, 2xx only, as in the other runs. How
 * late the loop sent against the schedule is kept apart (dispatch lag), so that a load generator
 * that fell behind is seen rather than hidden in the numbers.
 *
 * A run begins with a lead-in (`leadInSeconds`) on the same schedule and the same connections,
 * whose answers are not counted: the measured part starts on open connections at a steady rate.
 * Without it, every row's first 100 ms paid for opening its connections (the client's and the
 * gateway's upstream ones, idle-closed while other rows ran) and held most of its slowest 1%.
 *
 * With `samplesFile`, each measured 2xx answer is also written out, one CSV line each, to find
 * when the slowest ones happened and what the servers were doing then (README, Benchmarks).
 */
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { assertPoolLastsTheRun, FAILURE_SAMPLES, isTimeout, percentile, sendPrepared, type RowMeasurement } from './measurement.js';
import { RequestPool, type PreparedRequest } from './requests.js';


export interface PacedRunOptions {
  /** Offered requests per second. */
  readonly rate: number;
  readonly seconds: number;
  /** Sent before the measured seconds, on the same schedule and connections, and not counted. */
  readonly leadInSeconds: number;
  /** Connections of the pool: the most requests in flight at once. */
  readonly connections: number;
  /** How long a made request stays acceptable (its token's lifetime). */
  readonly lifetimeSeconds: number;
  readonly label: string;
  /** Where to write the measured answers as CSV: SAMPLES_CSV_HEADER, then a line per answer. */
  readonly samplesFile?: string;
}

/** Dispatch time as Unix epoch milliseconds (to line up with other clocks), then durations in ms; the last two from Server-Timing, empty when absent. */
export const SAMPLES_CSV_HEADER = 'dispatched_epoch_ms,latency_ms,upstream_ms,gateway_ms';

export interface PacedRunResult {
  readonly row: RowMeasurement;
  /** How late requests were sent against the schedule, in milliseconds. */
  readonly dispatchLagMs: { readonly p99: number; readonly max: number };
  /** The first few failures (status and body, or the error). */
  readonly failureSamples: readonly string[];
}

/**
 * One open-loop run at `rate` req/s for `leadInSeconds` + `seconds` against url, each request made
 * (signed) before the run and sent once; only the last `seconds` are measured. Resolves when every
 * request sent has its answer (or its timeout).
 */
export async function pacedRun(url: string, make: () => Promise<PreparedRequest>, options: PacedRunOptions): Promise<PacedRunResult> {
  const leadIn = Math.round(options.rate * options.leadInSeconds);
  const count = leadIn + Math.max(1, Math.round(options.rate * options.seconds));
  const requests = await RequestPool.fill(make, count);
  assertPoolLastsTheRun(requests, options.leadInSeconds + options.seconds, options.lifetimeSeconds);
  const pool = new Pool(url, { connections: options.connections, pipelining: 1 });
  const latencies: number[] = [];
  const added: number[] = [];
  const own: number[] = [];
  const lags: number[] = [];
  const samples: string[] = [];
  const statusCodes: Record<string, number> = {};
  const failureSamples: string[] = [];
  let errors = 0;
  let timeouts = 0;
  let non2xx = 0;
  let answered = 0;
  let lastAnswer = 0;
  const sample = (text: string): void => {
    if (failureSamples.length < FAILURE_SAMPLES) failureSamples.push(text);
  };

  const send = async (request: PreparedRequest, counted: boolean): Promise<void> => {
    const dispatched = performance.now();
    try {
      const response = await sendPrepared(pool, request);
      const now = performance.now();
      statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
      if (counted) {
        answered += 1;
        lastAnswer = now;
      }
      if (response.statusCode >= 200 && response.statusCode < 300) {
        if (!counted) return;
        latencies.push(now - dispatched);
        if (options.samplesFile !== undefined) {
          samples.push(`${(performance.timeOrigin + dispatched).toFixed(3)},${(now - dispatched).toFixed(3)},${response.upstreamMs ?? ''},${response.gatewayMs ?? ''}`);
        }
        if (response.upstreamMs !== undefined) added.push(now - dispatched - response.upstreamMs);
        if (response.gatewayMs !== undefined) own.push(response.gatewayMs);
      } else {
        non2xx += 1;
        sample(`${response.statusCode} ${response.body.slice(0, 200)}`);
      }
    } catch (error) {
      errors += 1;
      if (isTimeout(error)) timeouts += 1;
      sample(error instanceof Error ? error.message : String(error));
    }
  };

  const inFlight: Promise<void>[] = [];
  const intervalMs = 1000 / options.rate;
  const started = performance.now();
  const measuredFrom = started + leadIn * intervalMs;
  try {
    let next = 0;
    while (next < count) {
      const now = performance.now();
      const due = Math.min(count, Math.floor((now - started) / intervalMs) + 1);
      for (; next < due; next += 1) {
        const counted = next >= leadIn;
        if (counted) lags.push(now - (started + next * intervalMs));
        const request = requests.take();
        if (request === undefined) throw new Error(`the paced run's pool of ${count} requests ran dry`);
        inFlight.push(send(request, counted));
      }
      if (next < count) await sleep(Math.max(0, Math.min(1, started + next * intervalMs - performance.now())));
    }
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  if (options.samplesFile !== undefined) await writeFile(options.samplesFile, [SAMPLES_CSV_HEADER, ...samples, ''].join('\n'));
  const seconds = Math.max((lastAnswer - measuredFrom) / 1000, 1e-3);
  latencies.sort((a, b) => a - b);
  added.sort((a, b) => a - b);
  own.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  return {
    row: {
      label: options.label,
      requestsPerSecond: answered / seconds,
      latencyMs: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
      errors,
      timeouts,
      non2xx,
      statusCodes,
      offeredRate: options.rate,
      ...(added.length > 0 && added.length === latencies.length ? { addedMs: { p50: percentile(added, 0.5), p99: percentile(added, 0.99) } } : {}),
      ...(own.length > 0 && own.length === latencies.length ? { gatewayMs: { p50: percentile(own, 0.5), p99: percentile(own, 0.99) } } : {}),
    },
    dispatchLagMs: { p99: percentile(lags, 0.99), max: lags.at(-1) ?? 0 },
    failureSamples,
  };
}
