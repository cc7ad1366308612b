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
 * Without it, a row's first 100 ms paid for opening its connections (the client's and the
 * gateway's upstream ones) and held most of its slowest 1%.
 *
 * Rows to be compared run together (pacedTogether), each on its own schedule and connections,
 * interleaved: every stall of the shared machine (another process's burst, a scheduler tick)
 * falls on all of them at once, so a difference of their tails is the difference of the paths,
 * not of two stretches of the machine's time. Run one after the other, the v1 row's p99 less the
 * direct row's had ranged from +0.8 to +9.0 ms over 9 runs of the same code.
 *
 * With `samplesFile`, each measured 2xx answer is also written out, one CSV line each, to find
 * when the slowest ones happened and what the servers were doing then (README, Benchmarks).
 */
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

import { Pool } from 'undici';

import {
  assertPoolLastsTheRun,
  FAILURE_SAMPLES,
  isTimeout,
  percentile,
  type RowMeasurement,
  sendPrepared,
} from './measurement.js';
import { type PreparedRequest, RequestPool } from './requests.js';

/** A row of a paced run: one kind of request, to one server, at its own fixed rate. */
export interface PacedRow {
  readonly label: string;
  readonly url: string;
  /** Offered requests per second. */
  readonly rate: number;
  make(): Promise<PreparedRequest>;
  /** How long a made request stays acceptable (its token's lifetime). */
  readonly lifetimeSeconds: number;
  /** Where to write its measured answers as CSV (SAMPLES_CSV_HEADER, then a line per answer), if anywhere. */
  readonly samplesFile?: string;
}

export interface PacedRunOptions {
  /** Measured seconds. */
  readonly seconds: number;
  /** Sent before the measured seconds, on the same schedules and connections, and not counted. */
  readonly leadInSeconds: number;
  /** Connections of each row's pool: the most requests of that row in flight at once. */
  readonly connections: number;
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

/** What a row's requests gave. */
class PacedTally {
  readonly latencies: number[] = [];
  readonly added: number[] = [];
  readonly own: number[] = [];
  readonly lags: number[] = [];
  readonly samples: string[] = [];
  readonly statusCodes: Record<string, number> = {};
  readonly failureSamples: string[] = [];
  errors = 0;
  timeouts = 0;
  non2xx = 0;
  answered = 0;
  measuredSeconds = 0;

  constructor(readonly keepSamples: boolean) {}

  failure(text: string): void {
    if (this.failureSamples.length < FAILURE_SAMPLES) this.failureSamples.push(text);
  }

  result(label: string, rate: number): PacedRunResult {
    const sorted = (values: number[]) => values.sort((a, b) => a - b);
    const latencies = sorted(this.latencies);
    const added = sorted(this.added);
    const own = sorted(this.own);
    const lags = sorted(this.lags);
    return {
      row: {
        label,
        requestsPerSecond: this.answered / Math.max(this.measuredSeconds, 1e-3),
        latencyMs: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
        errors: this.errors,
        timeouts: this.timeouts,
        non2xx: this.non2xx,
        statusCodes: this.statusCodes,
        offeredRate: rate,
        ...(added.length > 0 && added.length === latencies.length
          ? { addedMs: { p50: percentile(added, 0.5), p99: percentile(added, 0.99) } }
          : {}),
        ...(own.length > 0 && own.length === latencies.length
          ? { gatewayMs: { p50: percentile(own, 0.5), p99: percentile(own, 0.99) } }
          : {}),
      },
      dispatchLagMs: { p99: percentile(lags, 0.99), max: lags.at(-1) ?? 0 },
      failureSamples: this.failureSamples,
    };
  }

  async writeSamples(file: string | undefined): Promise<void> {
    if (file !== undefined) await writeFile(file, [SAMPLES_CSV_HEADER, ...this.samples, ''].join('\n'));
  }
}

/** A row ready to run: its requests made, its connections, and its tally. */
interface ReadyRow {
  readonly row: PacedRow;
  readonly requests: RequestPool;
  /** Requests sent before the measured ones. */
  readonly leadIn: number;
  readonly count: number;
  readonly pool: Pool;
  readonly tally: PacedTally;
}

/**
 * Sends a row's requests open loop, request i due at startsAt + i/rate whatever the answers do,
 * and tallies the measured ones. Resolves when every request sent has its answer (or its timeout).
 */
async function sendOnSchedule(ready: ReadyRow, startsAt: number): Promise<void> {
  const { row, requests, leadIn, count, pool, tally } = ready;
  let lastAnswer = 0;

  const send = async (request: PreparedRequest, counted: boolean): Promise<void> => {
    const dispatched = performance.now();
    try {
      const response = await sendPrepared(pool, request);
      const now = performance.now();
      tally.statusCodes[response.statusCode] = (tally.statusCodes[response.statusCode] ?? 0) + 1;
      if (counted) {
        tally.answered += 1;
        lastAnswer = now;
      }
      if (response.statusCode >= 200 && response.statusCode < 300) {
        if (!counted) return;
        tally.latencies.push(now - dispatched);
        if (tally.keepSamples) {
          tally.samples.push(
            `${(performance.timeOrigin + dispatched).toFixed(3)},${(now - dispatched).toFixed(3)},${response.upstreamMs ?? ''},${response.gatewayMs ?? ''}`,
          );
        }
        if (response.upstreamMs !== undefined) tally.added.push(now - dispatched - response.upstreamMs);
        if (response.gatewayMs !== undefined) tally.own.push(response.gatewayMs);
      } else {
        tally.non2xx += 1;
        tally.failure(`${response.statusCode} ${response.body.slice(0, 200)}`);
      }
    } catch (error) {
      // A lead-in request that fails counts too (as a non-2xx lead-in answer does): the run is broken either way.
      tally.errors += 1;
      if (isTimeout(error)) tally.timeouts += 1;
      tally.failure(error instanceof Error ? error.message : String(error));
    }
  };

  const inFlight: Promise<void>[] = [];
  const intervalMs = 1000 / row.rate;
  const measuredFrom = startsAt + leadIn * intervalMs;
  let next = 0;
  while (next < count) {
    const now = performance.now();
    const due = Math.min(count, Math.floor((now - startsAt) / intervalMs) + 1);
    for (; next < due; next += 1) {
      const counted = next >= leadIn;
      if (counted) tally.lags.push(now - (startsAt + next * intervalMs));
      const request = requests.take();
      if (request === undefined) throw new Error(`${row.label}: the paced run's pool of ${count} requests ran dry`);
      inFlight.push(send(request, counted));
    }
    if (next < count) await sleep(Math.max(0, Math.min(1, startsAt + next * intervalMs - performance.now())));
  }
  await Promise.all(inFlight);
  tally.measuredSeconds = Math.max((lastAnswer - measuredFrom) / 1000, 1e-3);
}

/** Until the first requests are due: the schedules start together, after every row's requests are made. */
const START_DELAY_MS = 20;

/**
 * The rows at their fixed rates, all at once, for `leadInSeconds` + `seconds`; only the last
 * `seconds` are measured. Every row's requests are made (signed) before any is sent; row i's
 * schedule is shifted by i/n of its interval, so that the rows' sends interleave rather than
 * coincide. Returns a result per row, in the rows' order.
 */
export async function pacedTogether(rows: readonly PacedRow[], options: PacedRunOptions): Promise<PacedRunResult[]> {
  const ready: ReadyRow[] = [];
  try {
    for (const row of rows) {
      const leadIn = Math.round(row.rate * options.leadInSeconds);
      const count = leadIn + Math.max(1, Math.round(row.rate * options.seconds));
      const requests = await RequestPool.fill(() => row.make(), count);
      ready.push({
        row,
        requests,
        leadIn,
        count,
        pool: new Pool(row.url, { connections: options.connections, pipelining: 1 }),
        tally: new PacedTally(row.samplesFile !== undefined),
      });
    }
    for (const { row, requests } of ready)
      assertPoolLastsTheRun(requests, options.leadInSeconds + options.seconds, row.lifetimeSeconds);
    const startsAt = performance.now() + START_DELAY_MS;
    await Promise.all(
      ready.map((entry, index) => sendOnSchedule(entry, startsAt + ((1000 / entry.row.rate) * index) / ready.length)),
    );
  } finally {
    await Promise.all(ready.map((entry) => entry.pool.close()));
  }
  await Promise.all(ready.map((entry) => entry.tally.writeSamples(entry.row.samplesFile)));
  return ready.map((entry) => entry.tally.result(entry.row.label, entry.row.rate));
}
