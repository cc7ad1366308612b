/**
 * The legacy generations, v1 and v2, in their own envelope (spec 7.5, 7.6). Their translation
 * onto v3 (DESIGN 4) is built here, operation by operation; until an operation exists, the
 * gateway says so plainly with 501 rather than guessing an answer.
 */
import type { FastifyInstance } from 'fastify';

export const LEGACY_PREFIXES = ['/v1', '/v2'] as const;

export const NOT_AVAILABLE_MESSAGE = 'This legacy operation is not available yet on this gateway';

export function registerLegacyRoutes(app: FastifyInstance): void {
  for (const prefix of LEGACY_PREFIXES) {
    for (const url of [prefix, `${prefix}/*`]) {
      app.all(url, async (_request, reply) => reply.code(501).send({ status: 'error', message: NOT_AVAILABLE_MESSAGE }));
    }
  }
}
