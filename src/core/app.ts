/**
 * The native v3 core as a fastify application. Dependencies come in ready-made (database,
 * ephemeral store, key registry), so tests and the CLI decide what they are; options are
 * resolved here once, with named defaults.
 */
import Fastify, { type FastifyInstance } from 'fastify';

import type { Mode } from '../lib/auth/credential-vocabulary.js';
import {
  DEFAULT_IDEMPOTENCY_LOCK_TTL_MS,
  DEFAULT_JWT_ISSUERS,
  DEFAULT_RATE_LIMIT_READS,
  DEFAULT_RATE_LIMIT_WRITES,
} from '../lib/config.js';
import type { Database } from '../lib/db/database.js';
import { createClientErrorHandler, v3ClientErrorAnswer } from '../lib/http/client-errors.js';
import { answerConnectRequests } from '../lib/http/connect-requests.js';
import type { Draining } from '../lib/http/listener-drain.js';
import { routeEveryMethod } from '../lib/http/methods.js';
import { trackRoutes } from '../lib/http/route-inventory.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, serverTimeoutOptions } from '../lib/http/server-timeouts.js';
import type { KeyRegistry } from '../lib/keys/key-registry.js';
import { loggerOptions } from '../lib/logger.js';
import { type DestinationPolicy, type OutboundAllowance, webhookPolicies } from '../lib/net/destination-policy.js';
import { generateRequestId } from '../lib/request-id.js';
import type { SealingKeyring } from '../lib/secrets/sealing-keyring.js';
import type { EphemeralStore } from '../lib/store/ephemeral-store.js';
import { traceServerRequests } from '../lib/tracing/server-spans.js';
import { TRACERS, tracingActive } from '../lib/tracing/spans.js';
import { WebhookDeliveryWorker, type WebhookWorkerOptions } from './events/webhook-worker.js';
import { MAX_BODY_BYTES } from './http/body.js';
import type { ErrorHandler } from './http/error-handler.js';
import type { Operation } from './http/operation.js';
import { coreRequestNames } from './http/request-spans.js';
import { connectAnswer } from './http/routing.js';
import { installV3Pipeline } from './http/v3-pipeline.js';
import type { CoreMetrics } from './metrics/core-metrics.js';
import { createDepositCompleter, type DepositCompleterOptions } from './money-movement/deposit-completer.js';
import { SimulatedPaymentRail, type SimulatedRailOptions } from './money-movement/payment-rails.js';
import { createWithdrawalProcessor, type WithdrawalProcessorOptions } from './money-movement/withdrawal-processor.js';
import { registerV3Reference } from './openapi/serve.js';
import { createCursorCodec, type CursorCodec } from './pagination/cursor-codec.js';
import { balanceOperations } from './routes/balances.js';
import { depositOperations } from './routes/deposits.js';
import { exposureOperations } from './routes/exposure.js';
import { registerHealthRoutes } from './routes/health.js';
import { pairsOperations } from './routes/pairs.js';
import { quoteOperations } from './routes/quotes.js';
import { tradeLifecycleOperations } from './routes/trade-lifecycle.js';
import { tradeOperations } from './routes/trades.js';
import { webhookEndpointOperations } from './routes/webhook-endpoints.js';
import { withdrawalAccountOperations } from './routes/withdrawal-accounts.js';
import { withdrawalOperations } from './routes/withdrawals.js';
import { loadOrCreateServiceSecret } from './service-secrets.js';
import { DEFAULT_USD_PRICES, type RateSource, StaticRateSource } from './trading/rate-source.js';
import { referenceData } from './trading/reference-data.js';
import { TRADING_DEFAULTS, type TradingContext, type TradingOptions } from './trading/trading-context.js';

export interface CoreDependencies {
  readonly db: Database;
  readonly store: EphemeralStore;
  readonly registry: KeyRegistry;
  /** Seals and opens webhook endpoint secrets: resolved once at start-up from the configuration. */
  readonly keyring: SealingKeyring;
  /** Where quote prices come from; the static table of DEFAULT_USD_PRICES unless given. */
  readonly rates?: RateSource;
  /** The clock of the trading book; tests move it to cross quote expiry and reversal windows. */
  readonly now?: () => Date;
}

