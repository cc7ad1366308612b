/**
 * The two servers as the CLI starts them, with options taken from the configuration. `all`
 * and the stand-alone commands differ only in where each listens and whom the core trusts.
 */
import { mkdir } from 'node:fs/promises';

import type { FastifyInstance } from 'fastify';

import { buildCoreApp, type CoreOptions } from '../core/app.js';
import { CoreMetrics } from '../core/metrics/core-metrics.js';
import { rateSourceFromConfig } from '../core/trading/rate-source.js';
import { buildGatewayApp } from '../gateway/app.js';
import { lifecycleOptionsFromConfig } from '../gateway/legacy/runtime/generation-lifecycle.js';
import { GatewayMetrics } from '../gateway/metrics/gateway-metrics.js';
import type { ShadowOptions } from '../gateway/shadow/shadow-mode.js';
import type { UpstreamCredentials } from '../gateway/upstream/signing-credentials.js';
import { gatewayCredentials } from '../gateway/v3-access.js';
import { LegacyWebhooks } from '../gateway/webhooks/legacy-webhooks.js';
import { LEGACY_WEBHOOK_PATH } from '../gateway/webhooks/registrations.js';
import { AdminListener } from '../lib/admin/admin-listener.js';
import { checkAdminExposure } from '../lib/admin/admin-token.js';
import { type Config, configuredAdminToken } from '../lib/config.js';
import type { Database } from '../lib/db/database.js';
import {
  AdminTokenRequiredError,
  InvalidLegacyServiceUrlError,
  InvalidUpstreamError,
} from '../lib/errors/internal-errors.js';
import type { KeyRegistry } from '../lib/keys/key-registry.js';
import { ExactDestinations } from '../lib/net/destination-policy.js';
import type { SealedColumn } from '../lib/secrets/sealed-rows.js';
import type { EphemeralStore } from '../lib/store/ephemeral-store.js';
import type { Closers } from './closers.js';
import { allowedNetworks, upstreamKeysDir } from './config.js';
import type { Drain } from './drain.js';
import { usageError } from './exit.js';
import { openRegistry, openStore, type Warn } from './runtime.js';
import { CORE_SEALED_COLUMNS, GATEWAY_SEALED_COLUMNS, openKeyring, type ResolvedKeyring } from './sealing.js';
import { listen } from './serve.js';
import { CliAdminAccess, type ServingState } from './state/admin-access.js';

export function coreOptions(config: Config, extraTrustedProxies: readonly string[] = []): CoreOptions {
  return {
    issuers: config.FXGATE_JWT_ISSUER,
    rateLimits: { reads: config.FXGATE_RATE_LIMIT_READS, writes: config.FXGATE_RATE_LIMIT_WRITES },
    idempotencyLockTtlMs: config.FXGATE_IDEMPOTENCY_LOCK_TTL_MS,
    trustedProxies: [...extraTrustedProxies, ...config.FXGATE_TRUSTED_PROXIES],
    logLevel: config.LOG_LEVEL,
    requestTimeoutMs: config.FXGATE_REQUEST_TIMEOUT_MS,
    trading: { spreadBps: config.FXGATE_SPREAD_BPS, reversalWindowMs: config.FXGATE_REVERSAL_WINDOW_SECONDS * 1000 },
    withdrawalProcessor: {
      rail: {
        delayMs: config.FXGATE_RAIL_SIMULATION_DELAY_MS,
        failureRate: config.FXGATE_RAIL_SIMULATION_FAILURE_RATE,
      },
    },
    webhookWorker: { enabled: config.FXGATE_WEBHOOK_WORKER === 'on', pollIntervalMs: config.FXGATE_WEBHOOK_POLL_MS },
    outbound: { networks: allowedNetworks(config) },
  };
}

export interface StartedCore {
  readonly app: FastifyInstance;
  /** Its database, key registry and keyring. */
  readonly deps: ServingState;
  readonly store: EphemeralStore;
  /**
   * host:port destinations the core's webhooks may reach whatever their address, empty until
   * allowed: `fxgate all` allows its own public listener (never the admin listener).
   */
  readonly ownDestinations: ExactDestinations;
}

export interface StartCoreOptions {
  /** The process's drain: the core's /readyz reads it, and its listener closes through it. */
  readonly drain: Drain;
  /**
   * Only its gateway reaches it (`fxgate all`): its connections stay alive through the drain
   * delay, until the gateway, which closes first, no longer needs them.
   */
  readonly internal?: boolean;
  /** Trusted as proxies besides FXGATE_TRUSTED_PROXIES (`fxgate all`: the gateway, over loopback). */
  readonly extraTrustedProxies?: readonly string[];
  /** Where the core's metrics go; none are kept without it. */
  readonly admin?: AdminListener | null;
  /** The sealed columns checked and upgraded at start: the core's unless given (`fxgate all`: every part's, in one go). */
  readonly sealedColumns?: readonly SealedColumn[];
  readonly warn: Warn;
}

