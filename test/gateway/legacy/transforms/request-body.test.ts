/**
 * The legacy request bodies as the shipped declarations read them (compileRequest over each
 * endpoint's `request`): the legacy fields become the v3 body under the v3 names, ids become v3
 * ids, amounts stay exact from the JSON text to the v3 body, and anything else is
 * VALIDATION_BODY_FAILED with one issue per problem, in the legacy field names.
 */
import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';

import type { RequestShape } from '../../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import { LEGACY_OPERATIONS } from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import { loadLegacyMappings } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import { parseLegacyJson } from '../../../../src/gateway/legacy/runtime/lossless-json.js';
import {
  compileRequest,
  REQUEST_CHECKS,
  requestAmountPaths,
} from '../../../../src/gateway/legacy/transforms/request-body.js';
import { ApiError } from '../../../../src/lib/errors/api-error.js';
import { UUIDS } from '../v3-contract/v3-samples.js';

const MAPPINGS = await loadLegacyMappings();
type WriteOperation =
  | 'generate_quote'
  | 'trade'
  | 'withdrawal'
  | 'fiat_withdrawal'
  | 'trade/reverse-quote'
  | 'trade/reverse'
  | 'trade/settle';

function requestOf(operation: WriteOperation): RequestShape {
  const request = MAPPINGS.endpoints.v2[operation]!.request;
  if (request === null) throw new Error(`${operation} declares no body`);
  return request;
}

function read(operation: WriteOperation, body: unknown) {
  return compileRequest(requestOf(operation))(body);
}

/** The body as the handler reads it: the raw text through the lossless reader, then the declared reader. */
function readText(operation: WriteOperation, text: string) {
  return read(operation, parseLegacyJson(text, requestAmountPaths(requestOf(operation))));
}

/** The issues of the VALIDATION_BODY_FAILED the reader must throw. */
function issuesOf(operation: WriteOperation, body: unknown): unknown {
  try {
    read(operation, body);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.code).toBe('VALIDATION_BODY_FAILED');
    expect(apiError.statusCode).toBe(400);
    return apiError.details.issues;
  }
  throw new Error(`${operation} accepted ${JSON.stringify(body)}`);
}

const REQUIRED = (path: string) => ({ path, code: 'invalid_type', message: 'is required' });
const NOT_A_UUID = (path: string) => ({ path, code: 'invalid_format', message: 'must be a UUID' });
const CURRENCY_FORMAT = (path: string) => ({
  path,
  code: 'invalid_format',
  message: 'must be an upper-case currency code such as USD or USDC',
});
const AMOUNT_FORMAT = {
  path: 'amount',
  code: 'invalid_format',
  message: 'must be a positive decimal number with at most 8 decimals',
};
const AMOUNT_ZERO = { path: 'amount', code: 'too_small', message: 'must be greater than zero' };
const AMOUNT_TYPE = { path: 'amount', code: 'invalid_type', message: 'must be a decimal number' };

