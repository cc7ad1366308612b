import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { PriceInput } from '../../../src/core/trading/pricing.js';
import { divideRounded, priceQuote, reversalDifferential, usdValue } from '../../../src/core/trading/pricing.js';
import { DEFAULT_USD_PRICES, RATE_DECIMALS, StaticRateSource } from '../../../src/core/trading/rate-source.js';
import { InvalidPriceInputError } from '../../../src/lib/errors/internal-errors.js';
import { Decimal, formatDecimal, parseDecimal } from '../../../src/lib/money.js';

/** Decimals of the seeded currencies (migration 0001). */
const DECIMALS: Readonly<Record<string, number>> = { USD: 2, EUR: 2, GBP: 2, JPY: 0, USDC: 6, USDT: 6, EURC: 6 };
const rates = new StaticRateSource(DEFAULT_USD_PRICES);

/** Prices a conversion from `sell` to `buy` at the built-in mid rate, the amount in `amountCurrency`. */
async function convert(sell: string, buy: string, amount: string, amountCurrency: string, spreadBps = 20) {
  const quote = priceQuote({
    buyCurrency: buy,
    sellCurrency: sell,
    amount: parseDecimal(amount),
    amountCurrency,
    buyDecimals: DECIMALS[buy] ?? 0,
    sellDecimals: DECIMALS[sell] ?? 0,
    midRate: await rates.midRate(buy, sell),
    spreadBps,
  });
  return {
    rate: formatDecimal(quote.rate),
    buyAmount: formatDecimal(quote.buyAmount),
    sellAmount: formatDecimal(quote.sellAmount),
  };
}

function input(overrides: Partial<PriceInput> = {}): PriceInput {
  return {
    buyCurrency: 'USD',
    sellCurrency: 'EUR',
    amount: new Decimal(100),
    amountCurrency: 'USD',
    buyDecimals: 2,
    sellDecimals: 2,
    midRate: new Decimal('0.9259259259'),
    spreadBps: 20,
    ...overrides,
  };
}

/** Amounts and rates as strings; expected values computed independently (Python decimal, 300 digits). */
describe('priceQuote on the built-in rates, spread 20 bps', () => {
  it.each([
    // sell, buy, amount, in, rate, buyAmount, sellAmount
    ['EUR', 'USD', '1000', 'USD', '0.9277777778', '1000', '927.78'],
    ['EUR', 'USD', '1000', 'EUR', '0.9277777778', '1077.84', '1000'],
    ['USD', 'JPY', '37313', 'JPY', '0.0067134', '37313', '250.5'],
    ['USD', 'JPY', '250.5', 'USD', '0.0067134', '37313', '250.5'],
    ['JPY', 'USDC', '1000.5', 'USDC', '149.552238806', '1000.5', '149628'],
    ['JPY', 'USDC', '150000', 'JPY', '149.552238806', '1002.994011', '150000'],
    ['USDC', 'EUR', '1234.56', 'EUR', '1.08216', '1234.56', '1335.99145'],
    ['USDC', 'EUR', '1234.567891', 'USDC', '1.08216', '1140.83', '1234.567891'],
    ['GBP', 'EURC', '0.000001', 'EURC', '0.8520944883', '0.000001', '0.01'],
    ['GBP', 'EURC', '0.01', 'GBP', '0.8520944883', '0.011735', '0.01'],
  ])(
    '%s→%s, %s %s: rate %s, buys %s, sells %s',
    async (sell, buy, amount, amountCurrency, rate, buyAmount, sellAmount) => {
      expect(await convert(sell, buy, amount, amountCurrency)).toEqual({ rate, buyAmount, sellAmount });
    },
  );
});

describe('priceQuote with spread 0', () => {
  it.each([
    ['EUR', 'USD', '1000', 'USD', '0.9259259259', '1000', '925.93'],
    // 1000 ÷ 0.9259259259 = 1080.00000003...: the rounded mid gives back exactly 1080
    ['EUR', 'USD', '1000', 'EUR', '0.9259259259', '1080', '1000'],
    ['USD', 'JPY', '37313', 'JPY', '0.0067', '37313', '250'],
    ['USD', 'JPY', '250.5', 'USD', '0.0067', '37388', '250.5'],
    ['JPY', 'USDC', '1000.5', 'USDC', '149.2537313433', '1000.5', '149329'],
    ['JPY', 'USDC', '150000', 'JPY', '149.2537313433', '1004.999999', '150000'],
    ['USDC', 'EUR', '1234.56', 'EUR', '1.08', '1234.56', '1333.3248'],
    ['USDC', 'EUR', '1234.567891', 'USDC', '1.08', '1143.11', '1234.567891'],
  ])(
    '%s→%s, %s %s: rate %s (the mid), buys %s, sells %s',
    async (sell, buy, amount, amountCurrency, rate, buyAmount, sellAmount) => {
      expect(await convert(sell, buy, amount, amountCurrency, 0)).toEqual({ rate, buyAmount, sellAmount });
    },
  );
});

