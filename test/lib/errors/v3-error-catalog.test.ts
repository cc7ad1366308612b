/**
 * The v3 error catalog against docs/contract.md#errors: the 62 codes of the contract and the
 * HTTP server's three (REQUEST_*); every code v3 was first published with, with its status, type
 * and retry strategy, transcribed below (PUBLISHED_ROWS); closed sets of types and strategies; a
 * strict details schema per code.
 */
import { describe, expect, it } from 'vitest';

import { ApiError } from '../../../src/lib/errors/api-error.js';
import {
  ERROR_CATALOG,
  ERROR_CODES,
  ERROR_TYPES,
  type ErrorCode,
  isErrorCode,
  RETRY_STRATEGIES,
  retryStrategyFor,
} from '../../../src/lib/errors/v3-error-catalog.js';

/** The seven types of docs/contract.md#errors-types: a closed set in the catalog. */
const CONTRACT_TYPES = [
  'VALIDATION_ERROR',
  'AUTHENTICATION_ERROR',
  'AUTHORIZATION_ERROR',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
];
/** The five retry strategies of docs/contract.md#errors-retry-strategies. */
const CONTRACT_STRATEGIES = [
  'TERMINAL',
  'FIX_AND_RESUBMIT',
  'WAIT_THEN_RETRY_SAME_KEY',
  'CHECK_STATE_THEN_RETRY',
  'RETRY_WITH_BACKOFF',
];

interface PublishedRow {
  readonly status: number;
  readonly codes: readonly string[];
  /** Absent where the published row left the cell blank. */
  readonly type?: string;
  readonly retry?: string;
  /** Retry strategy given for writes only (INTERNAL_ERROR). */
  readonly retryOnWrite?: string;
  /** 'none' where the row says none; field names where it lists them; absent where blank. */
  readonly details?: 'none' | readonly string[];
  /** Fields present only sometimes ("on writes when present"). */
  readonly optionalDetails?: readonly string[];
}

const VE = 'VALIDATION_ERROR';
const FIX = 'FIX_AND_RESUBMIT';

/**
 * The codes v3 was first published with, and the shape it gave them, row by row: the catalog's
 * `spec`-origin codes (docs/contract.md#errors-catalog-origin). Every other code is fxgate's.
 */
