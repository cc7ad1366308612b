/**
 * What a client is told when the upstream did not answer. A request that never reached it
 * (refused, unresolvable, connect timeout) is SERVICE_UNAVAILABLE: retrying cannot repeat
 * anything. A write that may have reached it is INTERNAL_ERROR, whose advice on writes is to
 * check the state before retrying; a read is safe to retry either way.
 */
import { ApiError } from '../../lib/errors/api-error.js';
import { isWriteMethod } from './errors.js';

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** The error codes along an error's cause chain (reply-from wraps undici's and the socket's). */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = current.cause;
  }
  return codes;
}

export function upstreamFailure(error: unknown, method: string): ApiError {
  const neverSent = codesOf(error).some((code) => NOT_SENT_CODES.has(code));
  if (neverSent || !isWriteMethod(method)) {
    return new ApiError('SERVICE_UNAVAILABLE', {}, { message: 'The v3 service behind this gateway is unavailable; retry later.', cause: error });
  }
  return new ApiError('INTERNAL_ERROR', {}, {
    message: 'The v3 service behind this gateway did not answer in time; the request may have taken effect.',
    cause: error,
  });
}
