import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/lib/db/migrate.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';

describe.each(DATABASE_DRIVERS)('migrations on $driver', ({ create }) => {
  // One database per driver for the file: PGlite takes seconds to start.
  let database: TestDatabase;
  beforeAll(async () => {
    database = await create();
  });
  afterAll(async () => database?.drop());

  it('are applied once: a second run applies nothing', async () => {
    const again = await migrate(database.db);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toEqual(await listMigrations());
  });

  it('seed seven currencies and every ordered pair of them', async () => {
    const currencies = await database.db.query<{ code: string; decimals: number; withdrawals_enabled: boolean }>(
      'SELECT code, decimals, withdrawals_enabled FROM currencies ORDER BY code',
    );
    expect(currencies.rows.map((r) => [r.code, r.decimals, r.withdrawals_enabled])).toEqual([
      ['EUR', 2, true],
      ['EURC', 6, true],
      ['GBP', 2, true],
      ['JPY', 0, false],
      ['USD', 2, true],
      ['USDC', 6, true],
      ['USDT', 6, true],
    ]);
    const pairs = await database.db.query<{ n: string }>('SELECT count(*)::text AS n FROM pairs WHERE enabled');
    expect(pairs.rows[0]!.n).toBe('42');
  });

  it('return numeric and bigint columns as strings on every driver, never as JS numbers', async () => {
    const { rows } = await database.db.query<{ big: unknown; amount: unknown }>(
      "SELECT 9007199254740993::bigint AS big, '12345678901234567890.123456789'::numeric AS amount",
    );
    expect(rows[0]).toEqual({ big: '9007199254740993', amount: '12345678901234567890.123456789' });
  });
});

describe('concurrent start-ups', () => {
  it('serialise on the advisory lock: two migrate() calls on one fresh database both succeed', async () => {
    const { createTestPostgres } = await import('../../support/databases.js');
    const database = await createTestPostgres();
    try {
      await database.db.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
      const [a, b] = await Promise.all([migrate(database.db), migrate(database.db)]);
      expect([...a.applied, ...b.applied].sort()).toEqual(await listMigrations());
    } finally {
      await database.drop();
    }
  });
});
