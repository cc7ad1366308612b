/**
 * GET /v3/fx/pairs: the tradable currency pairs with their trade limits. A bounded list:
 * complete `data`, no cursor parameters, no pagination object (docs/contract.md#pagination-bounded).
 */
import { formatToDecimals } from '../../lib/money.js';
import { defineOperation } from '../http/operation.js';
import type { ReferenceSnapshot } from '../trading/reference-data.js';

export interface PairRecord {
  readonly object: 'pair';
  readonly symbol: string;
  readonly baseCurrency: string;
  readonly quoteCurrency: string;
  readonly baseDecimals: number;
  readonly quoteDecimals: number;
  /** Trade amount limits, in the base currency, as decimal strings with its decimals. */
  readonly minAmount: string;
  readonly maxAmount: string;
}

export function pairRecords(reference: ReferenceSnapshot): PairRecord[] {
  return [...reference.pairs.values()].map((pair) => {
    const baseDecimals = reference.currencies.get(pair.baseCurrency)!.decimals;
    return {
      object: 'pair',
      symbol: `${pair.baseCurrency}/${pair.quoteCurrency}`,
      baseCurrency: pair.baseCurrency,
      quoteCurrency: pair.quoteCurrency,
      baseDecimals,
      quoteDecimals: reference.currencies.get(pair.quoteCurrency)!.decimals,
      minAmount: formatToDecimals(pair.minBaseAmount, baseDecimals),
      maxAmount: formatToDecimals(pair.maxBaseAmount, baseDecimals),
    };
  });
}

export function pairsOperations(reference: () => Promise<ReferenceSnapshot>) {
  return [
    defineOperation({
      method: 'GET',
      path: '/v3/fx/pairs',
      scope: 'view',
      async handle() {
        return { body: { data: pairRecords(await reference()) } };
      },
    }),
  ];
}
