/**
 * What a legacy client receives: the success and error bodies in their generation's envelope
 * (spec 4.6, 7.5, 7.6), the headers forwarded from v3 (rate limits, Retry-After, trace id), and
 * on every v1 answer the deprecation headers of its sunset (DESIGN 4).
 */
import type { FastifyReply } from 'fastify';
import type { Dispatcher } from 'undici';
import { type LegacyErrorAnswer, legacyErrorBody } from './error-tables.js';
import type { LegacyGeneration } from './operations.js';

/** v1 sunsets at the end of 2026 (spec 9). */
export const V1_SUNSET = 'Thu, 31 Dec 2026 23:59:59 GMT';
/** RFC 9745: when v1 was deprecated, as a structured-field date (2026-01-01T00:00:00Z). */
export const V1_DEPRECATION = '@1767225600';

/** The v3 response headers a legacy client is also told (spec 8, 4.1). */
export const FORWARDED_UPSTREAM_HEADERS = ['ratelimit-limit', 'ratelimit-reset', 'retry-after', 'x-trace-id'] as const;

export function forwardedHeaders(headers: Dispatcher.ResponseData['headers'] | undefined): Record<string, string> {
  const forwarded: Record<string, string> = {};
  if (!headers) return forwarded;
  for (const name of FORWARDED_UPSTREAM_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') forwarded[name] = value;
  }
  return forwarded;
}

export interface LegacyReplyOptions {
  /** `Link` target of v1's deprecation notice: the migration guide. */
  readonly migrationGuideUrl: string;
}

export function v1DeprecationHeaders(options: LegacyReplyOptions): Record<string, string> {
  return {
    deprecation: V1_DEPRECATION,
    sunset: V1_SUNSET,
    link: `<${options.migrationGuideUrl}>; rel="deprecation"; type="text/html", <${options.migrationGuideUrl}>; rel="sunset"; type="text/html"`,
  };
}

/** The headers every legacy answer of a generation carries, besides the forwarded ones. */
export function generationHeaders(generation: LegacyGeneration, options: LegacyReplyOptions): Record<string, string> {
  return generation === 'v1' ? v1DeprecationHeaders(options) : {};
}

/** Sends a legacy error; the body is the table's, never the v3 message or details. */
export function sendLegacyError(reply: FastifyReply, answer: LegacyErrorAnswer<LegacyGeneration>, headers: Readonly<Record<string, string>>): FastifyReply {
  reply.headers(headers);
  reply.code(answer.status).header('content-type', 'application/json; charset=utf-8');
  return reply.send(JSON.stringify(legacyErrorBody(answer)));
}
