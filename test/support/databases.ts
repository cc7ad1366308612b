/**
 * Throwaway databases for tests: each call makes a fresh, migrated database, on the real
 * PostgreSQL server (a new database per call, dropped afterwards) or on in-memory PGlite. Each is
 * a copy of the run's migrated template (database-templates.ts) when the global setup made one,
 * and migrated from scratch otherwise. In the `pgbouncer` vitest project (pgbouncer-setup.ts) a
 * PostgreSQL database is made on the server as ever, and reached through the run's PgBouncer in
 * transaction pooling: its `url` and its `db` (in FXGATE_DB_POOL_MODE=transaction) both go there.
 * Each is named for the run (test-run.ts), so the run's end, or a later run's sweep, drops one a
 * test failed to drop.
 */
import { readFile } from 'node:fs/promises';

import pg from 'pg';

import { migrate } from '../../src/cli/db/migrate.js';
import { openPglite } from '../../src/cli/db/pglite-database.js';
import { openPostgres, type PostgresOptions } from '../../src/cli/db/postgres-database.js';
import type { Database } from '../../src/lib/db/database.js';
import type { DbPoolMode } from '../../src/lib/db/pool-mode.js';
import { TEMPLATE_ENV } from './database-templates.js';
import { testPgBouncer } from './pgbouncer-setup.js';
import { testServices } from './services.js';
import { testDatabaseName } from './test-run.js';

export interface TestDatabase {
  readonly db: Database;
  /** Connection string of the new database (PostgreSQL only): through the run's PgBouncer when it has one. */
  readonly url: string | null;
  drop(): Promise<void>;
}

/** How this run's test databases are reached: `transaction` through the `pgbouncer` project's PgBouncer. */
export function testPoolMode(): DbPoolMode {
  return testPgBouncer() === null ? 'session' : 'transaction';
}

/** The URL of the test database `name`: on the run's PostgreSQL, or through its PgBouncer in the `pgbouncer` project. */
export function testDatabaseUrl(name: string): string {
  const direct = withDatabase(testServices().databaseUrl, name);
  return testPgBouncer()?.urlFor(direct) ?? direct;
}

/** A pool of a test's own on a test database's `url`, in the run's pool mode (a second process's, say). */
export function openTestPostgres(url: string, options: Omit<PostgresOptions, 'connectionString' | 'poolMode'> = {}) {
  return openPostgres({ ...options, connectionString: url, poolMode: testPoolMode() });
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function createTestPostgres(): Promise<TestDatabase> {
  return createPostgres(process.env[TEMPLATE_ENV.postgres]);
}

/**
 * A copy of a test database, as a dump restored elsewhere would be (CREATE DATABASE ... TEMPLATE).
 * TEMPLATE wants no other session on the source, so the source's sessions are ended first; its
 * pool connects again on its next query.
 */
export async function copyTestPostgres(source: TestDatabase): Promise<TestDatabase> {
  const name = new URL(source.url!).pathname.slice(1);
  const admin = new pg.Client({ connectionString: testServices().databaseUrl });
  await admin.connect();
  try {
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
  } finally {
    await admin.end();
  }
  return createPostgres(name);
}

async function createPostgres(template: string | undefined): Promise<TestDatabase> {
  const adminUrl = testServices().databaseUrl;
  const name = testDatabaseName();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = testDatabaseUrl(name);
  const db = openTestPostgres(url, { maxConnections: 30 });
  await migrate(db);
  return {
    db,
    url,
    async drop() {
      // A test that closed the pool itself (to see the database go down) still gets its database dropped.
      await db.close().catch(() => undefined);
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      try {
        await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}

export async function createTestPglite(): Promise<TestDatabase> {
  const template = process.env[TEMPLATE_ENV.pglite];
  const db = await openPglite(undefined, template ? { loadDataDir: new Blob([await readFile(template)]) } : {});
  await migrate(db);
  return { db, url: null, drop: () => db.close() };
}

/** Both drivers, for suites that must pass on each (`describe.each(DATABASE_DRIVERS)`). */
export const DATABASE_DRIVERS = [
  { driver: 'postgres', create: createTestPostgres },
  { driver: 'pglite', create: createTestPglite },
] as const;
