/**
 * The currencies' decimals as the manual shows them to legacy integrators, read from the
 * reference data the migrations seed (the `currencies` table of a freshly migrated embedded
 * database), so the table cannot drift from what v3 enforces. Opens an in-memory PGlite only;
 * writes nothing.
 */
import { migrate } from '../db/migrate.js';
import { openPglite } from '../db/pglite-database.js';

export interface CurrencyDecimals {
  readonly code: string;
  readonly decimals: number;
}

/** The default currencies and their decimals, in code order, as a new database holds them. */
export async function seededCurrencyDecimals(): Promise<CurrencyDecimals[]> {
  const db = await openPglite();
  try {
    await migrate(db);
    const result = await db.query<CurrencyDecimals>('SELECT code, decimals FROM currencies ORDER BY code');
    return result.rows.map((row) => ({ code: row.code, decimals: row.decimals }));
  } finally {
    await db.close();
  }
}

/** An amount with one decimal too many: the smallest example a currency refuses. */
function oneDigitTooMany(decimals: number): string {
  return `1.${'0'.repeat(decimals)}5`;
}

/** The markdown table: each currency, its decimals, and an amount it refuses. */
export function renderCurrencyDecimals(currencies: readonly CurrencyDecimals[]): string {
  const rows = currencies.map(
    ({ code, decimals }) => `| ${code} | ${decimals} | \`${oneDigitTooMany(decimals)}\` |`,
  );
  return ['| currency | decimals at most | refused, for example |', '|---|---|---|', ...rows].join('\n');
}
