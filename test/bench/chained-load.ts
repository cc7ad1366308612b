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
 *
 * A plan with streams (one per org, say) gives each worker one stream for the whole case
 * (streamOf), and the first requests of each stream their own share of the pool, in
 * proportion to its workers; how evenly the streams were served is reported.
 */
import { Pool } from 'undici';

import {
  assertPoolLastsTheRun,
  type CaseMeasurement,
  FAILURE_SAMPLES,
  isTimeout,
  MEASURED_POOL_HEADROOM,
  percentile,
  type RowMeasurement,
  type RunShape,
  sendPrepared,
} from './measurement.js';
import {
  type ChainedPlan,
  type PreparedRequest,
  type ReceivedResponse,
  RequestPool,
  streamOf,
  workersPerStream,
} from './requests.js';

export interface ChainedStats {
  /** Mean wall time to make (sign) a second request in the loop, in milliseconds. */
  readonly makeSecondMsMean: number;
  /** First requests answered 2xx whose second was not sent, because the run had ended. */
  readonly unchained: number;
  /** The first few failures (status and body, or the error), to say why a run failed. */
  readonly failureSamples: readonly string[];
  /** For a plan with streams: how the workers and the completed pairs spread over them. */
  readonly streams: StreamSpread | null;
}

/** Over the streams that had workers (all of them unless there were fewer workers than streams). */
export interface StreamSpread {
  readonly noun: string;
  /** Streams the plan has. */
  readonly count: number;
  /** Streams that had at least one worker. */
  readonly served: number;
  readonly workers: { readonly min: number; readonly max: number };
  /** Second requests answered 2xx within the measured run, per stream. */
  readonly pairs: { readonly min: number; readonly max: number };
}

/** Seconds of each warm-up round: short, so that the last one sees a warm server. */
const WARMUP_ROUND_SECONDS = 1;
/** The first round runs on a cold server: its rate is never the estimate. */
const MIN_WARMUP_ROUNDS = 2;

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
  /** 2xx answers within the run, per stream. */
  readonly okByStream: number[];

  constructor(
    readonly label: string,
    streamCount: number,
  ) {
    this.okByStream = Array.from({ length: streamCount }, () => 0);
  }

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
    private readonly nextFirst: (stream: number) => Promise<PreparedRequest | undefined>,
    readonly seconds: number,
    readonly streamCount: number,
  ) {
    this.first = new RowCounter(plan.labels[0], streamCount);
    this.second = new RowCounter(plan.labels[1], streamCount);
    this.endsAt = performance.now() + seconds * 1000;
  }

  over(): boolean {
    return performance.now() >= this.endsAt;
  }

  private sample(text: string): void {
    if (this.failureSamples.length < FAILURE_SAMPLES) this.failureSamples.push(text);
  }

  /** Sends one request and counts its answer; the answer when it is 2xx, else null. */
  private async send(request: PreparedRequest, counter: RowCounter, stream: number): Promise<ReceivedResponse | null> {
    const started = performance.now();
    let answer: ReceivedResponse;
    try {
      answer = await sendPrepared(this.pool, request);
    } catch (error) {
      counter.errors += 1;
      if (isTimeout(error)) counter.timeouts += 1;
      this.sample(
        `${counter.label}: ${request.method} ${request.path}: ${error instanceof Error ? error.message : String(error)}`,
      );
      return null;
    }
    const finished = performance.now();
    const ok = answer.statusCode >= 200 && answer.statusCode < 300;
    counter.statusCodes[answer.statusCode] = (counter.statusCodes[answer.statusCode] ?? 0) + 1;
    if (!ok) {
      counter.non2xx += 1;
      this.sample(
        `${counter.label}: ${request.method} ${request.path}: ${answer.statusCode} ${answer.body.slice(0, 300)}`,
      );
    }
    if (finished <= this.endsAt) {
      counter.answered += 1;
      if (ok) {
        counter.latencies.push(finished - started);
        counter.okByStream[stream]! += 1;
      }
    }
    return ok ? answer : null;
  }

  /** One worker: pairs of its stream until the run is over (or the stream's first requests run out). */
  async work(worker: number): Promise<void> {
    const stream = streamOf(worker, this.streamCount);
    while (!this.over()) {
      const first = await this.nextFirst(stream);
      if (first === undefined) return; // a dry pool: counted by the pool, and a failure of the run
      const firstAnswer = await this.send(first, this.first, stream);
      if (firstAnswer === null) continue;
      const started = performance.now();
      let second: PreparedRequest;
      try {
        second = await this.plan.makeSecond(firstAnswer, stream);
      } catch (error) {
        this.second.errors += 1;
        this.sample(
          `${this.second.label}: could not make the request: ${error instanceof Error ? error.message : String(error)}`,
        );
        continue;
      }
      this.makeSecondMs += performance.now() - started;
      this.secondsMade += 1;
      if (this.over()) {
        this.unchained += 1;
        return;
      }
      await this.send(second, this.second, stream);
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

function streamCountOf(plan: ChainedPlan): number {
  return plan.streams?.count ?? 1;
}

async function loop(
  shape: RunShape,
  pool: Pool,
  plan: ChainedPlan,
  seconds: number,
  nextFirst: (stream: number) => Promise<PreparedRequest | undefined>,
): Promise<LoopRun> {
  const run = new LoopRun(pool, plan, nextFirst, seconds, streamCountOf(plan));
  await Promise.all(Array.from({ length: shape.settings.connections }, (_, worker) => run.work(worker)));
  return run;
}

function spread(values: readonly number[]): { min: number; max: number } {
  return { min: Math.min(...values), max: Math.max(...values) };
}

function streamSpread(plan: ChainedPlan, run: LoopRun, workers: readonly number[]): StreamSpread | null {
  if (plan.streams === undefined) return null;
  const served = workers.flatMap((count, stream) => (count > 0 ? [stream] : []));
  return {
    noun: plan.streams.noun,
    count: plan.streams.count,
    served: served.length,
    workers: spread(served.map((stream) => workers[stream]!)),
    pairs: spread(served.map((stream) => run.second.okByStream[stream]!)),
  };
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
      const round = await loop(shape, pool, plan, WARMUP_ROUND_SECONDS, (stream) => plan.makeFirst(stream));
      assertClean(round, 'warm-up');
      warmupRates.push(round.pairRate());
    }

    // Each stream's share of the pool is its share of the workers, plus one request per worker.
    const workers = workersPerStream(connections, streamCountOf(plan));
    const expected = warmupRates.at(-1)! * durationSeconds * MEASURED_POOL_HEADROOM;
    const firsts = await RequestPool.fillStreams(
      (stream) => plan.makeFirst(stream),
      workers.map((count) => (count === 0 ? 0 : Math.ceil((expected * count) / connections) + count)),
    );
    assertPoolLastsTheRun(firsts, durationSeconds, plan.lifetimeSeconds);
    const run = await loop(shape, pool, plan, durationSeconds, (stream) => Promise.resolve(firsts.take(stream)));
    return {
      rows: [run.first.toRow(durationSeconds), run.second.toRow(durationSeconds)],
      warmupRates,
      pool: firsts.stats(),
      chained: {
        makeSecondMsMean: run.secondsMade > 0 ? run.makeSecondMs / run.secondsMade : Number.NaN,
        unchained: run.unchained,
        failureSamples: run.failureSamples,
        streams: streamSpread(plan, run, workers),
      },
      notes: [],
    };
  } finally {
    await pool.close();
  }
}
