/**
 * The gateway as a fastify application: `/v3/*` passed through verbatim to a v3 upstream, the
 * legacy generations under `/v1` and `/v2`, and health endpoints. It knows v3 only through its
 * HTTP contract (docs/contract.md#generations-serving), so it runs unchanged in front of any
 * conforming v3 service.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Dispatcher, Pool } from 'undici';

import type { AdminRoutes } from '../lib/admin/admin-listener.js';
import {
  DEFAULT_IDEMPOTENCY_LOCK_TTL_MS,
  DEFAULT_LEGACY_RATE_LIMIT_READS,
  DEFAULT_LEGACY_RATE_LIMIT_WRITES,
  DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS,
  DEFAULT_UPSTREAM_DEADLINE_MS,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
} from '../lib/config.js';
import type { Queryable } from '../lib/db/database.js';
import { ApiError } from '../lib/errors/api-error.js';
import { answerConnectRequests } from '../lib/http/connect-requests.js';
import type { Draining } from '../lib/http/listener-drain.js';
import { routeEveryMethod } from '../lib/http/methods.js';
import { READINESS_TIMEOUT_MS } from '../lib/http/readiness.js';
import { trackRoutes } from '../lib/http/route-inventory.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, serverTimeoutOptions } from '../lib/http/server-timeouts.js';
import type { KeyRegistry } from '../lib/keys/key-registry.js';
import { loggerOptions } from '../lib/logger.js';
import { generateRequestId } from '../lib/request-id.js';
import type { EphemeralStore } from '../lib/store/ephemeral-store.js';
import { traceServerRequests } from '../lib/tracing/server-spans.js';
import { TRACERS, tracingActive } from '../lib/tracing/spans.js';
import { createGatewayClientErrorHandler, gatewayConnectAnswer } from './client-errors.js';
import { legacyFieldIndex } from './compare/legacy-fields.js';
import { type GatewayReadinessChecks, registerGatewayHealthRoutes } from './health.js';
import { InFlightRequests } from './in-flight.js';
import { declaredMode } from './legacy/declarations/conventions.js';
import { validateShadowVolatile } from './legacy/declarations/conventions.js';
import {
  type LegacyMappings,
  loadLegacyMappings,
  type MappingsLocation,
} from './legacy/declarations/mappings-loader.js';
import { LEGACY_PREFIXES, legacyGenerationOf, type LegacyNotFound, registerLegacyRoutes } from './legacy/routes.js';
import { createLegacyAuthenticator } from './legacy/runtime/auth.js';
import { GenerationLifecycle, type GenerationLifecycleOptions } from './legacy/runtime/generation-lifecycle.js';
import { LegacyIdempotency } from './legacy/runtime/legacy-idempotency.js';
import { LegacyRateLimiter, type LegacyRateLimits } from './legacy/runtime/legacy-rate-limits.js';
import { PAGE_WALKER_DEFAULTS, type PageTotalsMode, PageWalker } from './legacy/runtime/page-walker.js';
import { SandboxHosts } from './legacy/runtime/sandbox-hosts.js';
import type { GatewayMetrics } from './metrics/gateway-metrics.js';
import { type MigrationSchedule, migrationSchedule, type ScheduleSource } from './migration-schedule.js';
import { registerGatewayReference } from './openapi/serve.js';
import { GatewayRequestNames } from './request-spans.js';
import { ShadowMode, type ShadowOptions } from './shadow/shadow-mode.js';
import { readShadowReport } from './shadow/shadow-recorder.js';
import { createUpstreamPool, probeUpstream, upstreamOrigin } from './upstream/pool.js';
import type { UpstreamCredentials } from './upstream/signing-credentials.js';
import { V3Client } from './upstream/v3-client.js';
import { readinessAdminRoute, ReadinessRecorder } from './usage/readiness-recorder.js';
import { USAGE_DEFAULTS, usageAdminRoute, UsageRecorder } from './usage/usage-recorder.js';
import { handleGatewayError, sendV3Error } from './v3/errors.js';
import { registerV3Passthrough } from './v3/passthrough.js';
import type { LegacyWebhooks } from './webhooks/legacy-webhooks.js';

export interface GatewayOptions {
  /** The v3 service's origin, e.g. http://127.0.0.1:8081 (no path: v3 paths are signed as sent). */
  readonly upstreamUrl: string;
  readonly connectTimeoutMs?: number;
  /** For the upstream's response headers, and again between two chunks of its body. */
  readonly timeoutMs?: number;
  /** The most one upstream call may take, to the last byte of its answer; at least the two timeouts above. */
  readonly deadlineMs?: number;
  /**
   * What carries every upstream call instead of the gateway's own Pool (which is built from the
   * two timeouts above and closed with the gateway). One given here is the caller's: used as it
   * is, with its own timeouts, and left open. For a caller that connects to v3 its own way (TLS
   * settings, pool size), and for tests that stand in for v3 (test/support/node-http-dispatcher.ts).
   */
  readonly upstreamDispatcher?: Dispatcher;
  /** How long /readyz waits for each thing it checks (the upstream's /healthz, the store, the database). */
  readonly readinessTimeoutMs?: number;
  /** Proxies whose X-Forwarded-For is believed (addresses or CIDRs); none by default. */
  readonly trustedProxies?: readonly string[];
  readonly logLevel?: string;
  /** The time a client has to send a whole request, headers and body (FXGATE_REQUEST_TIMEOUT_MS); past it, 408 and the connection closes. */
  readonly requestTimeoutMs?: number;
  /** What the v1 and v2 generations need; without it they answer 501 (a /v3-only gateway). */
  readonly legacy?: LegacyGatewayOptions;
  /** The admin listener to add the gateway's operator routes to (the shadow report); none is served on this app. */
  readonly admin?: AdminRoutes;
  /** The gateway's Prometheus metrics (metrics/gateway-metrics.ts), served on `admin` when given; none are kept without it. */
  readonly metrics?: GatewayMetrics;
  /** True once the process is stopping: `/readyz` answers 503 while the rest is served (src/cli/drain.ts). */
  readonly draining?: Draining;
  /**
   * Where the legacy declarations are loaded from; `mappings/` of this build by default. For
   * tests only, which serve an edited copy to prove that a comparison tool catches the change.
   */
  readonly mappingsLocation?: MappingsLocation;
  /** For tests only: declarations already compiled (compileLegacyMappings of an edited copy), served instead of loading any. */
  readonly mappings?: LegacyMappings;
}

