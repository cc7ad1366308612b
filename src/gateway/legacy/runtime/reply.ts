/**
 * What a legacy client receives: the success and error bodies in their generation's envelope
 * (docs/contract.md#legacy-success, docs/contract.md#errors-legacy), the headers forwarded from
 * v3 (Retry-After, trace id), and the deprecation and sunset headers of its generation, as
 * configured (generation-lifecycle.ts). v3's rate-limit headers are not forwarded: they describe
 * the gateway's own credential, shared by the book's keys; a legacy answer carries its key's
 * own (rate-limit.ts).
 */
import type { FastifyReply } from 'fastify';
import type { Dispatcher } from 'undici';

import { type LegacyErrorAnswer, legacyErrorBody } from '../declarations/error-tables.js';
import type { LegacyGeneration } from '../declarations/legacy-operations.js';

/** The v3 response headers a legacy client is also told (docs/contract.md#legacy-response-headers). */
export const FORWARDED_UPSTREAM_HEADERS = ['retry-after', 'x-trace-id'] as const;

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
  /** `Deprecation`, `Sunset` and `Link` of each generation (none for a generation without dates). */
  readonly deprecationHeaders: Readonly<Record<LegacyGeneration, Readonly<Record<string, string>>>>;
}

/** The headers every legacy answer of a generation carries, besides the forwarded ones. */
export function generationHeaders(
  generation: LegacyGeneration,
  options: LegacyReplyOptions,
): Readonly<Record<string, string>> {
  return options.deprecationHeaders[generation];
}

/** Sends a legacy error; the body is the table's, never the v3 message or details. */
export function sendLegacyError(
  reply: FastifyReply,
  answer: LegacyErrorAnswer<LegacyGeneration>,
  headers: Readonly<Record<string, string>>,
): FastifyReply {
  reply.headers(headers);
  reply.code(answer.status).header('content-type', 'application/json; charset=utf-8');
  return reply.send(JSON.stringify(legacyErrorBody(answer)));
}
