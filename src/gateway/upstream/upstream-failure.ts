/**
 * What a client is told when the upstream did not answer. A request that never reached it
 * (refused, unresolvable, connect timeout, or not yet written whole when it failed) is
 * SERVICE_UNAVAILABLE: retrying cannot repeat anything, since v3 reads a whole request before it
 * acts on it. A write that may have reached it is INTERNAL_ERROR, whose advice on writes is to
 * check the state before retrying; a read is safe to retry either way. And the metrics' kind of
 * any failure of v3, the passthrough's and the legacy pipeline's alike.
 */
import { ApiError } from '../../lib/errors/api-error.js';
import {
  UpstreamCredentialError,
  UpstreamDeadlineError,
  UpstreamProtocolError,
  UpstreamTimeoutError,
  UpstreamUnreachableError,
  V3ContractError,
} from '../../lib/errors/internal-errors.js';
import type { UpstreamFailureKind } from '../metrics/gateway-metrics.js';
import { isWriteMethod } from '../v3/errors.js';
import { errorCodesOf, NOT_SENT_CODES } from './error-codes.js';

/**
 * `requestWritten`: whether the whole request, head and body, had been handed to the upstream
 * connection when it failed. Until then the upstream cannot have acted on it.
 */
export function upstreamFailure(error: unknown, method: string, requestWritten: boolean): ApiError {
  const neverSent = !requestWritten || errorCodesOf(error).some((code) => NOT_SENT_CODES.has(code));
  if (neverSent || !isWriteMethod(method)) {
    return new ApiError(
      'SERVICE_UNAVAILABLE',
      {},
      { message: 'The v3 service behind this gateway is unavailable; retry later.', cause: error },
    );
  }
  return new ApiError(
    'INTERNAL_ERROR',
    {},
    {
      message: 'The v3 service behind this gateway did not answer in time; the request may have taken effect.',
      cause: error,
    },
  );
}

const TIMEOUT_CODES: ReadonlySet<string> = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The metrics' kind of a failure of v3 (or of the gateway's own credential for it). The v3
 * client's errors name their kind: not reached, a timeout or the deadline, an answer that is not
 * v3's, one that breaks the contract. A relayed request's failure is undici's own: not reached,
 * the deadline, a timeout, an answer that is not HTTP (llhttp's HPE_ codes, or undici's own for a
 * malformed answer), else a connection lost after sending, which the client is told as a timeout
 * would be. Without `relay`, any other error is not v3's: null.
 */
export function upstreamFailureKind(error: unknown): UpstreamFailureKind | null;
export function upstreamFailureKind(error: unknown, relay: { readonly requestWritten: boolean }): UpstreamFailureKind;
export function upstreamFailureKind(
  error: unknown,
  relay?: { readonly requestWritten: boolean },
): UpstreamFailureKind | null {
  if (error instanceof UpstreamDeadlineError) return 'deadline';
  if (error instanceof UpstreamUnreachableError) return 'unreachable';
  if (error instanceof UpstreamTimeoutError) return error.deadline ? 'deadline' : 'timeout';
  if (error instanceof UpstreamProtocolError) return 'protocol';
  if (error instanceof V3ContractError) return 'contract_violation';
  if (error instanceof UpstreamCredentialError) return 'credential';
  if (relay === undefined) return null;
  const codes = errorCodesOf(error);
  if (!relay.requestWritten || codes.some((code) => NOT_SENT_CODES.has(code))) return 'unreachable';
  if (codes.some((code) => TIMEOUT_CODES.has(code))) return 'timeout';
  if (
    codes.some(
      (code) =>
        code.startsWith('HPE_') || code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
    )
  )
    return 'protocol';
  return 'timeout';
}
