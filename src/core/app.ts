/**
 * The native v3 core as a fastify application. Dependencies come in ready-made (database,
 * ephemeral store, key registry), so tests and the CLI decide what they are; options are
 * resolved here once, with named defaults.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Database } from '../lib/db/database.js';
import type { KeyRegistry } from '../lib/keys/key-registry.js';
import { loggerOptions } from '../lib/logger.js';
import type { EphemeralStore } from '../lib/store/ephemeral-store.js';
import { MAX_BODY_BYTES } from './http/body.js';
import type { Operation } from './http/operation.js';
import { generateRequestId } from './http/request-context.js';
import type { ErrorHandler } from './http/error-handler.js';
import { installV3Pipeline } from './http/v3-pipeline.js';
import { registerHealthRoutes } from './routes/health.js';
import { pairsOperations } from './routes/pairs.js';

export interface CoreDependencies {
  readonly db: Database;
  readonly store: EphemeralStore;
  readonly registry: KeyRegistry;
}

export interface CoreOptions {
  readonly issuer?: string;
  readonly rateLimits?: { readonly reads: number; readonly writes: number };
  readonly idempotencyLockTtlMs?: number;
  /** Proxies whose X-Forwarded-For is believed (addresses or CIDRs); none by default. */
  readonly trustedProxies?: readonly string[];
  readonly logLevel?: string;
}

export const CORE_DEFAULTS = {
  issuer: 'fx-service',
  rateLimits: { reads: 100, writes: 20 },
  idempotencyLockTtlMs: 30_000,
  trustedProxies: [] as readonly string[],
  logLevel: 'info',
} as const;

/** Every v3 operation the core serves. */
export function coreOperations(deps: CoreDependencies): Operation[] {
  return [...pairsOperations(deps.db)];
}

export function buildCoreApp(deps: CoreDependencies, options: CoreOptions = {}): Promise<FastifyInstance> {
  return createV3App(deps, options, coreOperations(deps));
}

/** A v3 application serving exactly these operations on the full pipeline. */
export async function createV3App(deps: CoreDependencies, options: CoreOptions, operations: readonly Operation[]): Promise<FastifyInstance> {
  const resolved = { ...CORE_DEFAULTS, ...options };
  // Fastify answers a few malformed requests (a bad percent-encoding in the URL) before any
  // hook runs; `frameworkErrors` routes them to the pipeline's error handler, bound below.
  let handleFrameworkError: ErrorHandler | null = null;
  const app = Fastify({
    logger: loggerOptions(resolved.logLevel),
    genReqId: generateRequestId,
    trustProxy: resolved.trustedProxies.length > 0 ? [...resolved.trustedProxies] : false,
    bodyLimit: MAX_BODY_BYTES,
    return503OnClosing: true,
    frameworkErrors: (error, request, reply) => {
      void handleFrameworkError!(error, request, reply);
    },
  });
  handleFrameworkError = installV3Pipeline(app, operations, {
    registry: deps.registry,
    store: deps.store,
    issuer: resolved.issuer,
    rateLimits: resolved.rateLimits,
    idempotencyLockTtlMs: resolved.idempotencyLockTtlMs,
  });
  registerHealthRoutes(app, [() => deps.db.query('SELECT 1').then(() => undefined), () => deps.store.ping()]);
  await app.ready();
  return app;
}
