/**
 * The keyring a process seals and opens webhook secrets with, resolved once at start-up: the keys
 * the configuration gives (FXGATE_SECRETS_KEY, FXGATE_SECRETS_KEY_FILE), or else, on the embedded
 * database, the key file beside it (`<FXGATE_DATA_DIR>/secrets.key`, made on first start); on
 * PostgreSQL without a key, a refusal. Before a process uses it, what earlier versions left is
 * sealed under it (the upgrade), and a database holding rows sealed under a key it was not given
 * stops the start (the start-up check), naming key ids, never keys.
 *
 * Reads and writes only the key file in the data folder; the rows through lib/secrets.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { ENDPOINT_SECRET_COLUMN } from '../core/events/webhook-endpoints.js';
import { LEGACY_SEALED_COLUMNS } from '../gateway/webhooks/legacy-webhooks.js';
import { type Config, configuredKeyring } from '../lib/config.js';
import type { Database, Queryable } from '../lib/db/database.js';
import { CliError } from '../lib/errors/internal-errors.js';
import {
  countSealedRows,
  rowsByKeyId,
  rowsIn,
  type SealedColumn,
  type SealedRowCount,
  upgradeSealedRows,
} from '../lib/secrets/sealed-rows.js';
import type { SealingKeyring } from '../lib/secrets/sealing-keyring.js';
import { generateSealingKey, keyEntriesOfFile, keyFileText, keyringOf } from '../lib/secrets/sealing-keys.js';
import { messageOf, usageError } from './exit.js';
import type { Warn } from './runtime.js';

/** The sealed columns each part holds; `fxgate all` and `fxgate secrets` work on both. */
export const CORE_SEALED_COLUMNS: readonly SealedColumn[] = [ENDPOINT_SECRET_COLUMN];
export const GATEWAY_SEALED_COLUMNS: readonly SealedColumn[] = LEGACY_SEALED_COLUMNS;
export const ALL_SEALED_COLUMNS: readonly SealedColumn[] = [...CORE_SEALED_COLUMNS, ...GATEWAY_SEALED_COLUMNS];

/** The embedded default's key file, in FXGATE_DATA_DIR beside the database it opens. */
export const EMBEDDED_KEY_FILE = 'secrets.key';

export function embeddedKeyPath(config: Pick<Config, 'FXGATE_DATA_DIR'>): string {
  return join(config.FXGATE_DATA_DIR, EMBEDDED_KEY_FILE);
}

const KEY_FILE_COMMENT = [
  'The key that seals the webhook secrets of the embedded database in this folder (one key a line, the first sealing).',
  'Keep it apart from backups of this folder: together they open every secret; without it, none opens.',
].join('\n');

/** A keyring and where its keys came from, for messages (never the keys). */
export interface ResolvedKeyring {
  readonly keyring: SealingKeyring;
  /** `FXGATE_SECRETS_KEY`, `FXGATE_SECRETS_KEY_FILE (<path>)` or the embedded key file's path. */
  readonly source: string;
}

function configured(config: Config): ResolvedKeyring | null {
  const keyring = configuredKeyring(config);
  if (keyring === undefined) return null;
  return {
    keyring,
    source: config.FXGATE_SECRETS_KEY !== undefined ? 'FXGATE_SECRETS_KEY' : 'FXGATE_SECRETS_KEY_FILE',
  };
}

/** The embedded key file's keyring, or null when there is no such file. */
async function readEmbeddedKeyFile(path: string): Promise<ResolvedKeyring | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CliError(`cannot read the embedded database's key file ${path}: ${messageOf(error)}`, undefined, {
      cause: error,
    });
  }
  const made = keyringOf(keyEntriesOfFile(text, path));
  if ('keyring' in made) return { keyring: made.keyring, source: path };
  throw usageError(
    `the embedded database's key file ${path} is damaged: ${made.problems.join('; ')}. Put back the copy kept apart from the data folder, or give the key in FXGATE_SECRETS_KEY.`,
  );
}

/** The keys given to this process, made nowhere: configured, or the embedded key file when there is one; null otherwise. */
export async function givenKeyring(config: Config): Promise<ResolvedKeyring | null> {
  return (
    configured(config) ?? (config.DATABASE_URL === undefined ? readEmbeddedKeyFile(embeddedKeyPath(config)) : null)
  );
}

