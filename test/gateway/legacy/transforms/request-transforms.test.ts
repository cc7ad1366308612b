import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { V1_ENDPOINTS } from '../../../../mappings/endpoints.v1.js';
import { V2_ENDPOINTS } from '../../../../mappings/endpoints.v2.js';
import { parseLegacyJson } from '../../../../src/gateway/legacy/lossless-json.js';
import { REQUEST_TRANSFORMS } from '../../../../src/gateway/legacy/transforms/request-transforms.js';
import type { LegacyGeneration } from '../../../../src/gateway/legacy/operations.js';
import { ApiError } from '../../../../src/lib/errors/api-error.js';
import { PRINCIPAL, UUIDS } from './v3-samples.js';

const TRADE_UUID = UUIDS.trade;
const QUOTE_UUID = UUIDS.quote;
const ACCOUNT_UUID = UUIDS.walletAccount;

function run(name: string, body: unknown, generation: LegacyGeneration = 'v2', operation = 'op') {
  const transform = REQUEST_TRANSFORMS[name];
  if (!transform) throw new Error(`no request transform ${name}`);
  return transform({ generation, operation, body, principal: PRINCIPAL });
}

/** The issues of the VALIDATION_BODY_FAILED the transform must throw. */
function issuesOf(name: string, body: unknown): unknown {
  try {
    run(name, body);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.code).toBe('VALIDATION_BODY_FAILED');
    expect(apiError.statusCode).toBe(400);
    return apiError.details.issues;
  }
  throw new Error(`${name} accepted ${JSON.stringify(body)}`);
}

const REQUIRED = (path: string) => ({ path, code: 'invalid_type', message: 'is required' });
const NOT_A_UUID = (path: string) => ({ path, code: 'invalid_format', message: 'must be a UUID' });
const AMOUNT_FORMAT = { path: 'amount', code: 'invalid_format', message: 'must be a positive decimal number with at most 8 decimals' };
const AMOUNT_ZERO = { path: 'amount', code: 'too_small', message: 'must be greater than zero' };
const AMOUNT_TYPE = { path: 'amount', code: 'invalid_type', message: 'must be a decimal number' };

/** The amount rules shared by every body with an amount. */
function amountCases(name: string, valid: Record<string, unknown>) {
  it.each([
    ['nine decimals', '1.123456789', AMOUNT_FORMAT],
    ['zero', '0', AMOUNT_ZERO],
    ['zero with decimals', '0.00', AMOUNT_ZERO],
    ['negative', '-5', AMOUNT_FORMAT],
    ['exponent text', '1e3', AMOUNT_FORMAT],
    ['empty', '', AMOUNT_FORMAT],
  ])('refuses an amount that is %s', (_label, amount, issue) => {
    expect(issuesOf(name, { ...valid, amount })).toEqual([issue]);
  });

  it('refuses an amount that is not a string (a LosslessNumber, a JS number, null)', () => {
    expect(issuesOf(name, { ...valid, amount: new LosslessNumber('100.5') })).toEqual([AMOUNT_TYPE]);
    expect(issuesOf(name, { ...valid, amount: 100 })).toEqual([AMOUNT_TYPE]);
    expect(issuesOf(name, { ...valid, amount: null })).toEqual([AMOUNT_TYPE]);
  });

  it('refuses a missing amount', () => {
    const { amount: _amount, ...rest } = valid;
    expect(issuesOf(name, rest)).toEqual([REQUIRED('amount')]);
  });

  it('takes exactly 8 decimals and 20 integer digits unchanged', () => {
    expect(run(name, { ...valid, amount: '0.00000001' })).toMatchObject({ [name === 'quoteRequest' ? 'amount' : 'withdrawalAmount']: '0.00000001' });
    expect(run(name, { ...valid, amount: '12345678901234567890.12' })).toMatchObject({
      [name === 'quoteRequest' ? 'amount' : 'withdrawalAmount']: '12345678901234567890.12',
    });
  });
}

function refusesNonObjects(name: string) {
  it.each([[undefined], [null], [[]], ['text'], [42]])('refuses a body that is not an object (%j)', (body) => {
    const issues = issuesOf(name, body) as { path: string; code: string }[];
    expect(issues).toEqual([expect.objectContaining({ path: '', code: 'invalid_type' })]);
  });
}

