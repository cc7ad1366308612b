/**
 * v3 error -> v1 answer: one row for each of the catalog's 62 codes (spec 7.6, 9; DESIGN 4).
 *
 * v1 has the bare envelope `{status: 'error', message}` and three statuses: 400 (Query
 * validation failed), 401 (the v2 authorization message) and 500 (An internal error has
 * occurred). Every v3 code lands on one of them: client mistakes and business refusals on 400,
 * key problems on 401, everything the client cannot fix by changing its request on 500 (whose
 * advice, retry with backoff, is also right for rate limiting; Retry-After is forwarded).
 * v1 has no idempotency: the gateway sends each v1 write with a fresh v3 key, so a v3
 * idempotency error on a v1 request is a gateway defect, a 500.
 *
 * `basis: 'spec'`: status and message from the spec; `basis: 'closest'`: our choice, `note` says
 * why. Messages of 400 rows name the problem where the spec has no wording (messages are not
 * stable; the status is what clients switch on). Pure data, validated at load.
 */
import type { V1ErrorTables } from '../src/gateway/legacy/error-tables.js';

const VALIDATION = 'Query validation failed';
const AUTH = 'The authorization key provided is either invalid or expired, please try again';
const INTERNAL = 'An internal error has occurred';

const NO_IDEMPOTENCY = 'v1 has no idempotency; the gateway sends a fresh v3 key per v1 write, so this is a gateway defect.';

