import { describe, expect, it } from 'vitest';

import { rowInBook } from '../../src/core/book-rows.js';
import type { Queryable } from '../../src/lib/db/database.js';

const BOOK = { orgId: '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c', environment: 'sandbox' } as const;

/** A database that answers every query with `rows` and keeps what it was asked. */
function recording(rows: readonly Record<string, unknown>[]) {
  const asked: { sql: string; params: readonly unknown[] | undefined }[] = [];
  const db = {
    query: async (sql: string, params?: readonly unknown[]) => {
      asked.push({ sql, params });
      return { rows: [...rows], rowCount: rows.length };
    },
  } as unknown as Queryable;
  return { db, asked };
}

describe('rowInBook', () => {
  it("reads one row of the book by its column, the book's org and environment bound after the value", async () => {
    const { db, asked } = recording([{ id: 'dep_1' }]);
    expect(await rowInBook(db, { select: 'SELECT * FROM deposits' }, BOOK, 'id', 'dep_1')).toEqual({ id: 'dep_1' });
    expect(asked).toEqual([
      {
        sql: 'SELECT * FROM deposits WHERE id = $1 AND org_id = $2 AND environment = $3',
        params: ['dep_1', BOOK.orgId, BOOK.environment],
      },
    ]);
  });

  it('qualifies the columns with the alias of a joined SELECT, and ends with its lock', async () => {
    const { db, asked } = recording([]);
    const from = { select: 'SELECT w.* FROM withdrawals w JOIN x ON true', alias: 'w', lock: 'FOR UPDATE OF w' };
    expect(await rowInBook(db, from, BOOK, 'idempotency_key', 'key-1')).toBeNull();
    expect(asked[0]!.sql).toBe(
      'SELECT w.* FROM withdrawals w JOIN x ON true WHERE w.idempotency_key = $1 AND w.org_id = $2 AND w.environment = $3 FOR UPDATE OF w',
    );
  });
});
