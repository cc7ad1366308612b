/**
 * The load generator: autocannon, in this (the load) process, against a server process.
 * Each case gets a warm-up, then one measured run of a fixed duration.
 *
 * Single-use requests are made before each run, in a pool sized by what the server has shown
 * it can take. The warm-up is a series of short rounds bounded by request count (autocannon
 * `amount`, so they cannot run dry), each sized from the rate of the one before, until
 * warmupSeconds of load have been sent; the server speeds up as it warms, so the last round's
 * rate is the estimate. The measured run is bounded by time over a pool with headroom above
 * that rate; a take from an empty pool sends a request that fails, which the report counts
 * and the run fails on.
 *
 * Chained plans (a request that needs the answer to the one before) do not fit autocannon's
 * pre-made requests; chained-load.ts runs them with a loop of its own, measured the same way.
 */
import autocannon from 'autocannon';

import { measureChained } from './chained-load.js';
import { type CryptoCost, formatAgainstFloor, isCore, measureCryptoCost, processFloor } from './crypto-floor.js';
import {
  assertPoolLastsTheRun,
  type CaseMeasurement,
  type LoadSettings,
  MEASURED_POOL_HEADROOM,
  percentile,
  REQUEST_TIMEOUT_SECONDS,
  type RowMeasurement,
  type RunShape,
} from './measurement.js';
import { type PreparedRequest, type RequestPlan, RequestPool } from './requests.js';

/** Requests of the first warm-up round, per connection, before any rate is known: few, as a cold server is slow. */
const FIRST_ROUND_REQUESTS_PER_CONNECTION = 5;
/** The first round runs on a cold server: its rate is never the estimate. */
const MIN_WARMUP_ROUNDS = 2;
/** Seconds of load per later warm-up round: short, so the last one sees a warm server. */
const WARMUP_ROUND_SECONDS = 1;

/** autocannon's callback form, for the instance (its events) and the result. */
function runAutocannon(
  options: autocannon.Options,
  onInstance?: (instance: autocannon.Instance) => void,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error: unknown, result: autocannon.Result) => {
      if (error) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve(result);
    });
    onInstance?.(instance);
  });
}

function baseOptions(shape: RunShape): autocannon.Options {
  return {
    url: shape.url,
    connections: shape.settings.connections,
    pipelining: shape.settings.pipelining,
    timeout: REQUEST_TIMEOUT_SECONDS,
  };
}

function fixedRequest(request: PreparedRequest): autocannon.Request {
  return {
    method: request.method,
    path: request.path,
    headers: { ...request.headers },
    ...(request.body === undefined ? {} : { body: request.body }),
  };
}

/** Sent when the pool is dry: no route has it and it has no credentials, so it fails (and says why in server logs). */
const DRY_POOL_PATH = '/bench-request-pool-ran-dry';

/** Each request from the pool, in order; a short pool shows as failed requests, never as reused ones. */
function poolRequests(pool: RequestPool): autocannon.Request[] {
  return [
    {
      setupRequest(request) {
        const next = pool.take();
        return next === undefined
          ? { ...request, method: 'GET', path: DRY_POOL_PATH, headers: {} }
          : { ...request, ...fixedRequest(next) };
      },
    },
  ];
}

/** What one autocannon run did, watched response by response. */
interface ObservedRun {
  readonly result: autocannon.Result;
  /** Latencies of the 2xx responses, in answer order. */
  readonly latencies: number[];
  /** Responses of any status. */
  readonly responses: number;
  /** Responses per second, counted from the run's start to its last response (autocannon ends on a 1 s tick after that). */
  readonly rate: number;
  readonly seconds: number;
}

/**
 * autocannon's latency histogram keeps whole milliseconds, too coarse for a route answering in
 * one or two; this keeps every 2xx latency (as autocannon does: errors are not latencies).
 */