export const V1_ERRORS = {
  // v3 400
  VALIDATION_BODY_FAILED: { status: 400, message: VALIDATION, basis: 'spec', note: '7.6: 400 Query validation failed.' },
  VALIDATION_QUERY_FAILED: { status: 400, message: VALIDATION, basis: 'spec', note: '7.6: 400 Query validation failed.' },
  VALIDATION_HEADER_FAILED: { status: 400, message: VALIDATION, basis: 'closest', note: 'A malformed header is a bad request: v1\'s one 400.' },
  VALIDATION_CONTENT_TYPE: { status: 400, message: VALIDATION, basis: 'closest', note: 'A body that is not JSON is a bad request: v1\'s one 400.' },
  IDEMPOTENCY_KEY_INVALID: { status: 500, message: INTERNAL, basis: 'closest', note: NO_IDEMPOTENCY },
  WITHDRAWAL_CURRENCY_NOT_SUPPORTED: { status: 400, message: 'Withdrawals are not supported for this currency', basis: 'closest', note: 'No v1 operation withdraws; a business refusal is v1\'s 400.' },

  // v3 401
  AUTH_TOKEN_MISSING: { status: 401, message: AUTH, basis: 'spec', note: '7.6: 401 with the v2 authorization message.' },
  AUTH_TOKEN_INVALID: { status: 401, message: AUTH, basis: 'spec', note: '7.6: 401 (a replayed nonce is invalid too, 5.2 rule 3).' },
  AUTH_TOKEN_EXPIRED: { status: 401, message: AUTH, basis: 'spec', note: '7.6: 401.' },
  AUTH_TOKEN_INVALID_CONFIG: { status: 401, message: AUTH, basis: 'spec', note: '7.6: 401. Only the gateway\'s own upstream credential can cause it; the route layer should treat that upstream 401 as an upstream failure (500) first.' },
  AUTH_API_KEY_MISSING: { status: 401, message: AUTH, basis: 'spec', note: '7.6: 401.' },
  AUTH_API_KEY_INVALID: { status: 401, message: AUTH, basis: 'spec', note: '7.6: 401.' },

  // v3 403: v1 has no 403
  AUTH_API_KEY_SANDBOX_REQUIRED: { status: 401, message: AUTH, basis: 'closest', note: 'The key is not valid for this mode: v1\'s 401.' },
  AUTH_API_KEY_LIVE_REQUIRED: { status: 401, message: AUTH, basis: 'closest', note: 'The key is not valid for this mode: v1\'s 401.' },
  SANDBOX_MODE_REQUIRED: { status: 401, message: AUTH, basis: 'closest', note: 'A key used outside its mode: v1\'s 401.' },
  AUTH_FORBIDDEN_IP: { status: 401, message: AUTH, basis: 'closest', note: 'The key is not valid from this address: v1\'s 401.' },
  AUTH_INSUFFICIENT_SCOPE: { status: 401, message: AUTH, basis: 'closest', note: 'The key is not valid for this operation: v1\'s 401.' },
  FEATURE_NOT_ENABLED: { status: 400, message: 'This feature is not enabled for your organization', basis: 'closest', note: 'An account rule, not a key problem: v1\'s 400.' },
  TRADE_DISABLED: { status: 400, message: 'Trading is disabled for your organization', basis: 'closest', note: 'An account rule: v1\'s 400.' },
  TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT: { status: 400, message: 'This currency is not enabled for trading on your account', basis: 'closest', note: 'An account rule: v1\'s 400.' },
  TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT: { status: 400, message: 'This currency pair is not enabled for trading on your account', basis: 'closest', note: 'An account rule: v1\'s 400.' },
  WITHDRAWAL_ACCOUNT_NOT_LIVE: { status: 400, message: 'Withdrawal address is not active or verified', basis: 'closest', note: 'No v1 operation withdraws; the v2 wording (7.5) under v1\'s 400.' },
  WITHDRAWAL_DISABLED_FOR_ACCOUNT: { status: 400, message: 'Withdrawal address is not active or verified', basis: 'closest', note: 'No v1 operation withdraws; the v2 wording (7.5) under v1\'s 400.' },

  // v3 404: v1 has no 404 (spec 9: legacy not-found was 400; 4.6: trade/{id} errors are 400)
  ROUTE_NOT_FOUND: { status: 400, message: 'Route not found', basis: 'closest', note: 'Raised by the gateway for a path no v1 operation has; v1 has no 404.' },
  TRADE_NOT_FOUND: { status: 400, message: 'Trade not found', basis: 'spec', note: 'Spec 9: legacy not-found is 400; 4.6 gives trade/{id} only 400, 401 and 500.' },
  QUOTE_NOT_FOUND: { status: 400, message: 'Quote not found', basis: 'spec', note: 'Spec 9: legacy not-found is 400 (v1 trade with an unknown quoteId).' },
  DEPOSIT_NOT_FOUND: { status: 400, message: 'Deposit not found', basis: 'spec', note: 'Spec 9: legacy not-found is 400.' },
  WITHDRAWAL_NOT_FOUND: { status: 400, message: 'Withdrawal not found', basis: 'spec', note: 'Spec 9: legacy not-found is 400.' },
  WITHDRAWAL_ADDRESS_NOT_FOUND: { status: 400, message: 'Withdrawal address not found', basis: 'spec', note: 'Spec 9: legacy not-found is 400.' },
  WEBHOOK_ENDPOINT_NOT_FOUND: { status: 500, message: INTERNAL, basis: 'closest', note: 'No v1 operation touches webhook endpoints; meeting this code is a gateway defect.' },

  // v3 405
  METHOD_NOT_ALLOWED: { status: 400, message: 'Route not found', basis: 'closest', note: 'Raised by the gateway for a v1 path called with a method it does not have; as ROUTE_NOT_FOUND.' },

  // v3 409
  IDEMPOTENCY_IN_FLIGHT: { status: 500, message: INTERNAL, basis: 'closest', note: NO_IDEMPOTENCY },
  WITHDRAWAL_INSUFFICIENT_BALANCE: { status: 400, message: 'Insufficient balance for this withdraw.', basis: 'closest', note: 'No v1 operation withdraws; the v2 wording (7.5) under v1\'s 400.' },
  WITHDRAWAL_ADDRESS_NOT_VERIFIED: { status: 400, message: 'Withdrawal address is not active or verified', basis: 'closest', note: 'No v1 operation withdraws; the v2 wording (7.5) under v1\'s 400.' },
  WITHDRAWAL_PENDING_DEPOSIT_REQUIRED: { status: 400, message: 'Insufficient balance for this withdraw.', basis: 'closest', note: 'No v1 operation withdraws; the org owes money, the insufficient-balance wording under v1\'s 400.' },
  WITHDRAWAL_INVALID_STATE_TRANSITION: { status: 500, message: INTERNAL, basis: 'closest', note: 'Only the sandbox simulations raise it; meeting it on v1 is a gateway defect.' },
  QUOTE_EXPIRED: { status: 400, message: 'Quote has expired, please request a new quote', basis: 'closest', note: 'v1 trade with an expired quote: a business refusal, v1\'s 400.' },
  QUOTE_ALREADY_USED: { status: 400, message: 'Quote has already been used', basis: 'closest', note: 'v1 trade with a spent quote: v1\'s 400.' },
  TRADE_CREDIT_LIMIT_EXCEEDED: { status: 400, message: 'Insufficient credit limit for this trade', basis: 'closest', note: 'A business refusal: v1\'s 400.' },
  TRADE_NOT_REVERSIBLE: { status: 400, message: 'The trade cannot be reversed', basis: 'closest', note: 'No v1 operation reverses; v2\'s wording (7.5) under v1\'s 400.' },
  TRADE_ALREADY_REVERSED: { status: 400, message: 'The trade cannot be reversed', basis: 'closest', note: 'No v1 operation reverses; v2\'s wording (7.5) under v1\'s 400.' },
  TRADE_ALREADY_SETTLED: { status: 400, message: 'The trade cannot be settled (not in a settleable state)', basis: 'closest', note: 'No v1 operation settles; v2\'s wording (7.5) under v1\'s 400.' },
  TRADE_REVERSAL_WINDOW_CLOSED: { status: 400, message: 'The trade cannot be reversed', basis: 'closest', note: 'No v1 operation reverses; v2\'s wording (7.5) under v1\'s 400.' },
  TRADE_NOT_SETTLEABLE: { status: 400, message: 'The trade cannot be settled (not in a settleable state)', basis: 'closest', note: 'No v1 operation settles; v2\'s wording (7.5) under v1\'s 400.' },
  TRADE_SETTLEMENT_UNFUNDED: { status: 400, message: 'The trade cannot be settled (not in a settleable state)', basis: 'closest', note: 'No v1 operation settles; v2\'s wording (7.5) under v1\'s 400.' },

  // v3 413
  VALIDATION_PAYLOAD_TOO_LARGE: { status: 400, message: VALIDATION, basis: 'closest', note: 'An oversized body is a bad request: v1\'s one 400.' },

  // v3 422
  IDEMPOTENCY_MISMATCH: { status: 500, message: INTERNAL, basis: 'closest', note: NO_IDEMPOTENCY },
  WITHDRAWAL_INVALID_AMOUNT_PRECISION: { status: 400, message: VALIDATION, basis: 'closest', note: 'Issue 5: too many decimals for the currency gets the legacy validation error.' },
  WITHDRAWAL_ADDRESS_CHECKSUM_FAILED: { status: 400, message: 'Checksum verification failed for withdrawal address', basis: 'closest', note: 'No v1 operation withdraws; the v2 wording (7.5) under v1\'s 400.' },
  WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH: { status: 400, message: 'Currency does not match the withdrawal address', basis: 'closest', note: 'No v1 operation withdraws; a contradictory request is v1\'s 400.' },
  PAIR_NOT_SUPPORTED: { status: 400, message: 'This currency pair is not supported', basis: 'closest', note: 'v1 generate_quote for a pair that does not trade: v1\'s 400.' },
  QUOTE_AMOUNT_OUT_OF_RANGE: { status: 400, message: 'Amount is outside the limits for this currency pair', basis: 'closest', note: 'A business refusal: v1\'s 400.' },
  QUOTE_INVALID_AMOUNT_PRECISION: { status: 400, message: VALIDATION, basis: 'closest', note: 'Issue 5: too many decimals for the currency gets the legacy validation error.' },
  REVERSE_QUOTE_INVALID: { status: 400, message: 'The quote is not a reverse quote for this trade', basis: 'closest', note: 'No v1 operation reverses; a business refusal is v1\'s 400.' },
  WEBHOOK_URL_INVALID: { status: 500, message: INTERNAL, basis: 'closest', note: 'No v1 operation touches webhook endpoints; meeting this code is a gateway defect.' },

  // v3 428, 429
  IDEMPOTENCY_KEY_MISSING: { status: 500, message: INTERNAL, basis: 'closest', note: NO_IDEMPOTENCY },
  RATE_LIMIT_EXCEEDED: {
    status: 429,
    message: 'Too many requests, please try again later',
    basis: 'spec',
    note: 'Spec 8: every response carries the rate-limit headers and exceeding the limit gives 429 with Retry-After, in every generation; a 500 would invite v1 clients to retry at once. Retry-After is forwarded.',
  },

  // v3 5xx
  INTERNAL_ERROR: { status: 500, message: INTERNAL, basis: 'spec', note: '7.6: 500 An internal error has occurred.' },
  TRADE_EXECUTION_FAILED: { status: 500, message: INTERNAL, basis: 'spec', note: '7.6: 500; on a write the client reads the resource before retrying.' },
  WITHDRAWAL_INITIATION_FAILED: { status: 500, message: INTERNAL, basis: 'spec', note: '7.6: 500.' },
  IDEMPOTENCY_UNAVAILABLE: { status: 500, message: INTERNAL, basis: 'closest', note: 'v1 has no 503; the upstream\'s idempotency store being down is an outage, v1\'s 500.' },
  SERVICE_UNAVAILABLE: { status: 500, message: INTERNAL, basis: 'closest', note: 'v1 has no 503; an outage is its 500 (retry with backoff).' },
} as const satisfies V1ErrorTables['byCode'];

