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

type OperationDeclaration = OperationMeta & { readonly errors?: readonly ErrorCode[] };

interface PipelineStep {
  readonly codes: readonly ErrorCode[];
  /** The operations the step runs for; every one when absent. */
  readonly runsFor?: (operation: OperationDeclaration) => boolean;
}

/** Step 1: the request id header. */
const REQUEST_ID_STEP: PipelineStep = { codes: ['VALIDATION_HEADER_FAILED'] };

/** The steps after routing, in order; the operation's own codes come between validation and failures. */
const STEPS_BEFORE_HANDLER: readonly PipelineStep[] = [
  REQUEST_ID_STEP,
  // Step 3: the body's size, and its media type on writes.
  { codes: ['VALIDATION_PAYLOAD_TOO_LARGE'] },
  { codes: ['VALIDATION_CONTENT_TYPE'], runsFor: (operation) => isWriteMethod(operation.method) },
  // Step 4: authentication and authorisation (docs/contract.md#auth-check-order).
  {
    codes: [
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
    ],
  },
  { codes: ['SANDBOX_MODE_REQUIRED'], runsFor: (operation) => operation.sandboxOnly === true },
  // Step 5.
  { codes: ['RATE_LIMIT_EXCEEDED'] },
  // Step 6, on the methods that take an Idempotency-Key (docs/contract.md#idempotency-v3).
  {
    codes: [
      'IDEMPOTENCY_KEY_MISSING',
      'IDEMPOTENCY_KEY_INVALID',
      'IDEMPOTENCY_IN_FLIGHT',
      'IDEMPOTENCY_MISMATCH',
      'IDEMPOTENCY_UNAVAILABLE',
    ],
    runsFor: (operation) => requiresIdempotencyKey(operation.method),
  },
  // Step 7: every operation validates its query and its body, declared or not (an undeclared one must be absent or `{}`).
  { codes: ['VALIDATION_QUERY_FAILED', 'VALIDATION_BODY_FAILED'] },
];

/** Any step: a failure no code names, and a dependency that does not answer (docs/contract.md#errors-status-rules). */
const FAILURE_CODES: readonly ErrorCode[] = ['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];

/** What an unauthenticated read outside the operations (the OpenAPI document) may answer: the server's edge, the request id, a failure. */
export const DOCUMENT_ERROR_CODES: readonly ErrorCode[] = [
  ...BEFORE_ROUTING_CODES,
  ...REQUEST_ID_STEP.codes,
  'INTERNAL_ERROR',
];

/** Every code an operation may answer: the pipeline's, in step order, then its handler's; each once. */
export function operationErrorCodes(operation: OperationDeclaration): ErrorCode[] {
  const codes: ErrorCode[] = [
    ...BEFORE_ROUTING_CODES,
    ...STEPS_BEFORE_HANDLER.flatMap((step) => (step.runsFor?.(operation) === false ? [] : step.codes)),
    ...(operation.errors ?? []),
    ...FAILURE_CODES,
  ];
  return [...new Set(codes)];
}
