/**
 * Currencies and pairs: reference data that every quote and trade reads and that changes only
 * by migration or operator action. Read through a short cache so the hot path does no query.
 */
import type { Queryable } from '../../lib/db/database.js';
import { Decimal } from '../../lib/money.js';
import { cachedFor } from './ttl-cache.js';

export interface Currency {
  readonly code: string;
  readonly name: string;
  readonly assetType: 'FIAT' | 'STABLECOIN';
  readonly decimals: number;
  readonly networks: readonly string[];
  readonly withdrawalsEnabled: boolean;
}

export interface Pair {
  readonly baseCurrency: string;
  readonly quoteCurrency: string;
  /** Trade limits in the base currency (the currency bought). */
  readonly minBaseAmount: Decimal;
  readonly maxBaseAmount: Decimal;
}

export interface ReferenceSnapshot {
  readonly currencies: ReadonlyMap<string, Currency>;
  /** Enabled pairs, keyed `BASE/QUOTE`. */
  readonly pairs: ReadonlyMap<string, Pair>;
}

/** Pairs and currencies change only by migration or operator action; this bounds how stale they get. */
export const REFERENCE_DATA_TTL_MS = 5_000;

/** `BASE/QUOTE`: the currency bought, then the one sold. Also the key of `disabled_pairs`. */
export function pairKey(base: string, quote: string): string {
  return `${base}/${quote}`;
}

async function load(db: Queryable): Promise<ReferenceSnapshot> {
  const [currencies, pairs] = await Promise.all([
    db.query<{
      code: string;
      name: string;
      asset_type: Currency['assetType'];
      decimals: number;
      networks: string[];
      withdrawals_enabled: boolean;
    }>('SELECT code, name, asset_type, decimals, networks, withdrawals_enabled FROM currencies ORDER BY code'),
    db.query<{ base_currency: string; quote_currency: string; min_base_amount: string; max_base_amount: string }>(
      'SELECT base_currency, quote_currency, min_base_amount, max_base_amount FROM pairs WHERE enabled ORDER BY base_currency, quote_currency',
    ),
  ]);
  return {
    currencies: new Map(
      currencies.rows.map((row) => [
        row.code,
        {
          code: row.code,
          name: row.name,
          assetType: row.asset_type,
          decimals: row.decimals,
          networks: row.networks,
          withdrawalsEnabled: row.withdrawals_enabled,
        },
      ]),
    ),
    pairs: new Map(
      pairs.rows.map((row) => [
        pairKey(row.base_currency, row.quote_currency),
        {
          baseCurrency: row.base_currency,
          quoteCurrency: row.quote_currency,
          minBaseAmount: new Decimal(row.min_base_amount),
          maxBaseAmount: new Decimal(row.max_base_amount),
        },
      ]),
    ),
  };
}

/** A reader of the current reference data, sharing one cached snapshot. */
export function referenceData(db: Queryable, ttlMs: number = REFERENCE_DATA_TTL_MS): () => Promise<ReferenceSnapshot> {
  return cachedFor(ttlMs, () => load(db));
}
