/**
 * The PostgreSQL driver's prepared statements (src/cli/db/postgres-database.ts), on the real
 * server: each parameterised text is prepared once per connection, and a migration that changes
 * a statement's result columns (a rolling deploy) costs a renewal, never a failed lone query.
 * And the pool's idle timeout: a connection is kept while it is used, and closed once unused.
 * Transaction mode prepares nothing and sets the statement timeout per transaction; through a
 * real PgBouncer in transaction pooling (one server connection) it works where session mode
 * cannot connect, or, with the timeout parameter dropped, breaks on its own prepared statements.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openPostgres } from '../../../src/cli/db/postgres-database.js';
import type { Database, Queryable } from '../../../src/lib/db/database.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { testServices } from '../../support/services.js';
import { startThrowawayPgBouncer, type ThrowawayPgBouncer } from '../../support/throwaway-pgbouncer.js';

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

describe('transaction mode (FXGATE_DB_POOL_MODE=transaction)', () => {
  const SUM = 'SELECT $1::int + id AS n FROM prepared_probe WHERE id = 1';
  const sessionTimeout = async (on: Queryable): Promise<string> =>
    (await on.query<{ timeout: string }>("SELECT current_setting('statement_timeout') AS timeout")).rows[0]!.timeout;

  it('prepares nothing on the connection: every statement runs unnamed', async () => {
    const unnamed = openPostgres({ connectionString: database.url!, maxConnections: 1, poolMode: 'transaction' });
    try {
      for (let i = 0; i < 3; i += 1) expect((await unnamed.query(SUM, [i])).rows).toEqual([{ n: i + 1 }]);
      await unnamed.transaction((tx) => tx.query(SUM, [1]));
      const { rows } = await unnamed.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_prepared_statements WHERE $1::int = 1',
        [1],
      );
      expect(rows).toEqual([{ n: 0 }]);
    } finally {
      await unnamed.close();
    }
  });

  it("sets the statement timeout in each transaction, and leaves a lone statement to the server's own", async () => {
    const name = new URL(database.url!).pathname.slice(1);
    await db.exec(`ALTER DATABASE ${name} SET statement_timeout = '7s'`);
    const timed = openPostgres({
      connectionString: database.url!,
      maxConnections: 1,
      poolMode: 'transaction',
      statementTimeoutMs: 250,
    });
    try {
      expect(await timed.transaction((tx) => sessionTimeout(tx))).toBe('250ms');
      await expect(timed.transaction((tx) => tx.query('SELECT pg_sleep(2)'))).rejects.toMatchObject({ code: '57014' });
      // The isolation level can still be set: SET LOCAL took no snapshot.
      const isolation = await timed.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        return (await tx.query<{ level: string }>("SELECT current_setting('transaction_isolation') AS level")).rows[0]!;
      });
      expect(isolation.level).toBe('repeatable read');
      expect(await sessionTimeout(timed)).toBe('7s');
    } finally {
      await timed.close();
      await db.exec(`ALTER DATABASE ${name} RESET statement_timeout`);
    }
  });
});

describe('through PgBouncer in transaction pooling', () => {
  const SUM = 'SELECT $1::int + 1 AS n';
  let plain: ThrowawayPgBouncer;
  /** As an operator might make it take the session driver: the statement_timeout parameter dropped. */
  let lenient: ThrowawayPgBouncer;
  beforeAll(async () => {
    const serverUrl = testServices().databaseUrl;
    [plain, lenient] = await Promise.all([
      startThrowawayPgBouncer({ serverUrl, poolMode: 'transaction', poolSize: 1 }),
      startThrowawayPgBouncer({
        serverUrl,
        poolMode: 'transaction',
        poolSize: 1,
        ignoreStartupParameters: ['statement_timeout'],
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([plain?.stop(), lenient?.stop()]);
  });

  it('refuses the session driver outright: PgBouncer takes no statement_timeout connection parameter', async () => {
    const session = openPostgres({ connectionString: plain.urlFor(database.url!) });
    try {
      await expect(session.query('SELECT 1')).rejects.toThrow(/unsupported startup parameter: statement_timeout/);
    } finally {
      await session.close();
    }
  });

  it('breaks the session driver where it takes the connection: a second connection finds the first one’s statement on the shared session', async () => {
    const session = openPostgres({ connectionString: lenient.urlFor(database.url!), maxConnections: 2 });
    try {
      expect((await session.query(SUM, [1])).rows).toEqual([{ n: 2 }]);
      // Two at once: the pool opens a second connection, which prepares the same name on the one server session.
      const outcomes = await Promise.allSettled([session.query(SUM, [2]), session.query(SUM, [3])]);
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([
        expect.objectContaining({ reason: expect.objectContaining({ code: '42P05' }) }),
      ]);
    } finally {
      await session.close();
    }
  });

  it('runs the same, and concurrent transactions, in transaction mode on one server session', async () => {
    const pooled = openPostgres({
      connectionString: plain.urlFor(database.url!),
      maxConnections: 8,
      poolMode: 'transaction',
      statementTimeoutMs: 5_000,
    });
    try {
      expect((await pooled.query(SUM, [1])).rows).toEqual([{ n: 2 }]);
      const sums = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2 === 0
            ? pooled.query<{ n: number }>(SUM, [i]).then((result) => result.rows[0]!.n)
            : pooled.transaction(async (tx) => {
                const first = (await tx.query<{ n: number }>(SUM, [i])).rows[0]!.n;
                const timeout = (await tx.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t"))
                  .rows[0]!.t;
                return timeout === '5s' ? first : -1;
              }),
        ),
      );
      expect(sums).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    } finally {
      await pooled.close();
    }
  });
});
