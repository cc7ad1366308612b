/**
 * What a case sends, and the pool of single-use requests. v3 credentials are single use (a
 * JWT nonce per request) and expensive to make, so they are all made before a timed run,
 * where making them would otherwise be measured as load-generator time.
 */
import type { RowCryptography } from './crypto-floor.js';
import type { CaseMeasurement, LoadSettings } from './measurement.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface PreparedRequest {
  readonly method: HttpMethod;
  /** Path and query, exactly as sent (and signed). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export type RequestPlan =
  /** The same request every time: no per-request state. */
  | { readonly kind: 'reusable'; readonly request: PreparedRequest }
  /**
   * Every request made once, before the run, and sent once. `lifetimeSeconds` is how long a
   * made request stays acceptable (the token lifetime): the run must use it up before then.
   */
  | {
      readonly kind: 'single-use';
      readonly lifetimeSeconds: number;
      make(): Promise<PreparedRequest>;
      /** What its requests cost a gateway in cryptography (crypto-floor.ts); v3 when unset. */
      readonly cryptography?: RowCryptography;
    }
  | ChainedPlan
  | SelfMeasuredPlan;

/**
 * Work that no request from the load generator drives (a backlog the server's own worker
 * drains): the case measures it itself, warm-up included, into rows like any other case's.
 */
export interface SelfMeasuredPlan {
  readonly kind: 'self-measured';
  /** The work done once, end to end, before any timing: a broken case fails here with the reason. */
  probe(): Promise<void>;
  measure(settings: LoadSettings): Promise<CaseMeasurement>;
}

/** A response as the chained load loop read it: status and the whole body. */
export interface ReceivedResponse {
  readonly statusCode: number;
  readonly body: string;
  /** The gateway's `Server-Timing: upstream;dur=` (ms waiting on v3), when the answer carries it. */
  readonly upstreamMs?: number;
  /** Its `gateway;dur=`: the gateway handler's own time besides. */
  readonly gatewayMs?: number;
}

/**
 * Pairs of requests where the second depends on the first's answer (execute the quote just
 * created), so neither can be a fixed pool alone: each of `connections` workers sends a first
 * request, waits for its answer, then makes (signs) and sends the second, and again. First
 * requests are single use and made before the timed run like a single-use plan's
 * (`lifetimeSeconds` the same); second requests are made in the loop, after each answer.
 *
 * With `streams`, the pairs come in independent streams (one per org and its key, say): worker
 * w sends only the pairs of stream w mod count, so each stream has a fixed share of the
 * workers (50 workers over 25 streams: 2 each). Without it, every pair is of stream 0.
 */
export interface ChainedPlan {
  readonly kind: 'chained';
  /** Report labels of the two requests, plural nouns ('quotes', 'trades'). */
  readonly labels: readonly [first: string, second: string];
  readonly lifetimeSeconds: number;
  readonly streams?: PairStreams;
  /** A first request of this stream (0 <= stream < streams.count). */
  makeFirst(stream: number): Promise<PreparedRequest>;
  /** The second request from the first's 2xx answer, in the same stream; a throw is counted as that pair's failure. */
  makeSecond(first: ReceivedResponse, stream: number): Promise<PreparedRequest>;
}

export interface PairStreams {
  readonly count: number;
  /** What one stream is, a singular noun for the report ('org'). */
  readonly noun: string;
}

/** The stream a worker of a chained run sends (workers numbered from 0). */
export function streamOf(worker: number, streamCount: number): number {
  return worker % streamCount;
}

/** How many of `workers` workers send each stream, by streamOf. */
export function workersPerStream(workers: number, streamCount: number): number[] {
  return Array.from(
    { length: streamCount },
    (_, stream) => Math.floor(workers / streamCount) + (stream < workers % streamCount ? 1 : 0),
  );
}

/** Requests made at once: enough to keep the signer busy, few enough to bound memory in flight. */
const MAKE_BATCH = 64;

export interface PoolStats {
  readonly size: number;
  readonly taken: number;
  /** Takes that found the pool empty: each became a failing request. */
  readonly dry: number;
  readonly generationSeconds: number;
  /** Age of the oldest request when it was taken, from the start of generation. */
  readonly maxAgeSeconds: number;
}

/**
 * Requests made before a run, each taken once. A pool may hold several streams (a chained
 * plan's), each taken from on its own; a plain pool is stream 0 alone.
 */
export class RequestPool {
  private readonly next: number[];
  private dry = 0;
  private maxAgeMs = 0;

  private constructor(
    private readonly streams: readonly (readonly PreparedRequest[])[],
    private readonly madeAt: number,
    private readonly generationMs: number,
  ) {
    this.next = streams.map(() => 0);
  }

  /** Makes `count` requests, in batches; generation time is recorded for the report. */
  static fill(make: () => Promise<PreparedRequest>, count: number): Promise<RequestPool> {
    return RequestPool.fillStreams(() => make(), [count]);
  }

  /**
   * Makes counts[s] requests of each stream s, interleaved across streams (so that every
   * stream's oldest request is about as old), in batches.
   */
  static async fillStreams(
    make: (stream: number) => Promise<PreparedRequest>,
    counts: readonly number[],
  ): Promise<RequestPool> {
    const started = Date.now();
    const order: number[] = [];
    for (let round = 0; round < Math.max(0, ...counts); round += 1) {
      counts.forEach((count, stream) => {
        if (round < count) order.push(stream);
      });
    }
    const streams: PreparedRequest[][] = counts.map(() => []);
    for (let start = 0; start < order.length; start += MAKE_BATCH) {
      const batch = order.slice(start, start + MAKE_BATCH);
      const made = await Promise.all(batch.map((stream) => make(stream)));
      made.forEach((request, index) => streams[batch[index]!]!.push(request));
    }
    return new RequestPool(streams, started, Date.now() - started);
  }

  /** Requests made, over all streams. */
  get size(): number {
    return this.streams.reduce((sum, stream) => sum + stream.length, 0);
  }

  /** Seconds since generation started: the age of the oldest request in the pool. */
  ageSeconds(): number {
    return (Date.now() - this.madeAt) / 1000;
  }

  /** The stream's next unused request, oldest first (so the oldest token is spent first); undefined when dry. */
  take(stream = 0): PreparedRequest | undefined {
    const item = this.streams[stream]?.[this.next[stream] ?? 0];
    if (item === undefined) {
      this.dry += 1;
      return undefined;
    }
    this.next[stream]! += 1;
    this.maxAgeMs = Math.max(this.maxAgeMs, Date.now() - this.madeAt);
    return item;
  }

  stats(): PoolStats {
    return {
      size: this.size,
      taken: this.next.reduce((sum, taken) => sum + taken, 0),
      dry: this.dry,
      generationSeconds: this.generationMs / 1000,
      maxAgeSeconds: this.maxAgeMs / 1000,
    };
  }
}
