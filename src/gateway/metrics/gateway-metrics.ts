/**
 * The gateway's Prometheus metrics (`fxgate_gateway_...`), served on the admin listener's
 * GET /metrics. Every label value comes from a bounded set: the generation, the operation's
 * declared name (a legacy operation, a v3 operation's `METHOD /path/:param`, the route pattern
 * of the gateway's own routes, `openapi_document` for the OpenAPI documents, or `unknown`), the status class, and the enums below. Org ids,
 * key ids, paths and client addresses are never labels; the usage report is where those go.
 *
 * The request path does no label work: each operation's series are made once and kept
 * (OperationSeries), each route is given its series when it is registered (`onRoute`), and the
 * count and the latency of a request are taken in one onResponse hook of its route.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { Counter, Histogram, Registry } from 'prom-client';

import type { Queryable } from '../../lib/db/database.js';
import type { StatusClassCounters } from '../../lib/metrics/series.js';
import {
  AnswerFamilies,
  answerHook,
  appendOnResponse,
  childrenByValue,
  gaugeReadOnScrape,
  LATENCY_BUCKETS_SECONDS,
  LazyObserver,
  type MetricsRouteConfig,
  observeAnswer,
  OPENAPI_DOCUMENT_OPERATION,
} from '../../lib/metrics/series.js';
import { documentPath } from '../../lib/openapi/document.js';
import {
  LEGACY_GENERATIONS,
  LEGACY_OPERATIONS,
  type LegacyGeneration,
  legacyRoutePath,
} from '../legacy/declarations/legacy-operations.js';
import type { V3Operation } from '../legacy/v3-contract/operations.js';
import { v3OperationLabel, V3OperationMatcher } from './v3-routes.js';

export const GATEWAY_METRICS_PREFIX = 'fxgate_gateway_';

/** `none`: a path under no generation (health, the webhook receiver, anything unrouted). */
export type MetricsGeneration = LegacyGeneration | 'v3' | 'none';

/** How a keyed legacy request's idempotency record was found. */
export const IDEMPOTENCY_OUTCOMES = ['new', 'replay', 'in_flight', 'mismatch', 'store_down'] as const;
export type IdempotencyOutcome = (typeof IDEMPOTENCY_OUTCOMES)[number];

/**
 * Why v3 gave no usable answer. `timeout`: sent, then no answer within the timeouts, or the
 * connection lost; `deadline`: the answer not finished within the upstream deadline;
 * `protocol`: an answer that is not HTTP or not v3's envelope; `contract_violation`: a v3
 * success body the declarations cannot read; `credential`: the gateway's own v3 key missing or
 * unusable (no call was made).
 */
export const UPSTREAM_FAILURE_KINDS = [
  'unreachable',
  'timeout',
  'deadline',
  'protocol',
  'contract_violation',
  'credential',
] as const;
export type UpstreamFailureKind = (typeof UPSTREAM_FAILURE_KINDS)[number];

/**
 * Whose budget a legacy 429 spent: the key's own (`key`), the client address's for a request
 * whose token proved no key (`address`), both the gateway's (legacy/runtime/legacy-rate-limits.ts); or v3's
 * budget of the gateway's own credential, shared by the book's keys (`upstream`).
 */
export const RATE_LIMIT_SOURCES = ['key', 'address', 'upstream'] as const;
export type RateLimitSource = (typeof RATE_LIMIT_SOURCES)[number];

/** What an attempt of a legacy webhook delivery led to; `gave_up` includes a subscription removed before the attempt. */
export const WEBHOOK_DELIVERY_OUTCOMES = ['delivered', 'retrying', 'gave_up', 'interrupted'] as const;
export type WebhookDeliveryOutcome = (typeof WEBHOOK_DELIVERY_OUTCOMES)[number];

/** The shadow report's counts: `differing` is a subset of `compared`. */
export const SHADOW_RESULTS = ['compared', 'differing', 'not_compared', 'dropped'] as const;
export type ShadowResult = (typeof SHADOW_RESULTS)[number];

export const UNKNOWN_OPERATION = 'unknown';

declare module 'fastify' {
  interface FastifyRequest {
    /** A /v3 request's series once resolved: its upstream call and its answer are counted under one match. */
    fxgateMetricsSeries: OperationSeries | null;
  }
}

const V3_DOCUMENT_PATH = documentPath('v3');

/** A GET (or HEAD) of the core's v3 document through the passthrough; another method is the core's 405. */
function isV3DocumentRequest(method: string, url: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  const query = url.indexOf('?');
  return (query === -1 ? url : url.slice(0, query)) === V3_DOCUMENT_PATH;
}

const GENERATION_PREFIX = /^\/(v1|v2|v3)(?=$|[/?])/;

/** The generation a request target is under. */
function generationOfUrl(url: string): MetricsGeneration {
  const match = GENERATION_PREFIX.exec(url);
  return match === null ? 'none' : (match[1] as MetricsGeneration);
}

