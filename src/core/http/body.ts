/**
 * Step 3: the body. Bytes are read raw (never parsed here) with the 8 KB limit enforced on the
 * stream by fastify (a Content-Length over it is refused before reading; a chunked body is cut
 * off as soon as it passes it). The raw bytes are kept: the signature and the idempotency
 * fingerprint are computed over exactly what was received, and JSON parsing waits until the
 * caller is authenticated (step 7).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../../lib/errors/api-error.js';
import { isWriteMethod } from './request-state.js';

/** A v3 write body is at most 8 KB (docs/contract.md#limits). */
export const MAX_BODY_BYTES = 8 * 1024;

const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** Replaces fastify's parsers with one that keeps the raw bytes, whatever the media type. */
export function installRawBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => {
    done(null, body);
  });
}

/** Keeps the raw body and insists on JSON for writes that carry one. */
export async function acceptBody(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  request.v3.rawBody = raw;
  if (!isWriteMethod(request.method)) return;
  const contentType = request.headers['content-type'];
  // A write without a body (settle, verify) may omit Content-Type; any declared type must be JSON.
  if ((raw.length > 0 || contentType !== undefined) && !JSON_MEDIA_TYPE.test(contentType ?? '')) {
    throw new ApiError('VALIDATION_CONTENT_TYPE');
  }
}
