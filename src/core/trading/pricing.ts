/**
 * Quote pricing: pure arithmetic on Decimals, no I/O.
 *
 * The house never loses a rounding:
 * - client rate = midRate × (1 + spreadBps/10000), rounded UP to RATE_DECIMALS (10) places;
 * - when the amount is in the buy currency: buyAmount = amount, and
 *   sellAmount = buyAmount × rate, rounded UP to the sell currency's decimals;
 * - when the amount is in the sell currency: sellAmount = amount, and
 *   buyAmount = sellAmount ÷ rate, rounded DOWN to the buy currency's decimals
 *   (this may come out 0, which the caller treats as below the minimum);
 * - a USD value used for credit is rounded UP to 2 decimals;
 * - a reversal's differential is CREDIT only when the reversal buys back strictly more than the
 *   original sold, and DEBIT otherwise (an exact match is a DEBIT of 0).
 *
 * `midRate` and `rate` are units of the sell currency per one unit of the buy currency. Every
 * rounding happens once, on the exact value: multiplication is exact, and division is done at
 * the target precision in the target direction, never via an intermediate rounded quotient.
 */
import type BigNumber from 'bignumber.js';

import { InvalidPriceInputError } from '../../lib/errors/internal-errors.js';
import { Decimal } from '../../lib/money.js';
import { RATE_DECIMALS } from './rate-source.js';

export interface PriceInput {
  buyCurrency: string;
  sellCurrency: string;
  amount: Decimal;
  amountCurrency: string;
  buyDecimals: number;
  sellDecimals: number;
  /** Sell units per 1 buy unit. */
  midRate: Decimal;
  spreadBps: number;
}

export interface PricedQuote {
  /** Client rate: sell units per 1 buy unit, spread included, RATE_DECIMALS places. */
  rate: Decimal;
  buyAmount: Decimal;
  sellAmount: Decimal;
}

export interface ReversalDifferential {
  direction: 'CREDIT' | 'DEBIT';
  /** Absolute difference, in the original's sell currency; never negative. */
  differentialAmount: Decimal;
}

/** Currency decimals the arithmetic supports; the currencies table holds 0 to 6, money columns 18. */
const MAX_CURRENCY_DECIMALS = 18;

/** One constructor per (places, rounding): division rounds to them directly, see the top comment. */
const dividers = new Map<string, typeof Decimal>();

/** a ÷ b rounded once to `places` decimals in direction `rounding`. */
export function divideRounded(a: Decimal, b: Decimal, places: number, rounding: BigNumber.RoundingMode): Decimal {
  const key = `${places}:${rounding}`;
  let Divider = dividers.get(key);
  if (Divider === undefined) {
    Divider = Decimal.clone({ DECIMAL_PLACES: places, ROUNDING_MODE: rounding });
    dividers.set(key, Divider);
  }
  return new Decimal(new Divider(a).div(b));
}

function checkInput(input: PriceInput): void {
  const { buyCurrency, sellCurrency, amount, amountCurrency, buyDecimals, sellDecimals, midRate, spreadBps } = input;
  if (buyCurrency === sellCurrency)
    throw new InvalidPriceInputError('sellCurrency', `the same as the buy currency (${buyCurrency})`);
  if (amountCurrency !== buyCurrency && amountCurrency !== sellCurrency) {
    throw new InvalidPriceInputError(
      'amountCurrency',
      `${amountCurrency} is neither ${buyCurrency} nor ${sellCurrency}`,
    );
  }
  for (const field of ['buyDecimals', 'sellDecimals'] as const) {
    const value = input[field];
    if (!Number.isInteger(value) || value < 0 || value > MAX_CURRENCY_DECIMALS) {
      throw new InvalidPriceInputError(field, `${value} is not an integer from 0 to ${MAX_CURRENCY_DECIMALS}`);
    }
  }
  if (!Number.isInteger(spreadBps) || spreadBps < 0)
    throw new InvalidPriceInputError('spreadBps', `${spreadBps} is not a non-negative integer`);
  if (!midRate.isFinite() || !midRate.isPositive() || midRate.isZero())
    throw new InvalidPriceInputError('midRate', 'must be positive');
  if (!amount.isFinite() || !amount.isPositive() || amount.isZero())
    throw new InvalidPriceInputError('amount', 'must be positive');
  // The caller checks precision against the currency; this guards against a result finer than the currency.
  const places = amountCurrency === buyCurrency ? buyDecimals : sellDecimals;
  if ((amount.decimalPlaces() ?? 0) > places) {
    throw new InvalidPriceInputError(
      'amount',
      `${amount.toFixed()} has more than ${places} decimals for ${amountCurrency}`,
    );
  }
}

/** Prices a quote; see the rules at the top of this file. */
export function priceQuote(input: PriceInput): PricedQuote {
  checkInput(input);
  // × (10000 + bps) then a 4-place shift: exact, so the only rounding is the one the rules name.
  const rate = input.midRate
    .times(10_000 + input.spreadBps)
    .shiftedBy(-4)
    .decimalPlaces(RATE_DECIMALS, Decimal.ROUND_UP);
  if (input.amountCurrency === input.buyCurrency) {
    const buyAmount = input.amount;
    return { rate, buyAmount, sellAmount: buyAmount.times(rate).decimalPlaces(input.sellDecimals, Decimal.ROUND_UP) };
  }
  const sellAmount = input.amount;
  return { rate, buyAmount: divideRounded(sellAmount, rate, input.buyDecimals, Decimal.ROUND_DOWN), sellAmount };
}

/**
 * USD value of an amount for credit checks, rounded UP to 2 decimals: overstating exposure by
 * under a cent is safe, understating it is not. (ROUND_UP rounds away from zero, so a negative
 * amount's magnitude is overstated too.)
 */
export function usdValue(amount: Decimal, usdPrice: Decimal): Decimal {
  return amount.times(usdPrice).decimalPlaces(2, Decimal.ROUND_UP);
}

/**
 * A reversal buys back the original's sell currency. CREDIT (the client gains) only when it
 * returns strictly more than was sold; an exact match is a DEBIT of 0, so that direction always
 * has a value and a zero differential needs no special case downstream.
 */
export function reversalDifferential(
  original: { sellAmount: Decimal },
  reversal: { buyAmount: Decimal },
): ReversalDifferential {
  const difference = reversal.buyAmount.minus(original.sellAmount);
  return difference.isGreaterThan(0)
    ? { direction: 'CREDIT', differentialAmount: difference }
    : { direction: 'DEBIT', differentialAmount: difference.abs() };
}
