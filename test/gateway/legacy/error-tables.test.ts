import { describe, expect, it } from 'vitest';
import { V1_ERRORS, V1_ERRORS_BY_TYPE, V1_ERROR_TABLES } from '../../../mappings/errors.v1.js';
import { V2_ERRORS, V2_ERRORS_BY_TYPE, V2_ERROR_TABLES } from '../../../mappings/errors.v2.js';
import {
  V2_ERROR_STATUSES,
  legacyErrorBody,
  resolveLegacyError,
  validateErrorTables,
} from '../../../src/gateway/legacy/error-tables.js';
import { LegacyMappingError } from '../../../src/gateway/legacy/mapping-error.js';
import { ERROR_CATALOG, ERROR_CODES, ERROR_TYPES } from '../../../src/lib/errors/catalog.js';

const VALIDATION = 'Query validation failed';
const AUTH = 'The authorization key provided is either invalid or expired, please try again';
const INTERNAL = 'An internal error has occurred';

function mappingError(run: () => unknown): LegacyMappingError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LegacyMappingError);
    return error as LegacyMappingError;
  }
  throw new Error('expected a LegacyMappingError');
}

const v2 = validateErrorTables('v2', V2_ERROR_TABLES);
const v1 = validateErrorTables('v1', V1_ERROR_TABLES);
const v2Body = (code: string, operation?: Parameters<typeof resolveLegacyError<'v2'>>[2]) => {
  const answer = resolveLegacyError(v2, { code }, operation);
  return { status: answer.status, body: legacyErrorBody(answer) };
};
const v1Body = (code: string) => {
  const answer = resolveLegacyError(v1, { code });
  return { status: answer.status, body: legacyErrorBody(answer) };
};

