import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { V1_ERROR_CHANGES } from '../../../../mappings/errors.v1.js';
import { V2_ERROR_TABLES, V2_ERRORS, V2_ERRORS_BY_TYPE } from '../../../../mappings/errors.v2.js';
import {
  applyV1ErrorChanges,
  describeV1ErrorChanges,
  isDeclaredDefect,
  legacyErrorBody,
  resolveLegacyError,
  V1_BASE_STATUSES,
  V1_ERROR_STATUSES,
  V1_LACKED_STATUSES,
  V2_ERROR_STATUSES,
  validateErrorTables,
} from '../../../../src/gateway/legacy/declarations/error-tables.js';
import { LEGACY_OPERATIONS, type V1Operation } from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import { LegacyMappingError } from '../../../../src/lib/errors/internal-errors.js';
import {
  ERROR_CATALOG,
  ERROR_CODES,
  ERROR_TYPES,
  type ErrorCode,
} from '../../../../src/lib/errors/v3-error-catalog.js';
import { mappingError } from '../declaration-edits.js';

const VALIDATION = 'Query validation failed';
const AUTH = 'The authorization key provided is either invalid or expired, please try again';
const INTERNAL = 'An internal error has occurred';

const v2 = validateErrorTables('v2', V2_ERROR_TABLES);
const v1 = applyV1ErrorChanges(v2, V1_ERROR_CHANGES);
const V1_OPERATIONS: readonly V1Operation[] = LEGACY_OPERATIONS.v1;
type ShippedChange = (typeof V1_ERROR_CHANGES)[number];
/** The shipped v1 error changes of a kind. */
const changesOf = <K extends ShippedChange['kind']>(kind: K) =>
  V1_ERROR_CHANGES.filter((change): change is Extract<ShippedChange, { kind: K }> => change.kind === kind);
const downgradeOf = (from: number) => changesOf('status-downgraded').find((change) => change.from === from)!;
const changedOf = (code: string) => changesOf('error-answer-changed').find((change) => change.code === code)!;
const v2Body = (code: string, operation?: Parameters<typeof resolveLegacyError<'v2'>>[2]) => {
  const answer = resolveLegacyError(v2, { code }, operation);
  return { status: answer.status, body: legacyErrorBody(answer) };
};
const v1Body = (code: string, operation?: V1Operation) => {
  const answer = resolveLegacyError(v1, { code }, operation);
  return { status: answer.status, body: legacyErrorBody(answer) };
};

describe("v1's tables as built before its error changes joined the change format", () => {
  // Fixtures written from the previous format's output: the tables and the docs' lines stay the same, key order included.
  const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8');
  it('v1 tables are the same', () => {
    expect(`${JSON.stringify(v1, null, 2)}\n`).toBe(fixture('v1-error-tables.json'));
  });
  it("the docs' lines of v1's error changes are the same", () => {
    expect(`${JSON.stringify(describeV1ErrorChanges(v2, V1_ERROR_CHANGES), null, 2)}\n`).toBe(
      fixture('v1-error-change-lines.json'),
    );
  });
});

describe('every v3 code has a legacy mapping', () => {
  it("the catalog has the 62 codes of the v3 contract and the HTTP server's three", () => {
    expect(ERROR_CODES).toHaveLength(65);
  });

  it.each(ERROR_CODES)('%s has a v1 and a v2 row', (code) => {
    expect(Object.hasOwn(v1.byCode, code)).toBe(true);
    expect(Object.hasOwn(V2_ERRORS, code)).toBe(true);
  });

  it('the tables have no other keys', () => {
    expect(Object.keys(v1.byCode).sort()).toEqual([...ERROR_CODES].sort());
    expect(Object.keys(V2_ERRORS).sort()).toEqual([...ERROR_CODES].sort());
    expect(Object.keys(v1.byType).sort()).toEqual([...ERROR_TYPES].sort());
    expect(Object.keys(V2_ERRORS_BY_TYPE).sort()).toEqual([...ERROR_TYPES].sort());
  });

  it('both shipped tables pass the load-time validator (v1 as v2 changed by V1_ERROR_CHANGES)', () => {
    expect(() => validateErrorTables('v1', v1)).not.toThrow();
    expect(() => validateErrorTables('v2', V2_ERROR_TABLES)).not.toThrow();
  });

  it("every v1 answer, on every v1 operation, has one of v1's statuses, and 409 or 422 only with an idempotency error.code", () => {
    const idempotencyOnly = new Map([
      [409, 'IDEMPOTENCY_IN_FLIGHT'],
      [422, 'IDEMPOTENCY_MISMATCH'],
    ]);
    const answers = [
      ...ERROR_CODES.flatMap((code) => [undefined, ...V1_OPERATIONS].map((operation) => v1Body(code, operation))),
      ...ERROR_TYPES.map((type) => ({ status: v1.byType[type].status, body: legacyErrorBody(v1.byType[type]) })),
    ];
    for (const { status, body } of answers) {
      expect(V1_ERROR_STATUSES).toContain(status);
      if (idempotencyOnly.has(status)) expect(body.error?.code).toBe(idempotencyOnly.get(status));
    }
  });

  it('a v1 answer is the bare envelope except for the idempotency codes a key-sending v1 client meets', () => {
    const withCode = new Set(['IDEMPOTENCY_KEY_INVALID', 'IDEMPOTENCY_IN_FLIGHT', 'IDEMPOTENCY_MISMATCH']);
    for (const code of ERROR_CODES) {
      for (const operation of [undefined, ...V1_OPERATIONS])
        expect('error' in v1Body(code, operation).body).toBe(withCode.has(code));
    }
  });

  it('every v2 answer has a v2 status, and error.code only for the idempotency cases', () => {
    const withCode = new Set([
      'IDEMPOTENCY_KEY_MISSING',
      'IDEMPOTENCY_KEY_INVALID',
      'IDEMPOTENCY_IN_FLIGHT',
      'IDEMPOTENCY_MISMATCH',
      'IDEMPOTENCY_UNAVAILABLE',
    ]);
    for (const code of ERROR_CODES) {
      const { status, body } = v2Body(code);
      expect(V2_ERROR_STATUSES).toContain(status);
      expect('error' in body).toBe(withCode.has(code));
    }
  });

  it('a v1/v2 status is never a v3-only status (403, 405, 413, 428)', () => {
    for (const code of ERROR_CODES) {
      expect([403, 405, 413, 428]).not.toContain(v1Body(code).status);
      expect([403, 405, 413, 428]).not.toContain(v2Body(code).status);
    }
  });
});