export interface LegacyGatewayOptions {
  /** The legacy API keys (shared with the core in `fxgate all`). */
  readonly registry: KeyRegistry;
  /** The registry's database, which /readyz checks. */
  readonly database: Queryable;
  /** Nonces, v2 idempotency records, the legacy rate-limit cells and the page cursor cache. */
  readonly store: EphemeralStore;
  /** The gateway's own v3 credential per org and mode. */
  readonly credentials: UpstreamCredentials;
  /**
   * The `iss` values legacy tokens may carry (FXGATE_JWT_ISSUER). The upstream tokens' issuer is
   * the credentials' own, which the CLI gives the first entry of the same list.
   */
  readonly issuers: readonly string[];
  /** Lifetime of a v2 idempotency lock whose owner died. */
  readonly idempotencyLockTtlMs?: number;
  /** Requests per legacy key (or client address) and class per 10 s (FXGATE_LEGACY_RATE_LIMIT_READS, _WRITES). */
  readonly rateLimits?: LegacyRateLimits;
  /** The generations' deprecation headers, brownouts and sunset (legacy/runtime/generation-lifecycle.ts); v1's default dates without it. */
  readonly lifecycle?: GenerationLifecycleOptions;
  /** The usage and readiness reports' batching (usage/usage-recorder.ts, readiness-recorder.ts): how often counts are written, and their clock. */
  readonly usage?: { readonly flushIntervalMs?: number; readonly now?: () => number };
  /** How list totals are found (FXGATE_LEGACY_PAGE_TOTALS; page-walker.ts). */
  readonly pageTotals?: PageTotalsMode;
  /** Shadow mode beside the legacy service (shadow/shadow-mode.ts); off without it. */
  readonly shadow?: ShadowOptions;
  /** FXGATE_SANDBOX_HOSTS: host names where a request without `X-App-Mode` is sandbox (legacy/runtime/auth.ts). */
  readonly sandboxHosts?: readonly string[];
  /** Legacy webhooks (webhooks/legacy-webhooks.ts): the receiver v3 delivers to, the outbox worker, the v3 registrations. */
  readonly webhooks?: LegacyWebhooks;
}