describe('quoteRequest', () => {
  const valid = { amount: '100.5', buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' };

  it('maps the legacy quote body onto the v3 quote request', () => {
    expect(run('quoteRequest', valid)).toStrictEqual({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.5', amountCurrency: 'EUR' });
    expect(run('quoteRequest', { ...valid, referencedUnit: 'USD', quoteForSeconds: 60 })).toStrictEqual({
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      amount: '100.5',
      amountCurrency: 'USD',
      validForSeconds: 60,
    });
  });

  it('reads a raw legacy body through the lossless reader without losing a digit', () => {
    const body = parseLegacyJson('{"amount":100.50,"buy":"EUR","sell":"USD","referencedUnit":"EUR","quoteForSeconds":15,"extra":1.5}', V1_ENDPOINTS.generate_quote.amounts.request);
    expect(run('quoteRequest', body, 'v1')).toStrictEqual({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.5', amountCurrency: 'EUR', validForSeconds: 15 });
    const tiny = parseLegacyJson('{"amount":1e-9,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}', V2_ENDPOINTS.generate_quote.amounts.request);
    expect(issuesOf('quoteRequest', tiny)).toEqual([AMOUNT_FORMAT]);
    const negativeZero = parseLegacyJson('{"amount":-0,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}', ['amount']);
    expect(issuesOf('quoteRequest', negativeZero)).toEqual([AMOUNT_ZERO]);
  });

  it('ignores unknown legacy fields', () => {
    expect(run('quoteRequest', { ...valid, userId: 'x', side: 'BUY' })).toStrictEqual({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.5', amountCurrency: 'EUR' });
  });

  amountCases('quoteRequest', valid);
  refusesNonObjects('quoteRequest');

  it('refuses missing fields, each by name', () => {
    expect(issuesOf('quoteRequest', {})).toEqual([REQUIRED('amount'), REQUIRED('buy'), REQUIRED('sell'), REQUIRED('referencedUnit')]);
  });

  it('refuses lower-case and malformed currency codes', () => {
    const code = (path: string) => ({ path, code: 'invalid_format', message: 'must be an upper-case currency code such as USD or USDC' });
    expect(issuesOf('quoteRequest', { ...valid, buy: 'eur', referencedUnit: 'eur' })).toEqual([code('buy'), code('referencedUnit')]);
    expect(issuesOf('quoteRequest', { ...valid, sell: 'US' })).toEqual([code('sell')]);
    expect(issuesOf('quoteRequest', { ...valid, sell: 'USDCXX' })).toEqual([code('sell')]);
  });

  it('refuses a referencedUnit that is neither side, and the same currency on both sides', () => {
    expect(issuesOf('quoteRequest', { ...valid, referencedUnit: 'GBP' })).toEqual([
      { path: 'referencedUnit', code: 'invalid_value', message: 'must be the buy or the sell currency' },
    ]);
    expect(issuesOf('quoteRequest', { ...valid, sell: 'EUR' })).toEqual([{ path: 'sell', code: 'same_currency', message: 'must differ from buy' }]);
  });

  it('takes only the v3 quote validities', () => {
    for (const seconds of [3, 15, 30, 45, 60]) expect(run('quoteRequest', { ...valid, quoteForSeconds: seconds })).toMatchObject({ validForSeconds: seconds });
    const notAllowed = { path: 'quoteForSeconds', code: 'invalid_value', message: 'must be one of 3, 15, 30, 45, 60' };
    expect(issuesOf('quoteRequest', { ...valid, quoteForSeconds: 10 })).toEqual([notAllowed]);
    expect(issuesOf('quoteRequest', { ...valid, quoteForSeconds: 0 })).toEqual([notAllowed]);
    expect(issuesOf('quoteRequest', { ...valid, quoteForSeconds: 30.5 })).toEqual([expect.objectContaining({ path: 'quoteForSeconds', code: 'invalid_type' })]);
    // A fractional JSON number arrives as a LosslessNumber: never a number the schema accepts.
    expect(issuesOf('quoteRequest', { ...valid, quoteForSeconds: new LosslessNumber('30.5') })).toEqual([
      { path: 'quoteForSeconds', code: 'invalid_type', message: 'must be a whole number of seconds' },
    ]);
    expect(issuesOf('quoteRequest', { ...valid, quoteForSeconds: '30' })).toEqual([
      { path: 'quoteForSeconds', code: 'invalid_type', message: 'must be a whole number of seconds' },
    ]);
  });
});

describe('tradeRequest', () => {
  it('maps the legacy quote UUID (any case) to the v3 quote id', () => {
    expect(run('tradeRequest', { quoteId: QUOTE_UUID })).toStrictEqual({ quoteId: 'qte_01a207ce7e0e71e781eb30df52f9704b' });
    expect(run('tradeRequest', { quoteId: QUOTE_UUID.toUpperCase(), clientReferenceId: 'inv-7' })).toStrictEqual({
      quoteId: 'qte_01a207ce7e0e71e781eb30df52f9704b',
      clientReferenceId: 'inv-7',
    });
  });

  it('ignores unknown legacy fields', () => {
    expect(run('tradeRequest', { quoteId: QUOTE_UUID, amount: 5 })).toStrictEqual({ quoteId: 'qte_01a207ce7e0e71e781eb30df52f9704b' });
  });

  refusesNonObjects('tradeRequest');

  it('refuses a missing or malformed quoteId', () => {
    expect(issuesOf('tradeRequest', {})).toEqual([REQUIRED('quoteId')]);
    expect(issuesOf('tradeRequest', { quoteId: 'qte_01a207ce7e0e71e781eb30df52f9704b' })).toEqual([NOT_A_UUID('quoteId')]);
    expect(issuesOf('tradeRequest', { quoteId: `${QUOTE_UUID}0` })).toEqual([NOT_A_UUID('quoteId')]);
    expect(issuesOf('tradeRequest', { quoteId: 42 })).toEqual([{ path: 'quoteId', code: 'invalid_type', message: 'must be a UUID' }]);
  });

  it('refuses a clientReferenceId that is empty, too long or not a string', () => {
    expect(issuesOf('tradeRequest', { quoteId: QUOTE_UUID, clientReferenceId: '' })).toEqual([expect.objectContaining({ path: 'clientReferenceId', code: 'too_small' })]);
    expect(issuesOf('tradeRequest', { quoteId: QUOTE_UUID, clientReferenceId: 'x'.repeat(129) })).toEqual([
      expect.objectContaining({ path: 'clientReferenceId', code: 'too_big' }),
    ]);
    expect(run('tradeRequest', { quoteId: QUOTE_UUID, clientReferenceId: 'x'.repeat(128) })).toMatchObject({ clientReferenceId: 'x'.repeat(128) });
    expect(issuesOf('tradeRequest', { quoteId: QUOTE_UUID, clientReferenceId: 7 })).toEqual([
      { path: 'clientReferenceId', code: 'invalid_type', message: 'must be a string' },
    ]);
  });
});

describe('reverseQuoteRequest', () => {
  it('sends no v3 body once the tradeId is a UUID', () => {
    expect(run('reverseQuoteRequest', { tradeId: TRADE_UUID })).toBeNull();
    expect(run('reverseQuoteRequest', { tradeId: TRADE_UUID.toUpperCase(), note: 'x' })).toBeNull();
  });

  refusesNonObjects('reverseQuoteRequest');

  it('refuses a missing or malformed tradeId', () => {
    expect(issuesOf('reverseQuoteRequest', {})).toEqual([REQUIRED('tradeId')]);
    expect(issuesOf('reverseQuoteRequest', { tradeId: 'not-a-uuid' })).toEqual([NOT_A_UUID('tradeId')]);
  });
});

describe('reverseRequest', () => {
  it('sends the reverse quote id (and the client reference) to v3; the trade goes in the path', () => {
    expect(run('reverseRequest', { tradeId: TRADE_UUID, quoteId: UUIDS.reverseQuote })).toStrictEqual({ quoteId: 'qte_01a207ce99007aaa8bbbcccccccccccc' });
    expect(run('reverseRequest', { tradeId: TRADE_UUID, quoteId: UUIDS.reverseQuote, clientReferenceId: 'undo-1' })).toStrictEqual({
      quoteId: 'qte_01a207ce99007aaa8bbbcccccccccccc',
      clientReferenceId: 'undo-1',
    });
  });

  refusesNonObjects('reverseRequest');

  it('refuses missing and malformed ids', () => {
    expect(issuesOf('reverseRequest', {})).toEqual([REQUIRED('tradeId'), REQUIRED('quoteId')]);
    expect(issuesOf('reverseRequest', { tradeId: TRADE_UUID, quoteId: '01a207ce-9900-7aaa-8bbb-ccccccccccc' })).toEqual([NOT_A_UUID('quoteId')]);
    expect(issuesOf('reverseRequest', { tradeId: 'trd_01a207ce808870c9b585a056c085396d', quoteId: UUIDS.reverseQuote })).toEqual([NOT_A_UUID('tradeId')]);
  });

  it('refuses an empty clientReferenceId', () => {
    expect(issuesOf('reverseRequest', { tradeId: TRADE_UUID, quoteId: UUIDS.reverseQuote, clientReferenceId: '' })).toEqual([
      expect.objectContaining({ path: 'clientReferenceId', code: 'too_small' }),
    ]);
  });
});

describe('settleRequest', () => {
  it('sends no v3 body once the tradeId is a UUID', () => {
    expect(run('settleRequest', { tradeId: TRADE_UUID })).toBeNull();
  });

  refusesNonObjects('settleRequest');

  it('refuses a missing or malformed tradeId', () => {
    expect(issuesOf('settleRequest', {})).toEqual([REQUIRED('tradeId')]);
    expect(issuesOf('settleRequest', { tradeId: `{${TRADE_UUID}}` })).toEqual([NOT_A_UUID('tradeId')]);
    expect(issuesOf('settleRequest', { tradeId: null })).toEqual([{ path: 'tradeId', code: 'invalid_type', message: 'must be a UUID' }]);
  });
});

describe('withdrawalRequest', () => {
  const valid = { amount: '12.5', currency: 'USDC', withdrawalAddressId: ACCOUNT_UUID };

  it('maps the legacy withdrawal body onto the v3 withdrawal request', () => {
    expect(run('withdrawalRequest', valid)).toStrictEqual({ withdrawalAccountId: 'wac_01a207ce60007000800000000000ac02', withdrawalAmount: '12.5', currency: 'USDC' });
    expect(run('withdrawalRequest', { ...valid, withdrawalAddressId: ACCOUNT_UUID.toUpperCase() })).toStrictEqual({
      withdrawalAccountId: 'wac_01a207ce60007000800000000000ac02',
      withdrawalAmount: '12.5',
      currency: 'USDC',
    });
  });

  it('reads the raw legacy body of both rails (1e2 is 100)', () => {
    const body = parseLegacyJson(`{"amount":1e2,"currency":"USD","withdrawalAddressId":"${UUIDS.fiatAccount}"}`, V2_ENDPOINTS.fiat_withdrawal.amounts.request);
    expect(run('withdrawalRequest', body)).toStrictEqual({ withdrawalAccountId: 'wac_01a207ce60007000800000000000ac01', withdrawalAmount: '100', currency: 'USD' });
  });

  amountCases('withdrawalRequest', valid);
  refusesNonObjects('withdrawalRequest');

  it('refuses missing fields, a malformed account UUID and a lower-case currency', () => {
    expect(issuesOf('withdrawalRequest', {})).toEqual([REQUIRED('amount'), REQUIRED('currency'), REQUIRED('withdrawalAddressId')]);
    expect(issuesOf('withdrawalRequest', { ...valid, withdrawalAddressId: 'wac_01a207ce60007000800000000000ac02' })).toEqual([NOT_A_UUID('withdrawalAddressId')]);
    expect(issuesOf('withdrawalRequest', { ...valid, currency: 'usdc' })).toEqual([
      { path: 'currency', code: 'invalid_format', message: 'must be an upper-case currency code such as USD or USDC' },
    ]);
  });
});
