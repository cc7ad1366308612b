/**
 * v3 error -> v2 answer: one row for each of the catalog's 65 codes. v1's answers are declared as
 * changes to these (`mappings/errors.v1.ts`), so every row here is v1's too unless v1's changes
 * say otherwise.
 *
 * The v2 body is `{status: 'error', message}`; rows with `error` add `error: {code, details}`
 * (the idempotency cases, whose `details` is a string). v2 clients switch on the HTTP status, or
 * on error.code for idempotency, so the status is what must be right; messages are not stable,
 * but where the v2 documentation words one, it is used verbatim. Legacy statuses stay what
 * legacy clients knew: where v3 moved a case to 404, 409 or 422 (not-found, insufficient balance,
 * checksum, unverified address), v2 keeps its 400, except the documentation's own 404 rows for
 * trade/reverse, trade/reverse-quote and trade/settle.
 *
 * `basis: 'spec'` rows carry a status (and message, where one is worded) from the v2
 * documentation; `basis: 'closest'` rows are our choice for a code it gives no row, and `note`
 * says why. Pure data: the gateway validates it at load (src/gateway/legacy/declarations/error-tables.ts).
 */
import type { V2ErrorTables } from '../src/gateway/legacy/declarations/error-tables.js';

const VALIDATION = 'Query validation failed';
const AUTH = 'The authorization key provided is either invalid or expired, please try again';
const INTERNAL = 'An internal error has occurred';
const ADDRESS_NOT_READY = 'Withdrawal address is not active or verified';
const ACCOUNT_NOT_READY = 'Withdrawal account is not active or verified';
const INSUFFICIENT_BALANCE = 'Insufficient balance for this withdraw.';
const CHECKSUM_FAILED = 'Checksum verification failed for withdrawal address';
const TRADE_NOT_FOUND = 'Trade not found';
const CANNOT_REVERSE = 'The trade cannot be reversed';
const CANNOT_SETTLE = 'The trade cannot be settled (not in a settleable state)';
const QUOTE_FAILED = 'Error while creating a quote, please try again later';
const REVERSE_QUOTE_FAILED = 'Something went wrong, please try again later';

