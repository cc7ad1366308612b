/**
 * The gateway's own health endpoints: `/healthz` says this process serves; `/readyz` that the
 * upstream does too (its /healthz answers in time), so a load balancer stops sending traffic
 * to a gateway that could only answer 503.
 */
import type { FastifyInstance } from 'fastify';

export function registerGatewayHealthRoutes(app: FastifyInstance, upstreamReady: () => Promise<void>): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    try {
      await upstreamReady();
      return reply.code(200).send({ status: 'ready' });
    } catch (error) {
      request.log.warn({ err: error }, 'upstream is not ready');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
