/**
 * What a case sends, and the pool of single-use requests. v3 credentials are single use (a
 * JWT nonce per request) and expensive to make, so they are all made before a timed run,
 * where making them would otherwise be measured as load-generator time.
 */

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
  | { readonly kind: 'single-use'; readonly lifetimeSeconds: number; make(): Promise<PreparedRequest> }
  | ChainedPlan;

/** A response as the chained load loop read it: status and the whole body. */
export interface ReceivedResponse {
  readonly statusCode: number;
  readonly body: string;
}

/**
 * Pairs of requests where the second depends on the first's answer (execute the quote just
 * created), so neither can be a fixed pool alone: each of `connections` workers sends a first
 * request, waits for its answer, then makes (signs) and sends the second, and again. First
 * requests are single use and made before the timed run like a single-use plan's
 * (`lifetimeSeconds` the same); second requests are made in the loop, after each answer.
 */
export interface ChainedPlan {
  readonly kind: 'chained';
  /** Report labels of the two requests, plural nouns ('quotes', 'trades'). */
  readonly labels: readonly [first: string, second: string];
  readonly lifetimeSeconds: number;
  makeFirst(): Promise<PreparedRequest>;
  /** The second request from the first's 2xx answer; a throw is counted as that pair's failure. */
  makeSecond(first: ReceivedResponse): Promise<PreparedRequest>;
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

export class RequestPool {
  private next = 0;
  private dry = 0;
  private maxAgeMs = 0;

  private constructor(
    private readonly items: readonly PreparedRequest[],
    private readonly madeAt: number,
    private readonly generationMs: number,
  ) {}

  /** Makes `count` requests, in batches; generation time is recorded for the report. */
  static async fill(make: () => Promise<PreparedRequest>, count: number): Promise<RequestPool> {
    const started = Date.now();
    const items: PreparedRequest[] = [];
    while (items.length < count) {
      const batch = Math.min(MAKE_BATCH, count - items.length);
      items.push(...(await Promise.all(Array.from({ length: batch }, make))));
    }
    return new RequestPool(items, started, Date.now() - started);
  }

  get size(): number {
    return this.items.length;
  }

  /** Seconds since generation started: the age of the oldest request in the pool. */
  ageSeconds(): number {
    return (Date.now() - this.madeAt) / 1000;
  }

  /** The next unused request, oldest first (so the oldest token is spent first); undefined when dry. */
  take(): PreparedRequest | undefined {
    const item = this.items[this.next];
    if (item === undefined) {
      this.dry += 1;
      return undefined;
    }
    this.next += 1;
    this.maxAgeMs = Math.max(this.maxAgeMs, Date.now() - this.madeAt);
    return item;
  }

  stats(): PoolStats {
    return {
      size: this.items.length,
      taken: this.next,
      dry: this.dry,
      generationSeconds: this.generationMs / 1000,
      maxAgeSeconds: this.maxAgeMs / 1000,
    };
  }
}
