/**
 * Logging: pino JSON lines with the request id on each (fastify adds it as reqId) and secrets
 * redacted: bearer tokens, request signatures and idempotency keys never reach a log.
 */
import type { LoggerOptions } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-request-signature"]',
  'req.headers["idempotency-key"]',
  'headers.authorization',
  'headers["x-request-signature"]',
  'privateKey',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
}
