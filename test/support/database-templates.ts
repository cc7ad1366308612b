/**
 * Migrated databases to copy, made once per test run by the global setup: on PostgreSQL a
 * template database (`CREATE DATABASE ... TEMPLATE`), on PGlite a dump of a migrated database.
 * A test database is then a copy instead of a fresh database migrated again. Both are named by a
 * hash of the migrations, so a changed migration gets new ones; they are built under a temporary
 * name and renamed into place, so a run that starts while another builds never copies half of one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

import { listMigrations, migrate } from '../../src/lib/db/migrate.js';
import { wrapPglite } from '../../src/lib/db/pglite-database.js';
import { openPostgres } from '../../src/lib/db/postgres-database.js';

/** Where the workers find the templates; unset, each test database is migrated from scratch. */
export const TEMPLATE_ENV = { postgres: 'FXGATE_TEST_PG_TEMPLATE', pglite: 'FXGATE_TEST_PGLITE_TEMPLATE' } as const;

const MIGRATIONS_DIR = fileURLToPath(new URL('../../src/lib/db/migrations/', import.meta.url));

async function migrationsHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const name of await listMigrations())
    hash
      .update(name)
      .update('\0')
      .update(await readFile(join(MIGRATIONS_DIR, name)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

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

/** The name of a migrated template database on the server at `adminUrl`, built if missing. */
async function postgresTemplate(adminUrl: string, hash: string): Promise<string> {
  const name = `fxgate_tpl_${hash}`;
  const exists = await withAdmin(
    adminUrl,
    async (admin) => (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1,
  );
  if (exists) return name;
  const building = `fxgate_tplb_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE ${building}`));
  const db = openPostgres({ connectionString: withDatabase(adminUrl, building), maxConnections: 1 });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  await withAdmin(adminUrl, async (admin) => {
    try {
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch {
      // Another run built the same template meanwhile: use theirs.
      await admin.query(`DROP DATABASE IF EXISTS ${building}`);
    }
  });
  return name;
}

/** The path of a dump of a migrated PGlite database, built if missing. */
async function pgliteTemplate(hash: string): Promise<string> {
  const dir = join(tmpdir(), 'fxgate-test-templates');
  const path = join(dir, `pglite-${hash}.tar`);
  const found = await stat(path).then(
    () => true,
    () => false,
  );
  if (found) return path;
  await mkdir(dir, { recursive: true });
  const instance = await PGlite.create();
  const db = wrapPglite(instance);
  try {
    await migrate(db);
    // Uncompressed: every embedded test database loads it, and gunzip was a third of that load.
    const dump = await instance.dumpDataDir('none');
    const building = `${path}.${randomBytes(6).toString('hex')}`;
    await writeFile(building, Buffer.from(await dump.arrayBuffer()));
    await rename(building, path).catch(async () => rm(building, { force: true }));
  } finally {
    await db.close();
  }
  return path;
}

/** Builds (or finds) both templates and tells the workers where they are. */
export async function prepareDatabaseTemplates(adminUrl: string): Promise<void> {
  const hash = await migrationsHash();
  process.env[TEMPLATE_ENV.postgres] = await postgresTemplate(adminUrl, hash);
  process.env[TEMPLATE_ENV.pglite] = await pgliteTemplate(hash);
}