async function observedRun(options: autocannon.Options): Promise<ObservedRun> {
  const latencies: number[] = [];
  const started = performance.now();
  let responses = 0;
  let last = started;
  const result = await runAutocannon(options, (instance) =>
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      responses += 1;
      last = performance.now();
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTimeMs);
    }),
  );
  const seconds = Math.max((last - started) / 1000, 1e-3);
  return { result, latencies, responses, rate: responses / seconds, seconds };
}

function statusCountsOf(result: autocannon.Result): Record<string, number> {
  return Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0]),
  );
}

async function timedRun(options: autocannon.Options): Promise<RowMeasurement> {
  const { result, latencies } = await observedRun(options);
  latencies.sort((a, b) => a - b);
  return {
    label: null,
    requestsPerSecond: result.requests.mean,
    latencyMs: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: statusCountsOf(result),
  };
}

/** Warm-up runs must be clean too: a failing request there means the case is broken, not slow. */
function assertClean(result: autocannon.Result, phase: string): void {
  if (result.errors === 0 && result.non2xx === 0) return;
  throw new Error(
    `${phase}: ${result.errors} errors, ${result.non2xx} non-2xx responses (status counts ${JSON.stringify(result.statusCodeStats ?? {})})`,
  );
}

/** A run bounded by request count over a fresh pool of exactly that many requests. */
async function countedRun(shape: RunShape, make: () => Promise<PreparedRequest>, count: number) {
  const amount = Math.max(Math.ceil(count), shape.settings.connections);
  const pool = await RequestPool.fill(make, amount);
  return observedRun({ ...baseOptions(shape), amount, requests: poolRequests(pool) });
}

async function measureReusable(shape: RunShape, request: PreparedRequest): Promise<CaseMeasurement> {
  const fixed = { ...baseOptions(shape), ...fixedRequest(request) };
  const warmup = await observedRun({ ...fixed, duration: shape.settings.warmupSeconds });
  assertClean(warmup.result, 'warm-up');
  const measured = await timedRun({ ...fixed, duration: shape.settings.durationSeconds });
  return { rows: [measured], warmupRates: [warmup.rate], pool: null, chained: null, notes: [] };
}

/** Warm-up rounds until warmupSeconds of load (and two rounds at least); returns each round's rate, the last being the estimate. */
async function warmUpSingleUse(shape: RunShape, make: () => Promise<PreparedRequest>): Promise<number[]> {
  const { connections, warmupSeconds } = shape.settings;
  const rates: number[] = [];
  let size = connections * FIRST_ROUND_REQUESTS_PER_CONNECTION;
  let loadedSeconds = 0;
  while (loadedSeconds < warmupSeconds || rates.length < MIN_WARMUP_ROUNDS) {
    const round = await countedRun(shape, make, size);
    assertClean(round.result, 'warm-up');
    rates.push(round.rate);
    loadedSeconds += round.seconds;
    // Full-length rounds even at the end: a short one would give a poor estimate.
    size = round.rate * WARMUP_ROUND_SECONDS;
  }
  return rates;
}

async function measureSingleUse(
  shape: RunShape,
  plan: Extract<RequestPlan, { kind: 'single-use' }>,
): Promise<CaseMeasurement> {
  const { connections, durationSeconds } = shape.settings;
  const warmupRates = await warmUpSingleUse(shape, () => plan.make());
  const warmupRate = warmupRates.at(-1)!;

  const size = Math.ceil(warmupRate * durationSeconds * MEASURED_POOL_HEADROOM) + connections;
  const pool = await RequestPool.fill(() => plan.make(), size);
  assertPoolLastsTheRun(pool, durationSeconds, plan.lifetimeSeconds);
  const measured = await timedRun({ ...baseOptions(shape), duration: durationSeconds, requests: poolRequests(pool) });
  return { rows: [measured], warmupRates, pool: pool.stats(), chained: null, notes: [] };
}

/**
 * A single-use plan's rate at full load, as the warm-up estimates it (its last round's rate),
 * for a case that needs a peak it did not get from an earlier case.
 */
