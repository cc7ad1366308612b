/**
 * What a client is told when the upstream did not answer. A request that never reached it
 * (refused, unresolvable, connect timeout) is SERVICE_UNAVAILABLE: retrying cannot repeat
 * anything. A write that may have reached it is INTERNAL_ERROR, whose advice on writes is to
 * check the state before retrying; a read is safe to retry either way.
 */
import { ApiError } from '../../lib/errors/api-error.js';
import { isWriteMethod } from './errors.js';
import { NOT_SENT_CODES, errorCodesOf } from '../upstream-error-codes.js';

export function upstreamFailure(error: unknown, method: string): ApiError {
  const neverSent = errorCodesOf(error).some((code) => NOT_SENT_CODES.has(code));
  if (neverSent || !isWriteMethod(method)) {
    return new ApiError('SERVICE_UNAVAILABLE', {}, { message: 'The v3 service behind this gateway is unavailable; retry later.', cause: error });
  }
  return new ApiError('INTERNAL_ERROR', {}, {
    message: 'The v3 service behind this gateway did not answer in time; the request may have taken effect.',
    cause: error,
  });
}
