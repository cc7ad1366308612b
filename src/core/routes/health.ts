/**
 * Health endpoints outside the v3 surface, unauthenticated: `/healthz` says the process serves
 * (liveness), `/readyz` that its dependencies answer (readiness; 503 otherwise).
 */
import type { FastifyInstance } from 'fastify';

export type DependencyCheck = () => Promise<void>;

export function registerHealthRoutes(app: FastifyInstance, checks: readonly DependencyCheck[]): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const results = await Promise.allSettled(checks.map((check) => check()));
    const ready = results.every((result) => result.status === 'fulfilled');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable' });
  });
}