/** For a v3 code newer than the catalog, by its type (an unknown type counts as INTERNAL_ERROR, spec 7.1). */
export const V1_ERRORS_BY_TYPE = {
  VALIDATION_ERROR: { status: 400, message: VALIDATION, basis: 'spec', note: '7.6: 400 Query validation failed.' },
  AUTHENTICATION_ERROR: { status: 401, message: AUTH, basis: 'spec', note: '7.6: 401.' },
  AUTHORIZATION_ERROR: { status: 400, message: 'This operation is not allowed for your account', basis: 'closest', note: 'A new 403 is more likely an account rule (400) than a bad key.' },
  NOT_FOUND: { status: 400, message: 'Not found', basis: 'spec', note: 'Spec 9: legacy not-found is 400.' },
  CONFLICT: { status: 400, message: 'The request conflicts with the current state, please check and try again', basis: 'closest', note: 'v1 has no 409: a business refusal, its 400.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests, please try again later', basis: 'spec', note: 'As RATE_LIMIT_EXCEEDED (spec 8).' },
  INTERNAL_ERROR: { status: 500, message: INTERNAL, basis: 'spec', note: '7.6: 500.' },
} as const satisfies V1ErrorTables['byType'];

export const V1_ERROR_TABLES: V1ErrorTables = { byCode: V1_ERRORS, byType: V1_ERRORS_BY_TYPE };
