/**
 * Step 8, failure side: every error leaves as the v3 envelope
 * `{error:{code,type,message,retryStrategy,details}}` with the catalog's status, never with a
 * stack trace or request metadata. Anything not already an ApiError is classified here once.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

import { ApiError, isApiError } from '../../lib/errors/api-error.js';
import { StoreUnavailableError } from '../../lib/errors/internal-errors.js';
import { addressSubject, type RateLimiter } from './rate-limit.js';
import { initRequestState } from './request-context.js';
import { isWriteMethod } from './request-state.js';

/** Retry-After of a 409 that sets none itself (IDEMPOTENCY_IN_FLIGHT sets its own). */
export const CONFLICT_RETRY_AFTER_SECONDS = 1;

/** Connection-level failures of the database: nothing was done, the client may retry later. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Maps any thrown value to the ApiError the client sees. */
export function classifyError(error: unknown, request: FastifyRequest): ApiError {
  if (isApiError(error)) return error;
  const code = codeOf(error);
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('VALIDATION_PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('VALIDATION_CONTENT_TYPE');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('VALIDATION_HEADER_FAILED', {
        header: 'Content-Length',
        issues: [{ path: 'Content-Length', code: 'invalid_value', message: 'does not match the body' }],
      });
    case 'FST_ERR_BAD_URL':
      return new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: '(malformed)' });
    case 'FST_ERR_MAX_PARAM_LENGTH': // a path segment longer than any id: nothing can live there
      return new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: request.url.split('?')[0] ?? '/' });
  }
  if (error instanceof StoreUnavailableError || (code !== undefined && UNAVAILABLE_CODES.has(code))) {
    return new ApiError('SERVICE_UNAVAILABLE', undefined, { cause: error });
  }
  const resourceId = request.v3?.resourceId;
  return new ApiError('INTERNAL_ERROR', resourceId && isWriteMethod(request.method) ? { resourceId } : {}, {
    cause: error,
  });
}

export type ErrorHandler = (
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply>;

export function createErrorHandler(chargeRateLimit: RateLimiter): ErrorHandler {
  return async function handleError(
    error: FastifyError | Error,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply> {
    if (!request.v3) initRequestState(request, reply);
    let apiError = classifyError(error, request);
    if (apiError.statusCode >= 500) {
      request.log.error({ err: error, code: apiError.code }, 'request failed');
    } else {
      request.log.info({ code: apiError.code }, 'request rejected');
    }
    // Every response carries rate-limit headers; a request that failed before step 5 (or whose
    // token proved no key) is charged to its address now, and may itself be over the limit.
    if (request.v3.rateLimit === null) {
      try {
        await chargeRateLimit(request, reply, addressSubject(request));
      } catch (limited) {
        if (isApiError(limited)) apiError = limited;
        else request.log.error({ err: limited }, 'rate limiter failed in the error path');
      }
    }
    for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
    // 409 and 429 add Retry-After (docs/contract.md#errors-status-rules). A state conflict names
    // no wait of its own: it gets the smallest legal value, and its retryStrategy says what must
    // change first.
    if (apiError.statusCode === 409 && !reply.hasHeader('retry-after'))
      reply.header('retry-after', String(CONFLICT_RETRY_AFTER_SECONDS));
    // Returning the reply tells fastify the response is taken care of; an async handler that
    // resolves to undefined while an async onSend hook is still running gets an empty body.
    return reply
      .code(apiError.statusCode)
      .header('content-type', 'application/json; charset=utf-8')
      .send(apiError.toEnvelope(isWriteMethod(request.method)));
  };
}