export const V2_ERRORS = {
  // v3 400: schema-level failures
  VALIDATION_BODY_FAILED: {
    status: 400,
    message: VALIDATION,
    basis: 'spec',
    note: "The v2 documentation's 400 Query validation failed, for a bad query or body.",
  },
  VALIDATION_QUERY_FAILED: {
    status: 400,
    message: VALIDATION,
    basis: 'spec',
    note: "The v2 documentation's 400 Query validation failed, for a bad query or body.",
  },
  VALIDATION_HEADER_FAILED: {
    status: 400,
    message: VALIDATION,
    basis: 'closest',
    note: 'A malformed header is a bad request; v2 has one 400 for all of them.',
    defect: "The gateway writes every header v3 reads; v3 refusing one is the gateway's defect.",
  },
  VALIDATION_CONTENT_TYPE: {
    status: 400,
    message: VALIDATION,
    basis: 'closest',
    note: 'A body that is not JSON is a bad body: the documented 400 for a bad query or body.',
    defect: "The gateway writes every v3 body as JSON; v3 refusing its content type is the gateway's defect.",
  },
  IDEMPOTENCY_KEY_INVALID: {
    status: 400,
    message: 'Invalid idempotency key',
    error: {
      code: 'INVALID_IDEMPOTENCY_KEY',
      details: 'The Idempotency-Key header is malformed; a UUID is recommended',
    },
    basis: 'spec',
    note: "The v2 documentation's 400 with code INVALID_IDEMPOTENCY_KEY for a malformed key.",
    defect: "The gateway derives the v3 key itself; v3 refusing it is the gateway's defect, whatever the client sent.",
  },
  WITHDRAWAL_CURRENCY_NOT_SUPPORTED: {
    status: 400,
    message: 'Withdrawals are not supported for this currency',
    basis: 'closest',
    note: 'v3 keeps this one at 400 too; the spec words no v2 message.',
  },
  REQUEST_MALFORMED: {
    status: 400,
    message: VALIDATION,
    basis: 'closest',
    note: 'Bytes the HTTP server cannot read as a request are a bad request; v2 has one 400 for all of them.',
  },

  // v3 401: who are you
  AUTH_TOKEN_MISSING: { status: 401, message: AUTH, basis: 'spec', note: "The v2 documentation's 401 for a bad JWT." },
  AUTH_TOKEN_INVALID: {
    status: 401,
    message: AUTH,
    basis: 'spec',
    note: "The v2 documentation's 401 for a bad JWT (a replayed nonce makes the token invalid too).",
  },
  AUTH_TOKEN_EXPIRED: {
    status: 401,
    message: AUTH,
    basis: 'spec',
    note: 'The v2 documentation\'s 401 for a bad JWT; the message says "invalid or expired".',
  },
  AUTH_TOKEN_INVALID_CONFIG: {
    status: 401,
    message: AUTH,
    basis: 'spec',
    note: "The v2 documentation's 401 for a bad JWT. Legacy requests carry no request signature, so only the gateway's own upstream credential can cause it; the route layer should treat that upstream 401 as an upstream failure (500) before consulting this table.",
  },
  AUTH_API_KEY_MISSING: {
    status: 401,
    message: AUTH,
    basis: 'spec',
    note: "The v2 documentation's 401 for a bad JWT (it names no key).",
  },
  AUTH_API_KEY_INVALID: {
    status: 401,
    message: AUTH,
    basis: 'spec',
    note: "The v2 documentation's 401 for a bad JWT (an unknown or revoked key).",
  },

  // v3 403: known but not allowed. v2 has no 403: key problems are the 401, account rules a 400.
  AUTH_API_KEY_SANDBOX_REQUIRED: {
    status: 401,
    message: AUTH,
    basis: 'closest',
    note: 'v2 has no 403; the key is not valid for this mode, which v2 reports as its 401.',
  },
  AUTH_API_KEY_LIVE_REQUIRED: {
    status: 401,
    message: AUTH,
    basis: 'closest',
    note: 'v2 has no 403; the key is not valid for this mode, which v2 reports as its 401.',
  },
  SANDBOX_MODE_REQUIRED: {
    status: 401,
    message: AUTH,
    basis: 'closest',
    note: 'v2 has no 403 and no sandbox-only operations; a key used outside its mode is its 401.',
    defect:
      "The gateway sends v3 only what its own mode allows; v3 asking for sandbox mode is the gateway's wiring at fault.",
  },
  AUTH_FORBIDDEN_IP: {
    status: 401,
    message: AUTH,
    basis: 'closest',
    note: 'v2 has no 403; a key used from outside its allowlist is not valid for the request: 401.',
  },
  AUTH_INSUFFICIENT_SCOPE: {
    status: 401,
    message: AUTH,
    basis: 'closest',
    note: 'v2 has no 403; a key without the scope is not valid for the operation: 401.',
  },
  FEATURE_NOT_ENABLED: {
    status: 400,
    message: 'This feature is not enabled for your organization',
    basis: 'closest',
    note: "An account rule, not a key problem: v2's 400 for requests it cannot carry out.",
  },
  TRADE_DISABLED: {
    status: 400,
    message: 'Trading is disabled for your organization',
    basis: 'closest',
    note: "An account rule, not a key problem: v2's 400.",
  },
  TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT: {
    status: 400,
    message: 'This currency is not enabled for trading on your account',
    basis: 'closest',
    note: "An account rule: v2's 400.",
  },
  TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT: {
    status: 400,
    message: 'This currency pair is not enabled for trading on your account',
    basis: 'closest',
    note: "An account rule: v2's 400.",
  },
  WITHDRAWAL_ACCOUNT_NOT_LIVE: {
    status: 400,
    message: ADDRESS_NOT_READY,
    basis: 'spec',
    note: "The v2 documentation's 400 for withdrawal and fiat_withdrawal: the address (fiat: account) is not active or verified.",
    byOperation: { fiat_withdrawal: { status: 400, message: ACCOUNT_NOT_READY } },
  },
  WITHDRAWAL_DISABLED_FOR_ACCOUNT: {
    status: 400,
    message: ADDRESS_NOT_READY,
    basis: 'closest',
    note: 'An account withdrawals are disabled on is not active for withdrawals: the documented "not active or verified" 400 (fiat: account).',
    byOperation: { fiat_withdrawal: { status: 400, message: ACCOUNT_NOT_READY } },
  },

  // v3 404: v2 said 400 for not-found, except the documentation's own 404 rows (reverse, reverse-quote, settle)
  ROUTE_NOT_FOUND: {
    status: 404,
    message: 'Route not found',
    basis: 'closest',
    note: "Raised by the gateway for a path no legacy operation has; an HTTP server's usual 404.",
    defect: "The gateway calls only paths of the v3 contract; v3 not knowing one is the gateway's wiring at fault.",
  },
  TRADE_NOT_FOUND: {
    status: 400,
    message: TRADE_NOT_FOUND,
    basis: 'spec',
    note: "Legacy not-found is 400, so trade/{id} with an unknown trade is 400 Trade not found, as is any other operation; the v2 documentation's 404 Trade not found is only for trade/reverse, trade/reverse-quote and trade/settle.",
    byOperation: {
      'trade/reverse': { status: 404, message: TRADE_NOT_FOUND },
      'trade/reverse-quote': { status: 404, message: TRADE_NOT_FOUND },
      'trade/settle': { status: 404, message: TRADE_NOT_FOUND },
    },
  },
  QUOTE_NOT_FOUND: {
    status: 400,
    message: 'Quote not found',
    basis: 'spec',
    note: 'Legacy not-found is 400 (trade with an unknown quoteId); the trade/reverse documentation answers an unknown quoteId with its 404 Trade not found.',
    byOperation: { 'trade/reverse': { status: 404, message: TRADE_NOT_FOUND } },
  },
  DEPOSIT_NOT_FOUND: {
    status: 400,
    message: 'Deposit not found',
    basis: 'spec',
    note: 'Legacy not-found is 400, the status v2 clients have always had for it.',
  },
  WITHDRAWAL_NOT_FOUND: {
    status: 400,
    message: 'Withdrawal not found',
    basis: 'spec',
    note: 'Legacy not-found is 400, the status v2 clients have always had for it.',
  },
  WITHDRAWAL_ADDRESS_NOT_FOUND: {
    status: 400,
    message: 'Withdrawal address not found',
    basis: 'spec',
    note: 'Legacy not-found is 400; fiat_withdrawal calls it an account, as the v2 documentation does.',
    byOperation: { fiat_withdrawal: { status: 400, message: 'Withdrawal account not found' } },
  },
  WEBHOOK_ENDPOINT_NOT_FOUND: {
    status: 500,
    message: INTERNAL,
    basis: 'closest',
    note: 'No v2 operation touches webhook endpoints; meeting this code is a gateway defect.',
  },

  // v3 405
  METHOD_NOT_ALLOWED: {
    status: 404,
    message: 'Route not found',
    basis: 'closest',
    note: 'Raised by the gateway for a legacy path called with a method it does not have: no such route, as ROUTE_NOT_FOUND.',
    defect:
      "The gateway calls only operations of the v3 contract; a method v3 refuses is the gateway's wiring at fault.",
  },

  // v3 408
  REQUEST_TIMEOUT: {
    status: 500,
    message: 'The request did not arrive in time, please try again',
    basis: 'closest',
    note: 'v2 has no 408. The request never ran, so the right move is to send it again: v2 clients retry a 500 (a write once they find no resource), while a 400 would tell them to change a request that was fine.',
  },

  // v3 409: state conflicts
  IDEMPOTENCY_IN_FLIGHT: {
    status: 409,
    message: 'Request with this idempotency key is currently processing',
    error: {
      code: 'IDEMPOTENCY_IN_FLIGHT',
      details: 'Wait the number of seconds in Retry-After, then retry with the same key',
    },
    basis: 'spec',
    note: "The v2 documentation's 409 with code IDEMPOTENCY_IN_FLIGHT; Retry-After is forwarded.",
  },
  WITHDRAWAL_INSUFFICIENT_BALANCE: {
    status: 400,
    message: INSUFFICIENT_BALANCE,
    basis: 'spec',
    note: "The v2 documentation's 400 Insufficient balance for this withdraw. for withdrawal and fiat_withdrawal; v3 made it 409, legacy keeps 400.",
  },
  WITHDRAWAL_ADDRESS_NOT_VERIFIED: {
    status: 400,
    message: ADDRESS_NOT_READY,
    basis: 'spec',
    note: "The v2 documentation's 400 Withdrawal address (fiat: account) is not active or verified; v3 made it 409, legacy keeps 400.",
    byOperation: { fiat_withdrawal: { status: 400, message: ACCOUNT_NOT_READY } },
  },
  WITHDRAWAL_PENDING_DEPOSIT_REQUIRED: {
    status: 400,
    message: INSUFFICIENT_BALANCE,
    basis: 'closest',
    note: 'The org owes money (a negative balance), so nothing is withdrawable: the documented insufficient-balance 400.',
  },
  WITHDRAWAL_INVALID_STATE_TRANSITION: {
    status: 500,
    message: INTERNAL,
    basis: 'closest',
    note: 'Only the sandbox simulations raise it; no v2 operation can, so meeting it is a gateway defect.',
  },
  QUOTE_EXPIRED: {
    status: 400,
    message: 'Quote has expired, please request a new quote',
    basis: 'closest',
    note: 'v2 reported business failures as 400; v3 moved some of them to 409 or 422, legacy keeps 400.',
  },
  QUOTE_ALREADY_USED: {
    status: 400,
    message: 'Quote has already been used',
    basis: 'closest',
    note: 'v2 reported business failures as 400.',
  },
  TRADE_CREDIT_LIMIT_EXCEEDED: {
    status: 400,
    message: 'Insufficient credit limit for this trade',
    basis: 'closest',
    note: 'The trade analogue of the documented insufficient-balance 400.',
  },
  TRADE_NOT_REVERSIBLE: {
    status: 409,
    message: CANNOT_REVERSE,
    basis: 'spec',
    note: "The trade/reverse documentation's 409 The trade cannot be reversed.",
  },
  TRADE_ALREADY_REVERSED: {
    status: 409,
    message: CANNOT_REVERSE,
    basis: 'spec',
    note: 'Already reversed is the documented reverse 409; on trade/settle a reversed trade is not settleable (the documented settle 409).',
    byOperation: { 'trade/settle': { status: 409, message: CANNOT_SETTLE } },
  },
  TRADE_ALREADY_SETTLED: {
    status: 409,
    message: CANNOT_REVERSE,
    basis: 'spec',
    note: 'The documentation\'s "already reversed or settled" is the reverse 409; on trade/settle it is the settle 409.',
    byOperation: { 'trade/settle': { status: 409, message: CANNOT_SETTLE } },
  },
  TRADE_REVERSAL_WINDOW_CLOSED: {
    status: 409,
    message: CANNOT_REVERSE,
    basis: 'spec',
    note: 'The documentation\'s "outside its window" is the reverse 409.',
  },
  TRADE_NOT_SETTLEABLE: {
    status: 409,
    message: CANNOT_SETTLE,
    basis: 'spec',
    note: "The trade/settle documentation's 409 The trade cannot be settled (not in a settleable state).",
  },
  TRADE_SETTLEMENT_UNFUNDED: {
    status: 409,
    message: CANNOT_SETTLE,
    basis: 'closest',
    note: 'An unfunded trade is not in a settleable state: the documented settle 409.',
  },

  // v3 413
  VALIDATION_PAYLOAD_TOO_LARGE: {
    status: 400,
    message: VALIDATION,
    basis: 'closest',
    note: 'An oversized body is a bad body: the documented 400 for a bad query or body.',
  },

  // v3 422: business rules
  IDEMPOTENCY_MISMATCH: {
    status: 422,
    message: 'Idempotency key reused with different parameters',
    error: { code: 'IDEMPOTENCY_MISMATCH', details: 'This key was used with a different request; use a new key' },
    basis: 'spec',
    note: "The v2 documentation's 422 with code IDEMPOTENCY_MISMATCH: a new key is needed.",
  },
  WITHDRAWAL_INVALID_AMOUNT_PRECISION: {
    status: 400,
    message: VALIDATION,
    basis: 'closest',
    note: 'A legacy amount with more decimals than the currency allows is a malformed request to a legacy client: the validation 400.',
  },
  WITHDRAWAL_ADDRESS_CHECKSUM_FAILED: {
    status: 400,
    message: CHECKSUM_FAILED,
    basis: 'spec',
    note: "The v2 documentation's 400 Checksum verification failed for withdrawal and fiat_withdrawal; v3 made it 422, legacy keeps 400.",
  },
  WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH: {
    status: 400,
    message: 'Currency does not match the withdrawal address',
    basis: 'closest',
    note: "A request that contradicts its own address: v2's 400.",
    byOperation: { fiat_withdrawal: { status: 400, message: 'Currency does not match the withdrawal account' } },
  },
  PAIR_NOT_SUPPORTED: {
    status: 400,
    message: 'This currency pair is not supported',
    basis: 'closest',
    note: "A quote for a pair that does not trade: v2's 400.",
  },
  QUOTE_AMOUNT_OUT_OF_RANGE: {
    status: 400,
    message: 'Amount is outside the limits for this currency pair',
    basis: 'closest',
    note: "v2's 400 for a request it cannot carry out.",
  },
  QUOTE_INVALID_AMOUNT_PRECISION: {
    status: 400,
    message: VALIDATION,
    basis: 'closest',
    note: 'A legacy amount with more decimals than the currency allows is a malformed request to a legacy client: the validation 400.',
  },
  REVERSE_QUOTE_INVALID: {
    status: 400,
    message: 'The quote is not a reverse quote for this trade',
    basis: 'closest',
    note: "A business refusal is v2's 400; on trade/reverse a quoteId that is not an approved reverse quote of the trade does not resolve, the documented 404 Trade not found.",
    byOperation: { 'trade/reverse': { status: 404, message: TRADE_NOT_FOUND } },
  },
  WEBHOOK_URL_INVALID: {
    status: 500,
    message: INTERNAL,
    basis: 'closest',
    note: 'No v2 operation touches webhook endpoints; meeting this code is a gateway defect.',
  },

  // v3 428, 429
  IDEMPOTENCY_KEY_MISSING: {
    status: 400,
    message: 'Idempotency key is required',
    error: {
      code: 'IDEMPOTENCY_KEY_REQUIRED',
      details: 'Send an Idempotency-Key header with every POST; a UUID is recommended',
    },
    basis: 'spec',
    note: "The v2 documentation's 400 with code IDEMPOTENCY_KEY_REQUIRED; v3 made it 428, legacy keeps 400.",
    defect: "The gateway sends every v3 write its own key; v3 missing one is the gateway's defect.",
  },
  RATE_LIMIT_EXCEEDED: {
    status: 429,
    message: 'Too many requests, please try again later',
    basis: 'spec',
    note: "Rate limits apply to every generation: the key's own legacy limit, or v3's limit of the gateway's credential, gives 429 with Retry-After; a 500 would invite clients to retry at once.",
  },
  REQUEST_HEADERS_TOO_LARGE: {
    status: 400,
    message: VALIDATION,
    basis: 'closest',
    note: "v2 has no 431; headers over the limit are a bad request: v2's one 400 for them.",
  },

  // v3 5xx
  INTERNAL_ERROR: {
    status: 500,
    message: INTERNAL,
    basis: 'spec',
    note: "The v2 documentation's 500 An internal error has occurred; generate_quote and trade/reverse-quote have their own documented 500 messages.",
    byOperation: {
      generate_quote: { status: 500, message: QUOTE_FAILED },
      'trade/reverse-quote': { status: 500, message: REVERSE_QUOTE_FAILED },
    },
  },
  TRADE_EXECUTION_FAILED: {
    status: 500,
    message: INTERNAL,
    basis: 'spec',
    note: "The v2 documentation's 500; on a write the client reads the resource before retrying.",
  },
  WITHDRAWAL_INITIATION_FAILED: {
    status: 500,
    message: INTERNAL,
    basis: 'spec',
    note: "The v2 documentation's 500; on a write the client reads the resource before retrying.",
  },
  IDEMPOTENCY_UNAVAILABLE: {
    status: 503,
    message: 'Idempotency service is unavailable, please try again later',
    error: {
      code: 'IDEMPOTENCY_SERVICE_UNAVAILABLE',
      details: 'The idempotency store is down; retry with backoff and the same key',
    },
    basis: 'spec',
    note: "The v2 documentation's 503 with code IDEMPOTENCY_SERVICE_UNAVAILABLE (v3 renamed the code IDEMPOTENCY_UNAVAILABLE; legacy keeps its name). Fails closed.",
  },
  SERVICE_UNAVAILABLE: {
    status: 500,
    message: INTERNAL,
    basis: 'closest',
    note: "v2's only 503 is the idempotency one, which clients switch on by code; any other outage is its 500 (retry with backoff).",
    byOperation: {
      generate_quote: { status: 500, message: QUOTE_FAILED },
      'trade/reverse-quote': { status: 500, message: REVERSE_QUOTE_FAILED },
    },
  },
} as const satisfies V2ErrorTables['byCode'];