export interface CoreOptions {
  /** The `iss` values tokens may carry (FXGATE_JWT_ISSUER); the configuration's default list unless given. */
  readonly issuers?: readonly string[];
  readonly rateLimits?: { readonly reads: number; readonly writes: number };
  readonly idempotencyLockTtlMs?: number;
  /** Proxies whose X-Forwarded-For is believed (addresses or CIDRs); none by default. */
  readonly trustedProxies?: readonly string[];
  readonly logLevel?: string;
  /** The time a client has to send a whole request, headers and body (FXGATE_REQUEST_TIMEOUT_MS); past it, 408 and the connection closes. */
  readonly requestTimeoutMs?: number;
  readonly trading?: Partial<TradingOptions>;
  /** The completer of delayed sandbox deposits, run by buildCoreApp; `enabled: false` leaves it off. */
  readonly depositCompleter?: DepositCompleterOptions & { readonly enabled?: boolean };
  /**
   * The processor of live withdrawals, run by buildCoreApp on the simulated payment rail
   * (`rail`: its delay and failure rate); `enabled: false` leaves it off.
   */
  readonly withdrawalProcessor?: WithdrawalProcessorOptions & {
    readonly enabled?: boolean;
    readonly rail?: SimulatedRailOptions;
  };
  /** The webhook delivery worker, run by buildCoreApp; `enabled: false` leaves it off. */
  readonly webhookWorker?: Partial<WebhookWorkerOptions> & { readonly enabled?: boolean };
  /**
   * Where webhook endpoints may point beyond public addresses (and loopback in the sandbox):
   * FXGATE_WEBHOOK_ALLOWED_NETWORKS, and the exact destinations `fxgate all` sets to its own
   * public listener; checked when an endpoint is created and at every delivery.
   */
  readonly outbound?: OutboundAllowance;
  /** The core's Prometheus metrics (metrics/core-metrics.ts); none are kept without it. */
  readonly metrics?: CoreMetrics;
  /** True once the process is stopping: `/readyz` answers 503 while the rest is served (src/cli/drain.ts). */
  readonly draining?: Draining;
}

/** Work the core runs beside its routes: started once the app is ready, stopped when it closes. */
export interface BackgroundJob {
  start(log: FastifyInstance['log']): void;
  stop(): Promise<void>;
}

export const CORE_DEFAULTS = {
  issuers: DEFAULT_JWT_ISSUERS,
  rateLimits: { reads: DEFAULT_RATE_LIMIT_READS, writes: DEFAULT_RATE_LIMIT_WRITES },
  idempotencyLockTtlMs: DEFAULT_IDEMPOTENCY_LOCK_TTL_MS,
  trustedProxies: [] as readonly string[],
  logLevel: 'info',
  requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
} as const;

/** The name under which the cursor HMAC key is kept in service_secrets. */
const CURSOR_SECRET = 'cursor-hmac';

/**
 * The one context the operations and the background jobs of an application share: one
 * reference-data cache, one rate source, one clock.
 */
export function createTradingContext(deps: CoreDependencies, options: CoreOptions = {}): TradingContext {
  return {
    ...TRADING_DEFAULTS,
    ...options.trading,
    db: deps.db,
    reference: referenceData(deps.db),
    rates: deps.rates ?? new StaticRateSource(DEFAULT_USD_PRICES),
    now: deps.now ?? (() => new Date()),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  };
}

/** Every v3 operation the core serves, on one trading context. */
export async function coreOperations(
  deps: CoreDependencies,
  options: CoreOptions = {},
  trading: TradingContext = createTradingContext(deps, options),
): Promise<Operation[]> {
  const cursors = createCursorCodec(await loadOrCreateServiceSecret(deps.db, CURSOR_SECRET));
  return operationsOn(trading, cursors, deps.keyring, webhookPolicies(options.outbound));
}

/**
 * The core's operations on a trading context, cursor codec, the keyring of webhook endpoint
 * secrets and each mode's webhook destination policy; the OpenAPI document reads their
 * declarations (src/core/openapi/).
 */
