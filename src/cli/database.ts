/**
 * The system of record the CLI opens: PostgreSQL at DATABASE_URL, or, when it is unset, the
 * embedded PGlite in `${FXGATE_DATA_DIR}/pglite`, locked to this process, the data folder its
 * owner's only (tightened, and said so, when found open to others). Every failure to open
 * becomes a message saying which database and why.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import type { Config } from '../lib/config.js';
import type { Database } from '../lib/db/database.js';
import { migrate, type MigrationReport } from '../lib/db/migrate.js';
import { openPglite } from '../lib/db/pglite-database.js';
import { openPostgres } from '../lib/db/postgres-database.js';
import type { Closers } from './closers.js';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.js';
import { restrictToOwner } from './data-dir-permissions.js';
import { CliError, messageOf } from './exit.js';
import { clearPublishedAdmin } from './state/admin-discovery.js';

export const PGLITE_FOLDER = 'pglite';
export const PGLITE_LOCK_FILE = 'pglite.lock';

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

export function describeDatabase(config: Config): string {
  return config.DATABASE_URL
    ? `PostgreSQL at ${redactUrl(config.DATABASE_URL)}`
    : `embedded PGlite in ${join(resolve(config.FXGATE_DATA_DIR), PGLITE_FOLDER)}`;
}

async function openPostgresChecked(url: string, closers: Closers): Promise<Database> {
  const db = openPostgres({ connectionString: url });
  closers.add('PostgreSQL pool', () => db.close());
  try {
    await db.query('SELECT 1');
  } catch (error) {
    throw new CliError(`cannot reach PostgreSQL at ${redactUrl(url)} (DATABASE_URL): ${messageOf(error)}`, undefined, {
      cause: error,
    });
  }
  return db;
}

/** Where opening reports what does not stop it: the run's stderr. */
export type OpenWarn = (line: string) => void;

async function openEmbedded(dataDir: string, closers: Closers, warn: OpenWarn): Promise<Database> {
  const folder = resolve(dataDir);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  try {
    closers.add('data folder lock', await lockDataDir(join(folder, PGLITE_LOCK_FILE)));
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw error;
    throw new CliError(
      `${folder} (FXGATE_DATA_DIR) is in use by another fxgate process (pid ${error.pid}): the embedded database serves ` +
        'one process at a time. Stop that process first, or set DATABASE_URL so that several processes share PostgreSQL.',
      undefined,
      { cause: error },
    );
  }
  // What an earlier holder published names a listener that is gone.
  await clearPublishedAdmin(folder);
  // Once the lock is held: the holder alone changes the folder.
  const { entries } = await restrictToOwner(folder);
  if (entries > 0)
    warn(
      `fxgate: ${folder} (FXGATE_DATA_DIR) was open to other users: took group and other access off ${entries} ${entries === 1 ? 'entry' : 'entries'} under it; the data folder is its owner's only`,
    );
  try {
    const db = await openPglite(join(folder, PGLITE_FOLDER));
    closers.add('embedded database', () => db.close());
    return db;
  } catch (error) {
    throw new CliError(
      `cannot open the embedded database in ${join(folder, PGLITE_FOLDER)}: ${messageOf(error)}`,
      undefined,
      { cause: error },
    );
  }
}

/** Opens the configured database; closing it is registered with closers. */
export function openDatabase(config: Config, closers: Closers, warn: OpenWarn): Promise<Database> {
  return config.DATABASE_URL
    ? openPostgresChecked(config.DATABASE_URL, closers)
    : openEmbedded(config.FXGATE_DATA_DIR, closers, warn);
}

export async function migrateDatabase(db: Database, config: Config): Promise<MigrationReport> {
  try {
    return await migrate(db);
  } catch (error) {
    throw new CliError(`migrating the ${describeDatabase(config)} failed: ${messageOf(error)}`, undefined, {
      cause: error,
    });
  }
}