const FAMILY = {
  upstreamDuration: 'fxgate_gateway_upstream_duration_seconds',
  upstreamFailures: 'fxgate_gateway_upstream_failures_total',
  idempotency: 'fxgate_gateway_idempotency_total',
  rateLimited: 'fxgate_gateway_rate_limited_total',
  webhookDeliveries: 'fxgate_gateway_webhook_deliveries_total',
  webhookBacklog: 'fxgate_gateway_webhook_backlog',
  shadow: 'fxgate_gateway_shadow_comparisons_total',
} as const;

/** The series of one operation of one generation, made once. */
export class OperationSeries {
  private failures: Readonly<Record<UpstreamFailureKind, { inc(): void }>> | null = null;
  private idempotencyOutcomes: Readonly<Record<IdempotencyOutcome, { inc(): void }>> | null = null;
  private rateLimitSources: Readonly<Record<RateLimitSource, { inc(): void }>> | null = null;
  readonly requests: StatusClassCounters;
  /** The whole request, from routing to the last byte written. */
  readonly duration: LazyObserver;
  /** Each v3 call, from sending it to the last byte of its answer. */
  readonly upstream: LazyObserver;

  constructor(
    private readonly families: GatewayFamilies,
    private readonly labels: readonly [MetricsGeneration, string],
  ) {
    ({ requests: this.requests, duration: this.duration } = families.answers.seriesFor(labels));
    this.upstream = new LazyObserver(families.upstreamDuration, labels);
  }

  upstreamFailed(kind: UpstreamFailureKind): void {
    (this.failures ??= childrenByValue(this.families.upstreamFailures, this.labels, UPSTREAM_FAILURE_KINDS))[
      kind
    ].inc();
  }

  idempotency(outcome: IdempotencyOutcome): void {
    (this.idempotencyOutcomes ??= childrenByValue(this.families.idempotency, this.labels, IDEMPOTENCY_OUTCOMES))[
      outcome
    ].inc();
  }

  rateLimited(source: RateLimitSource): void {
    (this.rateLimitSources ??= childrenByValue(this.families.rateLimited, this.labels, RATE_LIMIT_SOURCES))[
      source
    ].inc();
  }
}

interface GatewayFamilies {
  readonly answers: AnswerFamilies;
  readonly upstreamDuration: Histogram<string>;
  readonly upstreamFailures: Counter<string>;
  readonly idempotency: Counter<string>;
  readonly rateLimited: Counter<string>;
}

/** Told of a relayed /v3 request's upstream call (the passthrough's relay). */
export interface PassthroughObserver {
  answered(request: FastifyRequest, elapsedMs: number): void;
  failed(request: FastifyRequest, kind: UpstreamFailureKind): void;
}

export class GatewayMetrics implements PassthroughObserver {
  readonly registry = new Registry();
  private readonly families: GatewayFamilies;
  private readonly series = new Map<MetricsGeneration, Map<string, OperationSeries>>();
  /** Each legacy route pattern's operation, from the declarations' operation names. */
  private readonly legacyRoutes = new Map<string, OperationSeries>();
  private readonly v3Operations = new V3OperationMatcher();
  /** Each declared v3 operation's series, found by the operation object the matcher answers. */
  private readonly v3Series = new Map<V3Operation, OperationSeries>();
  private webhookOutcomes: Readonly<Record<WebhookDeliveryOutcome, { inc(): void }>> | null = null;
  private shadowFamily: Counter<string> | null = null;
  private readonly shadowSeries = new Map<string, Readonly<Record<ShadowResult, { inc(): void }>>>();

  constructor() {
    const registers = [this.registry];
    const byOperation = ['generation', 'operation'];
    this.families = {
      answers: new AnswerFamilies({
        registry: this.registry,
        prefix: GATEWAY_METRICS_PREFIX,
        labelNames: byOperation,
        requestsHelp: 'Requests answered, by generation, operation and status class.',
      }),
      upstreamDuration: new Histogram({
        name: FAMILY.upstreamDuration,
        help: 'Time of each v3 call that was answered, from sending it to the last byte of the answer, in seconds (a legacy operation may make several).',
        labelNames: byOperation,
        buckets: [...LATENCY_BUCKETS_SECONDS],
        registers,
      }),
      upstreamFailures: new Counter({
        name: FAMILY.upstreamFailures,
        help: 'Requests v3 gave no usable answer to, by kind.',
        labelNames: [...byOperation, 'kind'],
        registers,
      }),
      idempotency: new Counter({
        name: FAMILY.idempotency,
        help: 'Legacy requests with an Idempotency-Key, by how the key was found.',
        labelNames: [...byOperation, 'outcome'],
        registers,
      }),
      rateLimited: new Counter({
        name: FAMILY.rateLimited,
        help: "Legacy requests answered 429, by whose budget was spent: the key's own, the client address's (a token that proved no key), or v3's budget of the gateway's credential (upstream).",
        labelNames: [...byOperation, 'source'],
        registers,
      }),
    };
    for (const generation of LEGACY_GENERATIONS) {
      for (const operation of LEGACY_OPERATIONS[generation])
        this.legacyRoutes.set(legacyRoutePath(generation, operation), this.of(generation, operation));
    }
  }