export const LEGACY_GATEWAY_DEFAULTS = {
  idempotencyLockTtlMs: DEFAULT_IDEMPOTENCY_LOCK_TTL_MS,
  rateLimits: {
    reads: DEFAULT_LEGACY_RATE_LIMIT_READS,
    writes: DEFAULT_LEGACY_RATE_LIMIT_WRITES,
  } satisfies LegacyRateLimits,
  pageTotals: PAGE_WALKER_DEFAULTS.totals,
} as const;

/** Where the admin listener serves the migration schedule. */
export const SCHEDULE_ADMIN_PATH = '/admin/schedule';

export const LEGACY_NOT_CONFIGURED_MESSAGE = 'The v1 and v2 generations are not configured on this gateway';

export const GATEWAY_DEFAULTS = {
  connectTimeoutMs: DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS,
  timeoutMs: DEFAULT_UPSTREAM_TIMEOUT_MS,
  deadlineMs: DEFAULT_UPSTREAM_DEADLINE_MS,
  readinessTimeoutMs: READINESS_TIMEOUT_MS,
  trustedProxies: [] as readonly string[],
  logLevel: 'info',
  requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
} as const;

/** The schedule of each gateway built with the legacy generations: its own lifecycle and shadow mode, read at a time. */
const schedules = new WeakMap<FastifyInstance, (now?: number) => MigrationSchedule>();

/**
 * The migration schedule a gateway applies (migration-schedule.ts), at `now` or its own clock's
 * time; null for a gateway without the legacy generations. What the CLI prints at start-up.
 */
export function gatewaySchedule(app: FastifyInstance, now?: number): MigrationSchedule | null {
  return schedules.get(app)?.(now) ?? null;
}

/** A path that is not even valid URL syntax (a bad percent-escape) names no operation anywhere. */
function rejectMalformedUrl(request: FastifyRequest, reply: FastifyReply): void {
  sendV3Error(reply, new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: '(malformed)' }));
}

/** The answer under /v1 and /v2 of a gateway without the legacy options. */
function legacyNotConfigured(_request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.code(501).send({ status: 'error', message: LEGACY_NOT_CONFIGURED_MESSAGE });
}