export function operationsOn(
  trading: TradingContext,
  cursors: CursorCodec,
  endpointSecrets: SealingKeyring,
  webhookDestinations: Readonly<Record<Mode, DestinationPolicy>>,
): Operation[] {
  return [
    ...pairsOperations(trading.reference),
    ...quoteOperations(trading),
    ...tradeOperations(trading, cursors),
    ...tradeLifecycleOperations(trading),
    ...exposureOperations(trading),
    ...balanceOperations(trading),
    ...depositOperations(trading, cursors),
    ...withdrawalAccountOperations(trading),
    ...withdrawalOperations(trading, cursors),
    ...webhookEndpointOperations(trading, endpointSecrets, webhookDestinations),
  ];
}

export async function buildCoreApp(deps: CoreDependencies, options: CoreOptions = {}): Promise<FastifyInstance> {
  const trading = createTradingContext(deps, options);
  const jobs: BackgroundJob[] = [];
  if (options.depositCompleter?.enabled !== false) {
    jobs.push(createDepositCompleter(trading, options.depositCompleter));
  }
  if (options.withdrawalProcessor?.enabled !== false) {
    const rail = new SimulatedPaymentRail(options.withdrawalProcessor?.rail);
    jobs.push(createWithdrawalProcessor(trading, rail, options.withdrawalProcessor));
  }
  if (options.webhookWorker?.enabled !== false) {
    const { enabled: _enabled, ...workerOptions } = options.webhookWorker ?? {};
    jobs.push(
      new WebhookDeliveryWorker({
        db: deps.db,
        keyring: deps.keyring,
        options: workerOptions,
        now: deps.now,
        outbound: options.outbound,
      }),
    );
  }
  return createV3App(deps, options, await coreOperations(deps, options, trading), jobs);
}

/** A v3 application serving exactly these operations on the full pipeline. */
export async function createV3App(
  deps: CoreDependencies,
  options: CoreOptions,
  operations: readonly Operation[],
  jobs: readonly BackgroundJob[] = [],
): Promise<FastifyInstance> {
  const resolved = { ...CORE_DEFAULTS, ...options };
  // Fastify answers a few malformed requests (a bad percent-encoding in the URL) before any
  // hook runs; `frameworkErrors` routes them to the pipeline's error handler, bound below.
  let handleFrameworkError: ErrorHandler | null = null;
  const app = Fastify({
    logger: loggerOptions(resolved.logLevel),
    genReqId: generateRequestId,
    trustProxy: resolved.trustedProxies.length > 0 ? [...resolved.trustedProxies] : false,
    bodyLimit: MAX_BODY_BYTES,
    // A request that reaches a closing listener was sent before its client could know: it is
    // answered (fastify adds Connection: close), not refused with a body outside the envelope.
    return503OnClosing: false,
    ...serverTimeoutOptions(resolved.requestTimeoutMs),
    // What Node's parser refuses before any hook runs (oversized headers, bad framing, a timeout) gets the v3 envelope too.
    clientErrorHandler: createClientErrorHandler(v3ClientErrorAnswer),
    frameworkErrors: (error, request, reply) => {
      void handleFrameworkError!(error, request, reply);
    },
  });
  // Before any route: every method is routed (a path's 405 names them all), each route is given
  // its series as it is added, and recorded for the OpenAPI checks and the CONNECT answer.
  routeEveryMethod(app);
  trackRoutes(app);
  // First among the onRequest hooks, so authentication and the handler run inside the request's span.
  if (tracingActive()) traceServerRequests(app, TRACERS.core, coreRequestNames);
  resolved.metrics?.instrument(app);
  handleFrameworkError = installV3Pipeline(app, operations, {
    registry: deps.registry,
    store: deps.store,
    issuers: resolved.issuers,
    rateLimits: resolved.rateLimits,
    idempotencyLockTtlMs: resolved.idempotencyLockTtlMs,
  });
  registerHealthRoutes(
    app,
    { database: () => deps.db.query('SELECT 1').then(() => undefined), store: () => deps.store.ping() },
    resolved.draining,
  );
  await registerV3Reference(app, operations);
  app.addHook('onClose', async () => {
    await Promise.all(jobs.map((job) => job.stop()));
  });
  await app.ready();
  answerConnectRequests(app.server, (request) => connectAnswer(app, request), app.log);
  for (const job of jobs) job.start(app.log);
  return app;
}