describe('priceQuote rounding directions', () => {
  it('rounds the client rate UP at the 10th place', () => {
    const at = (midRate: string, spreadBps: number) =>
      formatDecimal(priceQuote(input({ midRate: parseDecimal(midRate), spreadBps })).rate);
    expect(at('0.0000000001', 1)).toBe('0.0000000002'); // 1.0001e-10
    expect(at('1', 20)).toBe('1.002'); // exact: no rounding
    expect(at('1.2345678901', 0)).toBe('1.2345678901');
    expect(at('1.9999999999', 1)).toBe('2.0001999999'); // 2.00019999989999
    expect(at('3', 1000)).toBe('3.3');
    // A mid with more places than a rate (a live feed might send one) is still rounded up.
    expect(at('1.00000000001', 0)).toBe('1.0000000001');
  });

  it('rounds the sell amount UP and the buy amount DOWN to the currency', () => {
    const rate = { midRate: parseDecimal('1.0000000001'), spreadBps: 0 };
    const buyFixed = priceQuote(input({ ...rate, amount: parseDecimal('1') }));
    expect(formatDecimal(buyFixed.sellAmount)).toBe('1.01'); // 1.0000000001 → up
    const sellFixed = priceQuote(input({ ...rate, amount: parseDecimal('1.01'), amountCurrency: 'EUR' }));
    expect(formatDecimal(sellFixed.buyAmount)).toBe('1'); // 1.00999999989... → down
  });

  it('does not round an exact result', () => {
    const quote = priceQuote(input({ midRate: parseDecimal('1.5'), spreadBps: 0, amount: parseDecimal('3') }));
    expect(formatDecimal(quote.sellAmount)).toBe('4.5');
    const back = priceQuote(
      input({ midRate: parseDecimal('1.5'), spreadBps: 0, amount: parseDecimal('4.5'), amountCurrency: 'EUR' }),
    );
    expect(formatDecimal(back.buyAmount)).toBe('3');
  });

  it('may buy 0 of a currency when the sell amount is too small: the caller rejects it', () => {
    const quote = priceQuote(
      input({
        buyCurrency: 'JPY',
        sellCurrency: 'USD',
        buyDecimals: 0,
        amount: parseDecimal('0.01'),
        amountCurrency: 'USD',
        midRate: parseDecimal('0.0134'),
        spreadBps: 0,
      }),
    );
    expect(formatDecimal(quote.buyAmount)).toBe('0'); // 0.746 JPY
    expect(formatDecimal(quote.sellAmount)).toBe('0.01');
  });

  it('divides once, straight down: a quotient 1e-38 under a cent boundary is not rounded up onto it first', () => {
    // R = 1e20 − 1; sell = 1.01·R − 1e-18, so sell ÷ R = 1.01 − 1e-38 (roughly). To 36 places that is
    // 1.01, which the naive way then keeps; rounded down once it is 1.00, as the house rule says.
    const midRate = parseDecimal('99999999999999999999');
    const amount = parseDecimal('100999999999999999998.989999999999999999');
    const quote = priceQuote(input({ midRate, spreadBps: 0, amount, amountCurrency: 'EUR', sellDecimals: 18 }));
    expect(formatDecimal(quote.buyAmount)).toBe('1');
    expect(formatDecimal(amount.div(midRate).decimalPlaces(2, Decimal.ROUND_DOWN)), 'the naive way rounds twice').toBe(
      '1.01',
    );
  });
});

describe('priceQuote on huge amounts', () => {
  it('is exact past 20 digits', async () => {
    expect(await convert('EUR', 'USD', '123456789012345678901234.56', 'USD')).toEqual({
      rate: '0.9277777778',
      buyAmount: '123456789012345678901234.56',
      sellAmount: '114540465364197530736419.75',
    });
    expect(await convert('EUR', 'USD', '123456789012345678901234.56', 'EUR')).toEqual({
      rate: '0.9277777778',
      buyAmount: '133067197734670379708284.66',
      sellAmount: '123456789012345678901234.56',
    });
    expect(await convert('USD', 'JPY', '98765432109876543210987', 'JPY')).toMatchObject({
      sellAmount: '663051851926445185192.65',
    });
    expect(await convert('JPY', 'USDC', '98765432109876543210987', 'JPY')).toMatchObject({
      buyAmount: '660407579976088580835.94579',
    });
  });
});

