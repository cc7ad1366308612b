/**
 * The PostgreSQL driver of the Database interface, over a `pg` connection pool, in either pool
 * mode (pool-mode.ts): on sessions of its own it prepares each statement once per connection;
 * through a pooler in transaction pooling it keeps nothing on a connection past a transaction.
 * Statements and transactions go through query-spans.ts, their spans when tracing is on.
 */
import { createHash } from 'node:crypto';

import pg from 'pg';

import type { Database, Queryable, QueryResult } from '../../lib/db/database.js';
import type { DbPoolMode } from '../../lib/db/pool-mode.js';
import { tracedStatement, tracedTransaction } from './query-spans.js';

export interface PostgresOptions {
  readonly connectionString: string;
  /**
   * `session` (the default): named prepared statements, and the statement timeout as a
   * connection parameter. `transaction`: unnamed statements, and the statement timeout set in
   * each transaction (`SET LOCAL`), since a pooler in transaction pooling runs the next
   * statement of the same connection on another server session, and PgBouncer refuses the
   * connection parameter.
   */
  readonly poolMode?: DbPoolMode;
  /** Connections kept in the pool; the default suits a 2-core machine. */
  readonly maxConnections?: number;
  /** Milliseconds a statement may run before PostgreSQL cancels it. */
  readonly statementTimeoutMs?: number;
  /**
   * Milliseconds an unused connection stays open before the pool closes it. pg's own default,
   * 10 s, closed the connections a burst had opened as soon as the load was steady again, so the
   * next burst paid for new ones: a PostgreSQL backend forked per connection, then every named
   * statement prepared again on it, a stall the slowest requests land in. Ten minutes keeps a
   * burst's connections for the next.
   */
  readonly idleTimeoutMs?: number;
}

export const POSTGRES_DEFAULTS = {
  poolMode: 'session',
  maxConnections: 20,
  statementTimeoutMs: 10_000,
  idleTimeoutMs: 600_000,
} as const;

/**
 * How many distinct statement texts get a name. The code's SQL is a fixed set of texts (nothing
 * builds queries), well under this; the bound only keeps a future text-building caller from
 * growing every connection's statement cache without end. Texts past it run unnamed.
 */
const MAX_NAMED_STATEMENTS = 1_000;

/**
 * Names each parameterised statement text after its hash, so that `pg` parses it once per
 * connection and PostgreSQL keeps its plan: the hot paths' statements are long CTEs, whose
 * parsing and planning would otherwise be a large share of the server's CPU on every call. The
 * same text always gets the same name,
 * which is what `pg` requires of a name, until a migration makes the prepared statements stale:
 * then a new generation of names makes every connection prepare each text anew.
 */
class StatementNames {
  #names = new Map<string, string>();
  #generation = 0;

  nameOf(sql: string): string | undefined {
    const known = this.#names.get(sql);
    if (known !== undefined || this.#names.size >= MAX_NAMED_STATEMENTS) return known;
    const name = `fx${this.#generation}_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}`;
    this.#names.set(sql, name);
    return name;
  }

  renew(): void {
    this.#generation += 1;
    this.#names = new Map();
  }
}

/**
 * PostgreSQL refuses to run a prepared statement whose result columns changed since it was
 * prepared (a migration added a column under `SELECT *` or `RETURNING *`, as a rolling deploy
 * does to the instances still running). It refuses before executing anything.
 */
function isStalePreparedStatement(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return (
    e?.code === '0A000' &&
    typeof e.message === 'string' &&
    e.message.includes('cached plan must not change result type')
  );
}

/** What names a parameterised statement: nothing at all on connections a pooler shares (transaction mode). */
type Naming = StatementNames | null;

function wrap(client: pg.Pool | pg.PoolClient, statements: Naming, inTransaction: boolean): Queryable {
  const run = (sql: string, params: readonly unknown[]) => {
    const name = params.length > 0 ? statements?.nameOf(sql) : undefined;
    return client.query({ text: sql, values: params as unknown[], ...(name === undefined ? {} : { name }) });
  };
  return {
    query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      return tracedStatement(sql, () => runQuery<Row>(sql, params));
    },
    async exec(sql: string): Promise<void> {
      // No parameters: the simple protocol, which allows many statements.
      await tracedStatement(sql, () => client.query(sql));
    },
  };
  async function runQuery<Row>(sql: string, params: readonly unknown[]): Promise<QueryResult<Row>> {
    let result: pg.QueryResult;
    try {
      result = await run(sql, params);
    } catch (error) {
      if (statements === null || !isStalePreparedStatement(error)) throw error;
      statements.renew();
      // Nothing ran, so a lone statement is simply run again under its new name. Inside a
      // transaction the error has aborted it: the caller's retry prepares anew.
      if (inTransaction) throw error;
      result = await run(sql, params);
    }
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
  }
}

export function openPostgres(options: PostgresOptions): Database {
  const sessions = (options.poolMode ?? POSTGRES_DEFAULTS.poolMode) === 'session';
  const statementTimeoutMs = Math.trunc(options.statementTimeoutMs ?? POSTGRES_DEFAULTS.statementTimeoutMs);
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? POSTGRES_DEFAULTS.maxConnections,
    ...(sessions ? { statement_timeout: statementTimeoutMs } : {}),
    idleTimeoutMillis: options.idleTimeoutMs ?? POSTGRES_DEFAULTS.idleTimeoutMs,
  });
  // An idle client that loses its connection emits here; without a listener the process dies.
  pool.on('error', () => {});
  const statements = sessions ? new StatementNames() : null;
  // One message, one round trip, as BEGIN alone: SET LOCAL lasts until the transaction ends and
  // takes no snapshot, so the transaction may still set its isolation level.
  const begin = sessions ? 'BEGIN' : `BEGIN; SET LOCAL statement_timeout = ${statementTimeoutMs}`;
  const root = wrap(pool, statements, false);
  return {
    driver: 'postgres',
    query: root.query,
    exec: root.exec,
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return tracedTransaction(() => runTransaction(fn));
    },
    async close() {
      await pool.end();
    },
  };
  async function runTransaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken = false;
    // A checked-out client has no pool listener: a connection lost between statements (the
    // server restarted, the backend was terminated) would otherwise be an uncaught 'error'
    // that ends the process. The next statement fails and the transaction rolls back instead.
    const onError = () => {
      broken = true;
    };
    client.on('error', onError);
    try {
      await client.query(begin);
      const result = await fn(wrap(client, statements, true));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true; // the connection itself failed: do not return it to the pool
      }
      throw error;
    } finally {
      // A broken client keeps the listener: it is discarded, and may still emit while closing.
      if (!broken) client.off('error', onError);
      client.release(broken);
    }
  }
}
