/**
 * A small table to paginate in tests, shaped like the real lists (org filter, created_at at
 * millisecond precision, text ids), and the in-memory order the database must agree with.
 */
import { validateQuery } from '../../../src/core/http/validation.js';
import { createCursorCodec, cursorScope } from '../../../src/core/pagination/cursor-codec.js';
import { cursorQuerySchema } from '../../../src/core/pagination/cursor-query.js';
import { type Page, paginate } from '../../../src/core/pagination/paginate.js';
import type { Queryable } from '../../../src/lib/db/database.js';

export interface Item {
  readonly id: string;
  readonly org: string;
  readonly createdAtMs: number;
}

export const BASE_MS = Date.parse('2025-03-01T12:00:00.000Z');

export const codec = createCursorCodec(Buffer.alloc(32, 0x5a));

export const CREATE_ITEMS = `
  CREATE TABLE items (id text PRIMARY KEY, org text NOT NULL, created_at timestamptz(3) NOT NULL);
  CREATE INDEX items_org_newest ON items (org, created_at DESC, id DESC);`;

export async function insertItems(db: Queryable, items: readonly Item[]): Promise<void> {
  if (items.length === 0) return;
  await db.query(
    'INSERT INTO items (id, org, created_at) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]::timestamptz[])',
    [
      items.map((item) => item.id),
      items.map((item) => item.org),
      items.map((item) => new Date(item.createdAtMs).toISOString()),
    ],
  );
}

export async function replaceItems(db: Queryable, items: readonly Item[]): Promise<void> {
  await db.query('DELETE FROM items');
  await insertItems(db, items);
}

/** Newest first, ties by id descending; ids in tests are lower-case hex, so code-point order is the collation's. */
export function newestFirst(items: readonly Item[]): Item[] {
  return [...items].sort(compareNewestFirst);
}

export function compareNewestFirst(a: Pick<Item, 'createdAtMs' | 'id'>, b: Pick<Item, 'createdAtMs' | 'id'>): number {
  if (a.createdAtMs !== b.createdAtMs) return b.createdAtMs - a.createdAtMs;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** Fixed-width hex ids in an order unrelated to insertion order, so ties are broken by the id. */
export function itemId(n: number): string {
  return ((n * 7919) % 65_521).toString(16).padStart(4, '0');
}

export function scopeFor(org: string): string {
  return cursorScope('items', org, 'test');
}

/** One GET of the list, through the real query parser, as a route would do it. */
/** Async like a route handler, so that a bad query rejects rather than throws. */
export async function listItems(
  db: Queryable,
  org: string,
  rawQuery: Readonly<Record<string, string>>,
): Promise<Page<string>> {
  return paginate<{ id: string }, string>(db, {
    from: 'items',
    where: { sql: 'org = $1', params: [org] },
    scope: scopeFor(org),
    query: validateQuery(cursorQuerySchema(), rawQuery),
    codec,
    toRecord: (row) => row.id,
  });
}

export function cursorAt(item: Pick<Item, 'createdAtMs' | 'id'>, org: string, inclusive = false): string {
  return codec.encode({ createdAtMs: item.createdAtMs, id: item.id, inclusive }, scopeFor(org));
}
