/**
 * Health endpoints outside the v3 surface, unauthenticated: `/healthz` says the process serves
 * (liveness), `/readyz` that its dependencies answer (readiness; 503 otherwise), and 503
 * `draining` from a stop signal on, while everything else is still served, so that a load
 * balancer takes the process out before it stops accepting.
 */
import type { FastifyInstance } from 'fastify';

import { type Draining, NOT_DRAINING } from '../../lib/http/listener-drain.js';

export type DependencyCheck = () => Promise<void>;

export function registerHealthRoutes(
  app: FastifyInstance,
  checks: readonly DependencyCheck[],
  draining: Draining = NOT_DRAINING,
): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    if (draining()) return reply.code(503).send({ status: 'draining' });
    const results = await Promise.allSettled(checks.map((check) => check()));
    const ready = results.every((result) => result.status === 'fulfilled');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable' });
  });
}