export async function buildGatewayApp(options: GatewayOptions): Promise<FastifyInstance> {
  const resolved = { ...GATEWAY_DEFAULTS, ...options };
  const origin = upstreamOrigin(resolved.upstreamUrl);
  if (resolved.deadlineMs < Math.max(resolved.timeoutMs, resolved.connectTimeoutMs)) {
    throw new RangeError(
      `the upstream deadline (${resolved.deadlineMs} ms) must be at least the timeouts it contains (${resolved.connectTimeoutMs} and ${resolved.timeoutMs} ms)`,
    );
  }
  // The gateway closes only a pool of its own; a given dispatcher is the caller's.
  let ownPool: Pool | null = null;
  let dispatcher: Dispatcher;
  if (resolved.upstreamDispatcher) {
    dispatcher = resolved.upstreamDispatcher;
  } else {
    ownPool = createUpstreamPool({
      origin,
      connectTimeoutMs: resolved.connectTimeoutMs,
      timeoutMs: resolved.timeoutMs,
    });
    dispatcher = ownPool;
  }
  // Validated once here: a bad table stops start-up. The legacy envelopes need the error tables even on a /v3-only gateway.
  const mappings = resolved.mappings ?? (await loadLegacyMappings(resolved.mappingsLocation));
  // Its dates are checked here too: a sunset before its deprecation stops start-up.
  const lifecycle = new GenerationLifecycle(resolved.legacy?.lifecycle);
  const app = Fastify({
    logger: loggerOptions(resolved.logLevel),
    trustProxy: resolved.trustedProxies.length > 0 ? [...resolved.trustedProxies] : false,
    // A request that reaches a closing listener was sent before its client could know: it is
    // answered (fastify adds Connection: close), not refused with a body outside every envelope.
    return503OnClosing: false,
    genReqId: generateRequestId,
    ...serverTimeoutOptions(resolved.requestTimeoutMs),
    // What Node's parser refuses before routing gets the envelope of the generation its request line names.
    clientErrorHandler: createGatewayClientErrorHandler(mappings.errors, lifecycle),
    frameworkErrors: (_error, request, reply) => {
      // Under /v1 or /v2 the generation's own "not found", in its envelope and status.
      const generation = legacyGenerationOf(request.url);
      if (generation === null) rejectMalformedUrl(request, reply);
      else if (legacyNotFound === null) legacyNotConfigured(request, reply);
      else legacyNotFound(generation, request, reply);
    },
  });
  // Before any route: every method is routed (under /v1 and /v2 an unknown one gets the legacy
  // answer), each route is given its series as it is added, and recorded for the OpenAPI checks
  // and the CONNECT answer.
  routeEveryMethod(app);
  trackRoutes(app);
  // First among the onRequest hooks, so authentication and the handler run inside the request's span.
  if (tracingActive()) traceServerRequests(app, TRACERS.gateway, new GatewayRequestNames().describe);
  const { metrics } = resolved;
  metrics?.instrument(app);
  if (metrics !== undefined) resolved.admin?.addMetrics(metrics.registry);
  const inFlight = new InFlightRequests();
  // Set once the legacy routes exist; the malformed-URL answer above needs it.
  let legacyNotFound: LegacyNotFound | null = null;
  let shadow: ShadowMode | null = null;
  let usage: UsageRecorder | null = null;
  let migrationReadiness: ReadinessRecorder | null = null;
  app.addHook('onClose', async () => {
    // A legacy handler whose client left is still mid-operation: let it finish its v3 calls, for up to one call's deadline.
    await inFlight.drain(resolved.deadlineMs);
    // Every request answered is counted by now: the last batch is written.
    await Promise.all([usage?.close(), migrationReadiness?.close()]);
    // Comparisons still running translate through the pool, so they finish (or are cut) before it closes.
    await shadow?.close();
    await ownPool?.close();
  });
  app.setNotFoundHandler(async (request, reply) =>
    sendV3Error(
      reply,
      new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: request.url.split('?', 1)[0]! }),
    ),
  );
  app.setErrorHandler(handleGatewayError);
  await registerV3Passthrough(app, {
    origin,
    dispatcher,
    deadlineMs: resolved.deadlineMs,
    ...(metrics === undefined ? {} : { observer: metrics }),
  });
  // The upstream always; the legacy side's own store and database when it has them.
  let readiness: GatewayReadinessChecks = { upstream: () => probeUpstream(dispatcher, resolved.readinessTimeoutMs) };
  if (resolved.legacy) {
    const { store, database } = resolved.legacy;
    validateShadowVolatile(mappings.conventions, mappings.endpoints, (mapping) =>
      legacyFieldIndex(mapping, mappings.records).keys(),
    );
    if (resolved.legacy.shadow) {
      shadow = new ShadowMode(resolved.legacy.shadow, {
        mappings,
        database,
        legacy: { connectTimeoutMs: resolved.connectTimeoutMs, timeoutMs: resolved.timeoutMs },
        deadlineMs: resolved.deadlineMs,
        log: app.log,
        ...(metrics === undefined ? {} : { onCount: metrics.shadow() }),
      });
    }
    const usageOptions = resolved.legacy.usage;
    usage = new UsageRecorder(database, {
      flushIntervalMs: usageOptions?.flushIntervalMs ?? USAGE_DEFAULTS.flushIntervalMs,
      ...(usageOptions?.now === undefined ? {} : { now: usageOptions.now }),
      onFlushError: (error) =>
        app.log.warn({ err: error }, 'usage report: writing the counts failed; kept for the next flush'),
    });
    resolved.admin?.add(usageAdminRoute(database, usage, usageOptions?.now));
    migrationReadiness = new ReadinessRecorder(database, {
      flushIntervalMs: usageOptions?.flushIntervalMs ?? USAGE_DEFAULTS.flushIntervalMs,
      ...(usageOptions?.now === undefined ? {} : { now: usageOptions.now }),
      onFlushError: (error) =>
        app.log.warn({ err: error }, 'readiness report: writing the counts failed; kept for the next flush'),
    });
    resolved.admin?.add(readinessAdminRoute(database, { usage, readiness: migrationReadiness }, usageOptions?.now));
    legacyNotFound = await registerLegacy(app, {
      mappings,
      dispatcher,
      inFlight,
      deadlineMs: resolved.deadlineMs,
      options: resolved.legacy,
      shadow,
      lifecycle,
      reports: { usage, readiness: migrationReadiness },
      metrics,
    });
    // Read from the lifecycle and shadow mode the routes apply, at the lifecycle's clock: what is shown is what happens.
    const source: ScheduleSource = {
      plans: lifecycle.plans,
      migrationUrl: lifecycle.migrationUrl,
      shadow: shadow?.settings ?? null,
    };
    const schedule = (now = lifecycle.now()): MigrationSchedule => migrationSchedule(source, now);
    schedules.set(app, schedule);
    resolved.admin?.add({ method: 'GET', url: SCHEDULE_ADMIN_PATH, handler: async () => schedule() });
    readiness = {
      ...readiness,
      legacy: { store: () => store.ping(), database: () => database.query('SELECT 1').then(() => undefined) },
    };
    const { webhooks } = resolved.legacy;
    await webhooks?.attach(app, {
      mappings,
      client: new V3Client({ dispatcher, credentials: resolved.legacy.credentials, deadlineMs: resolved.deadlineMs }),
      ...(metrics === undefined ? {} : { onDelivery: metrics.legacyWebhooks(webhooks.options.db) }),
    });
    // Readable with shadow mode off too: the counts of earlier runs are in the database.
    const current = shadow;
    resolved.admin?.add({
      method: 'GET',
      url: '/admin/shadow/report',
      handler: async () => {
        await current?.flush();
        return readShadowReport(database);
      },
    });
  } else {
    for (const prefix of LEGACY_PREFIXES) {
      for (const url of [prefix, `${prefix}/*`])
        app.all(url, async (request, reply) => legacyNotConfigured(request, reply));
    }
  }
  registerGatewayHealthRoutes(app, readiness, resolved.readinessTimeoutMs, resolved.draining);
  await registerGatewayReference(app, { mappings, legacy: resolved.legacy !== undefined, reply: lifecycle });
  await app.ready();
  answerConnectRequests(
    app.server,
    (request) => gatewayConnectAnswer(app, mappings.errors, lifecycle, request),
    app.log,
  );
  return app;
}

