/**
 * The core's health endpoints outside the v3 surface, unauthenticated (src/lib/http/readiness.ts
 * answers them): `/healthz` says the process serves; `/readyz` asks the database, without which
 * every v3 operation fails (503 `unavailable`), and the ephemeral store, named in the body but
 * leaving the core ready, `degraded`, when it is down: writes answer 503 IDEMPOTENCY_UNAVAILABLE
 * and reads go on, and the store is every core's, so a 503 would take them all out at once. From
 * a stop signal on, 503 `draining`, while everything else is still served.
 */
import type { FastifyInstance } from 'fastify';

import type { Draining } from '../../lib/http/listener-drain.js';
import { type ReadinessCheck, registerReadinessRoutes } from '../../lib/http/readiness.js';

export interface CoreReadinessChecks {
  readonly database: ReadinessCheck;
  readonly store: ReadinessCheck;
}

export function registerHealthRoutes(app: FastifyInstance, checks: CoreReadinessChecks, draining?: Draining): void {
  registerReadinessRoutes(
    app,
    {
      database: { check: checks.database, whenDown: 'unready' },
      store: { check: checks.store, whenDown: 'degraded' },
    },
    draining === undefined ? {} : { draining },
  );
}