export async function estimateRate(
  url: string,
  make: () => Promise<PreparedRequest>,
  settings: LoadSettings,
): Promise<number> {
  const rates = await warmUpSingleUse({ url, settings }, make);
  return rates.at(-1)!;
}

/** A row of a side-by-side case: one kind of request, to one server of the case's setup. */
export interface SideBySideRow {
  readonly label: string;
  readonly url: string;
  readonly plan: Extract<RequestPlan, { kind: 'single-use' }>;
}

/** A side-by-side row's runs so far. */
interface RowTally {
  readonly row: SideBySideRow;
  /** Its latest rate (warm-up estimate, then each round's), which sizes its next round's pool. */
  rate: number;
  readonly latencies: number[];
  readonly roundRates: number[];
  responses: number;
  seconds: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  readonly statusCodes: Record<string, number>;
  /** CPU time each server process used during the row's rounds, in microseconds, in the order of the servers. */
  readonly cpuMicros: number[];
  /** HTTP requests each server received during the row's rounds (0 for a clock that does not count them). */
  readonly requests: number[];
  /** Requests sent from an empty pool (a round faster than its pool was sized for). */
  poolDry: number;
}

/**
 * Rows of one setup, at full load, measured in alternating rounds: every row warmed up, then
 * `settings.rounds` rounds in which each row runs durationSeconds / rounds seconds, the order
 * rotated by one each round. A direct call and the same call through the gateway then see the
 * same servers, the same database and the same minute of a shared machine, and the report
 * compares a row with its baseline round by round (the median of the rounds' ratios): on this
 * machine a rate drifts by more than the gateway's share between two runs a minute apart.
 * Each round's requests are made just before it, sized from the row's latest rate.
 *
 * Each server's CPU time is read before and after every round, so that the report can say what
 * a request of each row cost each process: a figure the machine's speed moves far less than a
 * rate, and the one that says where a ratio comes from.
 */
