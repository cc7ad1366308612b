import { describe, expect, it } from 'vitest';

import {
  DEFAULT_USD_PRICES,
  RATE_DECIMALS,
  rateSourceFromConfig,
  StaticRateSource,
} from '../../../src/core/trading/rate-source.js';
import { loadConfig } from '../../../src/lib/config.js';
import { InvalidRateTableError, UnknownCurrencyRateError } from '../../../src/lib/errors/internal-errors.js';
import { Decimal, formatDecimal } from '../../../src/lib/money.js';

const SEEDED = ['USD', 'EUR', 'GBP', 'JPY', 'USDC', 'USDT', 'EURC'];

/** The table's error, or a failure when it did not throw one. */
function tableError(prices: Record<string, unknown>): InvalidRateTableError {
  try {
    new StaticRateSource(prices as Record<string, string>);
  } catch (error) {
    if (error instanceof InvalidRateTableError) return error;
    throw error;
  }
  throw new Error('the table was accepted');
}

describe('StaticRateSource with the built-in prices', () => {
  const source = new StaticRateSource(DEFAULT_USD_PRICES);

  it('prices every seeded currency, and nothing else', async () => {
    expect(Object.keys(DEFAULT_USD_PRICES).sort()).toEqual([...SEEDED].sort());
    expect(source.name).toBe('static');
    expect(formatDecimal(await source.usdPrice('USD'))).toBe('1');
    expect(formatDecimal(await source.usdPrice('JPY'))).toBe('0.0067');
    expect(formatDecimal(await source.usdPrice('EURC'))).toBe('1.08');
    expect(source.prices()).toEqual(DEFAULT_USD_PRICES);
  });

  it.each([
    ['USD', 'JPY', '149.2537313433'], // 1 / 0.0067 = 149.25373134328358..., digit 11 is 5 followed by 8: up
    ['JPY', 'USD', '0.0067'],
    ['JPY', 'USDC', '0.0067'],
    ['EUR', 'USD', '1.08'],
    ['USD', 'EUR', '0.9259259259'], // 0.925925925925...: down
    ['USDC', 'EUR', '0.9259259259'],
    ['GBP', 'EUR', '1.1759259259'],
    ['EUR', 'GBP', '0.8503937008'], // 0.85039370078740...: up
    ['EUR', 'EURC', '1'],
    ['JPY', 'GBP', '0.0052755906'], // 0.0067 / 1.27 = 0.00527559055118...: up
    ['USD', 'USD', '1'],
  ])('midRate(%s, %s) is %s', async (base, quote, expected) => {
    const rate = await source.midRate(base, quote);
    expect(formatDecimal(rate)).toBe(expected);
    expect(rate.decimalPlaces()).toBeLessThanOrEqual(RATE_DECIMALS);
    expect(rate).toBeInstanceOf(Decimal);
  });

  it('throws UnknownCurrencyRateError, with a stable code, for a currency on either side', async () => {
    await expect(source.usdPrice('CHF')).rejects.toThrow(UnknownCurrencyRateError);
    await expect(source.midRate('CHF', 'USD')).rejects.toMatchObject({
      code: 'FXGATE_UNKNOWN_CURRENCY_RATE',
      currency: 'CHF',
    });
    await expect(source.midRate('USD', 'CHF')).rejects.toMatchObject({
      code: 'FXGATE_UNKNOWN_CURRENCY_RATE',
      currency: 'CHF',
    });
    await expect(source.usdPrice('usd')).rejects.toThrow(UnknownCurrencyRateError);
  });
});

describe('midRate rounding', () => {
  it('rounds half-even at the 10th place', async () => {
    const source = new StaticRateSource({ AAA: '1.00000000005', BBB: '1.00000000015', CCC: '1.000000000050000001' });
    expect(formatDecimal(await source.midRate('AAA', 'USD'))).toBe('1');
    expect(formatDecimal(await source.midRate('BBB', 'USD'))).toBe('1.0000000002');
    expect(formatDecimal(await source.midRate('CCC', 'USD'))).toBe('1.0000000001');
  });

  it('rounds once: a quotient just under a tie is not first rounded onto the tie', async () => {
    // 1.5e-10 minus 1e-40: to 36 places it is exactly the tie 1.5e-10, which half-even would then
    // round to 2e-10; rounded once, straight to 10 places, it is 1e-10.
    const price = '0.0000000001499999999999999999999999999999';
    const source = new StaticRateSource({ TIE: price });
    expect(formatDecimal(await source.midRate('TIE', 'USD'))).toBe('0.0000000001');
    expect(formatDecimal(new Decimal(price).div(1).decimalPlaces(RATE_DECIMALS)), 'the naive way rounds twice').toBe(
      '0.0000000002',
    );
  });

  it('keeps huge and tiny prices exact', async () => {
    const source = new StaticRateSource({ BIG: '123456789012345678901234567890', TINY: '0.000000000000000001' });
    expect(formatDecimal(await source.midRate('BIG', 'USD'))).toBe('123456789012345678901234567890');
    expect(formatDecimal(await source.midRate('BIG', 'TINY'))).toBe('123456789012345678901234567890000000000000000000');
    expect(formatDecimal(await source.midRate('TINY', 'USD'))).toBe('0');
  });
});

