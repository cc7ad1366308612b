/**
 * Step 1: every request gets its ids before anything can fail. `X-Request-Id` is echoed when the
 * client sent a well-formed one (else generated), `X-Trace-Id` continues a W3C `traceparent`
 * when present (else a new trace), and `X-Request-Timestamp` says when the request arrived.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../../lib/errors/api-error.js';
import { randomHex } from '../../lib/random.js';
import { REQUEST_ID_PATTERN } from '../../lib/request-id.js';

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

function traceIdOf(request: FastifyRequest): string {
  const parent = request.headers.traceparent;
  const match = typeof parent === 'string' ? TRACEPARENT.exec(parent) : null;
  return match && !/^0+$/.test(match[1]!) ? match[1]! : randomHex(16);
}

/**
 * Gives the request its state and id headers. Also called by the error handler for requests
 * that fastify rejected before any hook ran (a malformed URL), so that they carry them too.
 */
export function initRequestState(request: FastifyRequest, reply: FastifyReply): void {
  const receivedAt = new Date();
  request.v3 = {
    receivedAt,
    traceId: traceIdOf(request),
    rawBody: Buffer.alloc(0),
    principal: null,
    pendingAuthError: null,
    rateLimit: null,
    idempotency: null,
    resourceId: null,
  };
  reply.header('x-request-id', request.id);
  reply.header('x-trace-id', request.v3.traceId);
  reply.header('x-request-timestamp', receivedAt.toISOString());
}

export async function attachRequestContext(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  initRequestState(request, reply);
  const sent = request.headers['x-request-id'];
  if (sent !== undefined && (typeof sent !== 'string' || !REQUEST_ID_PATTERN.test(sent))) {
    throw new ApiError('VALIDATION_HEADER_FAILED', {
      header: 'X-Request-Id',
      issues: [
        { path: 'X-Request-Id', code: 'invalid_format', message: 'must be 1 to 128 characters of A-Z a-z 0-9 . _ : -' },
      ],
    });
  }
}