  /** The series of a generation's operation; made on first use, then the same object. */
  of(generation: MetricsGeneration, operation: string): OperationSeries {
    let operations = this.series.get(generation);
    if (operations === undefined) {
      operations = new Map();
      this.series.set(generation, operations);
    }
    let series = operations.get(operation);
    if (series === undefined) {
      series = new OperationSeries(this.families, [generation, operation]);
      operations.set(operation, series);
    }
    return series;
  }

  /**
   * Counts every answer of the app: each route gets an onResponse hook holding its series
   * (the /v3 passthrough's resolves the declared v3 operation per request), and a request no
   * route took is counted under its generation as `unknown`. Call before any route is added.
   */
  instrument(app: FastifyInstance): void {
    app.decorateRequest('fxgateMetricsSeries', null);
    app.addHook('onRoute', (route) => this.instrumentRoute(route));
    app.addHook('onResponse', (request, reply, done) => {
      if (request.is404) observeAnswer(this.of(generationOfUrl(request.url), UNKNOWN_OPERATION), reply);
      done();
    });
  }

  private instrumentRoute(route: RouteOptions): void {
    const url = route.url;
    let hook: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;
    if (url === '/v3' || url.startsWith('/v3/')) {
      hook = (request, reply, done) => {
        observeAnswer(this.passthroughSeries(request), reply);
        done();
      };
    } else {
      const generation = generationOfUrl(url);
      const named = (route.config as MetricsRouteConfig | undefined)?.metricsOperation;
      const series =
        this.legacyRoutes.get(url) ?? this.of(generation, named ?? (generation === 'none' ? url : UNKNOWN_OPERATION));
      hook = answerHook(series);
    }
    appendOnResponse(route, hook);
  }

  /** A /v3 request's series: its declared v3 operation, the v3 document, or `unknown`; resolved once per request. */
  private passthroughSeries(request: FastifyRequest): OperationSeries {
    return (request.fxgateMetricsSeries ??= this.resolveV3(request));
  }

  private resolveV3(request: FastifyRequest): OperationSeries {
    if (isV3DocumentRequest(request.method, request.url)) return this.of('v3', OPENAPI_DOCUMENT_OPERATION);
    const operation = this.v3Operations.match(request.method, request.url);
    if (operation === null) return this.of('v3', UNKNOWN_OPERATION);
    let series = this.v3Series.get(operation);
    if (series === undefined) {
      series = this.of('v3', v3OperationLabel(operation));
      this.v3Series.set(operation, series);
    }
    return series;
  }

  answered(request: FastifyRequest, elapsedMs: number): void {
    this.passthroughSeries(request).upstream.observe(elapsedMs / 1000);
  }

  failed(request: FastifyRequest, kind: UpstreamFailureKind): void {
    this.passthroughSeries(request).upstreamFailed(kind);
  }

  /** Legacy webhook deliveries by outcome, and the outbox's backlog read on each scrape; once, when the gateway has legacy webhooks. */
  legacyWebhooks(db: Queryable): (outcome: WebhookDeliveryOutcome) => void {
    if (this.webhookOutcomes === null) {
      const deliveries = new Counter({
        name: FAMILY.webhookDeliveries,
        help: 'Attempts of legacy webhook deliveries, by outcome.',
        labelNames: ['outcome'],
        registers: [this.registry],
      });
      this.webhookOutcomes = childrenByValue(deliveries, [], WEBHOOK_DELIVERY_OUTCOMES);
      gaugeReadOnScrape({
        name: FAMILY.webhookBacklog,
        help: 'Legacy webhook deliveries waiting in the outbox (pending), read when scraped; NaN when the database did not answer within 1 s.',
        registry: this.registry,
        read: async () =>
          Number(
            (
              await db.query<{ n: string }>(
                `SELECT count(*)::text AS n FROM legacy_webhook_deliveries WHERE status = 'PENDING'`,
              )
            ).rows[0]!.n,
          ),
      });
    }
    const outcomes = this.webhookOutcomes;
    return (outcome) => outcomes[outcome].inc();
  }

  /** Shadow comparisons by result; registered only when shadow mode is on. */
  shadow(): (operation: { readonly generation: string; readonly name: string }, result: ShadowResult) => void {
    const family = (this.shadowFamily ??= new Counter({
      name: FAMILY.shadow,
      help: 'Shadow mode: mirrored reads compared (and of those, differing), not compared, or dropped at the cap.',
      labelNames: ['generation', 'operation', 'result'],
      registers: [this.registry],
    }));
    return (operation, result) => {
      let children = this.shadowSeries.get(`${operation.generation} ${operation.name}`);
      if (children === undefined) {
        children = childrenByValue(family, [operation.generation, operation.name], SHADOW_RESULTS);
        this.shadowSeries.set(`${operation.generation} ${operation.name}`, children);
      }
      children[result].inc();
    };
  }
}