describe('price table validation', () => {
  it('USD needs no entry and may only be 1', async () => {
    const source = new StaticRateSource({ EUR: '1.1' });
    expect(formatDecimal(await source.usdPrice('USD'))).toBe('1');
    expect(formatDecimal(await source.midRate('EUR', 'USD'))).toBe('1.1');
    expect(() => new StaticRateSource({ USD: '1.000' })).not.toThrow();
    expect(tableError({ USD: '2' }).problems).toEqual(['USD: the USD price of USD is 1, not 2']);
  });

  it.each([
    [{ eur: '1.08' }, '"eur": currency codes are 3 to 5 uppercase letters'],
    [{ EU: '1.08' }, '"EU": currency codes are 3 to 5 uppercase letters'],
    [{ EUROPE: '1.08' }, '"EUROPE": currency codes are 3 to 5 uppercase letters'],
    [{ EUR: 1.08 }, 'EUR: the price must be a decimal string such as "1.08", not a number'],
    [{ EUR: null }, 'EUR: the price must be a decimal string such as "1.08", not a object'],
    [{ EUR: '1e3' }, 'EUR: "1e3" is not a plain decimal such as "1.08"'],
    [{ EUR: '-1.08' }, 'EUR: "-1.08" is not a plain decimal such as "1.08"'],
    [{ EUR: ' 1.08' }, 'EUR: " 1.08" is not a plain decimal such as "1.08"'],
    [{ EUR: '' }, 'EUR: "" is not a plain decimal such as "1.08"'],
    [{ EUR: '01.08' }, 'EUR: "01.08" is not a plain decimal such as "1.08"'],
    [{ EUR: '1.' }, 'EUR: "1." is not a plain decimal such as "1.08"'],
    [{ EUR: '0' }, 'EUR: the price must be positive'],
    [{ EUR: '0.000' }, 'EUR: the price must be positive'],
  ])('refuses %j', (prices, problem) => {
    const error = tableError(prices);
    expect(error.code).toBe('FXGATE_INVALID_RATE_TABLE');
    expect(error.problems).toEqual([problem]);
    expect(error.message).toContain(problem);
  });

  it('reports every problem of a table at once', () => {
    expect(tableError({ EUR: '1.08', gbp: '1', JPY: '0', USD: '3' }).problems).toHaveLength(3);
  });

  it('refuses a table that is not an object', () => {
    expect(() => new StaticRateSource(null as unknown as Record<string, string>)).toThrow(InvalidRateTableError);
    expect(() => new StaticRateSource([] as unknown as Record<string, string>)).toThrow(InvalidRateTableError);
  });
});

describe('replacePrices', () => {
  it('swaps the whole table: currencies left out are no longer priced', async () => {
    const source = new StaticRateSource(DEFAULT_USD_PRICES);
    source.replacePrices({ EUR: '1.2', GBP: '1.5' });
    expect(formatDecimal(await source.midRate('GBP', 'EUR'))).toBe('1.25');
    await expect(source.usdPrice('JPY')).rejects.toThrow(UnknownCurrencyRateError);
  });

  it('keeps the old prices when the new table is invalid', async () => {
    const source = new StaticRateSource({ EUR: '1.08' });
    expect(() => source.replacePrices({ EUR: '1.2', GBP: 'x' })).toThrow(InvalidRateTableError);
    expect(formatDecimal(await source.usdPrice('EUR'))).toBe('1.08');
    expect(source.prices()).toEqual({ EUR: '1.08' });
  });

  it('does not share state with the table it was given', async () => {
    const prices: Record<string, string> = { EUR: '1.08' };
    const source = new StaticRateSource(prices);
    prices.EUR = '5';
    expect(formatDecimal(await source.usdPrice('EUR'))).toBe('1.08');
  });
});

describe('rateSourceFromConfig', () => {
  it('uses the built-in prices without FXGATE_RATES', async () => {
    expect(rateSourceFromConfig({}).prices()).toEqual(DEFAULT_USD_PRICES);
    expect(rateSourceFromConfig({ FXGATE_RATES: undefined }).prices()).toEqual(DEFAULT_USD_PRICES);
  });

  it('merges FXGATE_RATES over the built-in prices, adding new currencies', async () => {
    const config = loadConfig({ FXGATE_RATES: '{"EUR":"1.10","CHF":"1.12"}' });
    const source = rateSourceFromConfig(config);
    expect(source.prices()).toEqual({ ...DEFAULT_USD_PRICES, EUR: '1.1', CHF: '1.12' });
    expect(formatDecimal(await source.midRate('EUR', 'EURC'))).toBe('1.0185185185');
    expect(formatDecimal(await source.midRate('CHF', 'USD'))).toBe('1.12');
  });

  it('leaves DEFAULT_USD_PRICES untouched', () => {
    rateSourceFromConfig({ FXGATE_RATES: { EUR: '9' } });
    expect(DEFAULT_USD_PRICES.EUR).toBe('1.08');
    expect(Object.isFrozen(DEFAULT_USD_PRICES)).toBe(true);
  });
});
