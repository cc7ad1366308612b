/**
 * Errors the gateway itself answers on /v3 (the upstream is down, a path it cannot forward
 * exactly): the v3 envelope from the shared catalog, as the upstream would have written it.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../../lib/errors/api-error.js';

/** v3 counts GET and HEAD as reads; everything else is a write, whose retry advice differs. */
export function isWriteMethod(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/** The part of a fastify reply this needs, whatever server type the reply was made for. */
export interface ErrorReply {
  readonly request: { readonly method: string };
  code(statusCode: number): unknown;
  header(name: string, value: string): unknown;
  send(payload: unknown): unknown;
}

/** Sends the error and returns the reply, which an async fastify handler must return. */
export function sendV3Error<R extends ErrorReply>(reply: R, error: ApiError): R {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  reply.code(error.statusCode);
  reply.header('content-type', 'application/json; charset=utf-8');
  reply.send(error.toEnvelope(isWriteMethod(reply.request.method)));
  return reply;
}

/**
 * What fastify refused before a handler ran (a Content-Type or body it cannot read, a body over
 * its limit): the client's to fix, never a 500. On a path the gateway has no route for, the
 * answer is that it has none, whatever the body.
 */
function requestRefusal(error: FastifyError, request: FastifyRequest): ApiError {
  if (request.is404)
    return new ApiError(
      'ROUTE_NOT_FOUND',
      { method: request.method, path: request.url.split('?', 1)[0]! },
      { cause: error },
    );
  if (error.statusCode === 413) return new ApiError('VALIDATION_PAYLOAD_TOO_LARGE', {}, { cause: error });
  if (error.statusCode === 415) return new ApiError('VALIDATION_CONTENT_TYPE', {}, { cause: error });
  return new ApiError(
    'VALIDATION_BODY_FAILED',
    { issues: [{ path: '', code: 'invalid_body', message: error.message }] },
    { cause: error },
  );
}

/**
 * The gateway's last-resort error handler: an error no route answered becomes the v3 envelope,
 * logged as a failure. Except when the client has already closed its connection (its own timeout,
 * a load generator stopping): a proxied answer's stream is aborted on its way here, nothing can be
 * sent, and nothing failed on this side, so it is an info line, not one for the platform's alerts.
 */
export async function handleGatewayError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (reply.raw.destroyed) {
    request.log.info({ err: error }, 'client closed the connection before the answer');
    return reply;
  }
  if (error instanceof ApiError) {
    if (error.statusCode >= 500) request.log.error({ err: error }, 'gateway request failed');
    return sendV3Error(reply, error);
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    request.log.info({ err: error }, 'gateway request refused before routing');
    return sendV3Error(reply, requestRefusal(error, request));
  }
  request.log.error({ err: error }, 'gateway request failed');
  return sendV3Error(reply, new ApiError('INTERNAL_ERROR', {}, { cause: error }));
}
