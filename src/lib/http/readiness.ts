/**
 * Liveness and readiness as the core and the gateway answer them, outside any generation:
 * `/healthz` says the process serves; `/readyz` asks each part the process depends on, all at
 * once and each within a timeout (a stalled connection must not hold the answer a load balancer
 * waits for), and names each `up` or `down`. From a stop signal on, `/readyz` is 503 `draining`
 * without asking anyone, while everything else is still served, so that a balancer takes the
 * process out before it stops accepting.
 *
 * A part is one of two kinds:
 * - `unready`: without it the process could only fail (the database, the upstream), so a part
 *   down makes it not ready, 503 `unavailable`, and a balancer sends its traffic elsewhere;
 * - `degraded`: the process still answers everything that needs the part in its generation's
 *   envelope, and serves the rest (the Redis store: writes 503 and retried with the same key,
 *   reads fail open). Such a part is shared by every process, so its outage would take every
 *   one out at once and fail the reads too, with the balancer's own 503; down, it is 200
 *   `degraded`, the body naming it.
 *
 * It touches only the fastify app it is given.
 */
import type { FastifyInstance } from 'fastify';

import { ReadinessTimeoutError } from '../errors/internal-errors.js';
import { type Draining, NOT_DRAINING } from './listener-drain.js';

/** Resolves when the part answers; rejects otherwise. */
export type ReadinessCheck = () => Promise<void>;

/** What a part's outage makes of the process's readiness. */
export type WhenDown = 'unready' | 'degraded';

export interface ReadinessPart {
  readonly check: ReadinessCheck;
  readonly whenDown: WhenDown;
}

/** The parts by the name the /readyz body gives each. */
export type ReadinessParts = Readonly<Record<string, ReadinessPart>>;

export type PartState = 'up' | 'down';

export type ReadinessReport =
  | { readonly status: 'ready' | 'degraded' | 'unavailable'; readonly checks: Readonly<Record<string, PartState>> }
  | { readonly status: 'draining' };

/** How long /readyz waits for each part unless configured: well inside a balancer's check timeout. */
export const READINESS_TIMEOUT_MS = 2_000;

/** The check, failed if it has not answered within timeoutMs. */
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

export interface ReadinessAnswer {
  readonly statusCode: 200 | 503;
  readonly report: ReadinessReport;
  /** Why each part that is down is down, by name. */
  readonly failures: Readonly<Record<string, unknown>>;
}

/** Asks every part at once: 503 `unavailable` when an `unready` part is down, else 200 `ready` or `degraded`. */
export async function assessReadiness(parts: ReadinessParts, timeoutMs: number): Promise<ReadinessAnswer> {
  const names = Object.keys(parts);
  const results = await Promise.allSettled(names.map((name) => within(parts[name]!.check, timeoutMs)));
  const checks: Record<string, PartState> = {};
  const failures: Record<string, unknown> = {};
  let unready = false;
  let degraded = false;
  results.forEach((result, index) => {
    const name = names[index]!;
    checks[name] = result.status === 'fulfilled' ? 'up' : 'down';
    if (result.status === 'fulfilled') return;
    failures[name] = result.reason;
    if (parts[name]!.whenDown === 'unready') unready = true;
    else degraded = true;
  });
  const status = unready ? 'unavailable' : degraded ? 'degraded' : 'ready';
  return { statusCode: unready ? 503 : 200, report: { status, checks }, failures };
}

export interface ReadinessRouteOptions {
  readonly timeoutMs?: number;
  readonly draining?: Draining;
}

/** `GET /healthz` and `GET /readyz` on the app; each part that is down is logged at `warn` with why. */
export function registerReadinessRoutes(
  app: FastifyInstance,
  parts: ReadinessParts,
  options: ReadinessRouteOptions = {},
): void {
  const timeoutMs = options.timeoutMs ?? READINESS_TIMEOUT_MS;
  const draining = options.draining ?? NOT_DRAINING;
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    if (draining()) return reply.code(503).send({ status: 'draining' } satisfies ReadinessReport);
    const answer = await assessReadiness(parts, timeoutMs);
    for (const [part, error] of Object.entries(answer.failures)) {
      const message =
        parts[part]!.whenDown === 'unready' ? 'dependency is down: not ready' : 'dependency is down: serving degraded';
      request.log.warn({ err: error, part }, message);
    }
    return reply.code(answer.statusCode).send(answer.report);
  });
}