const PUBLISHED_ROWS: readonly PublishedRow[] = [
  { status: 400, codes: ['VALIDATION_BODY_FAILED'], type: VE, retry: FIX, details: ['issues'] },
  { status: 400, codes: ['VALIDATION_QUERY_FAILED'], type: VE },
  { status: 400, codes: ['IDEMPOTENCY_KEY_INVALID'], type: VE, retry: FIX, details: 'none' },
  { status: 400, codes: ['VALIDATION_CONTENT_TYPE'], type: VE, retry: FIX, details: 'none' },
  { status: 400, codes: ['WITHDRAWAL_CURRENCY_NOT_SUPPORTED'], type: VE, retry: FIX, details: 'none' },
  { status: 401, codes: ['AUTH_TOKEN_MISSING'], type: 'AUTHENTICATION_ERROR', retry: 'TERMINAL', details: 'none' },
  { status: 401, codes: ['AUTH_TOKEN_INVALID'], type: 'AUTHENTICATION_ERROR', retry: 'TERMINAL', details: 'none' },
  { status: 401, codes: ['AUTH_TOKEN_EXPIRED'], type: 'AUTHENTICATION_ERROR', retry: 'TERMINAL', details: 'none' },
  {
    status: 401,
    codes: ['AUTH_TOKEN_INVALID_CONFIG'],
    type: 'AUTHENTICATION_ERROR',
    retry: 'TERMINAL',
    details: ['reason'],
  },
  { status: 401, codes: ['AUTH_API_KEY_MISSING'], type: 'AUTHENTICATION_ERROR', retry: 'TERMINAL', details: 'none' },
  { status: 401, codes: ['AUTH_API_KEY_INVALID'], type: 'AUTHENTICATION_ERROR', retry: 'TERMINAL', details: 'none' },
  {
    status: 403,
    codes: ['AUTH_API_KEY_SANDBOX_REQUIRED'],
    type: 'AUTHORIZATION_ERROR',
    retry: 'TERMINAL',
    details: 'none',
  },
  {
    status: 403,
    codes: ['AUTH_API_KEY_LIVE_REQUIRED'],
    type: 'AUTHORIZATION_ERROR',
    retry: 'TERMINAL',
    details: 'none',
  },
  { status: 403, codes: ['SANDBOX_MODE_REQUIRED'], type: 'AUTHORIZATION_ERROR', retry: 'TERMINAL', details: 'none' },
  { status: 403, codes: ['AUTH_FORBIDDEN_IP'], type: 'AUTHORIZATION_ERROR', retry: 'TERMINAL', details: 'none' },
  {
    status: 403,
    codes: ['AUTH_INSUFFICIENT_SCOPE'],
    type: 'AUTHORIZATION_ERROR',
    retry: 'TERMINAL',
    details: ['requiredScope'],
  },
  {
    status: 403,
    codes: ['WITHDRAWAL_ACCOUNT_NOT_LIVE'],
    type: 'AUTHORIZATION_ERROR',
    retry: 'TERMINAL',
    details: ['accountId', 'status'],
  },
  {
    status: 403,
    codes: ['WITHDRAWAL_DISABLED_FOR_ACCOUNT'],
    type: 'AUTHORIZATION_ERROR',
    retry: 'TERMINAL',
    details: 'none',
  },
  { status: 403, codes: ['FEATURE_NOT_ENABLED'], type: 'AUTHORIZATION_ERROR', retry: 'TERMINAL', details: 'none' },
  {
    status: 403,
    codes: ['TRADE_DISABLED', 'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT', 'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT'],
    type: 'AUTHORIZATION_ERROR',
  },
  { status: 404, codes: ['WITHDRAWAL_NOT_FOUND'], type: 'NOT_FOUND', retry: 'TERMINAL', details: 'none' },
  {
    status: 404,
    codes: ['WITHDRAWAL_ADDRESS_NOT_FOUND'],
    type: 'NOT_FOUND',
    retry: 'TERMINAL',
    details: ['accountId'],
  },
  { status: 404, codes: ['TRADE_NOT_FOUND'], type: 'NOT_FOUND' },
  { status: 405, codes: ['METHOD_NOT_ALLOWED'], type: VE, retry: FIX, details: ['method', 'allowed'] },
  {
    status: 409,
    codes: ['IDEMPOTENCY_IN_FLIGHT'],
    type: 'CONFLICT',
    retry: 'WAIT_THEN_RETRY_SAME_KEY',
    details: 'none',
  },
  {
    status: 409,
    codes: ['WITHDRAWAL_INSUFFICIENT_BALANCE'],
    type: 'CONFLICT',
    retry: FIX,
    details: ['requiredAmount', 'availableAmount', 'currency'],
  },
  { status: 409, codes: ['WITHDRAWAL_ADDRESS_NOT_VERIFIED'], type: 'CONFLICT', retry: FIX, details: ['accountId'] },
  {
    status: 409,
    codes: ['WITHDRAWAL_PENDING_DEPOSIT_REQUIRED'],
    type: 'CONFLICT',
    retry: FIX,
    details: ['outstandingAmount', 'currency'],
  },
  { status: 413, codes: ['VALIDATION_PAYLOAD_TOO_LARGE'], type: VE, retry: FIX, details: 'none' },
  { status: 422, codes: ['IDEMPOTENCY_MISMATCH'], type: 'CONFLICT', retry: FIX, details: ['originalRequestHash'] },
  {
    status: 422,
    codes: ['WITHDRAWAL_INVALID_AMOUNT_PRECISION'],
    type: VE,
    retry: FIX,
    details: ['maxDecimals', 'currency'],
  },
  { status: 422, codes: ['WITHDRAWAL_ADDRESS_CHECKSUM_FAILED'], type: VE, retry: FIX, details: ['address', 'network'] },
  {
    status: 422,
    codes: ['WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH'],
    type: VE,
    retry: FIX,
    details: ['expected', 'received'],
  },
  { status: 428, codes: ['IDEMPOTENCY_KEY_MISSING'], type: VE, retry: FIX, details: ['endpoint'] },
  {
    status: 429,
    codes: ['RATE_LIMIT_EXCEEDED'],
    type: 'RATE_LIMITED',
    retry: 'WAIT_THEN_RETRY_SAME_KEY',
    details: 'none',
  },
  {
    status: 500,
    codes: ['INTERNAL_ERROR'],
    type: 'INTERNAL_ERROR',
    retryOnWrite: 'CHECK_STATE_THEN_RETRY',
    details: [],
    optionalDetails: ['resourceId'],
  },
  {
    status: 500,
    codes: ['TRADE_EXECUTION_FAILED', 'WITHDRAWAL_INITIATION_FAILED'],
    retry: 'CHECK_STATE_THEN_RETRY',
    details: ['resourceId'],
  },
  { status: 503, codes: ['IDEMPOTENCY_UNAVAILABLE'] },
];