/** On PostgreSQL the key must come from the configuration: one made here would be this process's alone. */
export function noKeyOnPostgres(): CliError {
  return usageError(
    'webhook secrets are sealed with a key kept out of the database, and on PostgreSQL (DATABASE_URL) it must be given: ' +
      'set FXGATE_SECRETS_KEY to a key made by `fxgate secrets generate-key` (or FXGATE_SECRETS_KEY_FILE to a file holding it), ' +
      'the same in every process of the deployment, and keep it apart from the database and its backups',
  );
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

function listKeys(byKey: ReadonlyMap<string, number>): string {
  return [...byKey].map(([keyId, rows]) => `key ${keyId} (${plural(rows, 'row')})`).join(', ');
}

/**
 * The embedded key file is made only for a database that holds no secret sealed under another
 * key, in any part's column: one folder serves every part.
 */
async function makeEmbeddedKeyFile(config: Config, db: Queryable): Promise<ResolvedKeyring> {
  const path = embeddedKeyPath(config);
  const sealed = rowsByKeyId(await countSealedRows(db, ALL_SEALED_COLUMNS));
  if (sealed.size > 0) {
    throw usageError(
      `the embedded database holds webhook secrets sealed under ${listKeys(sealed)}, and ${path}, the key file that opens them, is missing. ` +
        'Put back the secrets.key kept apart from this data folder (or give its key in FXGATE_SECRETS_KEY); no new key is made while secrets sealed under another are there.',
    );
  }
  try {
    // wx: a file another process made in between is read, not replaced.
    await writeFile(path, keyFileText([generateSealingKey()], KEY_FILE_COMMENT), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const made = await readEmbeddedKeyFile(path);
  if (made === null) throw new CliError(`${path} vanished as it was made`);
  return made;
}

/** The check: every key id the columns' rows name must be one the keyring holds. */
export function checkSealedRows(counts: readonly SealedRowCount[], resolved: ResolvedKeyring): void {
  const unknown = new Map([...rowsByKeyId(counts)].filter(([keyId]) => !resolved.keyring.holds(keyId)));
  if (unknown.size === 0) return;
  const held = resolved.keyring.keyIds.join(', ');
  throw usageError(
    `the database holds webhook secrets sealed under keys this process was not given: ${listKeys(unknown)}; ` +
      `it holds key ${held} (${resolved.source}). Give the key that sealed them in FXGATE_SECRETS_KEY, after the new one while rotating ` +
      '(FXGATE_SECRETS_KEY=<new key>,<old key>), then run `fxgate secrets reseal` to move every row under the new one. `fxgate secrets status` lists the key ids in use.',
  );
}

/** Says what can never be opened: rows sealed under a key an earlier version kept that is gone, and damaged rows. */
export function warnUnopenable(counts: readonly SealedRowCount[], warn: Warn): void {
  const former = rowsIn(counts, 'former');
  if (former > 0)
    warn(
      `fxgate: warning: ${plural(former, 'webhook secret is', 'webhook secrets are')} sealed by an earlier version under a key it kept in the database that is gone (or does not open them): ` +
        'their deliveries fail (nothing is sent); make the v3 endpoint or the legacy subscription again',
    );
  const unreadable = rowsIn(counts, 'unreadable');
  if (unreadable > 0)
    warn(
      `fxgate: warning: ${plural(unreadable, 'stored webhook secret is', 'stored webhook secrets are')} in no known format (damaged): their deliveries fail`,
    );
}

/**
 * The keys given to this process, or on the embedded database the key file made now (first
 * start); throws CliError on PostgreSQL without a key. Nothing is checked.
 */
export async function resolveKeyring(config: Config, db: Queryable): Promise<ResolvedKeyring> {
  const given = await givenKeyring(config);
  if (given !== null) return given;
  if (config.DATABASE_URL !== undefined) throw noKeyOnPostgres();
  return makeEmbeddedKeyFile(config, db);
}

/**
 * The keyring of a process that seals and opens the columns' secrets: resolved (resolveKeyring),
 * the upgrade done, the database checked. Throws CliError when there is no key to be had or rows
 * are sealed under a key it was not given.
 */
export async function openKeyring(
  config: Config,
  db: Database,
  columns: readonly SealedColumn[],
  warn: Warn,
): Promise<ResolvedKeyring> {
  const resolved = await resolveKeyring(config, db);
  // Checked before the upgrade too: a wrong key must not seal anything before it is refused.
  checkSealedRows(await countSealedRows(db, columns), resolved);
  const upgrade = await upgradeSealedRows(db, resolved.keyring, columns);
  const moved = upgrade.resealed + upgrade.sealed;
  const said: string[] = [];
  if (moved > 0)
    said.push(
      `sealed ${plural(moved, 'webhook secret')} an earlier version stored (${upgrade.resealed} under the keys it kept in the database, ` +
        `${upgrade.sealed} as ${upgrade.sealed === 1 ? 'it was' : 'they were'}) under key ${resolved.keyring.sealingKeyId} (${resolved.source})`,
    );
  if (upgrade.deletedKeys.length > 0)
    said.push(
      `the sealing keys ${moved > 0 ? 'it' : 'an earlier version'} kept in the database (${upgrade.deletedKeys.join(', ')}) are deleted`,
    );
  if (said.length > 0) warn(`fxgate: ${said.join('; ')}`);
  const counts = await countSealedRows(db, columns);
  checkSealedRows(counts, resolved);
  warnUnopenable(counts, warn);
  return resolved;
}
