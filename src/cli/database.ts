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
import { findSharedSession, type SharedSession } from '../lib/db/pool-mode.js';
import { openPostgres } from '../lib/db/postgres-database.js';
import type { Closers } from './closers.js';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.js';
import { restrictToOwner } from './data-dir-permissions.js';
import { CliError, EXIT_CODES, messageOf } from './exit.js';
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

/** PgBouncer's answer to a connection parameter it does not pass on, such as the session driver's statement_timeout. */
function isRefusedStartupParameter(error: unknown): boolean {
  return error instanceof Error && /unsupported startup parameter/.test(error.message);
}

async function openPostgresChecked(config: Config, url: string, closers: Closers, warn: OpenWarn): Promise<Database> {
  const poolMode = config.FXGATE_DB_POOL_MODE;
  const db = openPostgres({ connectionString: url, poolMode });
  closers.add('PostgreSQL pool', () => db.close());
  try {
    await db.query('SELECT 1');
  } catch (error) {
    const hint = isRefusedStartupParameter(error)
      ? '; a pooler such as PgBouncer is in between, which takes no statement timeout as a connection parameter: with FXGATE_DB_POOL_MODE=transaction fxgate sets it in each transaction instead'
      : '';
    throw new CliError(
      `cannot reach PostgreSQL at ${redactUrl(url)} (DATABASE_URL): ${messageOf(error)}${hint}`,
      undefined,
      { cause: error },
    );
  }
  if (poolMode === 'session') await refuseSharedSessions(url);
  else await warnWithoutStatementTimeout(db, url, warn);
  return db;
}

/** Session mode keeps prepared statements on each connection: a pooler that moves a connection between sessions breaks them. */
async function refuseSharedSessions(url: string): Promise<void> {
  let shared: SharedSession | null;
  try {
    shared = await findSharedSession(url);
  } catch (error) {
    throw new CliError(`cannot reach PostgreSQL at ${redactUrl(url)} (DATABASE_URL): ${messageOf(error)}`, undefined, {
      cause: error,
    });
  }
  if (shared === null) return;
  throw new CliError(
    `FXGATE_DB_POOL_MODE is session, but two connections to ${redactUrl(url)} (DATABASE_URL) were served by one ` +
      `PostgreSQL session (server process ${shared.backendPid}): a pooler in transaction pooling is in between ` +
      '(PgBouncer pool_mode = transaction), where statements prepared on a connection are lost. ' +
      'Set FXGATE_DB_POOL_MODE=transaction.',
    EXIT_CODES.usage,
  );
}

/** In transaction mode a statement outside a transaction runs under the role's statement_timeout alone. */
async function warnWithoutStatementTimeout(db: Database, url: string, warn: OpenWarn): Promise<void> {
  const { rows } = await db.query<{ timeout: string }>("SELECT current_setting('statement_timeout') AS timeout");
  if (rows[0]?.timeout !== '0') return;
  warn(
    `fxgate: FXGATE_DB_POOL_MODE=transaction: statements outside a transaction run under the server's own statement_timeout, ` +
      `which is 0 (none) at ${redactUrl(url)}; set one for fxgate's role, e.g. ALTER ROLE <role> SET statement_timeout = '10s'`,
  );
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
    ? openPostgresChecked(config, config.DATABASE_URL, closers, warn)
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