const PUBLISHED_CODES = PUBLISHED_ROWS.flatMap((row) => row.codes);

/** One valid `details` per code. Typed over every code, so a new code needs an example here. */
const EXAMPLES = {
  VALIDATION_BODY_FAILED: { issues: [{ path: 'amount', code: 'invalid_format', message: 'Invalid string' }] },
  VALIDATION_QUERY_FAILED: { issues: [{ path: 'limit', code: 'too_big', message: 'at most 100' }] },
  VALIDATION_HEADER_FAILED: {
    header: 'X-Request-Id',
    issues: [{ path: 'X-Request-Id', code: 'invalid_format', message: 'bad' }],
  },
  VALIDATION_CONTENT_TYPE: {},
  IDEMPOTENCY_KEY_INVALID: {},
  WITHDRAWAL_CURRENCY_NOT_SUPPORTED: {},
  REQUEST_MALFORMED: {},
  AUTH_TOKEN_MISSING: {},
  AUTH_TOKEN_INVALID: {},
  AUTH_TOKEN_EXPIRED: {},
  AUTH_TOKEN_INVALID_CONFIG: { reason: 'SIGNATURE_INVALID' },
  AUTH_API_KEY_MISSING: {},
  AUTH_API_KEY_INVALID: {},
  AUTH_API_KEY_SANDBOX_REQUIRED: {},
  AUTH_API_KEY_LIVE_REQUIRED: {},
  SANDBOX_MODE_REQUIRED: {},
  AUTH_FORBIDDEN_IP: {},
  AUTH_INSUFFICIENT_SCOPE: { requiredScope: 'trade' },
  FEATURE_NOT_ENABLED: {},
  TRADE_DISABLED: {},
  TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT: { currency: 'JPY' },
  TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT: { buyCurrency: 'EUR', sellCurrency: 'USD' },
  WITHDRAWAL_ACCOUNT_NOT_LIVE: { accountId: 'wac_0190b5a0c0de7000800000000000abcd', status: 'DISABLED' },
  WITHDRAWAL_DISABLED_FOR_ACCOUNT: {},
  ROUTE_NOT_FOUND: { method: 'GET', path: '/v3/fx/nope' },
  TRADE_NOT_FOUND: { tradeId: 'trd_0190b5a0c0de7000800000000000abcd' },
  QUOTE_NOT_FOUND: { quoteId: 'qte_0190b5a0c0de7000800000000000abcd' },
  DEPOSIT_NOT_FOUND: { depositId: 'dep_0190b5a0c0de7000800000000000abcd' },
  WITHDRAWAL_NOT_FOUND: {},
  WITHDRAWAL_ADDRESS_NOT_FOUND: { accountId: 'wac_0190b5a0c0de7000800000000000abcd' },
  WEBHOOK_ENDPOINT_NOT_FOUND: { webhookEndpointId: 'whe_0190b5a0c0de7000800000000000abcd' },
  METHOD_NOT_ALLOWED: { method: 'POST', allowed: ['GET', 'HEAD'] },
  REQUEST_TIMEOUT: {},
  IDEMPOTENCY_IN_FLIGHT: {},
  WITHDRAWAL_INSUFFICIENT_BALANCE: { requiredAmount: '10.00', availableAmount: '5.00', currency: 'USD' },
  WITHDRAWAL_ADDRESS_NOT_VERIFIED: { accountId: 'wac_0190b5a0c0de7000800000000000abcd' },
  WITHDRAWAL_PENDING_DEPOSIT_REQUIRED: { outstandingAmount: '250.00', currency: 'USD' },
  WITHDRAWAL_INVALID_STATE_TRANSITION: {
    withdrawalId: 'wtd_0190b5a0c0de7000800000000000abcd',
    status: 'COMPLETED',
    requestedStatus: 'FAILED',
  },
  QUOTE_EXPIRED: { quoteId: 'qte_0190b5a0c0de7000800000000000abcd', expiredAt: '2026-01-01T00:00:00.000Z' },
  QUOTE_ALREADY_USED: {
    quoteId: 'qte_0190b5a0c0de7000800000000000abcd',
    tradeId: 'trd_0190b5a0c0de7000800000000000abcd',
  },
  TRADE_CREDIT_LIMIT_EXCEEDED: {
    creditLine: '100000.00',
    committedAmount: '99000.00',
    requiredAmount: '2000.00',
    currency: 'USD',
  },
  TRADE_NOT_REVERSIBLE: { tradeId: 'trd_0190b5a0c0de7000800000000000abcd', status: 'SETTLED' },
  TRADE_ALREADY_REVERSED: {
    tradeId: 'trd_0190b5a0c0de7000800000000000abcd',
    reversedByTradeId: 'trd_0190b5a0c0de7000800000000000abce',
  },
  TRADE_ALREADY_SETTLED: { tradeId: 'trd_0190b5a0c0de7000800000000000abcd' },
  TRADE_REVERSAL_WINDOW_CLOSED: {
    tradeId: 'trd_0190b5a0c0de7000800000000000abcd',
    windowEndedAt: '2026-01-01T00:00:00.000Z',
  },
  TRADE_NOT_SETTLEABLE: { tradeId: 'trd_0190b5a0c0de7000800000000000abcd', status: 'REVERSED' },
  TRADE_SETTLEMENT_UNFUNDED: { requiredAmount: '10.00', availableAmount: '-5.00', currency: 'EUR' },
  VALIDATION_PAYLOAD_TOO_LARGE: {},
  IDEMPOTENCY_MISMATCH: { originalRequestHash: `sha256:${'ab'.repeat(32)}` },
  WITHDRAWAL_INVALID_AMOUNT_PRECISION: { maxDecimals: 2, currency: 'USD' },
  WITHDRAWAL_ADDRESS_CHECKSUM_FAILED: { address: '0x52908400098527886e0f7030069857d2e4169ee7', network: 'ETHEREUM' },
  WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH: { expected: 'USD', received: 'EUR' },
  PAIR_NOT_SUPPORTED: { buyCurrency: 'JPY', sellCurrency: 'JPY' },
  QUOTE_AMOUNT_OUT_OF_RANGE: { minAmount: '1.00', maxAmount: '1000000.00', currency: 'USD' },
  QUOTE_INVALID_AMOUNT_PRECISION: { maxDecimals: 0, currency: 'JPY' },
  REVERSE_QUOTE_INVALID: {
    quoteId: 'qte_0190b5a0c0de7000800000000000abcd',
    tradeId: 'trd_0190b5a0c0de7000800000000000abcd',
  },
  WEBHOOK_URL_INVALID: { url: 'http://127.0.0.1/hook', reason: 'must be https' },
  IDEMPOTENCY_KEY_MISSING: { endpoint: 'POST /v3/fx/withdrawals' },
  RATE_LIMIT_EXCEEDED: {},
  REQUEST_HEADERS_TOO_LARGE: {},
  INTERNAL_ERROR: { resourceId: 'wtd_0190b5a0c0de7000800000000000abcd' },
  TRADE_EXECUTION_FAILED: { resourceId: 'trd_0190b5a0c0de7000800000000000abcd' },
  WITHDRAWAL_INITIATION_FAILED: { resourceId: 'wtd_0190b5a0c0de7000800000000000abcd' },
  IDEMPOTENCY_UNAVAILABLE: {},
  SERVICE_UNAVAILABLE: {},
} satisfies Record<ErrorCode, Record<string, unknown>>;

