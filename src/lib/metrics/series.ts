/**
 * What the gateway's and the core's metrics share: the status classes, the latency buckets, the
 * children of a labelled family fetched once and kept (prom-client builds a label object per
 * `labels()` call, so the request path never calls it), and the bounded reads a gauge makes
 * when it is scraped.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * The operation of a GET of an OpenAPI document (`/v1|v2|v3/openapi.json`), in both processes: it
 * is no API operation, and `unknown` is kept for the requests no route took (a 404, a 405).
 */
export const OPENAPI_DOCUMENT_OPERATION = 'openapi_document';
/** The operation of a GET of a migration guide (`/docs/migrate/v1-to-v2`, `/docs/migrate/v2-to-v3`) on the gateway. */
export const MIGRATION_GUIDE_OPERATION = 'migration_guide';

/** A route's own operation label, set in its config by the code that adds it (`{ config: { metricsOperation } }`). */
export interface MetricsRouteConfig {
  readonly metricsOperation?: string;
}

/** Label values are bounded enums: a status is only its class. */
export const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** The index in STATUS_CLASSES of an HTTP status; anything past 599 counts as a server error. */
export function statusClassIndex(status: number): number {
  const index = Math.trunc(status / 100) - 1;
  return index < 0 ? 0 : index > 4 ? 4 : index;
}

/**
 * Seconds, from a cached read (1 ms) to the upstream deadline (15 s by default) and beyond it
 * for a legacy request that makes several calls in turn.
 */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30,
];

/**
 * A counter's series per status class. A request adds to a plain number; the counter is brought
 * up to date when it is read (`flushAll` from its collect callback), so the request path does
 * none of prom-client's label hashing for it.
 */
export class StatusClassCounters {
  private readonly counts = [0, 0, 0, 0, 0];
  private readonly children: ({ inc(value: number): void } | undefined)[] = [
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ];

  constructor(
    private readonly counter: Counter<string>,
    /** The other labels' values, in the counter's label order, before `status_class`. */
    private readonly labels: readonly string[],
    /** Where it is listed for flushAll. */
    family: StatusClassCounters[],
  ) {
    family.push(this);
  }

  inc(status: number): void {
    this.counts[statusClassIndex(status)]! += 1;
  }

  /** Adds each class's count since the last flush to its child (made on first use). */
  flush(): void {
    for (let index = 0; index < 5; index++) {
      const count = this.counts[index]!;
      if (count === 0) continue;
      this.counts[index] = 0;
      let child = this.children[index];
      if (child === undefined) {
        child = this.counter.labels(...this.labels, STATUS_CLASSES[index]!);
        this.children[index] = child;
      }
      child.inc(count);
    }
  }

  /** For a counter's `collect`: every series of the family flushed. */
  static flushAll(family: readonly StatusClassCounters[]): void {
    for (const series of family) series.flush();
  }
}

/** A histogram child, made on first use. */
export class LazyObserver {
  private child: { observe(value: number): void } | null = null;

  constructor(
    private readonly histogram: Histogram<string>,
    private readonly labels: readonly string[],
  ) {}

  observe(seconds: number): void {
    (this.child ??= this.histogram.labels(...this.labels)).observe(seconds);
  }
}

/** One operation's answers: counted by status class, and timed. */
export interface AnswerSeries {
  readonly requests: StatusClassCounters;
  /** The whole request, from routing to the last byte written. */
  readonly duration: LazyObserver;
}

/**
 * The two families every fxgate server keeps of its answers, `<prefix>requests_total` by status
 * class and `<prefix>request_duration_seconds`, under the server's own labels; registered in that
 * order, first.
 */
export class AnswerFamilies {
  private readonly requests: Counter<string>;
  private readonly duration: Histogram<string>;
  /** Every series of `requests`, flushed into it when it is read. */
  private readonly series: StatusClassCounters[] = [];

  constructor(options: {
    readonly registry: Registry;
    readonly prefix: string;
    readonly labelNames: readonly string[];
    /** What the requests counter is labelled by, in words. */
    readonly requestsHelp: string;
  }) {
    const registers = [options.registry];
    const series = this.series;
    this.requests = new Counter({
      name: `${options.prefix}requests_total`,
      help: options.requestsHelp,
      labelNames: [...options.labelNames, 'status_class'],
      registers,
      collect: () => StatusClassCounters.flushAll(series),
    });
    this.duration = new Histogram({
      name: `${options.prefix}request_duration_seconds`,
      help: 'Time from routing a request to the last byte of its answer, in seconds.',
      labelNames: [...options.labelNames],
      buckets: [...LATENCY_BUCKETS_SECONDS],
      registers,
    });
  }

  /** A new series for these label values, in the families' label order. */
  seriesFor(labels: readonly string[]): AnswerSeries {
    return {
      requests: new StatusClassCounters(this.requests, labels, this.series),
      duration: new LazyObserver(this.duration, labels),
    };
  }
}

/** Counts and times one answer in its series. */
export function observeAnswer(series: AnswerSeries, reply: FastifyReply): void {
  series.requests.inc(reply.statusCode);
  series.duration.observe(reply.elapsedTime / 1000);
}

/** An onResponse hook that counts every answer of a route in one series, found when the route was added. */
export function answerHook(
  series: AnswerSeries,
): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  return (_request, reply, done) => {
    observeAnswer(series, reply);
    done();
  };
}

/** One child per value of an enum label, made up front (the families are small). */
export function childrenByValue<V extends string>(
  counter: Counter<string>,
  labels: readonly string[],
  values: readonly V[],
): Readonly<Record<V, { inc(): void }>> {
  return Object.fromEntries(values.map((value) => [value, counter.labels(...labels, value)])) as Record<
    V,
    { inc(): void }
  >;
}

/** How long a scrape waits for a database read before it reports the value as unknown. */
export const SCRAPE_READ_TIMEOUT_MS = 1_000;

/**
 * `read`'s value, or undefined when it fails or takes longer than `timeoutMs`: a scrape must
 * answer whatever the database does. A read still running is left to finish on its own.
 */
export async function readWithin<T>(read: () => Promise<T>, timeoutMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, undefined);
    timer.unref();
  });
  const value = read().catch(() => undefined);
  try {
    return await Promise.race([value, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A gauge whose value the database gives when it is scraped (an outbox's backlog), read within
 * `timeoutMs`; NaN when the database did not answer in time.
 */
export function gaugeReadOnScrape(options: {
  readonly name: string;
  readonly help: string;
  readonly registry: Registry;
  readonly read: () => Promise<number>;
  readonly timeoutMs?: number;
}): Gauge {
  const { read, timeoutMs = SCRAPE_READ_TIMEOUT_MS } = options;
  return new Gauge({
    name: options.name,
    help: options.help,
    registers: [options.registry],
    async collect() {
      this.set((await readWithin(read, timeoutMs)) ?? Number.NaN);
    },
  });
}

/** A route's own onResponse hook (an `onRoute` hook adds it), after any it has. */
export function appendOnResponse(
  route: RouteOptions,
  hook: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void,
): void {
  const existing = route.onResponse;
  route.onResponse = existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
}
