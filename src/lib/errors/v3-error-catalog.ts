/**
 * The v3 error catalog: all 65 codes, one row each, with HTTP status, type, retry strategy and
 * the schema of `details`. It is the only place a code is defined. The core throws by code, the
 * gateway's downgrade tables are checked against it, and docs/v3-api.md's error reference is
 * generated from it. Codes are never renamed or removed within v3 (docs/contract.md#versioning-v3).
 */
import { z } from 'zod';

export const ERROR_TYPES = [
  'VALIDATION_ERROR',
  'AUTHENTICATION_ERROR',
  'AUTHORIZATION_ERROR',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

export const RETRY_STRATEGIES = [
  'TERMINAL',
  'FIX_AND_RESUBMIT',
  'WAIT_THEN_RETRY_SAME_KEY',
  'CHECK_STATE_THEN_RETRY',
  'RETRY_WITH_BACKOFF',
] as const;
export type RetryStrategy = (typeof RETRY_STRATEGIES)[number];

const decimalString = z.string().regex(/^-?[0-9]+(\.[0-9]+)?$/);
const none = z.object({}).strict();
const issue = z.object({ path: z.string(), code: z.string(), message: z.string() }).strict();
const issues = z.object({ issues: z.array(issue).min(1) }).strict();
const resourceId = z.object({ resourceId: z.string().optional() }).strict();

interface CatalogRow {
  readonly status: number;
  readonly type: ErrorType;
  /** One strategy, or one for reads and one for writes where the method changes the advice. */
  readonly retryStrategy: RetryStrategy | { readonly read: RetryStrategy; readonly write: RetryStrategy };
  readonly details: z.ZodType<Record<string, unknown>>;
  /** Default human-readable message; not stable, clients must not parse it. */
  readonly message: string;
  /**
   * `spec`: a code v3 was first published with; `fxgate`: one fxgate added
   * (docs/contract.md#errors-catalog-origin).
   */
  readonly origin: 'spec' | 'fxgate';
}

function row(
  status: number,
  type: ErrorType,
  retryStrategy: CatalogRow['retryStrategy'],
  details: z.ZodType<Record<string, unknown>>,
  message: string,
  origin: CatalogRow['origin'] = 'spec',
): CatalogRow {
  return { status, type, retryStrategy, details, message, origin };
}

export const ERROR_CATALOG = {
  // 400: schema-level failures
  VALIDATION_BODY_FAILED: row(400, 'VALIDATION_ERROR', 'FIX_AND_RESUBMIT', issues, 'The request body is invalid.'),
  VALIDATION_QUERY_FAILED: row(
    400,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    issues,
    'The query parameters are invalid.',
  ),
  VALIDATION_HEADER_FAILED: row(
    400,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ header: z.string(), issues: z.array(issue).min(1) }).strict(),
    'A request header is invalid.',
    'fxgate',
  ),
  VALIDATION_CONTENT_TYPE: row(
    400,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    none,
    'Content-Type must be application/json.',
  ),
  IDEMPOTENCY_KEY_INVALID: row(
    400,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    none,
    'Idempotency-Key must be 1 to 255 characters of A-Z a-z 0-9 - _ . :',
  ),
  WITHDRAWAL_CURRENCY_NOT_SUPPORTED: row(
    400,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    none,
    'Withdrawals are not supported for this currency.',
  ),
  // Answered by the HTTP server itself, before any route, for bytes it cannot read as a request
  REQUEST_MALFORMED: row(
    400,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    none,
    'The request is not well-formed HTTP/1.1 (request line, headers or body framing).',
    'fxgate',
  ),

  // 401: who are you
  AUTH_TOKEN_MISSING: row(401, 'AUTHENTICATION_ERROR', 'TERMINAL', none, 'An Authorization: Bearer token is required.'),
  AUTH_TOKEN_INVALID: row(401, 'AUTHENTICATION_ERROR', 'TERMINAL', none, 'The bearer token is invalid.'),
  AUTH_TOKEN_EXPIRED: row(401, 'AUTHENTICATION_ERROR', 'TERMINAL', none, 'The bearer token has expired.'),
  AUTH_TOKEN_INVALID_CONFIG: row(
    401,
    'AUTHENTICATION_ERROR',
    'TERMINAL',
    z.object({ reason: z.enum(['SIGNATURE_MISSING', 'SIGNATURE_MALFORMED', 'SIGNATURE_INVALID']) }).strict(),
    'The request signature is missing or does not verify.',
  ),
  AUTH_API_KEY_MISSING: row(401, 'AUTHENTICATION_ERROR', 'TERMINAL', none, 'The token names no API key (kid).'),
  AUTH_API_KEY_INVALID: row(401, 'AUTHENTICATION_ERROR', 'TERMINAL', none, 'The API key is unknown or revoked.'),

  // 403: known, not allowed
  AUTH_API_KEY_SANDBOX_REQUIRED: row(
    403,
    'AUTHORIZATION_ERROR',
    'TERMINAL',
    none,
    'Sandbox requests need a sandbox API key.',
  ),
  AUTH_API_KEY_LIVE_REQUIRED: row(403, 'AUTHORIZATION_ERROR', 'TERMINAL', none, 'Live requests need a live API key.'),
  SANDBOX_MODE_REQUIRED: row(
    403,
    'AUTHORIZATION_ERROR',
    'TERMINAL',
    none,
    'This operation exists only in sandbox mode (X-App-Mode: SANDBOX).',
  ),
  AUTH_FORBIDDEN_IP: row(
    403,
    'AUTHORIZATION_ERROR',
    'TERMINAL',
    none,
    'The client address is not on the API key allowlist.',
  ),
  AUTH_INSUFFICIENT_SCOPE: row(
    403,
    'AUTHORIZATION_ERROR',
    'TERMINAL',
    z.object({ requiredScope: z.string() }).strict(),
    'The API key lacks the scope this operation requires.',
  ),
  FEATURE_NOT_ENABLED: row(
    403,
    'AUTHORIZATION_ERROR',
    'TERMINAL',
    none,
    'This feature is not enabled for the organization.',
  ),
  TRADE_DISABLED: row(403, 'AUTHORIZATION_ERROR', 'TERMINAL', none, 'Trading is disabled for the organization.'),
  TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT: row(
    403,
    'AUTHORIZATION_ERROR',
    'TERMINAL',
    z.object({ currency: z.string() }).strict(),
    'The currency is not enabled for trading on this account.',
  ),
  TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT: row(
    403,
    'AUTHORIZATION_ERROR',
    'TERMINAL',
    z.object({ buyCurrency: z.string(), sellCurrency: z.string() }).strict(),
    'The pair is not enabled for trading on this account.',
  ),
  WITHDRAWAL_ACCOUNT_NOT_LIVE: row(
    403,
    'AUTHORIZATION_ERROR',
    'TERMINAL',
    z.object({ accountId: z.string(), status: z.string() }).strict(),
    'The withdrawal account is not active.',
  ),
  WITHDRAWAL_DISABLED_FOR_ACCOUNT: row(
    403,
    'AUTHORIZATION_ERROR',
    'TERMINAL',
    none,
    'Withdrawals are disabled for this withdrawal account.',
  ),

  // 404: never reached an entitlement check
  ROUTE_NOT_FOUND: row(
    404,
    'NOT_FOUND',
    'TERMINAL',
    z.object({ method: z.string(), path: z.string() }).strict(),
    'No operation exists at this path.',
    'fxgate',
  ),
  TRADE_NOT_FOUND: row(404, 'NOT_FOUND', 'TERMINAL', z.object({ tradeId: z.string() }).strict(), 'Trade not found.'),
  QUOTE_NOT_FOUND: row(
    404,
    'NOT_FOUND',
    'TERMINAL',
    z.object({ quoteId: z.string() }).strict(),
    'Quote not found.',
    'fxgate',
  ),
  DEPOSIT_NOT_FOUND: row(
    404,
    'NOT_FOUND',
    'TERMINAL',
    z.object({ depositId: z.string() }).strict(),
    'Deposit not found.',
    'fxgate',
  ),
  WITHDRAWAL_NOT_FOUND: row(404, 'NOT_FOUND', 'TERMINAL', none, 'Withdrawal not found.'),
  WITHDRAWAL_ADDRESS_NOT_FOUND: row(
    404,
    'NOT_FOUND',
    'TERMINAL',
    z.object({ accountId: z.string() }).strict(),
    'Withdrawal account not found.',
  ),
  WEBHOOK_ENDPOINT_NOT_FOUND: row(
    404,
    'NOT_FOUND',
    'TERMINAL',
    z.object({ webhookEndpointId: z.string() }).strict(),
    'Webhook endpoint not found.',
    'fxgate',
  ),

  // 405
  METHOD_NOT_ALLOWED: row(
    405,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ method: z.string(), allowed: z.array(z.string()).min(1) }).strict(),
    'This method is not allowed on this path.',
  ),

  // 408: the HTTP server's request timeout; a request that did not arrive whole never ran
  REQUEST_TIMEOUT: row(
    408,
    'VALIDATION_ERROR',
    'RETRY_WITH_BACKOFF',
    none,
    'The request did not arrive whole within the time allowed; nothing was done.',
    'fxgate',
  ),

  // 409: state-driven conflicts
  IDEMPOTENCY_IN_FLIGHT: row(
    409,
    'CONFLICT',
    'WAIT_THEN_RETRY_SAME_KEY',
    none,
    'A request with this Idempotency-Key is still being processed.',
  ),
  WITHDRAWAL_INSUFFICIENT_BALANCE: row(
    409,
    'CONFLICT',
    'FIX_AND_RESUBMIT',
    z.object({ requiredAmount: decimalString, availableAmount: decimalString, currency: z.string() }).strict(),
    'The balance does not cover the withdrawal.',
  ),
  WITHDRAWAL_ADDRESS_NOT_VERIFIED: row(
    409,
    'CONFLICT',
    'FIX_AND_RESUBMIT',
    z.object({ accountId: z.string() }).strict(),
    'The withdrawal account is not verified.',
  ),
  WITHDRAWAL_PENDING_DEPOSIT_REQUIRED: row(
    409,
    'CONFLICT',
    'FIX_AND_RESUBMIT',
    z.object({ outstandingAmount: decimalString, currency: z.string() }).strict(),
    'An outstanding amount must be deposited before withdrawing.',
  ),
  WITHDRAWAL_INVALID_STATE_TRANSITION: row(
    409,
    'CONFLICT',
    'TERMINAL',
    z.object({ withdrawalId: z.string(), status: z.string(), requestedStatus: z.string() }).strict(),
    'The withdrawal cannot move to the requested status.',
    'fxgate',
  ),
  QUOTE_EXPIRED: row(
    409,
    'CONFLICT',
    'FIX_AND_RESUBMIT',
    z.object({ quoteId: z.string(), expiredAt: z.string() }).strict(),
    'The quote has expired; request a new quote and use a new Idempotency-Key.',
    'fxgate',
  ),
  QUOTE_ALREADY_USED: row(
    409,
    'CONFLICT',
    'TERMINAL',
    z.object({ quoteId: z.string(), tradeId: z.string() }).strict(),
    'The quote has already been executed.',
    'fxgate',
  ),
  TRADE_CREDIT_LIMIT_EXCEEDED: row(
    409,
    'CONFLICT',
    'FIX_AND_RESUBMIT',
    z
      .object({
        creditLine: decimalString,
        committedAmount: decimalString,
        requiredAmount: decimalString,
        currency: z.string(),
      })
      .strict(),
    'The trade would exceed the organization credit line.',
    'fxgate',
  ),
  TRADE_NOT_REVERSIBLE: row(
    409,
    'CONFLICT',
    'TERMINAL',
    z.object({ tradeId: z.string(), status: z.string() }).strict(),
    'The trade cannot be reversed.',
    'fxgate',
  ),
  TRADE_ALREADY_REVERSED: row(
    409,
    'CONFLICT',
    'TERMINAL',
    z.object({ tradeId: z.string(), reversedByTradeId: z.string() }).strict(),
    'The trade has already been reversed.',
    'fxgate',
  ),
  TRADE_ALREADY_SETTLED: row(
    409,
    'CONFLICT',
    'TERMINAL',
    z.object({ tradeId: z.string() }).strict(),
    'The trade has already been settled.',
    'fxgate',
  ),
  TRADE_REVERSAL_WINDOW_CLOSED: row(
    409,
    'CONFLICT',
    'TERMINAL',
    z.object({ tradeId: z.string(), windowEndedAt: z.string() }).strict(),
    'The reversal window of the trade has closed.',
    'fxgate',
  ),
  TRADE_NOT_SETTLEABLE: row(
    409,
    'CONFLICT',
    'TERMINAL',
    z.object({ tradeId: z.string(), status: z.string() }).strict(),
    'The trade is not in a settleable state.',
    'fxgate',
  ),
  TRADE_SETTLEMENT_UNFUNDED: row(
    409,
    'CONFLICT',
    'FIX_AND_RESUBMIT',
    z.object({ requiredAmount: decimalString, availableAmount: decimalString, currency: z.string() }).strict(),
    'The balance does not fund the sell side of the trade.',
    'fxgate',
  ),

  // 413
  VALIDATION_PAYLOAD_TOO_LARGE: row(
    413,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    none,
    'The request body exceeds 8 KB.',
  ),

  // 422: well-formed, breaks a business rule
  IDEMPOTENCY_MISMATCH: row(
    422,
    'CONFLICT',
    'FIX_AND_RESUBMIT',
    z.object({ originalRequestHash: z.string().regex(/^sha256:[0-9a-f]{64}$/) }).strict(),
    'The Idempotency-Key was used with a different request.',
  ),
  WITHDRAWAL_INVALID_AMOUNT_PRECISION: row(
    422,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ maxDecimals: z.number().int().min(0), currency: z.string() }).strict(),
    'The amount has more decimals than the currency allows.',
  ),
  WITHDRAWAL_ADDRESS_CHECKSUM_FAILED: row(
    422,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ address: z.string(), network: z.string() }).strict(),
    'The address checksum is not valid for the network.',
  ),
  WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH: row(
    422,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ expected: z.string(), received: z.string() }).strict(),
    'The currency does not match the withdrawal account.',
  ),
  PAIR_NOT_SUPPORTED: row(
    422,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ buyCurrency: z.string(), sellCurrency: z.string() }).strict(),
    'The currency pair is not tradable.',
    'fxgate',
  ),
  QUOTE_AMOUNT_OUT_OF_RANGE: row(
    422,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ minAmount: decimalString, maxAmount: decimalString, currency: z.string() }).strict(),
    'The amount is outside the pair limits.',
    'fxgate',
  ),
  QUOTE_INVALID_AMOUNT_PRECISION: row(
    422,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ maxDecimals: z.number().int().min(0), currency: z.string() }).strict(),
    'The amount has more decimals than the currency allows.',
    'fxgate',
  ),
  REVERSE_QUOTE_INVALID: row(
    422,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ quoteId: z.string(), tradeId: z.string() }).strict(),
    'The quote is not a reverse quote for this trade.',
    'fxgate',
  ),
  WEBHOOK_URL_INVALID: row(
    422,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ url: z.string(), reason: z.string() }).strict(),
    'The webhook URL is not acceptable.',
    'fxgate',
  ),

  // 428, 429
  IDEMPOTENCY_KEY_MISSING: row(
    428,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    z.object({ endpoint: z.string() }).strict(),
    'This operation requires an Idempotency-Key header.',
  ),
  RATE_LIMIT_EXCEEDED: row(
    429,
    'RATE_LIMITED',
    'WAIT_THEN_RETRY_SAME_KEY',
    none,
    'Too many requests; retry after the number of seconds in Retry-After.',
  ),

  // 431: the HTTP server's limit on the request line and headers
  REQUEST_HEADERS_TOO_LARGE: row(
    431,
    'VALIDATION_ERROR',
    'FIX_AND_RESUBMIT',
    none,
    'The request line and headers exceed 16 KB.',
    'fxgate',
  ),

  // 5xx
  INTERNAL_ERROR: row(
    500,
    'INTERNAL_ERROR',
    { read: 'RETRY_WITH_BACKOFF', write: 'CHECK_STATE_THEN_RETRY' },
    resourceId,
    'An internal error has occurred.',
  ),
  TRADE_EXECUTION_FAILED: row(
    500,
    'INTERNAL_ERROR',
    'CHECK_STATE_THEN_RETRY',
    z.object({ resourceId: z.string() }).strict(),
    'The trade may not have executed; fetch it by resourceId before retrying with the same key.',
  ),
  WITHDRAWAL_INITIATION_FAILED: row(
    500,
    'INTERNAL_ERROR',
    'CHECK_STATE_THEN_RETRY',
    z.object({ resourceId: z.string() }).strict(),
    'The withdrawal may not have been initiated; fetch it by resourceId before retrying with the same key.',
  ),
  IDEMPOTENCY_UNAVAILABLE: row(
    503,
    'INTERNAL_ERROR',
    'WAIT_THEN_RETRY_SAME_KEY',
    none,
    'The idempotency store is unavailable; retry later with the same Idempotency-Key.',
  ),
  SERVICE_UNAVAILABLE: row(
    503,
    'INTERNAL_ERROR',
    'RETRY_WITH_BACKOFF',
    none,
    'The service is temporarily unavailable.',
    'fxgate',
  ),
} as const satisfies Record<string, CatalogRow>;

export type ErrorCode = keyof typeof ERROR_CATALOG;
export type ErrorCatalogRow = CatalogRow;

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CATALOG, value);
}

/** The retry strategy a client gets for this code on a read (GET/HEAD) or a write. */
export function retryStrategyFor(code: ErrorCode, isWrite: boolean): RetryStrategy {
  const strategy = ERROR_CATALOG[code].retryStrategy;
  return typeof strategy === 'string' ? strategy : isWrite ? strategy.write : strategy.read;
}