/** Opens the database, the keyring, the store and the registry, and builds the core on them (not yet listening). */
export async function startCore(config: Config, closers: Closers, options: StartCoreOptions): Promise<StartedCore> {
  const {
    drain,
    internal = false,
    extraTrustedProxies = [],
    admin = null,
    sealedColumns = CORE_SEALED_COLUMNS,
    warn,
  } = options;
  const opened = await openRegistry(config, closers, warn);
  const deps = { ...opened, keyring: await openKeyring(config, opened.db, sealedColumns, warn) };
  const store = await openStore(config, closers, warn);
  const rates = rateSourceFromConfig(config);
  // Kept only where they can be read: on the admin listener.
  const metrics = admin === null ? undefined : new CoreMetrics({ db: deps.db });
  if (metrics !== undefined) admin?.addMetrics(metrics.registry);
  const ownDestinations = new ExactDestinations();
  const configured = coreOptions(config, extraTrustedProxies);
  const app = await buildCoreApp(
    { db: deps.db, store, registry: deps.registry, keyring: deps.keyring.keyring, rates },
    {
      ...configured,
      outbound: { ...configured.outbound, exact: ownDestinations },
      draining: drain.draining,
      ...(metrics === undefined ? {} : { metrics }),
    },
  );
  drain.add('core server', app, { balanced: !internal });
  return { app, deps, store, ownDestinations };
}

export { upstreamKeysDir };

/**
 * The gateway's legacy side: its key registry and store, and where its v3 credentials come
 * from. `fxgate all` shares the core's registry and store and provisions credentials itself;
 * a stand-alone gateway opens its own and reads operator-provisioned key files.
 */
export interface GatewayDependencies {
  readonly registry: KeyRegistry;
  /** The registry's database, which the gateway's /readyz checks and its legacy webhooks live in. */
  readonly database: Database;
  readonly store: EphemeralStore;
  /** Seals and opens the legacy webhook secrets. */
  readonly keyring: ResolvedKeyring;
  readonly credentials: UpstreamCredentials;
  /** Where v3 reaches the legacy webhook receiver when FXGATE_GATEWAY_WEBHOOK_URL is unset (`fxgate all`: the gateway's own port). */
  readonly ownWebhookBase?: (port: number) => string;
}

