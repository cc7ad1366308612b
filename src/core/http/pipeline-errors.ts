/**
 * The codes the v3 pipeline itself may answer for an operation, step by step
 * (docs/contract.md#v3-check-order), beside the domain codes its handler declares. The v3
 * OpenAPI document lists both for every operation; the end-to-end tests check that no answer
 * carries a code the document does not list. Part of the core's HTTP layer; reads only the
 * operation's declaration.
 */
import type { ErrorCode } from '../../lib/errors/v3-error-catalog.js';
import type { OperationMeta } from './operation.js';
import { isWriteMethod } from './request-state.js';
import { requiresIdempotencyKey } from './v3-idempotency.js';

/** What the HTTP server answers before any route runs, whatever the request names (docs/contract.md#errors-before-routing). */
export const BEFORE_ROUTING_CODES = [
  'REQUEST_MALFORMED',
  'REQUEST_HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
] as const satisfies readonly ErrorCode[];

/** Step 1: the request id header. */
const REQUEST_ID_CODES = ['VALIDATION_HEADER_FAILED'] as const satisfies readonly ErrorCode[];

/** Step 3: the body's size, and its media type on writes. */
const BODY_CODES = ['VALIDATION_PAYLOAD_TOO_LARGE'] as const satisfies readonly ErrorCode[];
const WRITE_BODY_CODES = ['VALIDATION_CONTENT_TYPE'] as const satisfies readonly ErrorCode[];

/** Step 4: authentication and authorisation (docs/contract.md#auth-check-order). */
const AUTH_CODES = [
  'VALIDATION_HEADER_FAILED',
  'AUTH_TOKEN_MISSING',
  'AUTH_TOKEN_INVALID',
  'AUTH_API_KEY_MISSING',
  'AUTH_API_KEY_INVALID',
  'AUTH_TOKEN_EXPIRED',
  'AUTH_TOKEN_INVALID_CONFIG',
  'AUTH_API_KEY_SANDBOX_REQUIRED',
  'AUTH_API_KEY_LIVE_REQUIRED',
  'AUTH_FORBIDDEN_IP',
  'AUTH_INSUFFICIENT_SCOPE',
] as const satisfies readonly ErrorCode[];
const SANDBOX_ONLY_CODES = ['SANDBOX_MODE_REQUIRED'] as const satisfies readonly ErrorCode[];

/** Step 5. */
const RATE_LIMIT_CODES = ['RATE_LIMIT_EXCEEDED'] as const satisfies readonly ErrorCode[];

/** Step 6, on the methods that take an Idempotency-Key (docs/contract.md#idempotency-v3). */
const IDEMPOTENCY_CODES = [
  'IDEMPOTENCY_KEY_MISSING',
  'IDEMPOTENCY_KEY_INVALID',
  'IDEMPOTENCY_IN_FLIGHT',
  'IDEMPOTENCY_MISMATCH',
  'IDEMPOTENCY_UNAVAILABLE',
] as const satisfies readonly ErrorCode[];

/** Step 7: every operation validates its query and its body, declared or not (an undeclared one must be absent or `{}`). */
const VALIDATION_CODES = ['VALIDATION_QUERY_FAILED', 'VALIDATION_BODY_FAILED'] as const satisfies readonly ErrorCode[];

/** Any step: a failure no code names, and a dependency that does not answer (docs/contract.md#errors-status-rules). */
const FAILURE_CODES = ['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'] as const satisfies readonly ErrorCode[];

/** What an unauthenticated read outside the operations (the OpenAPI document) may answer: the server's edge, the request id, a failure. */
export const DOCUMENT_ERROR_CODES: readonly ErrorCode[] = [
  ...BEFORE_ROUTING_CODES,
  ...REQUEST_ID_CODES,
  'INTERNAL_ERROR',
];

/** Every code an operation may answer: the pipeline's, in step order, then its handler's; each once. */
export function operationErrorCodes(
  operation: OperationMeta & { readonly errors?: readonly ErrorCode[] },
): ErrorCode[] {
  const codes: ErrorCode[] = [
    ...BEFORE_ROUTING_CODES,
    ...REQUEST_ID_CODES,
    ...BODY_CODES,
    ...(isWriteMethod(operation.method) ? WRITE_BODY_CODES : []),
    ...AUTH_CODES,
    ...(operation.sandboxOnly ? SANDBOX_ONLY_CODES : []),
    ...RATE_LIMIT_CODES,
    ...(requiresIdempotencyKey(operation.method) ? IDEMPOTENCY_CODES : []),
    ...VALIDATION_CODES,
    ...(operation.errors ?? []),
    ...FAILURE_CODES,
  ];
  return [...new Set(codes)];
}