describe('every v3 code has a legacy mapping', () => {
  it('the catalog has the 62 codes of the v3 contract', () => {
    expect(ERROR_CODES).toHaveLength(62);
  });

  it.each(ERROR_CODES)('%s has a v1 and a v2 row', (code) => {
    expect(Object.hasOwn(V1_ERRORS, code)).toBe(true);
    expect(Object.hasOwn(V2_ERRORS, code)).toBe(true);
  });

  it('the tables have no other keys', () => {
    expect(Object.keys(V1_ERRORS).sort()).toEqual([...ERROR_CODES].sort());
    expect(Object.keys(V2_ERRORS).sort()).toEqual([...ERROR_CODES].sort());
    expect(Object.keys(V1_ERRORS_BY_TYPE).sort()).toEqual([...ERROR_TYPES].sort());
    expect(Object.keys(V2_ERRORS_BY_TYPE).sort()).toEqual([...ERROR_TYPES].sort());
  });

  it('both shipped tables pass the load-time validator', () => {
    expect(() => validateErrorTables('v1', V1_ERROR_TABLES)).not.toThrow();
    expect(() => validateErrorTables('v2', V2_ERROR_TABLES)).not.toThrow();
  });

  it('every v1 answer is one of 400, 401, 500 (spec 7.6), or 429 for rate limits (spec 8), in the bare envelope', () => {
    for (const code of ERROR_CODES) {
      const { status, body } = v1Body(code);
      expect(code === 'RATE_LIMIT_EXCEEDED' ? [429] : [400, 401, 500]).toContain(status);
      expect(Object.keys(body).sort()).toEqual(['message', 'status']);
    }
  });

  it('every v2 answer has a v2 status, and error.code only for the idempotency cases', () => {
    const withCode = new Set(['IDEMPOTENCY_KEY_MISSING', 'IDEMPOTENCY_KEY_INVALID', 'IDEMPOTENCY_IN_FLIGHT', 'IDEMPOTENCY_MISMATCH', 'IDEMPOTENCY_UNAVAILABLE']);
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

describe('spec 7.5: the v2 rows', () => {
  it.each(['VALIDATION_BODY_FAILED', 'VALIDATION_QUERY_FAILED'])('%s is 400 Query validation failed', (code) => {
    expect(v2Body(code)).toEqual({ status: 400, body: { status: 'error', message: VALIDATION } });
  });

  it.each(['AUTH_TOKEN_MISSING', 'AUTH_TOKEN_INVALID', 'AUTH_TOKEN_EXPIRED', 'AUTH_TOKEN_INVALID_CONFIG', 'AUTH_API_KEY_MISSING', 'AUTH_API_KEY_INVALID'])(
    '%s (bad JWT) is 401 with the authorization message',
    (code) => {
      expect(v2Body(code)).toEqual({ status: 401, body: { status: 'error', message: AUTH } });
    },
  );

  it('409 IDEMPOTENCY_IN_FLIGHT', () => {
    expect(v2Body('IDEMPOTENCY_IN_FLIGHT')).toEqual({
      status: 409,
      body: { status: 'error', message: 'Request with this idempotency key is currently processing', error: { code: 'IDEMPOTENCY_IN_FLIGHT', details: expect.any(String) } },
    });
  });

  it('422 IDEMPOTENCY_MISMATCH', () => {
    expect(v2Body('IDEMPOTENCY_MISMATCH')).toEqual({
      status: 422,
      body: { status: 'error', message: 'Idempotency key reused with different parameters', error: { code: 'IDEMPOTENCY_MISMATCH', details: expect.any(String) } },
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
    expect(answer.body).toEqual({ status: 'error', message: expect.any(String), error: { code: legacyCode, details: expect.any(String) } });
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

    it.each(['trade/reverse', 'trade/reverse-quote', 'trade/settle'] as const)('%s: TRADE_NOT_FOUND is 404 Trade not found', (operation) => {
      expect(v2Body('TRADE_NOT_FOUND', operation)).toEqual({ status: 404, body: { status: 'error', message: 'Trade not found' } });
    });

    it('trade/reverse: an unresolvable quoteId is 404 Trade not found too (4.4)', () => {
      expect(v2Body('QUOTE_NOT_FOUND', 'trade/reverse')).toEqual({ status: 404, body: { status: 'error', message: 'Trade not found' } });
      expect(v2Body('REVERSE_QUOTE_INVALID', 'trade/reverse')).toEqual({ status: 404, body: { status: 'error', message: 'Trade not found' } });
    });

    it.each(['TRADE_NOT_REVERSIBLE', 'TRADE_ALREADY_REVERSED', 'TRADE_ALREADY_SETTLED', 'TRADE_REVERSAL_WINDOW_CLOSED'])(
      'trade/reverse: %s (outside the window, already reversed or settled) is 409 The trade cannot be reversed',
      (code) => {
        expect(v2Body(code, 'trade/reverse')).toEqual({ status: 409, body: { status: 'error', message: 'The trade cannot be reversed' } });
      },
    );

    it.each(['TRADE_NOT_SETTLEABLE', 'TRADE_ALREADY_SETTLED', 'TRADE_ALREADY_REVERSED', 'TRADE_SETTLEMENT_UNFUNDED'])(
      'trade/settle: %s is 409 The trade cannot be settled',
      (code) => {
        expect(v2Body(code, 'trade/settle')).toEqual({ status: 409, body: { status: 'error', message: 'The trade cannot be settled (not in a settleable state)' } });
      },
    );
  });

  describe('spec 9: legacy statuses stay legacy', () => {
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

describe('spec 7.6: the v1 rows', () => {
  it.each(['VALIDATION_BODY_FAILED', 'VALIDATION_QUERY_FAILED', 'VALIDATION_HEADER_FAILED', 'VALIDATION_CONTENT_TYPE', 'VALIDATION_PAYLOAD_TOO_LARGE'])(
    '%s is 400 Query validation failed',
    (code) => {
      expect(v1Body(code)).toEqual({ status: 400, body: { status: 'error', message: VALIDATION } });
    },
  );

  it.each(['AUTH_TOKEN_MISSING', 'AUTH_TOKEN_INVALID', 'AUTH_TOKEN_EXPIRED', 'AUTH_TOKEN_INVALID_CONFIG', 'AUTH_API_KEY_MISSING', 'AUTH_API_KEY_INVALID'])(
    '%s is 401 with the v2 authorization message',
    (code) => {
      expect(v1Body(code)).toEqual({ status: 401, body: { status: 'error', message: AUTH } });
    },
  );

  it.each(['INTERNAL_ERROR', 'TRADE_EXECUTION_FAILED', 'SERVICE_UNAVAILABLE'])('%s is 500 An internal error has occurred', (code) => {
    expect(v1Body(code)).toEqual({ status: 500, body: { status: 'error', message: INTERNAL } });
  });

  it('a missing trade is the v1 400 (v1 has no 404; 4.6)', () => {
    expect(v1Body('TRADE_NOT_FOUND')).toEqual({ status: 400, body: { status: 'error', message: 'Trade not found' } });
  });
});

describe('resolving codes the catalog does not know', () => {
  it('goes by the v3 type', () => {
    expect(resolveLegacyError(v2, { code: 'SOMETHING_NEW', type: 'NOT_FOUND' })).toEqual({ status: 400, message: 'Not found' });
    expect(resolveLegacyError(v2, { code: 'SOMETHING_NEW', type: 'AUTHENTICATION_ERROR' })).toEqual({ status: 401, message: AUTH });
    expect(resolveLegacyError(v1, { code: 'SOMETHING_NEW', type: 'CONFLICT' }).status).toBe(400);
    expect(resolveLegacyError(v2, { code: 'SOMETHING_NEW', type: 'CONFLICT' }).status).toBe(409);
  });

  it('treats an unknown or missing type as INTERNAL_ERROR (spec 7.1)', () => {
    expect(resolveLegacyError(v2, { code: 'SOMETHING_NEW', type: 'BRAND_NEW_TYPE' })).toEqual({ status: 500, message: INTERNAL });
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
    const byCode = { ...clone(V1_ERRORS), NOT_A_V3_CODE: { status: 400, message: VALIDATION, basis: 'closest', note: 'x' } };
    const error = mappingError(() => validateErrorTables('v1', { byCode, byType: V1_ERRORS_BY_TYPE }));
    expect(error.problems).toEqual(['byCode.NOT_A_V3_CODE: not a v3 error code (unknown key)']);
  });

  it('checks against the catalog it is given', () => {
    const codes = [...ERROR_CODES, 'A_CODE_FROM_A_NEWER_CATALOG'];
    const error = mappingError(() => validateErrorTables('v2', V2_ERROR_TABLES, 'mappings/errors.v2', codes));
    expect(error.problems).toEqual(['byCode: no row for v3 error code A_CODE_FROM_A_NEWER_CATALOG']);
  });

  it('rejects a status the generation does not have', () => {
    const v1Tables = clone(V1_ERROR_TABLES) as unknown as { byCode: Record<string, { status: number }> };
    v1Tables.byCode.TRADE_NOT_FOUND!.status = 404;
    expect(mappingError(() => validateErrorTables('v1', v1Tables)).problems).toEqual([expect.stringMatching(/^byCode\.TRADE_NOT_FOUND\.status: must be one of v1's statuses/)]);
    const v2Tables = clone(V2_ERROR_TABLES) as unknown as { byCode: Record<string, { status: number }> };
    v2Tables.byCode.AUTH_FORBIDDEN_IP!.status = 403;
    expect(mappingError(() => validateErrorTables('v2', v2Tables)).problems).toEqual([expect.stringMatching(/^byCode\.AUTH_FORBIDDEN_IP\.status: must be one of v2's statuses/)]);
  });

  it('rejects empty messages, notes and details', () => {
    const tables = clone(V2_ERROR_TABLES) as unknown as { byCode: Record<string, Record<string, unknown>>; byType: Record<string, Record<string, unknown>> };
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

  it('rejects unknown fields, a v2 error body in v1, and unknown operations', () => {
    const v1Tables = clone(V1_ERROR_TABLES) as unknown as { byCode: Record<string, Record<string, unknown>> };
    v1Tables.byCode.INTERNAL_ERROR!.retry = true;
    v1Tables.byCode.IDEMPOTENCY_MISMATCH!.error = { code: 'IDEMPOTENCY_MISMATCH', details: 'x' };
    v1Tables.byCode.TRADE_NOT_FOUND!.byOperation = { 'trade/reverse': { status: 400, message: 'x' } };
    const problems = mappingError(() => validateErrorTables('v1', v1Tables)).problems.join('\n');
    expect(problems).toContain('byCode.INTERNAL_ERROR');
    expect(problems).toContain('retry');
    expect(problems).toContain('byCode.IDEMPOTENCY_MISMATCH');
    expect(problems).toContain('byCode.TRADE_NOT_FOUND.byOperation');
  });

  it('rejects a v2 error.code under a status it never comes with', () => {
    const tables = clone(V2_ERROR_TABLES) as unknown as { byCode: Record<string, Record<string, unknown>> };
    tables.byCode.IDEMPOTENCY_IN_FLIGHT!.status = 400;
    tables.byCode.INTERNAL_ERROR!.byOperation = { generate_quote: { status: 500, message: 'x', error: { code: 'IDEMPOTENCY_MISMATCH', details: 'y' } } };
    expect(mappingError(() => validateErrorTables('v2', tables)).problems).toEqual([
      'byCode.IDEMPOTENCY_IN_FLIGHT: error.code IDEMPOTENCY_IN_FLIGHT goes with status 409, not 400',
      'byCode.INTERNAL_ERROR.byOperation.generate_quote: error.code IDEMPOTENCY_MISMATCH goes with status 422, not 500',
    ]);
  });

  it('rejects a missing type fallback and input that is no table at all', () => {
    const byType: Record<string, unknown> = clone(V2_ERRORS_BY_TYPE);
    delete byType.RATE_LIMITED;
    expect(mappingError(() => validateErrorTables('v2', { byCode: V2_ERRORS, byType })).problems).toEqual(['byType: no row for v3 error type RATE_LIMITED']);
    expect(() => validateErrorTables('v2', undefined)).toThrow(LegacyMappingError);
    expect(() => validateErrorTables('v2', { byCode: V2_ERRORS })).toThrow(LegacyMappingError);
  });

  it('reports every problem at once', () => {
    const byCode: Record<string, unknown> = clone(V1_ERRORS);
    delete byCode.INTERNAL_ERROR;
    delete byCode.TRADE_NOT_FOUND;
    byCode.EXTRA = {};
    expect(mappingError(() => validateErrorTables('v1', { byCode, byType: V1_ERRORS_BY_TYPE })).problems).toHaveLength(3);
  });
});
