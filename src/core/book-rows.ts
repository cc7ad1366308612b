/**
 * One row of a book (org and environment) by a column unique in it: a record by its id, or by the
 * Idempotency-Key it was written under. Part of the core; the domain (trading, money movement)
 * reads it, with its own SELECTs.
 */
import type { Queryable } from '../lib/db/database.js';
import type { Principal } from './principal.js';

type Book = Pick<Principal, 'orgId' | 'environment'>;

/** How a kind of record is read: its SELECT, the alias of its table there when it joins, a lock to end the query with. */
export interface BookSelect {
  readonly select: string;
  readonly alias?: string;
  readonly lock?: string;
}

/** The row of the book whose `column` is `value`, or null when the book has none. */
export async function rowInBook<Row>(
  db: Queryable,
  from: BookSelect,
  book: Book,
  column: 'id' | 'idempotency_key',
  value: string,
): Promise<Row | null> {
  const table = from.alias === undefined ? '' : `${from.alias}.`;
  const { rows } = await db.query<Row>(
    `${from.select} WHERE ${table}${column} = $1 AND ${table}org_id = $2 AND ${table}environment = $3${from.lock === undefined ? '' : ` ${from.lock}`}`,
    [value, book.orgId, book.environment],
  );
  return rows[0] ?? null;
}