describe('priceQuote input checks', () => {
  it.each<[string, Partial<PriceInput>, keyof PriceInput]>([
    ['an amount in neither currency', { amountCurrency: 'GBP' }, 'amountCurrency'],
    ['the same currency on both sides', { sellCurrency: 'USD' }, 'sellCurrency'],
    ['a zero amount', { amount: new Decimal(0) }, 'amount'],
    ['a negative amount', { amount: new Decimal(-1) }, 'amount'],
    ['a NaN amount', { amount: new Decimal(NaN) }, 'amount'],
    ['an amount finer than its currency', { amount: parseDecimal('1.001') }, 'amount'],
    [
      'an amount finer than the sell currency',
      { amount: parseDecimal('0.5'), amountCurrency: 'EUR', sellDecimals: 0 },
      'amount',
    ],
    ['a zero mid rate', { midRate: new Decimal(0) }, 'midRate'],
    ['an infinite mid rate', { midRate: new Decimal(Infinity) }, 'midRate'],
    ['a negative spread', { spreadBps: -1 }, 'spreadBps'],
    ['a fractional spread', { spreadBps: 0.5 }, 'spreadBps'],
    ['fractional decimals', { buyDecimals: 1.5 }, 'buyDecimals'],
    ['negative decimals', { sellDecimals: -1 }, 'sellDecimals'],
  ])('refuses %s', (_label, overrides, field) => {
    let caught: unknown;
    try {
      priceQuote(input(overrides));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidPriceInputError);
    expect(caught).toMatchObject({ code: 'FXGATE_INVALID_PRICE_INPUT', field });
  });
});