describe('the v2 rows', () => {
  it.each(['VALIDATION_BODY_FAILED', 'VALIDATION_QUERY_FAILED'])('%s is 400 Query validation failed', (code) => {
    expect(v2Body(code)).toEqual({ status: 400, body: { status: 'error', message: VALIDATION } });
  });

  it.each([
    'AUTH_TOKEN_MISSING',
    'AUTH_TOKEN_INVALID',
    'AUTH_TOKEN_EXPIRED',
    'AUTH_TOKEN_INVALID_CONFIG',
    'AUTH_API_KEY_MISSING',
    'AUTH_API_KEY_INVALID',
  ])('%s (bad JWT) is 401 with the authorization message', (code) => {
    expect(v2Body(code)).toEqual({ status: 401, body: { status: 'error', message: AUTH } });
  });

  it('409 IDEMPOTENCY_IN_FLIGHT', () => {
    expect(v2Body('IDEMPOTENCY_IN_FLIGHT')).toEqual({
      status: 409,
      body: {
        status: 'error',
        message: 'Request with this idempotency key is currently processing',
        error: { code: 'IDEMPOTENCY_IN_FLIGHT', details: expect.any(String) },
      },
    });
  });

  it('422 IDEMPOTENCY_MISMATCH', () => {
    expect(v2Body('IDEMPOTENCY_MISMATCH')).toEqual({
      status: 422,
      body: {
        status: 'error',
        message: 'Idempotency key reused with different parameters',
        error: { code: 'IDEMPOTENCY_MISMATCH', details: expect.any(String) },
      },
    });
  });

  it('500 An internal error has occurred', () => {
    expect(v2Body('INTERNAL_ERROR')).toEqual({ status: 500, body: { status: 'error', message: INTERNAL } });
    expect(v2Body('INTERNAL_ERROR', 'balances')).toEqual({ status: 500, body: { status: 'error', message: INTERNAL } });
  });

  it.each([
    ['IDEMPOTENCY_KEY_MISSING', 400, 'IDEMPOTENCY_KEY_REQUIRED'],
    ['IDEMPOTENCY_KEY_INVALID', 400, 'INVALID_IDEMPOTENCY_KEY'],
    ['IDEMPOTENCY_UNAVAILABLE', 503, 'IDEMPOTENCY_SERVICE_UNAVAILABLE'],
  ] as const)('%s is %i with code %s', (code, status, legacyCode) => {
    const answer = v2Body(code);
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({
      status: 'error',
      message: expect.any(String),
      error: { code: legacyCode, details: expect.any(String) },
    });
    expect(answer.body.message.length).toBeGreaterThan(0);
    expect(typeof answer.body.error?.details).toBe('string');
  });

  describe('extra cases by operation', () => {
    it.each([
      ['withdrawal', 'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', 'Checksum verification failed for withdrawal address'],
      ['withdrawal', 'WITHDRAWAL_INSUFFICIENT_BALANCE', 'Insufficient balance for this withdraw.'],
      ['withdrawal', 'WITHDRAWAL_ADDRESS_NOT_VERIFIED', 'Withdrawal address is not active or verified'],
      ['withdrawal', 'WITHDRAWAL_ACCOUNT_NOT_LIVE', 'Withdrawal address is not active or verified'],
      ['fiat_withdrawal', 'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', 'Checksum verification failed for withdrawal address'],
      ['fiat_withdrawal', 'WITHDRAWAL_INSUFFICIENT_BALANCE', 'Insufficient balance for this withdraw.'],
      ['fiat_withdrawal', 'WITHDRAWAL_ADDRESS_NOT_VERIFIED', 'Withdrawal account is not active or verified'],
      ['fiat_withdrawal', 'WITHDRAWAL_ACCOUNT_NOT_LIVE', 'Withdrawal account is not active or verified'],
    ] as const)('%s: %s is 400 %s', (operation, code, message) => {
      expect(v2Body(code, operation)).toEqual({ status: 400, body: { status: 'error', message } });
    });

    it.each([
      ['generate_quote', 'Error while creating a quote, please try again later'],
      ['trade/reverse-quote', 'Something went wrong, please try again later'],
    ] as const)('%s: INTERNAL_ERROR is 500 %s', (operation, message) => {
      expect(v2Body('INTERNAL_ERROR', operation)).toEqual({ status: 500, body: { status: 'error', message } });
    });

    it.each(['trade/reverse', 'trade/reverse-quote', 'trade/settle'] as const)(
      '%s: TRADE_NOT_FOUND is 404 Trade not found',
      (operation) => {
        expect(v2Body('TRADE_NOT_FOUND', operation)).toEqual({
          status: 404,
          body: { status: 'error', message: 'Trade not found' },
        });
      },
    );

    it('trade/reverse: an unresolvable quoteId is 404 Trade not found too', () => {
      expect(v2Body('QUOTE_NOT_FOUND', 'trade/reverse')).toEqual({
        status: 404,
        body: { status: 'error', message: 'Trade not found' },
      });
      expect(v2Body('REVERSE_QUOTE_INVALID', 'trade/reverse')).toEqual({
        status: 404,
        body: { status: 'error', message: 'Trade not found' },
      });
    });

    it.each([
      'TRADE_NOT_REVERSIBLE',
      'TRADE_ALREADY_REVERSED',
      'TRADE_ALREADY_SETTLED',
      'TRADE_REVERSAL_WINDOW_CLOSED',
    ])(
      'trade/reverse: %s (outside the window, already reversed or settled) is 409 The trade cannot be reversed',
      (code) => {
        expect(v2Body(code, 'trade/reverse')).toEqual({
          status: 409,
          body: { status: 'error', message: 'The trade cannot be reversed' },
        });
      },
    );

    it.each(['TRADE_NOT_SETTLEABLE', 'TRADE_ALREADY_SETTLED', 'TRADE_ALREADY_REVERSED', 'TRADE_SETTLEMENT_UNFUNDED'])(
      'trade/settle: %s is 409 The trade cannot be settled',
      (code) => {
        expect(v2Body(code, 'trade/settle')).toEqual({
          status: 409,
          body: { status: 'error', message: 'The trade cannot be settled (not in a settleable state)' },
        });
      },
    );
  });

  describe('legacy statuses stay legacy', () => {
    it.each([
      ['IDEMPOTENCY_KEY_MISSING', 428],
      ['TRADE_NOT_FOUND', 404],
      ['QUOTE_NOT_FOUND', 404],
      ['DEPOSIT_NOT_FOUND', 404],
      ['WITHDRAWAL_NOT_FOUND', 404],
      ['WITHDRAWAL_ADDRESS_NOT_FOUND', 404],
      ['WITHDRAWAL_INSUFFICIENT_BALANCE', 409],
      ['WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', 422],
      ['WITHDRAWAL_ADDRESS_NOT_VERIFIED', 409],
    ] as const)('%s is 400 in v2 where v3 says %i', (code, v3Status) => {
      expect(ERROR_CATALOG[code].status).toBe(v3Status);
      expect(v2Body(code).status).toBe(400);
    });

    it('IDEMPOTENCY_UNAVAILABLE keeps its v2 name IDEMPOTENCY_SERVICE_UNAVAILABLE', () => {
      expect(v2Body('IDEMPOTENCY_UNAVAILABLE').body.error?.code).toBe('IDEMPOTENCY_SERVICE_UNAVAILABLE');
    });
  });
});

