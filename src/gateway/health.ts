/**
 * The gateway's health endpoints (src/lib/http/readiness.ts answers them): `/healthz` says this
 * process serves; `/readyz` asks what its answers depend on, so that a load balancer stops
 * sending traffic to a gateway that could only fail: the upstream (its /healthz) and, for a
 * gateway serving v1 and v2, the database of its key registry. Its own store (nonces, idempotency
 * records) is asked too and named in the body, but its outage leaves the gateway ready,
 * `degraded`: legacy writes answer their generation's 503 (v1 its 500) and reads go on, and the
 * store is every gateway's, so a 503 would take them all out at once. From a stop signal on,
 * 503 `draining`.
 */
import type { FastifyInstance } from 'fastify';

import type { Draining } from '../lib/http/listener-drain.js';
import { type ReadinessCheck, type ReadinessParts, registerReadinessRoutes } from '../lib/http/readiness.js';

/** What the gateway's readiness asks: the upstream always; the store and database with v1 and v2. */
export interface GatewayReadinessChecks {
  readonly upstream: ReadinessCheck;
  readonly legacy?: { readonly store: ReadinessCheck; readonly database: ReadinessCheck };
}

export function registerGatewayHealthRoutes(
  app: FastifyInstance,
  checks: GatewayReadinessChecks,
  timeoutMs: number,
  draining?: Draining,
): void {
  const parts: Record<string, ReadinessParts[string]> = { upstream: { check: checks.upstream, whenDown: 'unready' } };
  if (checks.legacy !== undefined) {
    parts.store = { check: checks.legacy.store, whenDown: 'degraded' };
    parts.database = { check: checks.legacy.database, whenDown: 'unready' };
  }
  registerReadinessRoutes(app, parts, { timeoutMs, ...(draining === undefined ? {} : { draining }) });
}
