/**
 * Legacy JSON without losing a digit: request bodies read with every amount taken from its JSON
 * text as a canonical decimal string (other numbers as safe integers or left exact), and answers
 * written with every LegacyAmount as a JSON number of exactly its digits, any other number a
 * safe integer; whatever cannot be read or written so is a typed error that says where.
 */
import fc from 'fast-check';
import { isLosslessNumber, LosslessNumber, stringify as losslessStringify } from 'lossless-json';
import { describe, expect, it } from 'vitest';

import { parseJsonPath } from '../../../../src/gateway/legacy/declarations/json-paths.js';
import {
  jsonNumberToDecimalString,
  LEGACY_JSON_MAX_DEPTH,
  LegacyAmount,
  parseLegacyJson,
  stringifyLegacyJson,
} from '../../../../src/gateway/legacy/runtime/lossless-json.js';
import {
  JsonPathSyntaxError,
  LegacyJsonParseError,
  LegacyJsonWriteError,
} from '../../../../src/lib/errors/internal-errors.js';
import { Decimal, DECIMAL_PATTERN, formatDecimal } from '../../../../src/lib/money.js';

function parseError(run: () => unknown): LegacyJsonParseError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LegacyJsonParseError);
    return error as LegacyJsonParseError;
  }
  throw new Error('expected a LegacyJsonParseError');
}

function writeError(run: () => unknown): LegacyJsonWriteError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LegacyJsonWriteError);
    return error as LegacyJsonWriteError;
  }
  throw new Error('expected a LegacyJsonWriteError');
}

describe('JSON paths', () => {
  it('parses keys, array elements and object values', () => {
    expect(parseJsonPath('amount')).toEqual([{ kind: 'key', key: 'amount' }]);
    expect(parseJsonPath('data[].amount')).toEqual([
      { kind: 'key', key: 'data' },
      { kind: 'each' },
      { kind: 'key', key: 'amount' },
    ]);
    expect(parseJsonPath('data.balances.*')).toEqual([
      { kind: 'key', key: 'data' },
      { kind: 'key', key: 'balances' },
      { kind: 'values' },
    ]);
    expect(parseJsonPath('rows[][].x')).toEqual([
      { kind: 'key', key: 'rows' },
      { kind: 'each' },
      { kind: 'each' },
      { kind: 'key', key: 'x' },
    ]);
  });

  it.each(['', '.', 'a..b', 'a[', 'a[0]', '1a', 'a b', 'a.*x', 'a.'])('refuses %j', (path) => {
    expect(() => parseJsonPath(path)).toThrow(JsonPathSyntaxError);
  });
});

