/** The currencies' decimals table of the legacy guide, from the migrations' seed (src/cli/docs/currency-decimals.ts). */
import { describe, expect, it } from 'vitest';

import { renderCurrencyDecimals, seededCurrencyDecimals } from '../../../src/cli/docs/currency-decimals.js';

describe('seededCurrencyDecimals', () => {
  it('reads every seeded currency with its decimals, in code order', { timeout: 60_000 }, async () => {
    const currencies = await seededCurrencyDecimals();
    expect(currencies.map((currency) => currency.code)).toEqual(
      [...currencies.map((currency) => currency.code)].sort(),
    );
    expect(currencies).toEqual(
      expect.arrayContaining([
        { code: 'USD', decimals: 2 },
        { code: 'JPY', decimals: 0 },
        { code: 'USDC', decimals: 6 },
      ]),
    );
  });
});

describe('renderCurrencyDecimals', () => {
  it('shows each currency with an amount one digit too long for it', () => {
    expect(
      renderCurrencyDecimals([
        { code: 'JPY', decimals: 0 },
        { code: 'USD', decimals: 2 },
      ]),
    ).toBe(
      [
        '| currency | decimals at most | refused, for example |',
        '|---|---|---|',
        '| JPY | 0 | `1.5` |',
        '| USD | 2 | `1.005` |',
      ].join('\n'),
    );
  });
});
