/**
 * The embedded driver of the Database interface: PGlite (PostgreSQL compiled to WASM) running
 * in this process, on the same migrations and the same SQL as the server. PGlite serves one
 * connection, so transactions are serialised here; that is the embedded default's price.
 * Statements and transactions go through query-spans.ts, their spans when tracing is on.
 */
import { PGlite, types } from '@electric-sql/pglite';

import type { Database, Queryable, QueryResult } from '../../lib/db/database.js';
import { OwnerOnlyNodeFS } from './owner-only-fs.js';
import { tracedStatement, tracedTransaction } from './query-spans.js';

/** Return the same JS types as `pg` does, so code never depends on the driver. */
const PARSERS = {
  [types.NUMERIC]: (value: string) => value,
  [types.INT8]: (value: string) => value,
};

/**
 * Opens PGlite in `dataDir` (in memory without one), every file and folder it makes there its
 * owner's only (owner-only-fs.ts). `loadDataDir` starts it from a dump of
 * another database (`dumpDataDir`): a copy of an already migrated one loads several times faster
 * than a new one is initialised and migrated.
 */
export async function openPglite(dataDir?: string, options: { readonly loadDataDir?: Blob } = {}): Promise<Database> {
  return wrapPglite(
    await PGlite.create({
      parsers: PARSERS,
      ...(dataDir ? { fs: new OwnerOnlyNodeFS(dataDir) } : {}),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    }),
  );
}

/** A PGlite instance as a Database; closing the Database closes the instance. */
export function wrapPglite(db: PGlite): Database {
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      return tracedStatement(sql, async () => {
        const result = await q.query<Row>(sql, params as unknown[]);
        return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
      });
    },
    async exec(sql: string): Promise<void> {
      await tracedStatement(sql, () => q.exec(sql));
    },
  });
  const root = wrap(db);
  return {
    driver: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) =>
      tracedTransaction(() => db.transaction((tx) => fn(wrap(tx)))),
    async close() {
      await db.close();
    },
  };
}