describe('reading a legacy body', () => {
  it.each([
    ['0.1', '0.1'],
    ['1e-7', '0.0000001'],
    ['12345678901234567890.123456789', '12345678901234567890.123456789'],
    ['-0', '0'],
    ['-0.000', '0'],
    ['1E+3', '1000'],
    ['1.5E-3', '0.0015'],
    ['-12.5e2', '-1250'],
    ['1.50', '1.5'],
    ['0e999999999', '0'],
    ['100', '100'],
    ['123456789012345678901234567890', '123456789012345678901234567890'],
  ])('reads the amount %s as the decimal string %s', (literal, expected) => {
    expect(parseLegacyJson(`{"amount": ${literal}}`, ['amount'])).toEqual({ amount: expected });
  });

  it('converts numbers at every amount path, nested in arrays and maps', () => {
    const text = '{"data":[{"amount":0.1,"n":2},{"amount":1e-8}],"totals":{"USD":10.25,"JPY":1E3},"other":0.5}';
    const body = parseLegacyJson(text, ['data[].amount', 'totals.*']) as Record<string, unknown>;
    expect(body.data).toEqual([{ amount: '0.1', n: 2 }, { amount: '0.00000001' }]);
    expect(body.totals).toEqual({ USD: '10.25', JPY: '1000' });
    // Not an amount path and not a safe integer: left exact, as a LosslessNumber.
    expect(isLosslessNumber(body.other)).toBe(true);
    expect(String(body.other)).toBe('0.5');
  });

  it('makes other numbers JS numbers only when they are exactly safe integers', () => {
    const body = parseLegacyJson(
      '{"quoteForSeconds":30,"alsoThirty":3e1,"big":12345678901234567890,"half":1.5}',
    ) as Record<string, unknown>;
    expect(body.quoteForSeconds).toBe(30);
    expect(body.alsoThirty).toBe(30);
    expect(body.big).toBeInstanceOf(LosslessNumber);
    expect(String(body.big)).toBe('12345678901234567890');
    expect(body.half).toBeInstanceOf(LosslessNumber);
  });

  it('leaves a non-number at an amount path for the request schema to judge', () => {
    expect(parseLegacyJson('{"amount":"12.5"}', ['amount'])).toEqual({ amount: '12.5' });
    expect(parseLegacyJson('{"amount":null}', ['amount'])).toEqual({ amount: null });
    expect(parseLegacyJson('{"other":1}', ['amount'])).toEqual({ other: 1 });
  });

  it('keeps a 20-digit amount unchanged through a read and a write', () => {
    const text = '{"amount":12345678901234567890}';
    const body = parseLegacyJson(text, ['amount']);
    expect(body).toEqual({ amount: '12345678901234567890' });
    expect(stringifyLegacyJson({ amount: new LegacyAmount((body as { amount: string }).amount) })).toBe(text);
  });

  it.each([
    '',
    '{',
    '{"amount": 01}',
    '{"amount": 1.}',
    '{"amount": .5}',
    '{"amount": +1}',
    '{"amount": NaN}',
    '{"amount": Infinity}',
    '{"amount": -Infinity}',
    '[1,]',
    '{"a":1} x',
  ])('refuses malformed JSON %j', (text) => {
    expect(parseError(() => parseLegacyJson(text, ['amount'])).reason).toBe('MALFORMED_JSON');
  });

  it.each<[string, string, string]>([
    ['another value', '{"amount":1,"amount":2}', 'amount'],
    ['the same number written otherwise', '{"amount":1,"amount":1.0}', 'amount'],
    ['the same value', '{"amount":1,"amount":1}', 'amount'],
    ['the same object', '{"a":{"b":1},"a":{"b":1}}', 'a'],
    ['nested, in an array', '{"data":[{"x":1},{"amount":1,"amount":1}]}', 'data[1].amount'],
    ['spelt with an escape', '{"amount":1,"\\u0061mount":1}', 'amount'],
  ])('refuses a key repeated with %s at its path, as v3 does', (_name, text, location) => {
    const error = parseError(() => parseLegacyJson(text, ['amount', 'data[].amount']));
    expect(error.reason).toBe('DUPLICATE_KEY');
    expect(error.location).toBe(location);
  });

  it.each(['1e99999', '1e-99999', '1e64', '1e-65', `1${'0'.repeat(64)}`, `0.${'0'.repeat(64)}1`])(
    'refuses the out-of-range amount %s where it is',
    (literal) => {
      const error = parseError(() => parseLegacyJson(`{"data":[{"amount":${literal}}]}`, ['data[].amount']));
      expect(error.reason).toBe('NUMBER_OUT_OF_RANGE');
      expect(error.location).toBe('data[0].amount');
    },
  );

  it('accepts the largest amounts within the limits', () => {
    expect(parseLegacyJson('{"amount":1e63}', ['amount'])).toEqual({ amount: `1${'0'.repeat(63)}` });
    expect(parseLegacyJson('{"amount":1e-64}', ['amount'])).toEqual({ amount: `0.${'0'.repeat(63)}1` });
  });

  it.each(['Infinity', 'NaN', '-', '1e', '+1', '', ' 1', '0x10', '1_000'])(
    'jsonNumberToDecimalString refuses %j',
    (text) => {
      expect(parseError(() => jsonNumberToDecimalString(text)).reason).toBe('INVALID_NUMBER');
    },
  );

  it('refuses absurd nesting with a typed error, not a stack overflow', () => {
    expect(parseError(() => parseLegacyJson('['.repeat(200_000))).reason).toBe('MALFORMED_JSON');
    const deep = `${'['.repeat(LEGACY_JSON_MAX_DEPTH + 1)}1${']'.repeat(LEGACY_JSON_MAX_DEPTH + 1)}`;
    expect(parseError(() => parseLegacyJson(deep)).reason).toBe('TOO_DEEP');
  });

  it.each(['{"__proto__":{"polluted":true},"amount":1}', '{"a":{"__proto\\u005f_":1}}'])(
    'refuses a __proto__ key, which readers disagree on: %s',
    (text) => {
      const error = parseError(() => parseLegacyJson(text, ['amount']));
      expect(error.reason).toBe('FORBIDDEN_KEY');
      expect(error.location).toBe(text.startsWith('{"a"') ? 'a.__proto__' : '__proto__');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );
});

describe('LegacyAmount', () => {
  it('keeps the decimal text exactly as given, trailing zeros included', () => {
    expect(new LegacyAmount('100.50').digits).toBe('100.50');
    expect(new LegacyAmount('12345678901234567890.10').digits).toBe('12345678901234567890.10');
    expect(new LegacyAmount('-12.50').digits).toBe('-12.50');
    expect(new LegacyAmount('0').digits).toBe('0');
  });

  it('drops only the sign of a negative zero', () => {
    expect(new LegacyAmount('-0').digits).toBe('0');
    expect(new LegacyAmount('-0.00').digits).toBe('0.00');
    expect(new LegacyAmount('-0.01').digits).toBe('-0.01');
  });

  it.each(['1e5', '01', '1.', '.5', '', '+1', ' 1', '1,5', 'NaN', '0x10'])(
    'refuses %j, which is not decimal text',
    (text) => {
      expect(writeError(() => new LegacyAmount(text)).reason).toBe('NOT_A_DECIMAL_STRING');
    },
  );

  it('is its digits as text to JSON.stringify (logs), and a number only to the legacy writer', () => {
    expect(JSON.stringify({ amount: new LegacyAmount('1.10') })).toBe('{"amount":"1.10"}');
    expect(stringifyLegacyJson({ amount: new LegacyAmount('1.10') })).toBe('{"amount":1.10}');
  });
});

describe('writing a legacy body', () => {
  it('writes LegacyAmount values as JSON numbers with exactly their digits, wherever they are', () => {
    const body = {
      status: 'success',
      data: [
        { id: 'a', amount: new LegacyAmount('12345678901234567890.10'), rate: '1.2345' },
        { id: 'b', amount: new LegacyAmount('-0.00'), rate: '2' },
      ],
      balances: { USD: new LegacyAmount('1000000000000000000000'), JPY: new LegacyAmount('0.000000001') },
      limits: [{ 'EUR/GBP': { min: new LegacyAmount('1.00') } }, [new LegacyAmount('-5')]],
      meta: { pagination: { total: 2, page: 1 } },
    };
    expect(stringifyLegacyJson(body)).toBe(
      '{"status":"success","data":[{"id":"a","amount":12345678901234567890.10,"rate":"1.2345"},{"id":"b","amount":0.00,"rate":"2"}],' +
        '"balances":{"USD":1000000000000000000000,"JPY":0.000000001},"limits":[{"EUR/GBP":{"min":1.00}},[-5]],"meta":{"pagination":{"total":2,"page":1}}}',
    );
  });

  it('writes decimal text that is not a LegacyAmount as the string it is', () => {
    expect(stringifyLegacyJson({ amount: '12.50', accountNumber: '000123456789' })).toBe(
      '{"amount":"12.50","accountNumber":"000123456789"}',
    );
  });

  it('writes null and leaves out what is absent', () => {
    expect(stringifyLegacyJson({ amount: null, other: undefined })).toBe('{"amount":null}');
    expect(stringifyLegacyJson([undefined, 'x'])).toBe('[null,"x"]');
  });

  it('escapes strings as JSON does', () => {
    expect(stringifyLegacyJson({ message: 'a "quoted"\nline\u0000' })).toBe(
      JSON.stringify({ message: 'a "quoted"\nline\u0000' }),
    );
  });

  it.each([
    [{ total: 0.1 }, 'UNSAFE_NUMBER'],
    [{ amount: 12.5 }, 'UNSAFE_NUMBER'],
    [{ total: Number.NaN }, 'UNSAFE_NUMBER'],
    [{ total: Number.POSITIVE_INFINITY }, 'UNSAFE_NUMBER'],
    [{ total: 2 ** 53 }, 'UNSAFE_NUMBER'],
    [{ total: 1e21 }, 'UNSAFE_NUMBER'],
    [{ total: 10n }, 'UNSUPPORTED_VALUE'],
    [{ at: new Date(0) }, 'UNSUPPORTED_VALUE'],
    [{ value: new Decimal(1) }, 'UNSUPPORTED_VALUE'],
    [{ value: new LosslessNumber('1') }, 'UNSUPPORTED_VALUE'],
    [{ fn: () => 1 }, 'UNSUPPORTED_VALUE'],
  ] as const)('refuses %o', (body, reason) => {
    expect(writeError(() => stringifyLegacyJson(body)).reason).toBe(reason);
  });

  it('refuses a cycle with a typed error', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(writeError(() => stringifyLegacyJson(cyclic)).reason).toBe('TOO_DEEP');
  });

  it('names where a nested value is wrong', () => {
    const error = writeError(() => stringifyLegacyJson({ data: [{ amount: new LegacyAmount('1') }, { amount: 2.5 }] }));
    expect([error.reason, error.location]).toEqual(['UNSAFE_NUMBER', 'data[1].amount']);
    expect(writeError(() => stringifyLegacyJson({ rows: [[1, 0.5]] })).location).toBe('rows[0][1]');
    expect(writeError(() => stringifyLegacyJson({ totals: { USD: new LegacyAmount('1'), EUR: 0.5 } })).location).toBe(
      'totals.EUR',
    );
  });

  it('writes what JSON.stringify writes when there is no LegacyAmount (property)', () => {
    const safe = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        fc.boolean(),
        fc.constant(null),
        fc.maxSafeInteger(),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(safe, (value) => {
        expect(stringifyLegacyJson(value)).toBe(JSON.stringify(value));
      }),
      { numRuns: 1000 },
    );
  });

  it('writes what lossless-json writes for the same amounts as LosslessNumbers (property)', () => {
    const record = fc.record({
      id: fc.string(),
      amount: fc.option(decimalText, { nil: null }),
      count: fc.maxSafeInteger(),
    });
    const body = fc.record({
      data: fc.array(record, { maxLength: 5 }),
      totals: fc.dictionary(fc.string({ minLength: 1 }), decimalText, { maxKeys: 4 }),
    });
    const asNumber = (text: string) => new LosslessNumber(new Decimal(text).isZero() ? text.replace(/^-/, '') : text);
    fc.assert(
      fc.property(body, (value) => {
        const legacy = {
          data: value.data.map((row) => ({
            ...row,
            amount: row.amount === null ? null : new LegacyAmount(row.amount),
          })),
          totals: Object.fromEntries(Object.entries(value.totals).map(([key, text]) => [key, new LegacyAmount(text)])),
        };
        const oracle = {
          data: value.data.map((row) => ({ ...row, amount: row.amount === null ? null : asNumber(row.amount) })),
          totals: Object.fromEntries(Object.entries(value.totals).map(([key, text]) => [key, asNumber(text)])),
        };
        expect(stringifyLegacyJson(legacy)).toBe(losslessStringify(oracle));
      }),
      { numRuns: 1000 },
    );
  });

  it('does not change the value it was given', () => {
    const body = { data: [{ amount: new LegacyAmount('1.10') }] };
    stringifyLegacyJson(body);
    expect(body).toStrictEqual({ data: [{ amount: new LegacyAmount('1.10') }] });
    expect(body.data[0]!.amount.digits).toBe('1.10');
  });
});

