/**
 * Migrated databases to copy, made once per test run by the global setup: on PostgreSQL a
 * template database (`CREATE DATABASE ... TEMPLATE`), on PGlite a dump of a migrated database.
 * A test database is then a copy instead of a fresh database migrated again. Both are the run's
 * (test-run.ts): the template is `fxgate_t_<run>_template`, the dump is in the run's temp folder,
 * and both go with the run. The template is built under a temporary name and renamed into place,
 * so a run killed while building leaves no half-migrated template to copy.
 */
import { randomBytes } from 'node:crypto';
import { stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

import { migrate } from '../../src/cli/db/migrate.js';
import { wrapPglite } from '../../src/cli/db/pglite-database.js';
import { openPostgres } from '../../src/cli/db/postgres-database.js';
import { testDatabaseName } from './test-run.js';

/** Where the workers find the templates; unset, each test database is migrated from scratch. */
export const TEMPLATE_ENV = { postgres: 'FXGATE_TEST_PG_TEMPLATE', pglite: 'FXGATE_TEST_PGLITE_TEMPLATE' } as const;

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function withAdmin<T>(adminUrl: string, fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

/** The name of the run's migrated template database on the server at `adminUrl`, built if missing. */
async function postgresTemplate(adminUrl: string): Promise<string> {
  const name = testDatabaseName('template');
  const exists = await withAdmin(
    adminUrl,
    async (admin) => (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1,
  );
  if (exists) return name;
  const building = testDatabaseName(`building${randomBytes(6).toString('hex')}`);
  await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE ${building}`));
  const db = openPostgres({ connectionString: withDatabase(adminUrl, building), maxConnections: 1 });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  await withAdmin(adminUrl, (admin) => admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`));
  return name;
}

/** The path of the run's dump of a migrated PGlite database (in the run's temp folder), built if missing. */
async function pgliteTemplate(): Promise<string> {
  const path = join(tmpdir(), 'pglite-template.tar');
  const found = await stat(path).then(
    () => true,
    () => false,
  );
  if (found) return path;
  const instance = await PGlite.create();
  const db = wrapPglite(instance);
  try {
    await migrate(db);
    // Uncompressed: every embedded test database loads it, and gunzip was a third of that load.
    const dump = await instance.dumpDataDir('none');
    await writeFile(path, Buffer.from(await dump.arrayBuffer()));
  } finally {
    await db.close();
  }
  return path;
}

/** Builds (or finds) both templates and tells the workers where they are. */
export async function prepareDatabaseTemplates(adminUrl: string): Promise<void> {
  process.env[TEMPLATE_ENV.postgres] = await postgresTemplate(adminUrl);
  process.env[TEMPLATE_ENV.pglite] = await pgliteTemplate();
}
