import { readFile } from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { listMigrations, migrate } from '../../../src/cli/db/migrate.js';
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

describe('0004_quote_claim on a database with trades', () => {
  it('records the trade of every quote already executed, and none for an unused quote', async () => {
    const { createTestPostgres } = await import('../../support/databases.js');
    const database = await createTestPostgres();
    try {
      const { db } = database;
      await db.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
      // The schema as it stood before 0004, holding a used and an unused quote.
      const earlier = (await listMigrations()).filter((name) => name < '0004');
      for (const name of earlier)
        await db.exec(await readFile(new URL(`../../../src/cli/db/migrations/${name}`, import.meta.url), 'utf8'));
      await db.exec(
        'CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      for (const name of earlier) await db.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
      const org = '00000000-0000-4000-8000-000000000001';
      await db.query("INSERT INTO orgs (id, name) VALUES ($1, 'o')", [org]);
      await db.query("INSERT INTO org_environments (org_id, environment) VALUES ($1, 'live')", [org]);
      for (const quote of ['qte_used', 'qte_unused']) {
        await db.query(
          `INSERT INTO quotes (id, org_id, environment, buy_currency, sell_currency, buy_amount, sell_amount, amount_currency, rate, mid_rate,
                               spread_bps, sell_usd_value, actor_key, created_at, expires_at)
           VALUES ($1, $2, 'live', 'EUR', 'USD', 1, 1.1, 'EUR', 1.1, 1.1, 0, 1.1, 'k', now(), now() + interval '30 seconds')`,
          [quote, org],
        );
      }
      await db.query(
        `INSERT INTO trades (id, org_id, environment, quote_id, idempotency_key, request_fingerprint, buy_currency, sell_currency, buy_amount,
                             sell_amount, referenced_currency, referenced_amount, rate, sell_usd_value, status, source, actor_id, created_at, updated_at)
         VALUES ('trd_1', $1, 'live', 'qte_used', 'i', 'f', 'EUR', 'USD', 1, 1.1, 'EUR', 1, 1.1, 1.1, 'EXECUTED', 'API', 'usr_1', now(), now())`,
        [org],
      );

      expect((await migrate(db)).applied).toEqual((await listMigrations()).filter((name) => name >= '0004'));
      const { rows } = await db.query<{ id: string; used_by_trade_id: string | null }>(
        'SELECT id, used_by_trade_id FROM quotes ORDER BY id',
      );
      expect(rows).toEqual([
        { id: 'qte_unused', used_by_trade_id: null },
        { id: 'qte_used', used_by_trade_id: 'trd_1' },
      ]);
    } finally {
      await database.drop();
    }
  });
});