function accepts(code: ErrorCode, details: unknown): boolean {
  return ERROR_CATALOG[code].details.safeParse(details).success;
}

describe('the code list', () => {
  it("has exactly 65 codes: the 62 of the contract and the HTTP server's three answers before routing", () => {
    expect(ERROR_CODES).toHaveLength(65);
    expect(Object.keys(ERROR_CATALOG)).toHaveLength(65);
    expect(ERROR_CODES.filter((code) => code.startsWith('REQUEST_')).sort()).toEqual([
      'REQUEST_HEADERS_TOO_LARGE',
      'REQUEST_MALFORMED',
      'REQUEST_TIMEOUT',
    ]);
  });

  it('has unique codes, ERROR_CODES matching the table', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(ERROR_CATALOG).sort());
  });

  it('spells every code in UPPER_SNAKE_CASE', () => {
    for (const code of ERROR_CODES) expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
  });

  it('gives every code a default message', () => {
    for (const code of ERROR_CODES) expect(ERROR_CATALOG[code].message.trim().length, code).toBeGreaterThan(0);
  });

  it('knows its codes and nothing else', () => {
    expect(isErrorCode('RATE_LIMIT_EXCEEDED')).toBe(true);
    expect(isErrorCode('rate_limit_exceeded')).toBe(false);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode('__proto__')).toBe(false);
  });

  it('uses the v3 names, not the v2 ones', () => {
    expect(isErrorCode('IDEMPOTENCY_UNAVAILABLE')).toBe(true);
    expect(isErrorCode('IDEMPOTENCY_SERVICE_UNAVAILABLE')).toBe(false);
    expect(isErrorCode('IDEMPOTENCY_KEY_REQUIRED')).toBe(false);
    expect(isErrorCode('INVALID_IDEMPOTENCY_KEY')).toBe(false);
  });
});