/** What the v1 and v2 routes are built from: the gateway's shared parts and the legacy options. */
interface LegacyRegistration {
  readonly mappings: LegacyMappings;
  /** The connection pool to the v3 upstream. */
  readonly dispatcher: Dispatcher;
  readonly inFlight: InFlightRequests;
  /** The most one legacy request's v3 calls may take together. */
  readonly deadlineMs: number;
  readonly options: LegacyGatewayOptions;
  /** Shadow mode, or null when it is off. */
  readonly shadow: ShadowMode | null;
  readonly lifecycle: GenerationLifecycle;
  readonly reports: { readonly usage: UsageRecorder; readonly readiness: ReadinessRecorder };
  readonly metrics: GatewayMetrics | undefined;
}

/** Serves v1 and v2 from the validated declarations. */
async function registerLegacy(
  app: FastifyInstance,
  { mappings, dispatcher, inFlight, deadlineMs, options, shadow, lifecycle, reports, metrics }: LegacyRegistration,
): Promise<LegacyNotFound> {
  const resolved = { ...LEGACY_GATEWAY_DEFAULTS, ...options };
  const authenticate = createLegacyAuthenticator({
    registry: resolved.registry,
    store: resolved.store,
    issuers: resolved.issuers,
    declaredMode: (header) => declaredMode(mappings.conventions, header),
    sandboxHosts: new SandboxHosts(resolved.sandboxHosts ?? []),
    log: (event) => app.log.warn(event, 'legacy nonce store unavailable'),
  });
  return registerLegacyRoutes(app, {
    mappings,
    inFlight,
    services: {
      authenticate,
      client: new V3Client({ dispatcher, credentials: resolved.credentials, deadlineMs }),
      idempotency: new LegacyIdempotency({
        store: resolved.store,
        lockTtlMs: resolved.idempotencyLockTtlMs,
        ...(metrics === undefined ? {} : { metrics }),
      }),
      rateLimiter: new LegacyRateLimiter({
        store: resolved.store,
        limits: resolved.rateLimits,
        // As v3's limiter: the store down lets requests through, and says so.
        onStoreDown: (error, subject) =>
          app.log.warn({ err: error, subject }, 'legacy rate-limit store unavailable; request let through'),
      }),
      pages: new PageWalker({ store: resolved.store, totals: resolved.pageTotals }),
      reply: lifecycle,
      lifecycle,
      usage: reports.usage,
      readiness: reports.readiness,
      ...(shadow === null ? {} : { shadow }),
      ...(metrics === undefined ? {} : { metrics }),
    },
    ...(shadow?.serve === 'legacy' ? { legacyService: shadow } : {}),
  });
}