/** The gateway's receiver on its own listener as a v3 in the same process reaches it: over loopback unless HOST names one address. */
export function ownWebhookBase(host: string, port: number): string {
  const wildcard = host === '0.0.0.0' || host === '::' || host === 'localhost';
  const address = wildcard ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${address}:${port}${LEGACY_WEBHOOK_PATH}`;
}

/** The legacy webhooks of a gateway, as configured. */
export function legacyWebhooks(config: Config, deps: GatewayDependencies): LegacyWebhooks {
  return new LegacyWebhooks({
    db: deps.database,
    keyring: deps.keyring.keyring,
    callbackBaseUrl: config.FXGATE_GATEWAY_WEBHOOK_URL ?? deps.ownWebhookBase ?? null,
    worker: { enabled: config.FXGATE_WEBHOOK_WORKER === 'on', pollIntervalMs: config.FXGATE_WEBHOOK_POLL_MS },
    outbound: { networks: allowedNetworks(config) },
  });
}

/** The stand-alone gateway's own registry, store and key directory. */
export async function openGatewayDependencies(
  config: Config,
  closers: Closers,
  warn: Warn,
): Promise<GatewayDependencies> {
  const { db, registry } = await openRegistry(config, closers, warn);
  const keyring = await openKeyring(config, db, GATEWAY_SEALED_COLUMNS, warn);
  const store = await openStore(config, closers, warn);
  return {
    registry,
    database: db,
    store,
    keyring,
    credentials: gatewayCredentials(config, upstreamKeysDir(config)),
  };
}

/** Shadow mode as configured: off without FXGATE_SHADOW_URL (the other settings keep the gateway's own defaults then). */
export function shadowOptions(config: Config): ShadowOptions | undefined {
  if (config.FXGATE_SHADOW_URL === undefined) return undefined;
  return {
    legacyUrl: config.FXGATE_SHADOW_URL,
    sample: config.FXGATE_SHADOW_SAMPLE,
    serve: config.FXGATE_SHADOW_SERVE,
    cutoverOrgs: config.FXGATE_CUTOVER_ORGS,
    outbound: { networks: allowedNetworks(config) },
  };
}

/** Which command serves: `all` has its admin listener on PORT+1 unless configured, the others none. */
export type ServerCommand = 'all' | 'gateway' | 'core';

/** The admin listener's port for a command, or null when it is off. */
export function adminPort(config: Config, command: ServerCommand): number | null {
  const configured = config.FXGATE_ADMIN_PORT;
  if (configured === 'off') return null;
  if (configured !== undefined) return configured;
  if (command !== 'all') return null;
  // A port the OS picks for the public listener means one it picks for the admin listener too.
  if (config.PORT === 0) return 0;
  if (config.PORT === 65_535)
    throw usageError(
      'the admin listener goes on PORT+1, and PORT is 65535: set FXGATE_ADMIN_PORT (or FXGATE_ADMIN_PORT=off)',
    );
  return config.PORT + 1;
}

/**
 * The admin listener a command will serve, or null when it is off; routes are added to it while
 * the servers are built. Off loopback without FXGATE_ADMIN_TOKEN(_FILE), start-up stops here, before
 * anything listens. Registered before the servers, it is the last listener to close: metrics
 * are served while the others drain.
 */
export function createAdminListener(config: Config, command: ServerCommand, closers: Closers): AdminListener | null {
  if (adminPort(config, command) === null) return null;
  const token = configuredAdminToken(config);
  try {
    checkAdminExposure(config.FXGATE_ADMIN_HOST, token);
  } catch (error) {
    if (error instanceof AdminTokenRequiredError) throw usageError(error.message);
    throw error;
  }
  const admin = new AdminListener({
    logLevel: config.LOG_LEVEL,
    ...(token === undefined ? {} : { token }),
  });
  closers.addListener(
    'admin listener',
    () => admin.close(),
    () => admin.describeOpen(),
  );
  return admin;
}

/**
 * Starts the admin listener once every route is on it; returns its URL, or null when it is off.
 * Given the state of a process that holds the embedded data folder, it also serves the CLI's
 * state commands and publishes where (state/admin-access.ts), even that there is no listener.
 */
export async function listenAdmin(
  config: Config,
  closers: Closers,
  command: ServerCommand,
  admin: AdminListener | null,
  state?: ServingState,
): Promise<string | null> {
  const port = adminPort(config, command);
  const cli = state !== undefined && config.DATABASE_URL === undefined ? new CliAdminAccess(config, state) : null;
  if (admin === null || port === null) {
    await cli?.publish(closers, null);
    return null;
  }
  cli?.addRoutes(admin);
  const app = await admin.build();
  const url = await listen(app, config.FXGATE_ADMIN_HOST, port, 'the admin listener', {
    host: 'FXGATE_ADMIN_HOST',
    port:
      config.FXGATE_ADMIN_PORT === undefined
        ? 'PORT+1; set FXGATE_ADMIN_PORT, or FXGATE_ADMIN_PORT=off'
        : 'FXGATE_ADMIN_PORT',
  });
  await cli?.publish(closers, app.server.address());
  return url;
}

/**
 * Builds the gateway in front of upstreamUrl (not yet listening), its listener closing through
 * drain; its operator routes go on `admin` when given. `now` is the clock of its lifecycle (the
 * brownouts, the sunset) and of its migration schedule: the run's (CliRun.now).
 */
export async function startGateway(
  config: Config,
  drain: Drain,
  upstreamUrl: string,
  deps: GatewayDependencies,
  admin: AdminListener | null = null,
  now: () => number = Date.now,
): Promise<FastifyInstance> {
  await mkdir(upstreamKeysDir(config), { recursive: true, mode: 0o700 });
  const shadow = shadowOptions(config);
  let app: FastifyInstance;
  try {
    app = await buildGatewayApp({
      upstreamUrl,
      connectTimeoutMs: config.FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS,
      timeoutMs: config.FXGATE_UPSTREAM_TIMEOUT_MS,
      deadlineMs: config.FXGATE_UPSTREAM_DEADLINE_MS,
      trustedProxies: config.FXGATE_TRUSTED_PROXIES,
      logLevel: config.LOG_LEVEL,
      requestTimeoutMs: config.FXGATE_REQUEST_TIMEOUT_MS,
      draining: drain.draining,
      // Its metrics are kept only where they can be read: on the admin listener.
      ...(admin === null ? {} : { admin, metrics: new GatewayMetrics() }),
      legacy: {
        ...deps,
        webhooks: legacyWebhooks(config, deps),
        issuers: config.FXGATE_JWT_ISSUER,
        idempotencyLockTtlMs: config.FXGATE_IDEMPOTENCY_LOCK_TTL_MS,
        rateLimits: { reads: config.FXGATE_LEGACY_RATE_LIMIT_READS, writes: config.FXGATE_LEGACY_RATE_LIMIT_WRITES },
        lifecycle: { ...lifecycleOptionsFromConfig(config), now },
        pageTotals: config.FXGATE_LEGACY_PAGE_TOTALS,
        sandboxHosts: config.FXGATE_SANDBOX_HOSTS,
        ...(shadow === undefined ? {} : { shadow }),
      },
    });
  } catch (error) {
    if (error instanceof InvalidUpstreamError || error instanceof InvalidLegacyServiceUrlError)
      throw usageError(error.message);
    throw error;
  }
  drain.add('gateway server', app, { balanced: true });
  return app;
}
