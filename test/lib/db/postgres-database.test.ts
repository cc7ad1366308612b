/**
 * The PostgreSQL driver's prepared statements (src/lib/db/postgres-database.ts), on the real
 * server: each parameterised text is prepared once per connection, and a migration that changes
 * a statement's result columns (a rolling deploy) costs a renewal, never a failed lone query.
 * And the pool's idle timeout: a connection is kept while it is used, and closed once unused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Database } from '../../../src/lib/db/database.js';
import { openPostgres } from '../../../src/lib/db/postgres-database.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';

let database: TestDatabase;
/** One connection, so that what it has prepared can be read back on it. */
let db: Database;

beforeAll(async () => {
  database = await createTestPostgres();
  db = openPostgres({ connectionString: database.url!, maxConnections: 1 });
  await db.exec("CREATE TABLE prepared_probe (id int PRIMARY KEY, a text); INSERT INTO prepared_probe VALUES (1, 'x')");
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

const SELECT_ONE = 'SELECT * FROM prepared_probe WHERE id = $1';

async function preparedTexts(): Promise<string[]> {
  const { rows } = await db.query<{ statement: string }>(
    "SELECT statement FROM pg_prepared_statements WHERE name LIKE 'fx%' AND $1::int = 1",
    [1],
  );
  return rows.map((row) => row.statement);
}

describe('the PostgreSQL driver', () => {
  it('prepares a parameterised statement once per connection and reuses it', async () => {
    for (let i = 0; i < 3; i += 1) expect((await db.query(SELECT_ONE, [1])).rows).toEqual([{ id: 1, a: 'x' }]);
    expect((await preparedTexts()).filter((text) => text === SELECT_ONE)).toHaveLength(1);
  });

  it('runs a lone statement again when a migration changed its result columns, and prepares it anew', async () => {
    await db.query(SELECT_ONE, [1]);
    await db.exec("ALTER TABLE prepared_probe ADD COLUMN b text NOT NULL DEFAULT 'y'");
    expect((await db.query(SELECT_ONE, [1])).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
    expect((await db.query(SELECT_ONE, [1])).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
  });

  it('inside a transaction, fails that transaction (it is aborted), and the retry succeeds', async () => {
    await db.transaction((tx) => tx.query(SELECT_ONE, [1]));
    await db.exec("ALTER TABLE prepared_probe ADD COLUMN c text NOT NULL DEFAULT 'z'");
    await expect(db.transaction((tx) => tx.query(SELECT_ONE, [1]))).rejects.toMatchObject({ code: '0A000' });
    const again = await db.transaction((tx) => tx.query(SELECT_ONE, [1]));
    expect(again.rows).toEqual([{ id: 1, a: 'x', b: 'y', c: 'z' }]);
  });
});

describe('the pool', () => {
  const backendPid = async (on: Database): Promise<number> =>
    (await on.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const isConnected = async (pid: number): Promise<boolean> =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0]!
      .n === 1;

  it('keeps a connection open while it is used within idleTimeoutMs, and closes it once unused for longer', async () => {
    const pooled = openPostgres({ connectionString: database.url!, maxConnections: 1, idleTimeoutMs: 300 });
    try {
      const pid = await backendPid(pooled);
      for (let i = 0; i < 3; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await backendPid(pooled)).toBe(pid);
      }
      await expect.poll(() => isConnected(pid), { timeout: 5_000, interval: 100 }).toBe(false);
    } finally {
      await pooled.close();
    }
  });
});
