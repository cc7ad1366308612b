/**
 * The system of record the CLI opens: PostgreSQL at DATABASE_URL, or, when it is unset, the
 * embedded PGlite in `${FXGATE_DATA_DIR}/pglite`, locked to this process, the data folder its
 * owner's only (tightened, and said so, when found open to others). Every failure to open
 * becomes a message saying which database and why. PostgreSQL's connections are checked to be
 * what FXGATE_DB_POOL_MODE says they are (src/lib/db/pool-mode.ts), and a statement timeout
 * that does not apply is said.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import type { Config } from '../lib/config.js';
import type { Database } from '../lib/db/database.js';
import { type DbPoolMode, findSharedSession, type SharedSession } from '../lib/db/pool-mode.js';
import { CliError, DataDirLockedError, EXIT_CODES } from '../lib/errors/internal-errors.js';
import type { Closers } from './closers.js';
import { lockDataDir } from './data-dir-lock.js';
import { restrictToOwner } from './data-dir-permissions.js';
import { migrate, type MigrationReport } from './db/migrate.js';
import { openPglite } from './db/pglite-database.js';
import { openPostgres, POSTGRES_DEFAULTS } from './db/postgres-database.js';
import { messageOf } from './exit.js';
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

function unreachable(url: string, error: unknown, hint = ''): CliError {
  const message = `cannot reach PostgreSQL at ${redactUrl(url)} (DATABASE_URL): ${messageOf(error)}${hint}`;
  return new CliError(message, undefined, { cause: error });
}

async function openPostgresChecked(config: Config, url: string, closers: Closers, warn: OpenWarn): Promise<Database> {
  const poolMode = config.FXGATE_DB_POOL_MODE;
  // Before the pool holds a connection: through session pooling, each of the check's two takes a server session.
  if (poolMode === 'session') await refuseSharedSessions(url);
  const db = openPostgres({ connectionString: url, poolMode });
  closers.add('PostgreSQL pool', () => db.close());
  try {
    await db.query('SELECT 1');
  } catch (error) {
    throw unreachable(
      url,
      error,
      isRefusedStartupParameter(error)
        ? '; a pooler such as PgBouncer is in between, which takes no statement timeout as a connection parameter: with FXGATE_DB_POOL_MODE=transaction fxgate sets it in each transaction instead'
        : '',
    );
  }
  await checkStatementTimeout(db, url, poolMode, warn);
  return db;
}

/** Session mode keeps prepared statements on each connection: a pooler that moves a connection between sessions breaks them. */
async function refuseSharedSessions(url: string): Promise<void> {
  let shared: SharedSession | null;
  try {
    shared = await findSharedSession(url);
  } catch (error) {
    throw unreachable(url, error);
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

/**
 * What bounds a statement outside a transaction: in session mode the driver's connection
 * parameter, unless a pooler dropped it (PgBouncer's ignore_startup_parameters); in transaction
 * mode the server's own setting for the role and database alone. Either is said when it is not
 * what fxgate would set.
 */
async function checkStatementTimeout(db: Database, url: string, poolMode: DbPoolMode, warn: OpenWarn): Promise<void> {
  const { rows } = await db.query<{ setting: string; ms: string }>(
    "SELECT current_setting('statement_timeout') AS setting, (extract(epoch FROM current_setting('statement_timeout')::interval) * 1000)::bigint::text AS ms",
  );
  const { setting, ms } = rows[0]!;
  const expected = POSTGRES_DEFAULTS.statementTimeoutMs;
  if (poolMode === 'transaction' && ms === '0')
    warn(
      `fxgate: FXGATE_DB_POOL_MODE=transaction: statements outside a transaction run under the server's own statement_timeout, ` +
        `which is 0 (none) at ${redactUrl(url)}; set one for fxgate's role, e.g. ALTER ROLE <role> SET statement_timeout = '${expected / 1000}s'`,
    );
  if (poolMode === 'session' && ms !== String(expected))
    warn(
      `fxgate: the statement timeout fxgate gives its connections (${expected} ms) did not reach ${redactUrl(url)}: a pooler ` +
        `in between dropped it (PgBouncer's ignore_startup_parameters); statements run under the server's own, ${setting}`,
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
