/**
 * The gateway's own health endpoints: `/healthz` says this process serves (liveness only);
 * `/readyz` that what its answers depend on answers too, so a load balancer stops sending
 * traffic to a gateway that could only fail: the upstream (its /healthz), and for a gateway
 * serving v1 and v2, its own store (nonces, idempotency records) and the database of its key
 * registry. The body names each part and whether it is up; any part down is 503. From a stop
 * signal on it is 503 `draining` without asking anyone, while everything else is still served,
 * so that a load balancer takes the gateway out before it stops accepting.
 */
import type { FastifyInstance } from 'fastify';

import { type Draining, NOT_DRAINING } from '../lib/http/listener-drain.js';

/** Resolves when the part answers; rejects otherwise. */
export type ReadinessCheck = () => Promise<void>;

/** The checks by the name the /readyz body gives each part. */
export type ReadinessChecks = Record<string, ReadinessCheck>;

export type PartState = 'up' | 'down';

export type ReadinessReport =
  | { readonly status: 'ready' | 'unavailable'; readonly checks: Readonly<Record<string, PartState>> }
  | { readonly status: 'draining' };

class ReadinessTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'ReadinessTimeoutError';
  }
}

/** The check, failed if it has not answered within timeoutMs (a stalled connection must not hold /readyz). */
async function within(check: ReadinessCheck, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ReadinessTimeoutError(timeoutMs)), timeoutMs);
  });
  try {
    await Promise.race([check(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerGatewayHealthRoutes(
  app: FastifyInstance,
  checks: Readonly<ReadinessChecks>,
  timeoutMs: number,
  draining: Draining = NOT_DRAINING,
): void {
  const names = Object.keys(checks);
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    if (draining()) return reply.code(503).send({ status: 'draining' } satisfies ReadinessReport);
    const results = await Promise.allSettled(names.map((name) => within(checks[name]!, timeoutMs)));
    const states: Record<string, PartState> = {};
    results.forEach((result, index) => {
      const name = names[index]!;
      states[name] = result.status === 'fulfilled' ? 'up' : 'down';
      if (result.status === 'rejected')
        request.log.warn({ err: result.reason, part: name }, 'gateway dependency is not ready');
    });
    const ready = results.every((result) => result.status === 'fulfilled');
    const report: ReadinessReport = { status: ready ? 'ready' : 'unavailable', checks: states };
    return reply.code(ready ? 200 : 503).send(report);
  });
}
