/**
 * GET /v3/fx/pairs: the tradable currency pairs with their trade limits. A bounded list:
 * complete `data`, no cursor parameters, no pagination object (spec 4.2).
 */
import type { Database } from '../../lib/db/database.js';
import { formatToDecimals, parseDecimal } from '../../lib/money.js';
import { cachedFor } from '../../lib/ttl-cache.js';
import { defineOperation } from '../http/operation.js';

interface PairRow {
  base_currency: string;
  quote_currency: string;
  min_base_amount: string;
  max_base_amount: string;
  base_decimals: number;
  quote_decimals: number;
}

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

function toPair(row: PairRow): PairRecord {
  return {
    object: 'pair',
    symbol: `${row.base_currency}/${row.quote_currency}`,
    baseCurrency: row.base_currency,
    quoteCurrency: row.quote_currency,
    baseDecimals: row.base_decimals,
    quoteDecimals: row.quote_decimals,
    minAmount: formatToDecimals(parseDecimal(row.min_base_amount), row.base_decimals),
    maxAmount: formatToDecimals(parseDecimal(row.max_base_amount), row.base_decimals),
  };
}

export async function listPairs(db: Database): Promise<PairRecord[]> {
  const { rows } = await db.query<PairRow>(
    `SELECT p.base_currency, p.quote_currency, p.min_base_amount, p.max_base_amount,
            b.decimals AS base_decimals, q.decimals AS quote_decimals
       FROM pairs p
       JOIN currencies b ON b.code = p.base_currency
       JOIN currencies q ON q.code = p.quote_currency
      WHERE p.enabled
      ORDER BY p.base_currency, p.quote_currency`,
  );
  return rows.map(toPair);
}

/** Pairs change only by migration or operator action; every read within this window shares one query. */
export const PAIRS_CACHE_TTL_MS = 5_000;

export function pairsOperations(db: Database) {
  const currentPairs = cachedFor(PAIRS_CACHE_TTL_MS, () => listPairs(db));
  return [
    defineOperation({
      method: 'GET',
      path: '/v3/fx/pairs',
      scope: 'view',
      async handle() {
        return { body: { data: await currentPairs() } };
      },
    }),
  ];
}
