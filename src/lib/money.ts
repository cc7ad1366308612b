/**
 * Money: decimal amounts, never JS numbers. Every amount inside fxgate is a `Decimal`
 * (bignumber.js configured for exact decimal work) or its canonical string. Parsing from JS
 * numbers is deliberately absent: legacy JSON numbers are read from their raw text instead.
 */
import BigNumber from 'bignumber.js';

import { InvalidDecimalError } from './errors/internal-errors.js';

/** An isolated BigNumber constructor: no exponent notation, round half-even unless told. */
export const Decimal = BigNumber.clone({
  DECIMAL_PLACES: 36,
  EXPONENTIAL_AT: [-1e9, 1e9],
  ROUNDING_MODE: BigNumber.ROUND_HALF_EVEN,
});
export type Decimal = BigNumber;

/** Plain decimal text: optional minus, digits, optional fraction. No exponent, no plus sign. */
export const DECIMAL_PATTERN = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;
/** The v3 request amount pattern (docs/contract.md#types-amounts): unsigned, at most 8 fractional digits. */
export const V3_AMOUNT_PATTERN = /^[0-9]+(\.[0-9]{1,8})?$/;

/** Parses decimal text (also as PostgreSQL prints `numeric`); throws on anything else. */
export function parseDecimal(text: string): Decimal {
  const trimmed = text.trim();
  if (!/^-?[0-9]+(\.[0-9]+)?$/.test(trimmed)) throw new InvalidDecimalError(text);
  return new Decimal(trimmed);
}

/** Canonical text: no exponent, no trailing fractional zeros, `-0` is `0`. */
export function formatDecimal(value: Decimal): string {
  return value.isZero() ? '0' : value.toFixed();
}

/** Text with exactly `decimals` fractional digits (the currency's own), rounding half-even. */
export function formatToDecimals(
  value: Decimal,
  decimals: number,
  rounding: BigNumber.RoundingMode = Decimal.ROUND_HALF_EVEN,
): string {
  const rounded = value.decimalPlaces(decimals, rounding);
  return (rounded.isZero() ? new Decimal(0) : rounded).toFixed(decimals);
}

/** Number of fractional digits the text carries as written (`1.50` has 2). */
export function fractionDigits(text: string): number {
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}