describe("the v1 documentation's rows", () => {
  it.each([
    'VALIDATION_BODY_FAILED',
    'VALIDATION_QUERY_FAILED',
    'VALIDATION_HEADER_FAILED',
    'VALIDATION_CONTENT_TYPE',
    'VALIDATION_PAYLOAD_TOO_LARGE',
  ])('%s is 400 Query validation failed', (code) => {
    expect(v1Body(code)).toEqual({ status: 400, body: { status: 'error', message: VALIDATION } });
  });

  it.each([
    'AUTH_TOKEN_MISSING',
    'AUTH_TOKEN_INVALID',
    'AUTH_TOKEN_EXPIRED',
    'AUTH_TOKEN_INVALID_CONFIG',
    'AUTH_API_KEY_MISSING',
    'AUTH_API_KEY_INVALID',
  ])('%s is 401 with the v2 authorization message', (code) => {
    expect(v1Body(code)).toEqual({ status: 401, body: { status: 'error', message: AUTH } });
  });

  it.each(['INTERNAL_ERROR', 'TRADE_EXECUTION_FAILED', 'SERVICE_UNAVAILABLE'])(
    '%s is 500 An internal error has occurred',
    (code) => {
      expect(v1Body(code)).toEqual({ status: 500, body: { status: 'error', message: INTERNAL } });
    },
  );

  it('a missing trade is the v1 400 (v1 has no 404), on trade/{id} too', () => {
    expect(v1Body('TRADE_NOT_FOUND')).toEqual({ status: 400, body: { status: 'error', message: 'Trade not found' } });
    expect(v1Body('TRADE_NOT_FOUND', 'trade/{id}')).toEqual({
      status: 400,
      body: { status: 'error', message: 'Trade not found' },
    });
  });
});

describe('resolving codes the catalog does not know', () => {
  it('goes by the v3 type', () => {
    expect(resolveLegacyError(v2, { code: 'SOMETHING_NEW', type: 'NOT_FOUND' })).toEqual({
      status: 400,
      message: 'Not found',
    });
    expect(resolveLegacyError(v2, { code: 'SOMETHING_NEW', type: 'AUTHENTICATION_ERROR' })).toEqual({
      status: 401,
      message: AUTH,
    });
    expect(resolveLegacyError(v1, { code: 'SOMETHING_NEW', type: 'CONFLICT' }).status).toBe(400);
    expect(resolveLegacyError(v2, { code: 'SOMETHING_NEW', type: 'CONFLICT' }).status).toBe(409);
  });

  it('treats an unknown or missing type as INTERNAL_ERROR', () => {
    expect(resolveLegacyError(v2, { code: 'SOMETHING_NEW', type: 'BRAND_NEW_TYPE' })).toEqual({
      status: 500,
      message: INTERNAL,
    });
    expect(resolveLegacyError(v1, { code: 'SOMETHING_NEW' })).toEqual({ status: 500, message: INTERNAL });
  });

  it('answers only status, message and error, never the documentation fields', () => {
    expect(resolveLegacyError(v2, { code: 'TRADE_NOT_FOUND' })).toEqual({ status: 400, message: 'Trade not found' });
  });
});

