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
 * Rows to be compared run side by side (pacedSideBySide): in short slices, the rows taking turns
 * in a rotating order on connections kept open, so that each row's tail is measured over the same
 * stretch of a shared machine's time rather than over a different 10 s each.
 *
 * With `samplesFile`, each measured 2xx answer is also written out, one CSV line each, to find
 * when the slowest ones happened and what the servers were doing then (README, Benchmarks).
 */
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import { assertPoolLastsTheRun, FAILURE_SAMPLES, isTimeout, percentile, sendPrepared, type RowMeasurement } from './measurement.js';
import { RequestPool, type PreparedRequest } from './requests.js';

/** The schedule of a run or slice: its offered rate, its uncounted lead-in and its measured part. */
interface PacedSchedule {
  /** Offered requests per second. */
  readonly rate: number;
  /** Sent before the measured seconds, on the same schedule and connections, and not counted. */
  readonly leadInSeconds: number;
  readonly seconds: number;
}

export interface PacedRunOptions extends PacedSchedule {
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

/** What a row's measured requests gave, over one run or all of its slices. */
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
        ...(added.length > 0 && added.length === latencies.length ? { addedMs: { p50: percentile(added, 0.5), p99: percentile(added, 0.99) } } : {}),
        ...(own.length > 0 && own.length === latencies.length ? { gatewayMs: { p50: percentile(own, 0.5), p99: percentile(own, 0.99) } } : {}),
      },
      dispatchLagMs: { p99: percentile(lags, 0.99), max: lags.at(-1) ?? 0 },
      failureSamples: this.failureSamples,
    };
  }

  async writeSamples(file: string | undefined): Promise<void> {
    if (file !== undefined) await writeFile(file, [SAMPLES_CSV_HEADER, ...this.samples, ''].join('\n'));
  }
}

/**
 * Sends `schedule` open loop over `pool`, each request made (signed) before it starts and sent
 * once, and adds the measured part to the tally. Resolves when every request sent has its
 * answer (or its timeout).
 */
async function pacedSchedule(pool: Dispatcher, make: () => Promise<PreparedRequest>, lifetimeSeconds: number, schedule: PacedSchedule, tally: PacedTally): Promise<void> {
  const leadIn = Math.round(schedule.rate * schedule.leadInSeconds);
  const count = leadIn + Math.max(1, Math.round(schedule.rate * schedule.seconds));
  const requests = await RequestPool.fill(make, count);
  assertPoolLastsTheRun(requests, schedule.leadInSeconds + schedule.seconds, lifetimeSeconds);
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
          tally.samples.push(`${(performance.timeOrigin + dispatched).toFixed(3)},${(now - dispatched).toFixed(3)},${response.upstreamMs ?? ''},${response.gatewayMs ?? ''}`);
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
  const intervalMs = 1000 / schedule.rate;
  const started = performance.now();
  const measuredFrom = started + leadIn * intervalMs;
  let next = 0;
  while (next < count) {
    const now = performance.now();
    const due = Math.min(count, Math.floor((now - started) / intervalMs) + 1);
    for (; next < due; next += 1) {
      const counted = next >= leadIn;
      if (counted) tally.lags.push(now - (started + next * intervalMs));
      const request = requests.take();
      if (request === undefined) throw new Error(`the paced run's pool of ${count} requests ran dry`);
      inFlight.push(send(request, counted));
    }
    if (next < count) await sleep(Math.max(0, Math.min(1, started + next * intervalMs - performance.now())));
  }
  await Promise.all(inFlight);
  tally.measuredSeconds += Math.max((lastAnswer - measuredFrom) / 1000, 1e-3);
}

/** One connection pool of a paced run: one request in flight per connection, kept open between a side-by-side row's slices. */
function pacedPool(url: string, connections: number): Pool {
  return new Pool(url, { connections, pipelining: 1, keepAliveTimeout: IDLE_CONNECTION_MS });
}

/** Longer than the other rows' slices take: a row's connections are still open when its turn comes again. */
const IDLE_CONNECTION_MS = 60_000;

/**
 * One open-loop run at `rate` req/s for `leadInSeconds` + `seconds` against url, on a pool of
 * its own; only the last `seconds` are measured.
 */
export async function pacedRun(url: string, make: () => Promise<PreparedRequest>, options: PacedRunOptions): Promise<PacedRunResult> {
  const pool = pacedPool(url, options.connections);
  const tally = new PacedTally(options.samplesFile !== undefined);
  try {
    await pacedSchedule(pool, make, options.lifetimeSeconds, options, tally);
  } finally {
    await pool.close();
  }
  await tally.writeSamples(options.samplesFile);
  return tally.result(options.label, options.rate);
}

/** A row of a side-by-side paced run. */
export interface PacedRow {
  readonly label: string;
  readonly url: string;
  make(): Promise<PreparedRequest>;
  /** How long a made request stays acceptable (its token's lifetime). */
  readonly lifetimeSeconds: number;
  /** Where to write its measured answers as CSV, if anywhere. */
  readonly samplesFile?: string;
}

export interface PacedSideBySideOptions {
  readonly rate: number;
  /** Measured seconds of each row, over all its slices. */
  readonly seconds: number;
  /** About how long each turn of a row lasts (measured part). */
  readonly sliceSeconds: number;
  /** The uncounted lead-in of a row's first turn, when its connections open. */
  readonly leadInSeconds: number;
  /** The uncounted lead-in of its later turns, on connections already open: the schedule gets going. */
  readonly turnLeadInSeconds: number;
  readonly connections: number;
}

/**
 * The rows at one fixed rate, taking turns: in each round every row runs one slice, the order
 * rotated by one each round, each row on its own pool of connections kept open throughout.
 * Returns a result per row, in the rows' order.
 */
export async function pacedSideBySide(rows: readonly PacedRow[], options: PacedSideBySideOptions): Promise<PacedRunResult[]> {
  const rounds = Math.max(1, Math.round(options.seconds / options.sliceSeconds));
  const sliceSeconds = options.seconds / rounds;
  const pools = rows.map((row) => pacedPool(row.url, options.connections));
  const tallies = rows.map((row) => new PacedTally(row.samplesFile !== undefined));
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (let position = 0; position < rows.length; position += 1) {
        const index = (round + position) % rows.length;
        const row = rows[index]!;
        const leadInSeconds = round === 0 ? options.leadInSeconds : options.turnLeadInSeconds;
        await pacedSchedule(pools[index]!, () => row.make(), row.lifetimeSeconds, { rate: options.rate, leadInSeconds, seconds: sliceSeconds }, tallies[index]!);
      }
    }
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
  await Promise.all(rows.map((row, index) => tallies[index]!.writeSamples(row.samplesFile)));
  return rows.map((row, index) => tallies[index]!.result(row.label, options.rate));
}
