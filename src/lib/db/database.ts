/**
 * The system of record, behind one small interface with two drivers that run the same SQL:
 * PostgreSQL through `pg` for deployments and tests, PGlite in-process for the embedded default.
 * Callers write plain parameterised SQL ($1, $2 ...); nothing here builds queries.
 */

export interface QueryResult<Row> {
  readonly rows: Row[];
  readonly rowCount: number;
}

export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  /** Which driver runs underneath; for logs and for the few places where the SQL must differ. */
  readonly driver: 'postgres' | 'pglite';
  /**
   * Runs fn in one transaction (READ COMMITTED unless fn sets otherwise); commits when fn
   * resolves, rolls back when it throws, and rethrows.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
