/**
 * Request ids, the same in every part: a client's well-formed `X-Request-Id` is kept (so its
 * logs, ours and the upstream's agree), anything else gets a fresh `req_` id.
 */
import { newId } from './ids.js';

export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's genReqId. */
export function generateRequestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && REQUEST_ID_PATTERN.test(sent) ? sent : newId('request');
}
