/**
 * The gateway as a fastify application: `/v3/*` passed through verbatim to a v3 upstream, the
 * legacy generations under `/v1` and `/v2`, and health endpoints. It knows v3 only through its
 * HTTP contract (DESIGN 1), so it runs unchanged in front of any conforming v3 service.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ApiError } from '../lib/errors/api-error.js';
import { loggerOptions } from '../lib/logger.js';
import { registerGatewayHealthRoutes } from './health.js';
import { registerLegacyRoutes } from './legacy/routes.js';
import { createUpstreamPool, probeUpstream, upstreamOrigin } from './upstream.js';
import { sendV3Error } from './v3/errors.js';
import { registerV3Passthrough } from './v3/passthrough.js';

export interface GatewayOptions {
  /** The v3 service's origin, e.g. http://127.0.0.1:8081 (no path: v3 paths are signed as sent). */
  readonly upstreamUrl: string;
  readonly connectTimeoutMs?: number;
  /** For the upstream's response headers, and again for its body. */
  readonly timeoutMs?: number;
  /** How long /readyz waits for the upstream's /healthz. */
  readonly readinessTimeoutMs?: number;
  /** Proxies whose X-Forwarded-For is believed (addresses or CIDRs); none by default. */
  readonly trustedProxies?: readonly string[];
  readonly logLevel?: string;
}

export const GATEWAY_DEFAULTS = {
  connectTimeoutMs: 2_000,
  timeoutMs: 10_000,
  readinessTimeoutMs: 2_000,
  trustedProxies: [] as readonly string[],
  logLevel: 'info',
} as const;

/** A path that is not even valid URL syntax (a bad percent-escape) names no operation anywhere. */
function rejectMalformedUrl(request: FastifyRequest, reply: FastifyReply): void {
  sendV3Error(reply, new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: '(malformed)' }));
}

export async function buildGatewayApp(options: GatewayOptions): Promise<FastifyInstance> {
  const resolved = { ...GATEWAY_DEFAULTS, ...options };
  const origin = upstreamOrigin(resolved.upstreamUrl);
  const pool = createUpstreamPool({ origin, connectTimeoutMs: resolved.connectTimeoutMs, timeoutMs: resolved.timeoutMs });
  const app = Fastify({
    logger: loggerOptions(resolved.logLevel),
    trustProxy: resolved.trustedProxies.length > 0 ? [...resolved.trustedProxies] : false,
    return503OnClosing: true,
    frameworkErrors: (_error, request, reply) => {
      rejectMalformedUrl(request, reply);
    },
  });
  app.addHook('onClose', async () => pool.close());
  app.setNotFoundHandler(async (request, reply) =>
    sendV3Error(reply, new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: request.url.split('?', 1)[0]! })),
  );
  app.setErrorHandler(async (error, request, reply) => {
    request.log.error({ err: error }, 'gateway request failed');
    return sendV3Error(reply, error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', {}, { cause: error }));
  });
  await registerV3Passthrough(app, { origin, pool });
  registerLegacyRoutes(app);
  registerGatewayHealthRoutes(app, () => probeUpstream(pool, resolved.readinessTimeoutMs));
  await app.ready();
  return app;
}