describe('the codes v3 was first published with', () => {
  it('are transcribed with no code twice', () => {
    expect(new Set(PUBLISHED_CODES).size).toBe(PUBLISHED_CODES.length);
  });

  it('are exactly the spec-origin codes of the catalog', () => {
    const specOrigin = ERROR_CODES.filter((code) => ERROR_CATALOG[code].origin === 'spec');
    expect([...specOrigin].sort()).toEqual([...PUBLISHED_CODES].sort());
  });

  it.each(PUBLISHED_ROWS.flatMap((row) => row.codes.map((code) => [code, row] as const)))(
    '%s has the status, type, retryStrategy and details of its row',
    (name, row) => {
      expect(isErrorCode(name), `${name} is in the catalog`).toBe(true);
      const code = name as ErrorCode;
      const entry = ERROR_CATALOG[code];
      expect(entry.status).toBe(row.status);
      if (row.type !== undefined) expect(entry.type).toBe(row.type);
      if (row.retry !== undefined) {
        expect(retryStrategyFor(code, false)).toBe(row.retry);
        expect(retryStrategyFor(code, true)).toBe(row.retry);
      }
      if (row.retryOnWrite !== undefined) expect(retryStrategyFor(code, true)).toBe(row.retryOnWrite);

      const example = EXAMPLES[code] as Record<string, unknown>;
      if (row.details === 'none') {
        expect(example).toEqual({});
        expect(accepts(code, {})).toBe(true);
      } else if (row.details !== undefined) {
        expect(Object.keys(example).sort()).toEqual([...row.details, ...(row.optionalDetails ?? [])].sort());
        expect(accepts(code, example)).toBe(true);
        for (const field of row.details) {
          const { [field]: _dropped, ...without } = example;
          expect(accepts(code, without), `${code} without ${field}`).toBe(false);
        }
        for (const field of row.optionalDetails ?? []) {
          const { [field]: _dropped, ...without } = example;
          expect(accepts(code, without), `${code} without optional ${field}`).toBe(true);
        }
      }
    },
  );

  it('types their details fields', () => {
    // issues[]: objects of path, code and message
    expect(accepts('VALIDATION_BODY_FAILED', { issues: [] })).toBe(false);
    expect(accepts('VALIDATION_BODY_FAILED', { issues: [{ path: 'a', code: 'b' }] })).toBe(false);
    expect(accepts('VALIDATION_BODY_FAILED', { issues: 'amount is wrong' })).toBe(false);
    // reason: one of the three of docs/contract.md#auth-v3-signature
    for (const reason of ['SIGNATURE_MISSING', 'SIGNATURE_MALFORMED', 'SIGNATURE_INVALID'])
      expect(accepts('AUTH_TOKEN_INVALID_CONFIG', { reason })).toBe(true);
    expect(accepts('AUTH_TOKEN_INVALID_CONFIG', { reason: 'SOMETHING_ELSE' })).toBe(false);
    // allowed[]
    expect(accepts('METHOD_NOT_ALLOWED', { method: 'POST', allowed: 'GET' })).toBe(false);
    // requiredAmount and availableAmount are strings
    expect(
      accepts('WITHDRAWAL_INSUFFICIENT_BALANCE', { requiredAmount: 10, availableAmount: '5.00', currency: 'USD' }),
    ).toBe(false);
    expect(
      accepts('WITHDRAWAL_INSUFFICIENT_BALANCE', { requiredAmount: '10.00', availableAmount: 5, currency: 'USD' }),
    ).toBe(false);
    expect(accepts('WITHDRAWAL_PENDING_DEPOSIT_REQUIRED', { outstandingAmount: 250, currency: 'USD' })).toBe(false);
    // originalRequestHash: string of the form sha256:<hex>
    expect(accepts('IDEMPOTENCY_MISMATCH', { originalRequestHash: 'ab'.repeat(32) })).toBe(false);
    expect(accepts('IDEMPOTENCY_MISMATCH', { originalRequestHash: `md5:${'ab'.repeat(16)}` })).toBe(false);
    // maxDecimals is an integer
    expect(accepts('WITHDRAWAL_INVALID_AMOUNT_PRECISION', { maxDecimals: 1.5, currency: 'USD' })).toBe(false);
    expect(accepts('WITHDRAWAL_INVALID_AMOUNT_PRECISION', { maxDecimals: '2', currency: 'USD' })).toBe(false);
  });
});

