/**
 * Versioned SQL migrations: the files in ./migrations, applied in name order, each once, each in
 * its own transaction, recorded in schema_migrations. The same files run on PostgreSQL and
 * PGlite. An advisory lock makes concurrent start-ups of several processes safe.
 */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import type { Database } from '../../lib/db/database.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
/** Any constant works; it only has to be the same in every fxgate process. */
const MIGRATION_LOCK_ID = 0x66786761; // 'fxga'

export interface MigrationReport {
  readonly applied: string[];
  readonly alreadyApplied: string[];
}

export async function listMigrations(): Promise<string[]> {
  return (await readdir(MIGRATIONS_DIR)).filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name)).sort();
}

export async function migrate(db: Database): Promise<MigrationReport> {
  const files = await listMigrations();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         name text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const done = new Set(
      (await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    const applied: string[] = [];
    for (const name of files) {
      if (done.has(name)) continue;
      const sql = await readFile(`${MIGRATIONS_DIR}${name}`, 'utf8');
      await tx.exec(sql);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
      applied.push(name);
    }
    return { applied, alreadyApplied: files.filter((f) => done.has(f)) };
  });
}