export async function measureSideBySide(
  rows: readonly SideBySideRow[],
  settings: LoadSettings,
  servers: readonly CpuClock[],
  /** Run once every row has warmed up, before the first round (the rows' rounds measure a steady state). */
  afterWarmUp?: () => Promise<void>,
): Promise<CaseMeasurement> {
  const roundSeconds = Math.max(1, Math.round(settings.durationSeconds / settings.rounds));
  // Measured here, on an idle machine between the setup and the load, for this case's floors.
  const cryptoCost = measureCryptoCost();
  const tallies: RowTally[] = [];
  for (const row of rows) {
    const rates = await warmUpSingleUse({ url: row.url, settings }, () => row.plan.make());
    tallies.push({
      row,
      rate: rates.at(-1)!,
      latencies: [],
      roundRates: [],
      responses: 0,
      seconds: 0,
      errors: 0,
      timeouts: 0,
      non2xx: 0,
      statusCodes: {},
      cpuMicros: servers.map(() => 0),
      requests: servers.map(() => 0),
      poolDry: 0,
    });
  }
  await afterWarmUp?.();
  await settle(servers);
  for (let round = 0; round < settings.rounds; round += 1) {
    for (let position = 0; position < tallies.length; position += 1) {
      const tally = tallies[(round + position) % tallies.length]!;
      const pool = await RequestPool.fill(
        () => tally.row.plan.make(),
        Math.ceil(tally.rate * roundSeconds * MEASURED_POOL_HEADROOM) + settings.connections,
      );
      assertPoolLastsTheRun(pool, roundSeconds, tally.row.plan.lifetimeSeconds);
      const requestsBefore = await requestsOf(servers);
      const cpuBefore = await cpuMicrosOf(servers);
      const run = await observedRun({
        ...baseOptions({ url: tally.row.url, settings }),
        duration: roundSeconds,
        requests: poolRequests(pool),
      });
      await settle(servers);
      const cpuAfter = await cpuMicrosOf(servers);
      const requestsAfter = await requestsOf(servers);
      cpuAfter.forEach((micros, index) => (tally.cpuMicros[index]! += micros - cpuBefore[index]!));
      requestsAfter.forEach((count, index) => (tally.requests[index]! += count - requestsBefore[index]!));
      tally.poolDry += pool.stats().dry;
      tally.rate = run.rate;
      tally.roundRates.push(run.rate);
      tally.latencies.push(...run.latencies);
      tally.responses += run.responses;
      tally.seconds += run.seconds;
      tally.errors += run.result.errors;
      tally.timeouts += run.result.timeouts;
      tally.non2xx += run.result.non2xx;
      for (const [code, count] of Object.entries(statusCountsOf(run.result)))
        tally.statusCodes[code] = (tally.statusCodes[code] ?? 0) + count;
    }
  }
  const measured = tallies.map((tally): RowMeasurement => {
    tally.latencies.sort((a, b) => a - b);
    return {
      label: tally.row.label,
      requestsPerSecond: tally.responses / tally.seconds,
      latencyMs: { p50: percentile(tally.latencies, 0.5), p99: percentile(tally.latencies, 0.99) },
      errors: tally.errors,
      timeouts: tally.timeouts,
      non2xx: tally.non2xx,
      statusCodes: tally.statusCodes,
      roundRates: tally.roundRates,
      cpuMicrosPerRequest: tally.cpuMicros.map((micros) => micros / rowRequests(tally, servers)),
      poolDry: tally.poolDry,
    };
  });
  const notes = [
    `side by side on one setup: each row warmed up, then ${settings.rounds} rounds of ${roundSeconds} s per row, the order rotated each round ` +
      `(${tallies.map((tally) => tally.row.label).join(', ')} first); rates per round: ` +
      measured
        .map((row) => `${row.label} ${(row.roundRates ?? []).map((rate) => rate.toFixed(0)).join('/')}`)
        .join('; '),
    `CPU per request over the rounds (user and system, every thread of the process): ` +
      tallies
        .map(
          (tally) =>
            `${tally.row.label}: ${servers.map((server, index) => `${server.app} ${(tally.cpuMicros[index]! / rowRequests(tally, servers)).toFixed(0)} µs`).join(', ')}`,
        )
        .join('; '),
    `CPU per request against the cryptography floor (node:crypto ES256, CPU time in the load process before the rounds: ` +
      `verify ${cryptoCost.verifyMicros.toFixed(1)} µs, sign ${cryptoCost.signMicros.toFixed(1)} µs; a core's floor is 2 verifies ` +
      `per v3 request it served, a gateway's on a legacy row (1 verify + 2 signs) per v3 call it made, counted by the core; ` +
      'own = CPU less floor):',
    ...tallies.map((tally) => `  ${tally.row.label}: ${againstFloor(tally, servers, cryptoCost)}`),
  ];
  return { rows: measured, warmupRates: [], pool: null, chained: null, notes };
}

/**
 * A process whose CPU time a side-by-side case reads around every round: a bench server, or
 * another process the case runs (a PgBouncer), named as the report shows it.
 */
export interface CpuClock {
  readonly app: string;
  /** Where a bench server listens (`http://127.0.0.1:<port>`): the rows sent there are its requests. */
  readonly url?: string;
  cpuMicros(): Promise<number>;
  /** HTTP requests it has received so far, for a bench server (its floor, and a gateway's v3 calls). */
  requests?(): Promise<number>;
  /** Requests it has received and not finished yet, for a bench server. */
  inFlight?(): Promise<number>;
}

/** How long a round's dropped requests may take to finish before the CPU is read anyway. */
const SETTLE_TIMEOUT_MS = 5_000;
const SETTLE_POLL_MS = 20;

/**
 * Waits until no server has a request in flight. The load generator stops a round with requests
 * still running, which the servers finish (and spend CPU on) after it: read before they finish,
 * a round's CPU would miss some of them and the next round's would carry them.
 */
