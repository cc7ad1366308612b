/**
 * The load generator for chained plans: pairs of requests where the second is made from the
 * first's answer (a trade executes the quote just created), which autocannon's pre-made
 * requests cannot express. `connections` workers share one undici Pool of as many connections
 * (one request in flight each, as autocannon's pipelining 1); each sends a first request, reads
 * its answer, makes (signs) the second from it and sends that, then starts over, until the
 * run's time is up. The server thus takes both kinds at once, as it would from clients that
 * quote and then trade.
 *
 * Measured like the autocannon cases: warm-up rounds of a second each (first requests made in
 * the loop) until warmupSeconds, then a pool of first requests made before the timed run
 * (headroom over the last round's rate), then the timed run. Latency is per request, from
 * dispatch to the last byte of the answer, 2xx only; the rate of a kind is its answers within
 * the run over the run's length (requests still in flight when it ends are not counted, as
 * autocannon does not count them). The second request's making is load-generator time between
 * the two requests of a pair: it is in neither latency, and reported apart.
 */
import { Pool } from 'undici';
import {
  assertPoolLastsTheRun,
  MEASURED_POOL_HEADROOM,
  percentile,
  REQUEST_TIMEOUT_SECONDS,
  type CaseMeasurement,
  type RowMeasurement,
  type RunShape,
} from './measurement.js';
import { RequestPool, type ChainedPlan, type PreparedRequest, type ReceivedResponse } from './requests.js';

export interface ChainedStats {
  /** Mean wall time to make (sign) a second request in the loop, in milliseconds. */
  readonly makeSecondMsMean: number;
  /** First requests answered 2xx whose second was not sent, because the run had ended. */
  readonly unchained: number;
  /** The first few failures (status and body, or the error), to say why a run failed. */
  readonly failureSamples: readonly string[];
}

/** Seconds of each warm-up round: short, so that the last one sees a warm server. */
const WARMUP_ROUND_SECONDS = 1;
/** The first round runs on a cold server: its rate is never the estimate. */
const MIN_WARMUP_ROUNDS = 2;
const FAILURE_SAMPLES = 5;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** The answers to one kind of request in one run. */
class RowCounter {
  /** 2xx latencies of answers within the run, in milliseconds. */
  readonly latencies: number[] = [];
  /** Answers (any status) within the run. */
  answered = 0;
  errors = 0;
  timeouts = 0;
  non2xx = 0;
  readonly statusCodes: Record<string, number> = {};

  constructor(readonly label: string) {}

  toRow(seconds: number): RowMeasurement {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return {
      label: this.label,
      requestsPerSecond: this.answered / seconds,
      latencyMs: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) },
      errors: this.errors,
      timeouts: this.timeouts,
      non2xx: this.non2xx,
      statusCodes: { ...this.statusCodes },
    };
  }
}

/** One time-bounded run of the loop. */
class LoopRun {
  readonly first: RowCounter;
  readonly second: RowCounter;
  private readonly endsAt: number;
  makeSecondMs = 0;
  secondsMade = 0;
  unchained = 0;
  readonly failureSamples: string[] = [];

  constructor(
    private readonly pool: Pool,
    private readonly plan: ChainedPlan,
    private readonly nextFirst: () => Promise<PreparedRequest | undefined>,
    readonly seconds: number,
  ) {
    this.first = new RowCounter(plan.labels[0]);
    this.second = new RowCounter(plan.labels[1]);
    this.endsAt = performance.now() + seconds * 1000;
  }

  over(): boolean {
    return performance.now() >= this.endsAt;
  }

  private sample(text: string): void {
    if (this.failureSamples.length < FAILURE_SAMPLES) this.failureSamples.push(text);
  }

