/**
 * CLIENT spans for the statements and transactions of both drivers (postgres-database.ts,
 * pglite-database.ts: the one place each sends SQL), placed here rather than by the official
 * pg instrumentation, which does not see ESM imports without a loader flag and records the
 * full statement and the server's address. A span carries `db.system.name`, the operation and
 * a summary (`SELECT trades`) derived from the statement's fixed text: never the text itself,
 * never a parameter. A statement outside any span (a worker's poll, a scrape) makes none.
 */
import { ATTR, inClientSpan, insideSpan, TRACERS, tracingActive } from '../../lib/tracing/spans.js';

interface StatementNames {
  readonly operation: string;
  readonly summary: string;
}

const OPERATIONS =
  /^(SELECT|INSERT|UPDATE|DELETE|WITH|BEGIN|COMMIT|ROLLBACK|SET|CREATE|ALTER|DROP|LOCK|VALUES|TRUNCATE)\b/i;
const WRITE_IN_CTE = /\b(INSERT|UPDATE|DELETE)\b/i;
const TARGET = /\b(?:FROM|INTO|UPDATE|JOIN)\s+([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)/i;

/** Statement texts are a fixed set (nothing builds queries); the bound keeps a future caller from growing it without end. */
const MAX_CACHED = 1_000;
const cache = new Map<string, StatementNames>();

/**
 * A statement's operation and summary: its first keyword (a CTE's write, when it has one, else
 * SELECT) and the first table it reads or writes. Only keywords and identifiers are kept.
 */
export function statementNames(sql: string): StatementNames {
  const known = cache.get(sql);
  if (known !== undefined) return known;
  // Comments and string literals go first: neither may name the span.
  const text = sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/'(?:[^']|'')*'/g, "''")
    .trim();
  let operation = OPERATIONS.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  if (operation === 'WITH') operation = WRITE_IN_CTE.exec(text)?.[1]?.toUpperCase() ?? 'SELECT';
  const target = TARGET.exec(text)?.[1]?.toLowerCase();
  const names = { operation, summary: target === undefined ? operation : `${operation} ${target}` };
  if (cache.size < MAX_CACHED) cache.set(sql, names);
  return names;
}

/** Runs a statement inside its span, when tracing is on and a span is there to be its parent. */
export function tracedStatement<T>(sql: string, run: () => Promise<T>): Promise<T> {
  if (!tracingActive() || !insideSpan()) return run();
  const { operation, summary } = statementNames(sql);
  return inClientSpan(
    TRACERS.postgresql,
    summary,
    { attributes: { [ATTR.dbSystem]: 'postgresql', [ATTR.dbOperation]: operation, [ATTR.dbSummary]: summary } },
    run,
  );
}

/** Runs a transaction inside a span of its own, its statements its children. */
export function tracedTransaction<T>(run: () => Promise<T>): Promise<T> {
  if (!tracingActive() || !insideSpan()) return run();
  return inClientSpan(
    TRACERS.postgresql,
    'TRANSACTION',
    { attributes: { [ATTR.dbSystem]: 'postgresql', [ATTR.dbOperation]: 'TRANSACTION' } },
    run,
  );
}