describe('priceQuote properties', () => {
  const decimals = fc.constantFrom(0, 2, 6, 8, 18);
  /** A positive decimal with up to `places` places, from 1 unit of the last place to about 1e24. */
  const positive = (places: number) =>
    fc.bigInt({ min: 1n, max: 10n ** 24n }).map((units) => new Decimal(units.toString()).shiftedBy(-places));
  const cases = fc
    .record({
      buyDecimals: decimals,
      sellDecimals: decimals,
      spreadBps: fc.integer({ min: 0, max: 1000 }),
      buyFixed: fc.boolean(),
    })
    .chain((shape) =>
      fc.record({
        shape: fc.constant(shape),
        // Mid rates from 1e-10 to 1e8, with up to 10 places as a rate source gives them.
        midRate: fc
          .bigInt({ min: 1n, max: 10n ** 18n })
          .map((units) => new Decimal(units.toString()).shiftedBy(-RATE_DECIMALS)),
        amount: positive(shape.buyFixed ? shape.buyDecimals : shape.sellDecimals),
      }),
    );

  it("never charges less than amount × rate nor gives more than amount ÷ rate, to the currency's decimals, and misses by under one unit", () => {
    fc.assert(
      fc.property(cases, ({ shape, midRate, amount }) => {
        const { buyDecimals, sellDecimals, spreadBps, buyFixed } = shape;
        const quote = priceQuote({
          buyCurrency: 'BBB',
          sellCurrency: 'SSS',
          amount,
          amountCurrency: buyFixed ? 'BBB' : 'SSS',
          buyDecimals,
          sellDecimals,
          midRate,
          spreadBps,
        });
        // The client rate is at least the mid plus the spread, by less than one 10th-place unit.
        const floorRate = midRate.times(10_000 + spreadBps).div(10_000);
        expect(quote.rate.gte(floorRate)).toBe(true);
        expect(quote.rate.minus(floorRate).lt(new Decimal(1).shiftedBy(-RATE_DECIMALS))).toBe(true);
        expect(quote.rate.decimalPlaces()).toBeLessThanOrEqual(RATE_DECIMALS);
        expect(quote.buyAmount.decimalPlaces()).toBeLessThanOrEqual(buyDecimals);
        expect(quote.sellAmount.decimalPlaces()).toBeLessThanOrEqual(sellDecimals);
        if (buyFixed) {
          expect(quote.buyAmount.eq(amount)).toBe(true);
          const exact = amount.times(quote.rate);
          expect(quote.sellAmount.gte(exact)).toBe(true);
          expect(quote.sellAmount.minus(exact).lt(new Decimal(1).shiftedBy(-sellDecimals))).toBe(true);
        } else {
          expect(quote.sellAmount.eq(amount)).toBe(true);
          // Checked by multiplying, which is exact, so the test itself never rounds.
          expect(quote.buyAmount.times(quote.rate).lte(amount)).toBe(true);
          expect(quote.buyAmount.plus(new Decimal(1).shiftedBy(-buyDecimals)).times(quote.rate).gt(amount)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('divideRounded', () => {
  it('rounds in the direction asked', () => {
    const [a, b] = [new Decimal(2), new Decimal(3)];
    expect(formatDecimal(divideRounded(a, b, 4, Decimal.ROUND_DOWN))).toBe('0.6666');
    expect(formatDecimal(divideRounded(a, b, 4, Decimal.ROUND_UP))).toBe('0.6667');
    expect(formatDecimal(divideRounded(new Decimal(1), new Decimal(8), 2, Decimal.ROUND_HALF_EVEN))).toBe('0.12');
    expect(divideRounded(a, b, 0, Decimal.ROUND_UP)).toBeInstanceOf(Decimal);
  });
});

describe('usdValue', () => {
  it.each([
    ['1000', '1.08', '1080'],
    ['0.000001', '1', '0.01'], // a millionth of a USDC still counts as a cent
    ['37313', '0.0067', '250'], // 249.9971 → up
    ['1.005', '1', '1.01'],
    ['0', '1.27', '0'],
    ['123456789012345678901234.567891', '1.27', '156790122045679012204567.91'],
  ])('%s at %s USD is %s USD', (amount, price, expected) => {
    expect(formatDecimal(usdValue(parseDecimal(amount), parseDecimal(price)))).toBe(expected);
  });
});

describe('reversalDifferential', () => {
  const sold = { sellAmount: parseDecimal('1000.00') };
  it('is a CREDIT when the reversal buys back strictly more than was sold', () => {
    const result = reversalDifferential(sold, { buyAmount: parseDecimal('1000.01') });
    expect(result.direction).toBe('CREDIT');
    expect(formatDecimal(result.differentialAmount)).toBe('0.01');
  });

  it('is a DEBIT of the shortfall when it buys back less', () => {
    const result = reversalDifferential(sold, { buyAmount: parseDecimal('997.22') });
    expect(result.direction).toBe('DEBIT');
    expect(formatDecimal(result.differentialAmount)).toBe('2.78');
  });

  it('is a DEBIT of 0 on an exact match', () => {
    const result = reversalDifferential(sold, { buyAmount: parseDecimal('1000') });
    expect(result).toMatchObject({ direction: 'DEBIT' });
    expect(result.differentialAmount.isZero()).toBe(true);
    expect(result.differentialAmount.isNegative()).toBe(false);
  });

  it('is exact on huge amounts', () => {
    const result = reversalDifferential(
      { sellAmount: parseDecimal('123456789012345678901234.56') },
      { buyAmount: parseDecimal('123456789012345678901234.57') },
    );
    expect(result).toMatchObject({ direction: 'CREDIT' });
    expect(formatDecimal(result.differentialAmount)).toBe('0.01');
  });

  it('follows a reversal priced after the rate moved', async () => {
    // Sell 1000 EUR for USD, then sell that USD back for EUR after EUR weakens: more EUR returns.
    const source = new StaticRateSource(DEFAULT_USD_PRICES);
    const original = priceQuote(
      input({
        amount: parseDecimal('1000'),
        amountCurrency: 'EUR',
        midRate: await source.midRate('USD', 'EUR'),
        spreadBps: 0,
      }),
    );
    source.replacePrices({ ...DEFAULT_USD_PRICES, EUR: '1.05' });
    const reversal = priceQuote(
      input({
        buyCurrency: 'EUR',
        sellCurrency: 'USD',
        amount: original.buyAmount,
        amountCurrency: 'USD',
        midRate: await source.midRate('EUR', 'USD'),
        spreadBps: 0,
      }),
    );
    expect(formatDecimal(original.buyAmount)).toBe('1080');
    expect(formatDecimal(reversal.buyAmount)).toBe('1028.57'); // 1080 ÷ 1.05 = 1028.5714...
    const result = reversalDifferential(original, reversal);
    expect(result.direction).toBe('CREDIT');
    expect(formatDecimal(result.differentialAmount)).toBe('28.57');
  });
});