const QUOTE = { amount: '100.5', buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' };
const V3_QUOTE = { amount: '100.5', buyCurrency: 'EUR', sellCurrency: 'USD', amountCurrency: 'EUR' };
const WITHDRAWAL = { amount: '12.5', currency: 'USDC', withdrawalAddressId: UUIDS.walletAccount };
const V3_QUOTE_ID = 'qte_01a207ce7e0e71e781eb30df52f9704b';
const V3_TRADE_ID = 'trd_01a207ce808870c9b585a056c085396d';
const V3_WALLET_ID = 'wac_01a207ce60007000800000000000ac02';

/** The amount rules of every body with an amount. */
function amountCases(operation: WriteOperation, valid: Record<string, unknown>, v3Name: string) {
  it.each([
    ['nine decimals', '1.123456789', AMOUNT_FORMAT],
    ['zero', '0', AMOUNT_ZERO],
    ['zero with decimals', '0.00', AMOUNT_ZERO],
    ['negative', '-5', AMOUNT_FORMAT],
    ['exponent text', '1e3', AMOUNT_FORMAT],
    ['empty', '', AMOUNT_FORMAT],
  ])('refuses an amount that is %s', (_label, amount, issue) => {
    expect(issuesOf(operation, { ...valid, amount })).toEqual([issue]);
  });

  it('refuses an amount that is not decimal text (a LosslessNumber, a JS number, null)', () => {
    expect(issuesOf(operation, { ...valid, amount: new LosslessNumber('100.5') })).toEqual([AMOUNT_TYPE]);
    expect(issuesOf(operation, { ...valid, amount: 100 })).toEqual([AMOUNT_TYPE]);
    expect(issuesOf(operation, { ...valid, amount: null })).toEqual([AMOUNT_TYPE]);
  });

  it('refuses a missing amount', () => {
    const { amount: _amount, ...rest } = valid;
    expect(issuesOf(operation, rest)).toEqual([REQUIRED('amount')]);
  });

  it('takes exactly 8 decimals and 20 integer digits unchanged', () => {
    expect(read(operation, { ...valid, amount: '0.00000001' }).v3Body).toMatchObject({ [v3Name]: '0.00000001' });
    expect(read(operation, { ...valid, amount: '12345678901234567890.12' }).v3Body).toMatchObject({
      [v3Name]: '12345678901234567890.12',
    });
  });

  it('reads JSON numbers from their text, without losing a digit (1e-7, 0.1, 30 digits)', () => {
    const text = (literal: string) =>
      JSON.stringify({ ...valid, amount: 0 }).replace('"amount":0', `"amount":${literal}`);
    expect(readText(operation, text('1e-7')).v3Body).toMatchObject({ [v3Name]: '0.0000001' });
    expect(readText(operation, text('0.1')).v3Body).toMatchObject({ [v3Name]: '0.1' });
    expect(readText(operation, text('123456789012345678901234567890')).v3Body).toMatchObject({
      [v3Name]: '123456789012345678901234567890',
    });
    expect(readText(operation, text('1234567890123456789012.12345678')).v3Body).toMatchObject({
      [v3Name]: '1234567890123456789012.12345678',
    });
    expect(readText(operation, text('1E+2')).v3Body).toMatchObject({ [v3Name]: '100' });
    expect(readText(operation, text('100.50')).v3Body).toMatchObject({ [v3Name]: '100.5' });
  });

  it('refuses zero and negative JSON numbers, and more than 8 decimals however they are spelt', () => {
    const text = (literal: string) =>
      JSON.stringify({ ...valid, amount: 0 }).replace('"amount":0', `"amount":${literal}`);
    const issues = (literal: string) => {
      try {
        readText(operation, text(literal));
      } catch (error) {
        return (error as ApiError).details.issues;
      }
      throw new Error(`accepted ${literal}`);
    };
    expect(issues('0')).toEqual([AMOUNT_ZERO]);
    expect(issues('-0')).toEqual([AMOUNT_ZERO]);
    expect(issues('0.000')).toEqual([AMOUNT_ZERO]);
    expect(issues('-1')).toEqual([AMOUNT_FORMAT]);
    expect(issues('-0.5')).toEqual([AMOUNT_FORMAT]);
    expect(issues('1e-9')).toEqual([AMOUNT_FORMAT]);
    expect(issues('0.123456789')).toEqual([AMOUNT_FORMAT]);
  });
}

function refusesNonObjects(operation: WriteOperation) {
  it.each([[undefined], [null], [[]], ['text'], [42], [true]])('refuses a body that is not an object (%j)', (body) => {
    expect(issuesOf(operation, body)).toEqual([{ path: '', code: 'invalid_type', message: 'must be a JSON object' }]);
  });
}

describe('generate_quote', () => {
  it('maps the legacy quote body onto the v3 quote request, under the v3 names', () => {
    expect(read('generate_quote', QUOTE)).toStrictEqual({ fields: QUOTE, v3Body: V3_QUOTE });
    expect(read('generate_quote', { ...QUOTE, referencedUnit: 'USD', quoteForSeconds: 60 }).v3Body).toStrictEqual({
      ...V3_QUOTE,
      amountCurrency: 'USD',
      validForSeconds: 60,
    });
  });

  it('leaves an optional field that was not sent out of the v3 body, rather than sending null', () => {
    const { v3Body } = read('generate_quote', QUOTE);
    expect(v3Body).not.toHaveProperty('validForSeconds');
    expect(JSON.stringify(v3Body)).not.toContain('null');
  });

  it('reads a raw legacy body through the lossless reader without losing a digit', () => {
    const body = readText(
      'generate_quote',
      '{"amount":100.50,"buy":"EUR","sell":"USD","referencedUnit":"EUR","quoteForSeconds":15,"extra":1.5}',
    );
    expect(body.v3Body).toStrictEqual({ ...V3_QUOTE, validForSeconds: 15 });
  });

  it('ignores unknown legacy fields', () => {
    expect(read('generate_quote', { ...QUOTE, userId: 'x', side: 'BUY' })).toStrictEqual({
      fields: QUOTE,
      v3Body: V3_QUOTE,
    });
  });

  amountCases('generate_quote', QUOTE, 'amount');
  refusesNonObjects('generate_quote');

  it('refuses missing fields, each by name', () => {
    expect(issuesOf('generate_quote', {})).toEqual([
      REQUIRED('amount'),
      REQUIRED('buy'),
      REQUIRED('sell'),
      REQUIRED('referencedUnit'),
    ]);
  });

  it('refuses lower-case and malformed currency codes', () => {
    expect(issuesOf('generate_quote', { ...QUOTE, buy: 'eur', referencedUnit: 'eur' })).toEqual([
      CURRENCY_FORMAT('buy'),
      CURRENCY_FORMAT('referencedUnit'),
    ]);
    expect(issuesOf('generate_quote', { ...QUOTE, sell: 'US' })).toEqual([CURRENCY_FORMAT('sell')]);
    expect(issuesOf('generate_quote', { ...QUOTE, sell: 'USDCXX' })).toEqual([CURRENCY_FORMAT('sell')]);
    expect(issuesOf('generate_quote', { ...QUOTE, sell: 7 })).toEqual([
      { path: 'sell', code: 'invalid_type', message: 'must be a currency code' },
    ]);
  });

  it('runs the declared checks: referencedUnitIsASide and buyDiffersFromSell', () => {
    expect(requestOf('generate_quote').checks).toEqual(['buyDiffersFromSell', 'referencedUnitIsASide']);
    expect(issuesOf('generate_quote', { ...QUOTE, referencedUnit: 'GBP' })).toEqual([
      { path: 'referencedUnit', code: 'invalid_value', message: 'must be the buy or the sell currency' },
    ]);
    expect(issuesOf('generate_quote', { ...QUOTE, sell: 'EUR' })).toEqual([
      { path: 'sell', code: 'same_currency', message: 'must differ from buy' },
    ]);
    expect(issuesOf('generate_quote', { ...QUOTE, sell: 'EUR', referencedUnit: 'GBP' })).toEqual([
      { path: 'sell', code: 'same_currency', message: 'must differ from buy' },
      { path: 'referencedUnit', code: 'invalid_value', message: 'must be the buy or the sell currency' },
    ]);
  });

  it('takes only the v3 quote validities: 3, 15, 30, 45, 60', () => {
    for (const seconds of [3, 15, 30, 45, 60])
      expect(read('generate_quote', { ...QUOTE, quoteForSeconds: seconds }).v3Body).toMatchObject({
        validForSeconds: seconds,
      });
    const notAllowed = { path: 'quoteForSeconds', code: 'invalid_value', message: 'must be one of 3, 15, 30, 45, 60' };
    for (const seconds of [0, 1, 10, 20, 61, 90, -30])
      expect(issuesOf('generate_quote', { ...QUOTE, quoteForSeconds: seconds })).toEqual([notAllowed]);
    const wholeNumber = { path: 'quoteForSeconds', code: 'invalid_type', message: 'must be a whole number' };
    expect(issuesOf('generate_quote', { ...QUOTE, quoteForSeconds: 30.5 })).toEqual([wholeNumber]);
    // A fractional JSON number arrives as a LosslessNumber: never a number the schema accepts.
    expect(issuesOf('generate_quote', { ...QUOTE, quoteForSeconds: new LosslessNumber('30.5') })).toEqual([
      wholeNumber,
    ]);
    expect(issuesOf('generate_quote', { ...QUOTE, quoteForSeconds: '30' })).toEqual([wholeNumber]);
  });
});

describe('trade', () => {
  it('maps the legacy quote UUID (any case) to the v3 quote id', () => {
    expect(read('trade', { quoteId: UUIDS.quote })).toStrictEqual({
      fields: { quoteId: V3_QUOTE_ID },
      v3Body: { quoteId: V3_QUOTE_ID },
    });
    expect(read('trade', { quoteId: UUIDS.quote.toUpperCase(), clientReferenceId: 'inv-7' }).v3Body).toStrictEqual({
      quoteId: V3_QUOTE_ID,
      clientReferenceId: 'inv-7',
    });
  });

  it('ignores unknown legacy fields, and sends no clientReferenceId it was not given', () => {
    expect(read('trade', { quoteId: UUIDS.quote, amount: 5 }).v3Body).toStrictEqual({ quoteId: V3_QUOTE_ID });
  });

  refusesNonObjects('trade');

  it('refuses a missing or malformed quoteId', () => {
    expect(issuesOf('trade', {})).toEqual([REQUIRED('quoteId')]);
    expect(issuesOf('trade', { quoteId: V3_QUOTE_ID })).toEqual([NOT_A_UUID('quoteId')]);
    expect(issuesOf('trade', { quoteId: `${UUIDS.quote}0` })).toEqual([NOT_A_UUID('quoteId')]);
    expect(issuesOf('trade', { quoteId: 42 })).toEqual([
      { path: 'quoteId', code: 'invalid_type', message: 'must be a UUID' },
    ]);
  });

  it('refuses a clientReferenceId that is empty, too long or not a string, each in its own words', () => {
    expect(issuesOf('trade', { quoteId: UUIDS.quote, clientReferenceId: '' })).toEqual([
      { path: 'clientReferenceId', code: 'too_small', message: 'must not be empty' },
    ]);
    expect(issuesOf('trade', { quoteId: UUIDS.quote, clientReferenceId: 'x'.repeat(129) })).toEqual([
      { path: 'clientReferenceId', code: 'too_big', message: 'must be at most 128 characters' },
    ]);
    expect(read('trade', { quoteId: UUIDS.quote, clientReferenceId: 'x'.repeat(128) }).v3Body).toMatchObject({
      clientReferenceId: 'x'.repeat(128),
    });
    expect(issuesOf('trade', { quoteId: UUIDS.quote, clientReferenceId: 7 })).toEqual([
      { path: 'clientReferenceId', code: 'invalid_type', message: 'must be a string' },
    ]);
  });

  it('refuses text v3 cannot store in a declared field (U+0000, a lone surrogate), read from the raw JSON escapes; keeps emoji and controls; ignores undeclared fields', () => {
    for (const [escape, pattern] of [
      ['\\u0000', /NUL/],
      ['\\ud800', /U\+D800/],
      ['\\udfff', /U\+DFFF/],
    ] as const) {
      const text = `{"quoteId":"${UUIDS.quote}","clientReferenceId":"inv${escape}-7"}`;
      expect(() => readText('trade', text)).toThrow(ApiError);
      expect(issuesOf('trade', parseLegacyJson(text, []))).toEqual([
        { path: 'clientReferenceId', code: 'invalid_text', message: expect.stringMatching(pattern) },
      ]);
    }
    // Checked before the schema: a malformed quoteId beside it does not hide it.
    expect(issuesOf('trade', { quoteId: 'nope', clientReferenceId: '\u0000' })).toEqual([
      { path: 'clientReferenceId', code: 'invalid_text', message: expect.stringMatching(/NUL/) },
    ]);
    expect(
      readText(
        'trade',
        `{"quoteId":"${UUIDS.quote}","clientReferenceId":"\\ud83d\\ude00\\t\\u0001","other\\u0000":"\\ud800"}`,
      ).v3Body,
    ).toStrictEqual({
      quoteId: V3_QUOTE_ID,
      clientReferenceId: '😀\t\u0001',
    });
  });
});

describe('trade/reverse-quote and trade/settle', () => {
  it.each(['trade/reverse-quote', 'trade/settle'] as const)(
    '%s: the tradeId read as the v3 trade id for the path, and no v3 body',
    (operation) => {
      expect(read(operation, { tradeId: UUIDS.trade })).toStrictEqual({
        fields: { tradeId: V3_TRADE_ID },
        v3Body: null,
      });
      expect(read(operation, { tradeId: UUIDS.trade.toUpperCase(), note: 'x' })).toStrictEqual({
        fields: { tradeId: V3_TRADE_ID },
        v3Body: null,
      });
    },
  );

  refusesNonObjects('trade/reverse-quote');
  refusesNonObjects('trade/settle');

  it.each(['trade/reverse-quote', 'trade/settle'] as const)(
    '%s: refuses a missing or malformed tradeId',
    (operation) => {
      expect(issuesOf(operation, {})).toEqual([REQUIRED('tradeId')]);
      expect(issuesOf(operation, { tradeId: 'not-a-uuid' })).toEqual([NOT_A_UUID('tradeId')]);
      expect(issuesOf(operation, { tradeId: `{${UUIDS.trade}}` })).toEqual([NOT_A_UUID('tradeId')]);
      expect(issuesOf(operation, { tradeId: null })).toEqual([
        { path: 'tradeId', code: 'invalid_type', message: 'must be a UUID' },
      ]);
    },
  );
});

describe('trade/reverse', () => {
  it('sends the reverse quote id (and the client reference) to v3; the trade id is kept for the path', () => {
    expect(read('trade/reverse', { tradeId: UUIDS.trade, quoteId: UUIDS.reverseQuote })).toStrictEqual({
      fields: { tradeId: V3_TRADE_ID, quoteId: 'qte_01a207ce99007aaa8bbbcccccccccccc' },
      v3Body: { quoteId: 'qte_01a207ce99007aaa8bbbcccccccccccc' },
    });
    expect(
      read('trade/reverse', { tradeId: UUIDS.trade, quoteId: UUIDS.reverseQuote, clientReferenceId: 'undo-1' }).v3Body,
    ).toStrictEqual({
      quoteId: 'qte_01a207ce99007aaa8bbbcccccccccccc',
      clientReferenceId: 'undo-1',
    });
  });

  refusesNonObjects('trade/reverse');

  it('refuses missing and malformed ids', () => {
    expect(issuesOf('trade/reverse', {})).toEqual([REQUIRED('tradeId'), REQUIRED('quoteId')]);
    expect(issuesOf('trade/reverse', { tradeId: UUIDS.trade, quoteId: '01a207ce-9900-7aaa-8bbb-ccccccccccc' })).toEqual(
      [NOT_A_UUID('quoteId')],
    );
    expect(issuesOf('trade/reverse', { tradeId: V3_TRADE_ID, quoteId: UUIDS.reverseQuote })).toEqual([
      NOT_A_UUID('tradeId'),
    ]);
  });

  it('refuses an empty clientReferenceId', () => {
    expect(
      issuesOf('trade/reverse', { tradeId: UUIDS.trade, quoteId: UUIDS.reverseQuote, clientReferenceId: '' }),
    ).toEqual([{ path: 'clientReferenceId', code: 'too_small', message: 'must not be empty' }]);
  });
});

describe.each(['withdrawal', 'fiat_withdrawal'] as const)('%s', (operation) => {
  it('maps the legacy withdrawal body onto the v3 withdrawal request, the account UUID (any case) as its v3 id', () => {
    const v3Body = { withdrawalAmount: '12.5', currency: 'USDC', withdrawalAccountId: V3_WALLET_ID };
    expect(read(operation, WITHDRAWAL).v3Body).toStrictEqual(v3Body);
    expect(
      read(operation, { ...WITHDRAWAL, withdrawalAddressId: UUIDS.walletAccount.toUpperCase() }).v3Body,
    ).toStrictEqual(v3Body);
  });

  it('reads the raw legacy body (1e2 is 100)', () => {
    expect(
      readText(operation, `{"amount":1e2,"currency":"USD","withdrawalAddressId":"${UUIDS.fiatAccount}"}`).v3Body,
    ).toStrictEqual({
      withdrawalAmount: '100',
      currency: 'USD',
      withdrawalAccountId: 'wac_01a207ce60007000800000000000ac01',
    });
  });

  amountCases(operation, WITHDRAWAL, 'withdrawalAmount');
  refusesNonObjects(operation);

  it('refuses missing fields, a malformed account UUID and a lower-case currency', () => {
    expect(issuesOf(operation, {})).toEqual([
      REQUIRED('amount'),
      REQUIRED('currency'),
      REQUIRED('withdrawalAddressId'),
    ]);
    expect(issuesOf(operation, { ...WITHDRAWAL, withdrawalAddressId: V3_WALLET_ID })).toEqual([
      NOT_A_UUID('withdrawalAddressId'),
    ]);
    expect(issuesOf(operation, { ...WITHDRAWAL, currency: 'usdc' })).toEqual([CURRENCY_FORMAT('currency')]);
  });
});

describe('compileRequest over any declaration', () => {
  const field = { source: 'ours', reason: 'test' } as const;

  it('a body of no `to` fields is read and checked, and gives v3Body null', () => {
    const readBody = compileRequest({
      fields: {
        tradeId: { ...field, type: 'id', idKind: 'trade', required: true },
        note: { ...field, type: 'string', required: false },
      },
    });
    expect(readBody({ tradeId: UUIDS.trade, note: 'n' })).toStrictEqual({
      fields: { tradeId: V3_TRADE_ID, note: 'n' },
      v3Body: null,
    });
    expect(() => readBody({ tradeId: UUIDS.trade, note: '' })).toThrow(ApiError);
  });

  it('an optional field left out is left out of the v3 body; one sent is sent under its v3 name', () => {
    const readBody = compileRequest({
      fields: {
        amount: { ...field, type: 'amount', required: true, to: 'amount' },
        memo: { ...field, type: 'string', maxLength: 4, required: false, to: 'v3Memo' },
        seconds: { ...field, type: 'integer', required: false, to: 'v3Seconds' },
      },
    });
    expect(readBody({ amount: '1' }).v3Body).toStrictEqual({ amount: '1' });
    expect(readBody({ amount: '1', memo: 'abcd', seconds: 7 }).v3Body).toStrictEqual({
      amount: '1',
      v3Memo: 'abcd',
      v3Seconds: 7,
    });
    expect(() => readBody({ amount: '1', memo: 'abcde' })).toThrow(ApiError);
  });

  it('an empty field list takes any object and sends no body', () => {
    expect(compileRequest({ fields: {} })({ anything: 1 })).toStrictEqual({ fields: {}, v3Body: null });
  });
});

describe('REQUEST_CHECKS', () => {
  it('buyDiffersFromSell', () => {
    expect(REQUEST_CHECKS.buyDiffersFromSell!({ buy: 'EUR', sell: 'USD' })).toBeNull();
    expect(REQUEST_CHECKS.buyDiffersFromSell!({ buy: 'EUR', sell: 'EUR' })).toEqual({
      path: 'sell',
      code: 'same_currency',
      message: 'must differ from buy',
    });
  });

  it('referencedUnitIsASide', () => {
    expect(REQUEST_CHECKS.referencedUnitIsASide!({ buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' })).toBeNull();
    expect(REQUEST_CHECKS.referencedUnitIsASide!({ buy: 'EUR', sell: 'USD', referencedUnit: 'USD' })).toBeNull();
    expect(REQUEST_CHECKS.referencedUnitIsASide!({ buy: 'EUR', sell: 'USD', referencedUnit: 'GBP' })).toEqual({
      path: 'referencedUnit',
      code: 'invalid_value',
      message: 'must be the buy or the sell currency',
    });
  });

  it('holds exactly the checks the declarations may name', () => {
    expect(Object.keys(REQUEST_CHECKS).sort()).toEqual(['buyDiffersFromSell', 'referencedUnitIsASide']);
  });
});

describe('requestAmountPaths', () => {
  it('names the amount fields, read from the JSON text; none for bodies without one, or no body', () => {
    expect(requestAmountPaths(requestOf('generate_quote'))).toEqual(['amount']);
    expect(requestAmountPaths(requestOf('withdrawal'))).toEqual(['amount']);
    expect(requestAmountPaths(requestOf('trade'))).toEqual([]);
    expect(requestAmountPaths(null)).toEqual([]);
  });
});

describe('v1', () => {
  it("reads every body it shares with v2 by v2's declaration", () => {
    for (const operation of LEGACY_OPERATIONS.v1)
      expect(MAPPINGS.endpoints.v1[operation]!.request).toBe(MAPPINGS.endpoints.v2[operation]!.request);
  });
});
