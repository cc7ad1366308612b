/**
 * Mid prices. Every currency is priced in USD, and a pair's mid rate is the ratio of its two USD
 * prices, so one table of n prices gives all n×(n−1) pairs consistently (no triangular
 * arbitrage between them). One implementation ships, `StaticRateSource`, fed from
 * DEFAULT_USD_PRICES and the FXGATE_RATES overrides; a live feed can replace it behind the
 * same interface.
 */
import { InvalidRateTableError, UnknownCurrencyRateError } from '../../lib/errors/internal-errors.js';
import { Decimal } from '../../lib/money.js';

/** Fractional digits of every rate fxgate quotes (mid and client). */
export const RATE_DECIMALS = 10;

/** Same shape the currencies table enforces (`code ~ '^[A-Z]{3,5}$'`). */
export const CURRENCY_CODE_PATTERN = /^[A-Z]{3,5}$/;

/** Unsigned plain decimal text; zero is refused separately so the message can say why. */
const PRICE_PATTERN = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/** Built-in USD prices of the seeded currencies; FXGATE_RATES entries override them one by one. */
export const DEFAULT_USD_PRICES: Readonly<Record<string, string>> = Object.freeze({
  USD: '1',
  USDC: '1',
  USDT: '1',
  EUR: '1.08',
  EURC: '1.08',
  GBP: '1.27',
  JPY: '0.0067',
});

/** Where mid prices come from. One implementation ships: StaticRateSource. A live feed can replace it later. */
export interface RateSource {
  readonly name: string;
  /** USD price of one unit of currency (USD itself is 1). Throws UnknownCurrencyRateError for a currency it has no price for. */
  usdPrice(currency: string): Promise<Decimal>;
  /** Mid rate: units of `quote` per one unit of `base`, = usdPrice(base)/usdPrice(quote), rounded to RATE_DECIMALS (10) half-even. */
  midRate(base: string, quote: string): Promise<Decimal>;
}

/**
 * Division rounded once, straight to RATE_DECIMALS half-even. The shared Decimal divides to 36
 * places first, and rounding that again to 10 could (rarely) round twice the wrong way.
 */
const RateDecimal = Decimal.clone({ DECIMAL_PLACES: RATE_DECIMALS, ROUNDING_MODE: Decimal.ROUND_HALF_EVEN });

/**
 * Checks a whole table and returns it parsed, or throws with every problem at once (an operator
 * fixing a file wants the full list, not one error per reload). Values are checked at run time
 * as `unknown` because tables arrive from JSON files whatever the static type says.
 */
export function parseRateTable(prices: Readonly<Record<string, unknown>>): ReadonlyMap<string, Decimal> {
  const problems: string[] = [];
  const table = new Map<string, Decimal>();
  if (typeof prices !== 'object' || prices === null || Array.isArray(prices)) {
    throw new InvalidRateTableError(['must be an object of currency code to USD price string']);
  }
  for (const [code, value] of Object.entries(prices)) {
    const shown = JSON.stringify(code.slice(0, 16));
    if (!CURRENCY_CODE_PATTERN.test(code)) {
      problems.push(`${shown}: currency codes are 3 to 5 uppercase letters`);
      continue;
    }
    if (typeof value !== 'string') {
      problems.push(`${code}: the price must be a decimal string such as "1.08", not a ${typeof value}`);
      continue;
    }
    if (!PRICE_PATTERN.test(value)) {
      problems.push(`${code}: ${JSON.stringify(value.slice(0, 64))} is not a plain decimal such as "1.08"`);
      continue;
    }
    const price = new Decimal(value);
    if (price.isZero()) {
      problems.push(`${code}: the price must be positive`);
    } else if (code === 'USD' && !price.eq(1)) {
      // Prices are in USD, so any other USD price would make every rate inconsistent.
      problems.push(`USD: the USD price of USD is 1, not ${value}`);
    } else {
      table.set(code, price);
    }
  }
  if (problems.length > 0) throw new InvalidRateTableError(problems);
  return table;
}

/** Prices from a fixed table in memory. Answers are immediate; the interface is async for live feeds. */
export class StaticRateSource implements RateSource {
  readonly name = 'static';
  private table: ReadonlyMap<string, Decimal>;

  constructor(prices: Readonly<Record<string, string>>) {
    this.table = parseRateTable(prices);
  }

  /**
   * Replaces the whole table (operators reload; tests move rates to exercise reversals). The new
   * table is validated before the swap, so a bad reload leaves the old prices in force.
   */
  replacePrices(prices: Readonly<Record<string, string>>): void {
    this.table = parseRateTable(prices);
  }

  /** The current table as canonical strings, for logs and diagnostics. */
  prices(): Record<string, string> {
    return Object.fromEntries([...this.table].map(([code, price]) => [code, price.toFixed()]));
  }

  async usdPrice(currency: string): Promise<Decimal> {
    return this.priceOf(currency);
  }

  async midRate(base: string, quote: string): Promise<Decimal> {
    // Both lookups happen before dividing so an unknown currency is reported whichever side it is on.
    const basePrice = this.priceOf(base);
    const quotePrice = this.priceOf(quote);
    return new Decimal(new RateDecimal(basePrice).div(quotePrice));
  }

  private priceOf(currency: string): Decimal {
    const price = this.table.get(currency);
    if (price !== undefined) return price;
    // USD is the unit of account: it needs no table entry.
    if (currency === 'USD') return new Decimal(1);
    throw new UnknownCurrencyRateError(currency);
  }
}

/** The rate source a process starts with: the built-in prices, with FXGATE_RATES merged over them. */
export function rateSourceFromConfig(config: { FXGATE_RATES?: Record<string, string> | undefined }): StaticRateSource {
  return new StaticRateSource({ ...DEFAULT_USD_PRICES, ...config.FXGATE_RATES });
}
