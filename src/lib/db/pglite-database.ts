/**
 * The embedded driver of the Database interface: PGlite (PostgreSQL compiled to WASM) running
 * in this process, on the same migrations and the same SQL as the server. PGlite serves one
 * connection, so transactions are serialised here; that is the embedded default's price.
 */
import { PGlite, types } from '@electric-sql/pglite';
import type { Database, QueryResult, Queryable } from './database.js';

/** Return the same JS types as `pg` does, so code never depends on the driver. */
const PARSERS = {
  [types.NUMERIC]: (value: string) => value,
  [types.INT8]: (value: string) => value,
};

export async function openPglite(dataDir?: string): Promise<Database> {
  const db = await PGlite.create(dataDir ? { dataDir, parsers: PARSERS } : { parsers: PARSERS });
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const result = await q.query<Row>(sql, params as unknown[]);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(sql: string): Promise<void> {
      await q.exec(sql);
    },
  });
  const root = wrap(db);
  return {
    driver: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => db.transaction((tx) => fn(wrap(tx))),
    async close() {
      await db.close();
    },
  };
}