/** For a v3 code newer than the catalog, by its type (an unknown type counts as INTERNAL_ERROR, as v3 tells its clients). */
export const V2_ERRORS_BY_TYPE = {
  VALIDATION_ERROR: {
    status: 400,
    message: VALIDATION,
    basis: 'closest',
    note: 'Every known validation code is the documented 400.',
  },
  AUTHENTICATION_ERROR: {
    status: 401,
    message: AUTH,
    basis: 'spec',
    note: "The v2 documentation's 401 for a bad JWT.",
  },
  AUTHORIZATION_ERROR: {
    status: 400,
    message: 'This operation is not allowed for your account',
    basis: 'closest',
    note: "Key problems are long cataloged; a new 403 is more likely an account rule, v2's 400, than a bad key.",
  },
  NOT_FOUND: {
    status: 400,
    message: 'Not found',
    basis: 'spec',
    note: 'Legacy not-found is 400, the status v2 clients have always had for it.',
  },
  CONFLICT: {
    status: 409,
    message: 'The request conflicts with the current state, please check and try again',
    basis: 'closest',
    note: 'v2 answers state conflicts with 409 (the documented reverse and settle refusals).',
  },
  RATE_LIMITED: {
    status: 429,
    message: 'Too many requests, please try again later',
    basis: 'spec',
    note: 'As RATE_LIMIT_EXCEEDED: 429 with Retry-After, in every generation.',
  },
  INTERNAL_ERROR: {
    status: 500,
    message: INTERNAL,
    basis: 'spec',
    note: "The v2 documentation's 500 An internal error has occurred.",
  },
} as const satisfies V2ErrorTables['byType'];

export const V2_ERROR_TABLES: V2ErrorTables = { byCode: V2_ERRORS, byType: V2_ERRORS_BY_TYPE };