describe('closed sets', () => {
  it('has exactly the seven types of the contract', () => {
    expect([...ERROR_TYPES].sort()).toEqual([...CONTRACT_TYPES].sort());
  });

  it('has exactly the five retry strategies of the contract', () => {
    expect([...RETRY_STRATEGIES].sort()).toEqual([...CONTRACT_STRATEGIES].sort());
  });

  it.each(ERROR_CODES)('%s uses a type and retry strategies from the sets', (code) => {
    expect(CONTRACT_TYPES).toContain(ERROR_CATALOG[code].type);
    expect(CONTRACT_STRATEGIES).toContain(retryStrategyFor(code, false));
    expect(CONTRACT_STRATEGIES).toContain(retryStrategyFor(code, true));
  });
});

describe('details schemas', () => {
  it.each(ERROR_CODES)('%s accepts its example and refuses an unexpected key', (code) => {
    const example = EXAMPLES[code];
    expect(accepts(code, example)).toBe(true);
    expect(accepts(code, { ...example, unexpectedKey: 'x' })).toBe(false);
    expect(accepts(code, null)).toBe(false);
    expect(accepts(code, [])).toBe(false);
  });

  it('gives every code without fields an empty details object', () => {
    const empty = ERROR_CODES.filter((code) => accepts(code, {}));
    for (const code of empty) expect(accepts(code, { metadata: { a: 'b' } }), code).toBe(false);
    expect(empty).toContain('RATE_LIMIT_EXCEEDED');
    expect(empty).toContain('INTERNAL_ERROR');
  });
});