describe('the load-time validator', () => {
  const clone = <T>(value: T): T => structuredClone(value);

  it('rejects a table missing a code, naming it', () => {
    const byCode: Record<string, unknown> = clone(V2_ERRORS);
    delete byCode.TRADE_NOT_FOUND;
    const error = mappingError(() => validateErrorTables('v2', { byCode, byType: V2_ERRORS_BY_TYPE }));
    expect(error.problems).toEqual(['byCode: no row for v3 error code TRADE_NOT_FOUND']);
    expect(error.message).toContain('mappings/errors.v2');
    expect(error.message).toContain('TRADE_NOT_FOUND');
  });

  it('rejects a table with an unknown code', () => {
    const byCode = {
      ...clone(v1.byCode),
      NOT_A_V3_CODE: { status: 400, message: VALIDATION, basis: 'closest', note: 'x' },
    };
    const error = mappingError(() => validateErrorTables('v1', { byCode, byType: v1.byType }));
    expect(error.problems).toEqual(['byCode.NOT_A_V3_CODE: not a v3 error code (unknown key)']);
  });

  it('checks against the catalog it is given', () => {
    const codes = [...ERROR_CODES, 'A_CODE_FROM_A_NEWER_CATALOG'];
    const error = mappingError(() => validateErrorTables('v2', V2_ERROR_TABLES, 'mappings/errors.v2', codes));
    expect(error.problems).toEqual(['byCode: no row for v3 error code A_CODE_FROM_A_NEWER_CATALOG']);
  });

  it('rejects a status the generation does not have', () => {
    const v1Tables = clone(v1) as unknown as { byCode: Record<string, { status: number }> };
    v1Tables.byCode.TRADE_NOT_FOUND!.status = 404;
    expect(mappingError(() => validateErrorTables('v1', v1Tables)).problems).toEqual([
      expect.stringMatching(/^byCode\.TRADE_NOT_FOUND\.status: must be one of v1's statuses/),
    ]);
    const v2Tables = clone(V2_ERROR_TABLES) as unknown as { byCode: Record<string, { status: number }> };
    v2Tables.byCode.AUTH_FORBIDDEN_IP!.status = 403;
    expect(mappingError(() => validateErrorTables('v2', v2Tables)).problems).toEqual([
      expect.stringMatching(/^byCode\.AUTH_FORBIDDEN_IP\.status: must be one of v2's statuses/),
    ]);
  });

  it('rejects empty messages, notes and details', () => {
    const tables = clone(V2_ERROR_TABLES) as unknown as {
      byCode: Record<string, Record<string, unknown>>;
      byType: Record<string, Record<string, unknown>>;
    };
    tables.byCode.INTERNAL_ERROR!.message = '  ';
    tables.byCode.RATE_LIMIT_EXCEEDED!.note = '';
    (tables.byCode.IDEMPOTENCY_MISMATCH!.error as Record<string, unknown>).details = '';
    tables.byType.NOT_FOUND!.message = '';
    expect([...mappingError(() => validateErrorTables('v2', tables)).problems].sort()).toEqual(
      [
        'byCode.IDEMPOTENCY_MISMATCH.error.details: must not be empty',
        'byCode.INTERNAL_ERROR.message: must not be empty',
        'byCode.RATE_LIMIT_EXCEEDED.note: must not be empty',
        'byType.NOT_FOUND.message: must not be empty',
      ].sort(),
    );
  });

  it('rejects unknown fields and operations the generation does not have', () => {
    const v1Tables = clone(v1) as unknown as { byCode: Record<string, Record<string, unknown>> };
    v1Tables.byCode.INTERNAL_ERROR!.retry = true;
    v1Tables.byCode.TRADE_NOT_FOUND!.byOperation = { 'trade/reverse': { status: 400, message: 'x' } };
    const problems = mappingError(() => validateErrorTables('v1', v1Tables)).problems.join('\n');
    expect(problems).toContain('byCode.INTERNAL_ERROR');
    expect(problems).toContain('retry');
    expect(problems).toContain('byCode.TRADE_NOT_FOUND.byOperation');
    expect(problems).toContain('trade/reverse');
  });

  it('takes a v1 error.code, but 409 and 422 on v1 only with one, and each code only with its status', () => {
    const v1Tables = clone(v1) as unknown as {
      byCode: Record<string, Record<string, unknown>>;
      byType: Record<string, Record<string, unknown>>;
    };
    v1Tables.byCode.TRADE_NOT_REVERSIBLE!.status = 409;
    v1Tables.byCode.QUOTE_AMOUNT_OUT_OF_RANGE!.byOperation = { generate_quote: { status: 422, message: 'x' } };
    v1Tables.byType.CONFLICT!.status = 409;
    v1Tables.byCode.SERVICE_UNAVAILABLE!.error = { code: 'IDEMPOTENCY_SERVICE_UNAVAILABLE', details: 'x' };
    expect(mappingError(() => validateErrorTables('v1', v1Tables)).problems).toEqual([
      'byCode.TRADE_NOT_REVERSIBLE: v1 answers 409 only with an idempotency error.code (IDEMPOTENCY_IN_FLIGHT)',
      'byCode.QUOTE_AMOUNT_OUT_OF_RANGE.byOperation.generate_quote: v1 answers 422 only with an idempotency error.code (IDEMPOTENCY_MISMATCH)',
      'byCode.SERVICE_UNAVAILABLE: error.code IDEMPOTENCY_SERVICE_UNAVAILABLE goes with status 503, not 500',
      'byType.CONFLICT: v1 answers 409 only with an idempotency error.code (IDEMPOTENCY_IN_FLIGHT)',
    ]);
  });

  it('rejects a v2 error.code under a status it never comes with', () => {
    const tables = clone(V2_ERROR_TABLES) as unknown as { byCode: Record<string, Record<string, unknown>> };
    tables.byCode.IDEMPOTENCY_IN_FLIGHT!.status = 400;
    tables.byCode.INTERNAL_ERROR!.byOperation = {
      generate_quote: { status: 500, message: 'x', error: { code: 'IDEMPOTENCY_MISMATCH', details: 'y' } },
    };
    expect(mappingError(() => validateErrorTables('v2', tables)).problems).toEqual([
      'byCode.IDEMPOTENCY_IN_FLIGHT: error.code IDEMPOTENCY_IN_FLIGHT goes with status 409, not 400',
      'byCode.INTERNAL_ERROR.byOperation.generate_quote: error.code IDEMPOTENCY_MISMATCH goes with status 422, not 500',
    ]);
  });

  it('rejects a missing type fallback and input that is no table at all', () => {
    const byType: Record<string, unknown> = clone(V2_ERRORS_BY_TYPE);
    delete byType.RATE_LIMITED;
    expect(mappingError(() => validateErrorTables('v2', { byCode: V2_ERRORS, byType })).problems).toEqual([
      'byType: no row for v3 error type RATE_LIMITED',
    ]);
    expect(() => validateErrorTables('v2', undefined)).toThrow(LegacyMappingError);
    expect(() => validateErrorTables('v2', { byCode: V2_ERRORS })).toThrow(LegacyMappingError);
  });

  it('reports every problem at once', () => {
    const byCode: Record<string, unknown> = clone(v1.byCode);
    delete byCode.INTERNAL_ERROR;
    delete byCode.TRADE_NOT_FOUND;
    byCode.EXTRA = {};
    expect(mappingError(() => validateErrorTables('v1', { byCode, byType: v1.byType })).problems).toHaveLength(3);
  });
});

/**
 * v1's answers as they were when v1 was its own table of 62 rows, before it was declared as
 * changes from v2: status and message of each code and type fallback, frozen here so the change
 * of form is proven not to change what v1 clients get, except where that was the point.
 */
const TODAYS_V1_BY_CODE: Readonly<Record<ErrorCode, readonly [number, string]>> = {
  VALIDATION_BODY_FAILED: [400, VALIDATION],
  VALIDATION_QUERY_FAILED: [400, VALIDATION],
  VALIDATION_HEADER_FAILED: [400, VALIDATION],
  VALIDATION_CONTENT_TYPE: [400, VALIDATION],
  IDEMPOTENCY_KEY_INVALID: [500, INTERNAL],
  WITHDRAWAL_CURRENCY_NOT_SUPPORTED: [400, 'Withdrawals are not supported for this currency'],
  AUTH_TOKEN_MISSING: [401, AUTH],
  AUTH_TOKEN_INVALID: [401, AUTH],
  AUTH_TOKEN_EXPIRED: [401, AUTH],
  AUTH_TOKEN_INVALID_CONFIG: [401, AUTH],
  AUTH_API_KEY_MISSING: [401, AUTH],
  AUTH_API_KEY_INVALID: [401, AUTH],
  AUTH_API_KEY_SANDBOX_REQUIRED: [401, AUTH],
  AUTH_API_KEY_LIVE_REQUIRED: [401, AUTH],
  SANDBOX_MODE_REQUIRED: [401, AUTH],
  AUTH_FORBIDDEN_IP: [401, AUTH],
  AUTH_INSUFFICIENT_SCOPE: [401, AUTH],
  FEATURE_NOT_ENABLED: [400, 'This feature is not enabled for your organization'],
  TRADE_DISABLED: [400, 'Trading is disabled for your organization'],
  TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT: [400, 'This currency is not enabled for trading on your account'],
  TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT: [400, 'This currency pair is not enabled for trading on your account'],
  WITHDRAWAL_ACCOUNT_NOT_LIVE: [400, 'Withdrawal address is not active or verified'],
  WITHDRAWAL_DISABLED_FOR_ACCOUNT: [400, 'Withdrawal address is not active or verified'],
  ROUTE_NOT_FOUND: [400, 'Route not found'],
  TRADE_NOT_FOUND: [400, 'Trade not found'],
  QUOTE_NOT_FOUND: [400, 'Quote not found'],
  DEPOSIT_NOT_FOUND: [400, 'Deposit not found'],
  WITHDRAWAL_NOT_FOUND: [400, 'Withdrawal not found'],
  WITHDRAWAL_ADDRESS_NOT_FOUND: [400, 'Withdrawal address not found'],
  WEBHOOK_ENDPOINT_NOT_FOUND: [500, INTERNAL],
  METHOD_NOT_ALLOWED: [400, 'Route not found'],
  IDEMPOTENCY_IN_FLIGHT: [500, INTERNAL],
  WITHDRAWAL_INSUFFICIENT_BALANCE: [400, 'Insufficient balance for this withdraw.'],
  WITHDRAWAL_ADDRESS_NOT_VERIFIED: [400, 'Withdrawal address is not active or verified'],
  WITHDRAWAL_PENDING_DEPOSIT_REQUIRED: [400, 'Insufficient balance for this withdraw.'],
  WITHDRAWAL_INVALID_STATE_TRANSITION: [500, INTERNAL],
  QUOTE_EXPIRED: [400, 'Quote has expired, please request a new quote'],
  QUOTE_ALREADY_USED: [400, 'Quote has already been used'],
  TRADE_CREDIT_LIMIT_EXCEEDED: [400, 'Insufficient credit limit for this trade'],
  TRADE_NOT_REVERSIBLE: [400, 'The trade cannot be reversed'],
  TRADE_ALREADY_REVERSED: [400, 'The trade cannot be reversed'],
  TRADE_ALREADY_SETTLED: [400, 'The trade cannot be settled (not in a settleable state)'],
  TRADE_REVERSAL_WINDOW_CLOSED: [400, 'The trade cannot be reversed'],
  TRADE_NOT_SETTLEABLE: [400, 'The trade cannot be settled (not in a settleable state)'],
  TRADE_SETTLEMENT_UNFUNDED: [400, 'The trade cannot be settled (not in a settleable state)'],
  VALIDATION_PAYLOAD_TOO_LARGE: [400, VALIDATION],
  IDEMPOTENCY_MISMATCH: [500, INTERNAL],
  WITHDRAWAL_INVALID_AMOUNT_PRECISION: [400, VALIDATION],
  WITHDRAWAL_ADDRESS_CHECKSUM_FAILED: [400, 'Checksum verification failed for withdrawal address'],
  WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH: [400, 'Currency does not match the withdrawal address'],
  PAIR_NOT_SUPPORTED: [400, 'This currency pair is not supported'],
  QUOTE_AMOUNT_OUT_OF_RANGE: [400, 'Amount is outside the limits for this currency pair'],
  QUOTE_INVALID_AMOUNT_PRECISION: [400, VALIDATION],
  REVERSE_QUOTE_INVALID: [400, 'The quote is not a reverse quote for this trade'],
  WEBHOOK_URL_INVALID: [500, INTERNAL],
  IDEMPOTENCY_KEY_MISSING: [500, INTERNAL],
  RATE_LIMIT_EXCEEDED: [429, 'Too many requests, please try again later'],
  INTERNAL_ERROR: [500, INTERNAL],
  TRADE_EXECUTION_FAILED: [500, INTERNAL],
  WITHDRAWAL_INITIATION_FAILED: [500, INTERNAL],
  IDEMPOTENCY_UNAVAILABLE: [500, INTERNAL],
  SERVICE_UNAVAILABLE: [500, INTERNAL],
  // Added with the HTTP server's codes, after v1 was declared as changes: v2's answers under the rule.
  REQUEST_MALFORMED: [400, VALIDATION],
  REQUEST_TIMEOUT: [500, 'The request did not arrive in time, please try again'],
  REQUEST_HEADERS_TOO_LARGE: [400, VALIDATION],
};
const TODAYS_V1_BY_TYPE: Readonly<Record<string, readonly [number, string]>> = {
  VALIDATION_ERROR: [400, VALIDATION],
  AUTHENTICATION_ERROR: [401, AUTH],
  AUTHORIZATION_ERROR: [400, 'This operation is not allowed for your account'],
  NOT_FOUND: [400, 'Not found'],
  CONFLICT: [400, 'The request conflicts with the current state, please check and try again'],
  RATE_LIMITED: [429, 'Too many requests, please try again later'],
  INTERNAL_ERROR: [500, INTERNAL],
};

describe('v1 as changes from v2', () => {
  const IDEMPOTENCY_KEPT = ['IDEMPOTENCY_KEY_INVALID', 'IDEMPOTENCY_IN_FLIGHT', 'IDEMPOTENCY_MISMATCH'] as const;
  /** v2's fiat_withdrawal wording ("account"), which v1 takes now that it withdraws. */
  const FIAT_ACCOUNT_WORDING = [
    'WITHDRAWAL_ACCOUNT_NOT_LIVE',
    'WITHDRAWAL_DISABLED_FOR_ACCOUNT',
    'WITHDRAWAL_ADDRESS_NOT_FOUND',
    'WITHDRAWAL_ADDRESS_NOT_VERIFIED',
    'WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH',
  ];

  it("answers as v1's own table did, for every code on every v1 operation, except the idempotency codes and fiat_withdrawal's account wording", () => {
    const changed: string[] = [];
    for (const code of ERROR_CODES) {
      const [status, message] = TODAYS_V1_BY_CODE[code];
      for (const operation of [undefined, ...V1_OPERATIONS]) {
        const answer = resolveLegacyError(v1, { code }, operation);
        if (answer.status !== status || answer.message !== message)
          changed.push(`${code}${operation === undefined ? '' : ` on ${operation}`}`);
      }
    }
    const expected = [
      ...IDEMPOTENCY_KEPT.flatMap((code) => [code, ...V1_OPERATIONS.map((operation) => `${code} on ${operation}`)]),
      ...FIAT_ACCOUNT_WORDING.map((code) => `${code} on fiat_withdrawal`),
    ];
    expect(changed.sort()).toEqual(expected.sort());
    for (const type of ERROR_TYPES) {
      expect([v1.byType[type].status, v1.byType[type].message]).toEqual(TODAYS_V1_BY_TYPE[type]);
    }
  });

  it('the status rule maps exactly the v2 statuses v1 lacks, each to one v1 has, with a reason', () => {
    expect([...V1_LACKED_STATUSES]).toEqual(
      V2_ERROR_STATUSES.filter((status) => !(V1_BASE_STATUSES as readonly number[]).includes(status)),
    );
    const downgrades = changesOf('status-downgraded');
    expect(downgrades.map((change) => change.from).sort()).toEqual([...V1_LACKED_STATUSES]);
    expect(Object.fromEntries(downgrades.map((change) => [change.from, change.to]))).toEqual({
      404: 400,
      409: 400,
      422: 400,
      503: 500,
    });
  });

  it('every changed answer is a real difference, and every other row is v2 under the rule', () => {
    expect(() => applyV1ErrorChanges(v2, V1_ERROR_CHANGES)).not.toThrow();
    const changed: readonly string[] = changesOf('error-answer-changed').map((change) => change.code);
    expect([...changed].sort()).toEqual([
      'IDEMPOTENCY_KEY_MISSING',
      'IDEMPOTENCY_UNAVAILABLE',
      'INTERNAL_ERROR',
      'SERVICE_UNAVAILABLE',
      'TRADE_ALREADY_SETTLED',
    ]);
    const rule: Readonly<Record<number, { readonly to: number }>> = Object.fromEntries(
      changesOf('status-downgraded').map((change) => [change.from, change]),
    );
    for (const code of ERROR_CODES) {
      if (changed.includes(code) || (IDEMPOTENCY_KEPT as readonly string[]).includes(code)) continue;
      for (const operation of [undefined, ...V1_OPERATIONS]) {
        const fromV2 = resolveLegacyError(v2, { code }, operation);
        expect(resolveLegacyError(v1, { code }, operation)).toEqual({
          status: rule[fromV2.status]?.to ?? fromV2.status,
          message: fromV2.message,
        });
      }
    }
  });

  it("drops v2's per-operation answers for the operations v1 lacks", () => {
    expect(v1.byCode.TRADE_NOT_FOUND.byOperation).toBeUndefined();
    expect(v1.byCode.QUOTE_NOT_FOUND.byOperation).toBeUndefined();
    expect(v1.byCode.TRADE_ALREADY_REVERSED.byOperation).toBeUndefined();
    for (const code of ERROR_CODES) {
      for (const operation of Object.keys(v1.byCode[code].byOperation ?? {}))
        expect(V1_OPERATIONS).toContain(operation);
    }
  });

  it('keeps the documentation fields: the rule makes a row our choice and says why; an unchanged row is as v2', () => {
    expect(v1.byCode.TRADE_NOT_REVERSIBLE).toMatchObject({
      status: 400,
      basis: 'closest',
      note: expect.stringContaining("a business refusal or not-found is v1's 400"),
    });
    expect(v1.byCode.ROUTE_NOT_FOUND).toMatchObject({
      status: 400,
      basis: 'closest',
      note: expect.stringContaining('v1 has no 404'),
    });
    expect(v1.byCode.AUTH_TOKEN_INVALID).toMatchObject({
      status: 401,
      basis: 'spec',
      note: `As v2: ${V2_ERRORS.AUTH_TOKEN_INVALID.note}`,
    });
    expect(v1.byCode.IDEMPOTENCY_KEY_MISSING).toMatchObject({
      basis: 'closest',
      note: changedOf('IDEMPOTENCY_KEY_MISSING').reason,
    });
  });

  it('the mapping file is pure data: it imports only types', () => {
    const source = readFileSync(new URL('../../../../mappings/errors.v1.ts', import.meta.url), 'utf8');
    const imports = source.split('\n').filter((line) => /^\s*(import|export)\b.*\bfrom\b/.test(line));
    expect(imports.length).toBeGreaterThan(0);
    for (const line of imports) expect(line).toMatch(/^import type /);
  });
});

describe('v1 idempotency: a key-sending v1 client gets v2 answers', () => {
  it.each([
    ['IDEMPOTENCY_KEY_INVALID', 400, 'INVALID_IDEMPOTENCY_KEY'],
    ['IDEMPOTENCY_IN_FLIGHT', 409, 'IDEMPOTENCY_IN_FLIGHT'],
    ['IDEMPOTENCY_MISMATCH', 422, 'IDEMPOTENCY_MISMATCH'],
  ] as const)('%s is %i with code %s, as on v2, on every v1 operation', (code, status, legacyCode) => {
    for (const operation of [undefined, ...V1_OPERATIONS]) {
      const answer = v1Body(code, operation);
      expect(answer).toEqual(v2Body(code, operation));
      expect(answer.status).toBe(status);
      expect(answer.body.error).toEqual({ code: legacyCode, details: expect.any(String) });
    }
  });

  it('a missing key is a gateway defect on v1 (v1 never requires one): the bare 500', () => {
    expect(v1Body('IDEMPOTENCY_KEY_MISSING')).toEqual({ status: 500, body: { status: 'error', message: INTERNAL } });
    expect(v1Body('IDEMPOTENCY_KEY_MISSING', 'trade')).toEqual({
      status: 500,
      body: { status: 'error', message: INTERNAL },
    });
  });

  it('the idempotency (or nonce) store down is the bare 500 on v1, not v2 503 IDEMPOTENCY_SERVICE_UNAVAILABLE', () => {
    expect(v1Body('IDEMPOTENCY_UNAVAILABLE')).toEqual({ status: 500, body: { status: 'error', message: INTERNAL } });
    expect(v1Body('IDEMPOTENCY_UNAVAILABLE', 'withdrawal')).toEqual({
      status: 500,
      body: { status: 'error', message: INTERNAL },
    });
  });
});

describe('the operations v1 now shares with v2', () => {
  it.each([
    [
      'WITHDRAWAL_ACCOUNT_NOT_LIVE',
      'Withdrawal address is not active or verified',
      'Withdrawal account is not active or verified',
    ],
    [
      'WITHDRAWAL_DISABLED_FOR_ACCOUNT',
      'Withdrawal address is not active or verified',
      'Withdrawal account is not active or verified',
    ],
    [
      'WITHDRAWAL_ADDRESS_NOT_VERIFIED',
      'Withdrawal address is not active or verified',
      'Withdrawal account is not active or verified',
    ],
    ['WITHDRAWAL_ADDRESS_NOT_FOUND', 'Withdrawal address not found', 'Withdrawal account not found'],
    [
      'WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH',
      'Currency does not match the withdrawal address',
      'Currency does not match the withdrawal account',
    ],
  ] as const)('%s: v1 withdrawal says %j, fiat_withdrawal %j, as v2', (code, address, account) => {
    expect(v1Body(code, 'withdrawal')).toEqual({ status: 400, body: { status: 'error', message: address } });
    expect(v1Body(code, 'fiat_withdrawal')).toEqual({ status: 400, body: { status: 'error', message: account } });
    expect(v1Body(code, 'fiat_withdrawal')).toEqual(v2Body(code, 'fiat_withdrawal'));
  });

  it.each([
    'WITHDRAWAL_INSUFFICIENT_BALANCE',
    'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED',
    'WITHDRAWAL_CURRENCY_NOT_SUPPORTED',
  ])('%s on a v1 withdrawal is v2 answer (a 400)', (code) => {
    for (const operation of ['withdrawal', 'fiat_withdrawal'] as const) {
      expect(v1Body(code, operation)).toEqual(v2Body(code, operation));
      expect(v1Body(code, operation).status).toBe(400);
    }
  });

  it("trade/{id} with an unknown trade is 400 Trade not found on v2 as on v1: v2's 404 rows are only reverse, reverse-quote and settle", () => {
    expect(v2Body('TRADE_NOT_FOUND', 'trade/{id}')).toEqual({
      status: 400,
      body: { status: 'error', message: 'Trade not found' },
    });
    expect(v1Body('TRADE_NOT_FOUND', 'trade/{id}')).toEqual({
      status: 400,
      body: { status: 'error', message: 'Trade not found' },
    });
    expect(Object.keys(V2_ERRORS.TRADE_NOT_FOUND.byOperation).sort()).toEqual([
      'trade/reverse',
      'trade/reverse-quote',
      'trade/settle',
    ]);
    expect(V2_ERRORS.TRADE_NOT_FOUND.note).toContain('trade/{id}');
  });

  it("generate_quote's 500 is the v1 documentation's message on v1, v2's own on v2", () => {
    expect(v1Body('INTERNAL_ERROR', 'generate_quote')).toEqual({
      status: 500,
      body: { status: 'error', message: INTERNAL },
    });
    expect(v1Body('SERVICE_UNAVAILABLE', 'generate_quote')).toEqual({
      status: 500,
      body: { status: 'error', message: INTERNAL },
    });
    expect(v2Body('INTERNAL_ERROR', 'generate_quote').body.message).toBe(
      'Error while creating a quote, please try again later',
    );
  });
});

describe('the v1 changes validator', () => {
  type Mutable = Record<string, unknown>[];
  const changes = (): Mutable => structuredClone(V1_ERROR_CHANGES) as unknown as Mutable;
  const problems = (value: unknown) => mappingError(() => applyV1ErrorChanges(v2, value)).problems;
  const indexOf = (list: Mutable, kind: string, key: string, value: unknown) =>
    list.findIndex((change) => change.kind === kind && change[key] === value);
  const answerChange = (code: string, status: number, message: string) => ({
    kind: 'error-answer-changed',
    code,
    status,
    message,
    source: 'ours',
    reason: 'x',
  });

  it('refuses a change for a code the catalog does not have, naming it', () => {
    const value = changes();
    value.push(answerChange('NOT_A_V3_CODE', 400, 'x'));
    const error = mappingError(() => applyV1ErrorChanges(v2, value));
    expect(error.problems).toEqual([expect.stringMatching(/^changes\.12\.code: /)]);
    expect(error.message).toContain('mappings/errors.v1');
    const kept = changes();
    kept.push({ kind: 'error-code-kept', code: 'IDEMPOTENCY_SOMETHING', source: 'ours', reason: 'x' });
    expect(problems(kept)).toEqual([expect.stringMatching(/^changes\.12\.code: /)]);
  });

  it('refuses, by shape, a changed answer under a status every v1 answer may not have', () => {
    const value = changes();
    value.push(answerChange('TRADE_NOT_FOUND', 404, 'Trade not found'));
    value[indexOf(value, 'error-answer-changed', 'code', 'SERVICE_UNAVAILABLE')]!.status = 409;
    expect(problems(value)).toEqual([
      'changes.10.status: must be one of the statuses every v1 answer may have: 400, 401, 429, 500',
      'changes.12.status: must be one of the statuses every v1 answer may have: 400, 401, 429, 500',
    ]);
  });

  it('refuses, by shape, an error object or per-operation answers on a changed answer', () => {
    const value = changes();
    value.push({
      ...answerChange('TRADE_NOT_FOUND', 400, 'Trade not found'),
      byOperation: { 'trade/settle': { status: 400, message: 'x' } },
      error: { code: 'IDEMPOTENCY_MISMATCH', details: 'x' },
    });
    const found = problems(value);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^changes\.12: .*"byOperation".*"error"/);
  });

  it('refuses a changed answer that answers as the rule already does', () => {
    const value = changes();
    value.push(answerChange('ROUTE_NOT_FOUND', 400, 'Route not found'));
    expect(problems(value)).toEqual([
      "error-answer-changed ROUTE_NOT_FOUND: answers as v2's row under the status rule does; only differences are changes",
    ]);
  });

  it('refuses a status rule that is missing, twice, unknown or lands on a status v1 lacks', () => {
    const value = changes();
    value.splice(indexOf(value, 'status-downgraded', 'from', 503), 1);
    value.push({ kind: 'status-downgraded', from: 404, to: 400, source: 'ours', reason: 'again' });
    expect(problems(value)).toEqual([
      'changes[11] (status-downgraded 404): 404 is downgraded twice',
      'status-downgraded: no change for 503, a v2 status v1 lacks',
    ]);
    const shape = changes();
    shape[indexOf(shape, 'status-downgraded', 'from', 404)]!.reason = ' ';
    shape[indexOf(shape, 'status-downgraded', 'from', 409)]!.to = 422;
    shape[indexOf(shape, 'status-downgraded', 'from', 422)]!.from = 400;
    expect(problems(shape)).toEqual([
      'changes.0.reason: must not be empty',
      'changes.1.to: must be one of the statuses every v1 answer may have: 400, 401, 429, 500',
      'changes.2.from: must be a v2 status v1 lacks: 404, 409, 422, 503',
    ]);
  });

  it('refuses a v2 idempotency answer v1 neither keeps nor changes, or one it cannot keep', () => {
    const value = changes().filter(
      (change) => change.code !== 'IDEMPOTENCY_KEY_MISSING' && change.code !== 'IDEMPOTENCY_UNAVAILABLE',
    );
    for (const code of ['IDEMPOTENCY_UNAVAILABLE', 'TRADE_NOT_FOUND', 'IDEMPOTENCY_MISMATCH'])
      value.push({ kind: 'error-code-kept', code, source: 'ours', reason: 'x' });
    expect(problems(value)).toEqual([
      'changes[10] (error-code-kept IDEMPOTENCY_UNAVAILABLE): v2 answers IDEMPOTENCY_UNAVAILABLE with 503, a status v1 does not have even with an error.code',
      'changes[11] (error-code-kept TRADE_NOT_FOUND): v2 answers TRADE_NOT_FOUND without an idempotency error.code; only such answers are kept as they are',
      'changes[12] (error-code-kept IDEMPOTENCY_MISMATCH): IDEMPOTENCY_MISMATCH already has a change; a code is either kept from v2 or changed, once',
      'IDEMPOTENCY_KEY_MISSING: v2 answers it with an error.code; declare it error-code-kept or error-answer-changed',
    ]);
  });

  it('refuses a code both kept and changed, a source other than doc or ours, unknown fields, and input that is no list', () => {
    const value = changes();
    value.push(answerChange('IDEMPOTENCY_MISMATCH', 500, INTERNAL));
    expect(problems(value)).toEqual([
      'changes[12] (error-answer-changed IDEMPOTENCY_MISMATCH): IDEMPOTENCY_MISMATCH already has a change; a code is either kept from v2 or changed, once',
    ]);
    const source = changes();
    source[0]!.source = 'client';
    expect(problems(source)).toEqual([expect.stringMatching(/^changes\.0\.source: /)]);
    const field = changes();
    field[indexOf(field, 'error-answer-changed', 'code', 'INTERNAL_ERROR')]!.retry = true;
    expect(problems(field)).toEqual([expect.stringMatching(/^changes\.9: .*"retry"/)]);
    expect(() => applyV1ErrorChanges(v2, undefined)).toThrow(LegacyMappingError);
    expect(() => applyV1ErrorChanges(v2, { statuses: {} })).toThrow(LegacyMappingError);
  });
});

describe('listing the v1 changes for the docs', () => {
  const lines = describeV1ErrorChanges(v2, V1_ERROR_CHANGES);
  const entry = (code: string, operation?: string) =>
    lines.find((line) => line.code === code && line.operation === operation);

  it('lists every code v1 answers differently, the kept idempotency codes, and nothing else', () => {
    expect(
      lines.map((line) => (line.operation === undefined ? line.code : `${line.code} on ${line.operation}`)),
    ).toEqual([
      'IDEMPOTENCY_KEY_INVALID',
      'ROUTE_NOT_FOUND',
      'METHOD_NOT_ALLOWED',
      'IDEMPOTENCY_IN_FLIGHT',
      'TRADE_NOT_REVERSIBLE',
      'TRADE_ALREADY_REVERSED',
      'TRADE_ALREADY_SETTLED',
      'TRADE_REVERSAL_WINDOW_CLOSED',
      'TRADE_NOT_SETTLEABLE',
      'TRADE_SETTLEMENT_UNFUNDED',
      'IDEMPOTENCY_MISMATCH',
      'IDEMPOTENCY_KEY_MISSING',
      'INTERNAL_ERROR on generate_quote',
      'IDEMPOTENCY_UNAVAILABLE',
      'SERVICE_UNAVAILABLE on generate_quote',
      '(new CONFLICT code)',
    ]);
  });

  it('says each v2 answer, v1 answer and reason in words', () => {
    expect(entry('ROUTE_NOT_FOUND')).toEqual({
      code: 'ROUTE_NOT_FOUND',
      operation: undefined,
      v2: '404 Route not found',
      v1: '400 Route not found',
      reason: downgradeOf(404).reason,
    });
    expect(entry('IDEMPOTENCY_UNAVAILABLE')).toEqual({
      code: 'IDEMPOTENCY_UNAVAILABLE',
      operation: undefined,
      v2: '503 Idempotency service is unavailable, please try again later (IDEMPOTENCY_SERVICE_UNAVAILABLE)',
      v1: `500 ${INTERNAL}`,
      reason: changedOf('IDEMPOTENCY_UNAVAILABLE').reason,
    });
    expect(entry('IDEMPOTENCY_IN_FLIGHT')).toMatchObject({
      v2: entry('IDEMPOTENCY_IN_FLIGHT')!.v1,
      reason: changesOf('error-code-kept')[0]!.reason,
    });
    expect(entry('INTERNAL_ERROR', 'generate_quote')).toMatchObject({
      v2: '500 Error while creating a quote, please try again later',
      v1: `500 ${INTERNAL}`,
    });
    expect(entry('(new CONFLICT code)')).toMatchObject({
      v2: expect.stringMatching(/^409 /),
      v1: expect.stringMatching(/^400 /),
      reason: downgradeOf(409).reason,
    });
    for (const line of lines) expect(line.reason.trim()).not.toBe('');
  });

  it('refuses bad changes as applying them does', () => {
    expect(() => describeV1ErrorChanges(v2, [...V1_ERROR_CHANGES, { kind: 'error-code-kept', code: 'NOPE' }])).toThrow(
      LegacyMappingError,
    );
  });
});

describe('the gateway defects the tables declare', () => {
  const DEFECTS = [
    'IDEMPOTENCY_KEY_INVALID',
    'IDEMPOTENCY_KEY_MISSING',
    'METHOD_NOT_ALLOWED',
    'ROUTE_NOT_FOUND',
    'SANDBOX_MODE_REQUIRED',
    'VALIDATION_CONTENT_TYPE',
    'VALIDATION_HEADER_FAILED',
  ];

  it('are the codes v3 can only answer through the gateway’s own fault, each with its reason, on both generations', () => {
    for (const tables of [v2, v1]) {
      expect(ERROR_CODES.filter((code) => isDeclaredDefect(tables, code)).toSorted()).toEqual(DEFECTS);
      for (const code of DEFECTS) expect(tables.byCode[code as ErrorCode].defect).toMatch(/gateway/);
    }
    expect(isDeclaredDefect(v2, 'A_CODE_NEWER_THAN_THE_CATALOG')).toBe(false);
  });

  it('is refused when empty', () => {
    const rows = { ...V2_ERRORS, ROUTE_NOT_FOUND: { ...V2_ERRORS.ROUTE_NOT_FOUND, defect: ' ' } };
    expect(mappingError(() => validateErrorTables('v2', { byCode: rows, byType: V2_ERRORS_BY_TYPE })).problems).toEqual(
      ['byCode.ROUTE_NOT_FOUND.defect: must not be empty'],
    );
  });
});
