/**
 * GET /v3/fx/pairs: the tradable currency pairs with their trade limits. A bounded list:
 * complete `data`, no cursor parameters, no pagination object (docs/contract.md#pagination-bounded).
 */
import { z } from 'zod';

import { formatToDecimals } from '../../lib/money.js';
import { defineOperation } from '../http/operation.js';
import type { ReferenceSnapshot } from '../trading/reference-data.js';
import { currencyCode, decimalString, listOf } from '../wire-types.js';

/** The pair record (docs/contract.md#resources-pair). */
export const pairRecordSchema = z
  .object({
    object: z.literal('pair'),
    symbol: z
      .string()
      .regex(/^[A-Z]{3,5}\/[A-Z]{3,5}$/)
      .meta({ description: 'BASE/QUOTE, e.g. EUR/USD.' }),
    baseCurrency: currencyCode.meta({ description: 'The currency bought.' }),
    quoteCurrency: currencyCode.meta({ description: 'The currency sold.' }),
    baseDecimals: z.number().int().min(0),
    quoteDecimals: z.number().int().min(0),
    minAmount: decimalString.meta({ description: 'The smallest trade, in the base currency, with its decimals.' }),
    maxAmount: decimalString.meta({ description: 'The largest trade, in the base currency, with its decimals.' }),
  })
  .meta({ id: 'Pair', description: 'A tradable currency pair with its trade limits.' });

export type PairRecord = Readonly<z.output<typeof pairRecordSchema>>;

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
      summary: 'List the tradable pairs and their trade limits',
      response: listOf(pairRecordSchema),
      async handle() {
        return { body: { data: pairRecords(await reference()) } };
      },
    }),
  ];
}