const digit = fc.constantFrom(...'0123456789'.split(''));
const digits = (length: number) =>
  fc.array(digit, { minLength: length, maxLength: length }).map((chars) => chars.join(''));

/** Plain decimal text as v3 writes it: up to 30 digits, up to 18 of them decimals, maybe negative. */
const decimalText = fc.integer({ min: 0, max: 18 }).chain((fractionLength) =>
  fc
    .tuple(
      fc.boolean(),
      fc
        .integer({ min: 1, max: 30 - fractionLength })
        .chain((integerLength) =>
          integerLength === 1
            ? digits(1)
            : fc
                .tuple(fc.constantFrom(...'123456789'.split('')), digits(integerLength - 1))
                .map(([first, rest]) => first + rest),
        ),
      digits(fractionLength),
    )
    .map(([negative, integer, fraction]) => `${negative ? '-' : ''}${integer}${fraction === '' ? '' : `.${fraction}`}`),
);

describe('round trips (property)', () => {
  it('decimal string -> LegacyAmount -> legacy JSON number text -> parse gives the same Decimal', () => {
    fc.assert(
      fc.property(decimalText, (text) => {
        const written = stringifyLegacyJson({ amount: new LegacyAmount(text) });
        const isZero = new Decimal(text).isZero();
        expect(written).toBe(`{"amount":${isZero ? text.replace(/^-/, '') : text}}`);
        const read = (parseLegacyJson(written, ['amount']) as { amount: string }).amount;
        expect(read).toMatch(DECIMAL_PATTERN);
        expect(new Decimal(read).eq(new Decimal(text))).toBe(true);
        expect(read).toBe(formatDecimal(new Decimal(text)));
      }),
      { numRuns: 2000 },
    );
  });

  it('any exponent spelling of up to 30 digits reads as the exact value', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.integer({ min: 1, max: 30 }).chain(digits),
        fc.integer({ min: -30, max: 30 }),
        fc.constantFrom('e', 'E'),
        fc.boolean(),
        (negative, mantissa, exponent, e, plus) => {
          const fraction = mantissa.slice(1);
          const literal = `${negative ? '-' : ''}${mantissa[0]}${fraction === '' ? '' : `.${fraction}`}${e}${exponent >= 0 && plus ? '+' : ''}${exponent}`;
          const expected = new Decimal(`${negative ? '-' : ''}${mantissa}`).shiftedBy(exponent - fraction.length);
          const read = (parseLegacyJson(`{"amount":${literal}}`, ['amount']) as { amount: string }).amount;
          expect(read).toMatch(DECIMAL_PATTERN);
          expect(read).toBe(formatDecimal(expected));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