  /** Sends one request and counts its answer; the answer when it is 2xx, else null. */
  private async send(request: PreparedRequest, counter: RowCounter): Promise<ReceivedResponse | null> {
    const started = performance.now();
    let answer: ReceivedResponse;
    try {
      const response = await this.pool.request({
        method: request.method,
        path: request.path,
        headers: request.headers,
        body: request.body ?? null,
        headersTimeout: REQUEST_TIMEOUT_SECONDS * 1000,
        bodyTimeout: REQUEST_TIMEOUT_SECONDS * 1000,
      });
      answer = { statusCode: response.statusCode, body: await response.body.text() };
    } catch (error) {
      counter.errors += 1;
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && TIMEOUT_CODES.has(code)) counter.timeouts += 1;
      this.sample(`${counter.label}: ${request.method} ${request.path}: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
    const finished = performance.now();
    const ok = answer.statusCode >= 200 && answer.statusCode < 300;
    counter.statusCodes[answer.statusCode] = (counter.statusCodes[answer.statusCode] ?? 0) + 1;
    if (!ok) {
      counter.non2xx += 1;
      this.sample(`${counter.label}: ${request.method} ${request.path}: ${answer.statusCode} ${answer.body.slice(0, 300)}`);
    }
    if (finished <= this.endsAt) {
      counter.answered += 1;
      if (ok) counter.latencies.push(finished - started);
    }
    return ok ? answer : null;
  }

  /** One worker: pairs until the run is over (or the first requests run out). */
  async work(): Promise<void> {
    while (!this.over()) {
      const first = await this.nextFirst();
      if (first === undefined) return; // a dry pool: counted by the pool, and a failure of the run
      const firstAnswer = await this.send(first, this.first);
      if (firstAnswer === null) continue;
      const started = performance.now();
      let second: PreparedRequest;
      try {
        second = await this.plan.makeSecond(firstAnswer);
      } catch (error) {
        this.second.errors += 1;
        this.sample(`${this.second.label}: could not make the request: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      this.makeSecondMs += performance.now() - started;
      this.secondsMade += 1;
      if (this.over()) {
        this.unchained += 1;
        return;
      }
      await this.send(second, this.second);
    }
  }

  failures(): number {
    return this.first.errors + this.first.non2xx + this.second.errors + this.second.non2xx;
  }

  /** Pairs per second: second requests answered within the run. */
  pairRate(): number {
    return this.second.answered / this.seconds;
  }
}

async function loop(shape: RunShape, pool: Pool, plan: ChainedPlan, seconds: number, nextFirst: () => Promise<PreparedRequest | undefined>): Promise<LoopRun> {
  const run = new LoopRun(pool, plan, nextFirst, seconds);
  await Promise.all(Array.from({ length: shape.settings.connections }, () => run.work()));
  return run;
}

/** Warm-up rounds must be clean too: a failing request there means the case is broken, not slow. */
function assertClean(run: LoopRun, phase: string): void {
  if (run.failures() === 0) return;
  throw new Error(`${phase}: ${run.failures()} failed requests; the first: ${run.failureSamples.join(' | ')}`);
}

export async function measureChained(shape: RunShape, plan: ChainedPlan): Promise<CaseMeasurement> {
  const { connections, durationSeconds, warmupSeconds } = shape.settings;
  const pool = new Pool(shape.url, { connections, pipelining: 1 });
  try {
    const warmupRates: number[] = [];
    while (warmupRates.length * WARMUP_ROUND_SECONDS < warmupSeconds || warmupRates.length < MIN_WARMUP_ROUNDS) {
      const round = await loop(shape, pool, plan, WARMUP_ROUND_SECONDS, () => plan.makeFirst());
      assertClean(round, 'warm-up');
      warmupRates.push(round.pairRate());
    }

    const size = Math.ceil(warmupRates.at(-1)! * durationSeconds * MEASURED_POOL_HEADROOM) + connections;
    const firsts = await RequestPool.fill(() => plan.makeFirst(), size);
    assertPoolLastsTheRun(firsts, durationSeconds, plan.lifetimeSeconds);
    const run = await loop(shape, pool, plan, durationSeconds, () => Promise.resolve(firsts.take()));
    return {
      rows: [run.first.toRow(durationSeconds), run.second.toRow(durationSeconds)],
      warmupRates,
      pool: firsts.stats(),
      chained: {
        makeSecondMsMean: run.secondsMade > 0 ? run.makeSecondMs / run.secondsMade : Number.NaN,
        unchained: run.unchained,
        failureSamples: run.failureSamples,
      },
    };
  } finally {
    await pool.close();
  }
}