async function settle(servers: readonly CpuClock[]): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (const server of servers) {
    if (!server.inFlight) continue;
    while ((await server.inFlight()) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
    }
  }
}

/**
 * The requests of a row's rounds, as the server the row's URL names counted them: the answers
 * the load generator counted and those it dropped in flight, whose CPU the rounds include. The
 * generator's answers when no server counted (a clock of another kind).
 */
function rowRequests(tally: RowTally, servers: readonly CpuClock[]): number {
  const origin = new URL(tally.row.url).origin;
  const index = servers.findIndex((server) => server.url === origin);
  const counted = index >= 0 ? tally.requests[index]! : 0;
  return Math.max(counted > 0 ? counted : tally.responses, 1);
}

/** Each server's request count so far, 0 for a clock that counts none. */
async function requestsOf(servers: readonly CpuClock[]): Promise<number[]> {
  const counts: number[] = [];
  for (const server of servers) counts.push((await server.requests?.()) ?? 0);
  return counts;
}

/**
 * A row's CPU per request in each process that served it, against that process's cryptography
 * floor; the v3 calls per request are what the cores received per request of the row.
 */
function againstFloor(tally: RowTally, servers: readonly CpuClock[], cost: CryptoCost): string {
  const requests = rowRequests(tally, servers);
  const v3Calls = servers.reduce((sum, server, index) => sum + (isCore(server.app) ? tally.requests[index]! : 0), 0);
  return servers
    .map((server, index) => {
      const cpu = tally.cpuMicros[index]! / requests;
      // A server that served none of the row's requests (another gateway of the case) has no floor for it.
      const served = server.requests === undefined || tally.requests[index]! > 0;
      const floor = served
        ? processFloor(
            server.app,
            tally.row.plan.cryptography ?? 'v3',
            isCore(server.app) ? tally.requests[index]! / requests : v3Calls / requests,
            cost,
          )
        : null;
      return formatAgainstFloor(server.app, cpu, floor);
    })
    .join('; ');
}

/** Each server's CPU time so far, one after the other (a server answers one query at a time). */
async function cpuMicrosOf(servers: readonly CpuClock[]): Promise<number[]> {
  const micros: number[] = [];
  for (const server of servers) micros.push(await server.cpuMicros());
  return micros;
}

/** Warm-up, then the measured run, against the server at url. */
export function measure(url: string, plan: RequestPlan, settings: LoadSettings): Promise<CaseMeasurement> {
  const shape = { url, settings };
  switch (plan.kind) {
    case 'reusable':
      return measureReusable(shape, plan.request);
    case 'single-use':
      return measureSingleUse(shape, plan);
    case 'chained':
      return measureChained(shape, plan);
    case 'self-measured':
      return plan.measure(settings);
  }
}

/**
 * One request (a pair per stream, for a chained plan) before any load, so that a broken case
 * fails with the server's own answer rather than as a column of non-2xx counts.
 */
export async function probe(url: string, plan: RequestPlan): Promise<void> {
  const send = async (request: PreparedRequest) => {
    const response = await fetch(new URL(request.path, url), {
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
    });
    const body = await response.text();
    if (!response.ok)
      throw new Error(`probe ${request.method} ${request.path}: ${response.status} ${body.slice(0, 500)}`);
    return { statusCode: response.status, body };
  };
  switch (plan.kind) {
    case 'reusable':
      await send(plan.request);
      return;
    case 'single-use':
      await send(await plan.make());
      return;
    case 'chained':
      // A pair of every stream: each has its own credentials (an org's key), any may be broken.
      for (let stream = 0; stream < (plan.streams?.count ?? 1); stream += 1) {
        await send(await plan.makeSecond(await send(await plan.makeFirst(stream)), stream));
      }
      return;
    case 'self-measured':
      await plan.probe();
      return;
  }
}