describe('status and type agree', () => {
  const KNOWN_STATUSES = [400, 401, 403, 404, 405, 408, 409, 413, 422, 428, 429, 431, 500, 503];

  it.each(ERROR_CODES)('%s', (code) => {
    const { status, type } = ERROR_CATALOG[code];
    expect(KNOWN_STATUSES).toContain(status);
    if (status < 500) expect(type).not.toBe('INTERNAL_ERROR');
    if (status >= 500) expect(type).toBe('INTERNAL_ERROR');
    if (status === 401) expect(type).toBe('AUTHENTICATION_ERROR');
    if (status === 403) expect(type).toBe('AUTHORIZATION_ERROR');
    if (status === 404) expect(type).toBe('NOT_FOUND');
    expect(type === 'RATE_LIMITED').toBe(status === 429);
    expect(type === 'AUTHENTICATION_ERROR').toBe(status === 401);
  });

  it('advises RETRY_WITH_BACKOFF on read-path 500s and on 503s other than idempotency', () => {
    expect(retryStrategyFor('INTERNAL_ERROR', false)).toBe('RETRY_WITH_BACKOFF');
    for (const code of ERROR_CODES.filter((c) => ERROR_CATALOG[c].status === 503 && c !== 'IDEMPOTENCY_UNAVAILABLE')) {
      expect(retryStrategyFor(code, false), code).toBe('RETRY_WITH_BACKOFF');
    }
  });

  it('lets every 500 name the resource a write touched', () => {
    for (const code of ERROR_CODES.filter((c) => ERROR_CATALOG[c].status === 500)) {
      expect(accepts(code, { resourceId: 'trd_0190b5a0c0de7000800000000000abcd' }), code).toBe(true);
      expect(retryStrategyFor(code, true), code).toBe('CHECK_STATE_THEN_RETRY');
    }
  });
});

describe('ApiError envelopes follow the catalog', () => {
  it('fills status, type, message, strategy and empty details from the row', () => {
    const error = new ApiError('RATE_LIMIT_EXCEEDED');
    expect(error.statusCode).toBe(429);
    expect(error.toEnvelope(false)).toEqual({
      error: {
        code: 'RATE_LIMIT_EXCEEDED',
        type: 'RATE_LIMITED',
        message: ERROR_CATALOG.RATE_LIMIT_EXCEEDED.message,
        retryStrategy: 'WAIT_THEN_RETRY_SAME_KEY',
        details: {},
      },
    });
  });

  it('picks the strategy by method where it differs', () => {
    const error = new ApiError('INTERNAL_ERROR', { resourceId: 'wtd_0190b5a0c0de7000800000000000abcd' });
    expect(error.toEnvelope(false).error.retryStrategy).toBe('RETRY_WITH_BACKOFF');
    expect(error.toEnvelope(true).error).toMatchObject({
      retryStrategy: 'CHECK_STATE_THEN_RETRY',
      details: { resourceId: 'wtd_0190b5a0c0de7000800000000000abcd' },
    });
  });

  it('keeps a custom message but never the cause in the envelope', () => {
    const error = new ApiError('AUTH_TOKEN_INVALID', undefined, {
      message: 'Replayed token.',
      cause: new Error('secret detail'),
    });
    expect(JSON.stringify(error.toEnvelope(false))).not.toContain('secret detail');
    expect(error.toEnvelope(false).error.message).toBe('Replayed token.');
  });
});
