/**
 * The sealed columns of a database as a whole: which keys their rows are sealed under (one cheap
 * SELECT per column, by the key id each sealed text names), the upgrade from the keys earlier
 * versions kept in the database, and re-sealing under a keyring's sealing key. The parts declare
 * their columns (SealedColumn); this module knows only the formats (sealing-keyring.ts).
 *
 * Table and column names come from those declarations, never from input.
 */
import type { Database, Queryable } from '../db/database.js';
import { SealedSecretError } from '../errors/internal-errors.js';
import { failpoint } from '../failpoints.js';
import { openFormerSealed, sealedKeyId, type SealingKeyring } from './sealing-keyring.js';

/** A column of sealed secrets, its rows named by their `id`. */
export interface SealedColumn {
  readonly table: string;
  readonly column: string;
  /** What a row's secret is bound to (the associated data it is sealed with). */
  readonly binding: (id: string) => string;
  /** The service_secrets row whose key earlier versions sealed this column under (`v1.`). */
  readonly formerKeyName: string;
}

/**
 * Seals `secret` under the keyring's sealing key into its row, guarded: only if the row still holds
 * what was read (`row.secret`). Whether it did.
 */
async function resealRow(
  db: Queryable,
  keyring: SealingKeyring,
  { table, column, binding }: Pick<SealedColumn, 'table' | 'column' | 'binding'>,
  row: { readonly id: string; readonly secret: string },
  secret: string,
): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE ${table} SET ${column} = $2 WHERE id = $1 AND ${column} = $3`, [
    row.id,
    keyring.seal(secret, binding(row.id)),
    row.secret,
  ]);
  return rowCount !== 0;
}

/** The prefix of a secret stored as it is, as versions before sealing wrote them. */
const PLAINTEXT_PREFIX = 'whsec_';

/**
 * How a row holds its secret: sealed under a key (`key`, with its id), sealed by an earlier
 * version under a key in the database (`former`), as it is (`plaintext`), or none of those
 * (`unreadable`, a damaged row).
 */
export type SealedState = 'key' | 'former' | 'plaintext' | 'unreadable';

export interface SealedRowCount {
  readonly table: string;
  readonly state: SealedState;
  /** For `key`: the id the sealed text names. */
  readonly keyId: string | null;
  readonly rows: number;
}

/** Rows per table, state and key id, over the columns. */
export async function countSealedRows(db: Queryable, columns: readonly SealedColumn[]): Promise<SealedRowCount[]> {
  const counts: SealedRowCount[] = [];
  for (const { table, column } of columns) {
    const { rows } = await db.query<{ state: SealedState; key_id: string | null; rows: number }>(
      `SELECT CASE WHEN starts_with(s, 'v2.') THEN 'key' WHEN starts_with(s, 'v1.') THEN 'former'
                   WHEN starts_with(s, '${PLAINTEXT_PREFIX}') THEN 'plaintext' ELSE 'unreadable' END AS state,
              CASE WHEN starts_with(s, 'v2.') THEN split_part(s, '.', 2) END AS key_id,
              count(*)::int AS rows
         FROM (SELECT ${column} AS s FROM ${table} WHERE ${column} IS NOT NULL) sealed
        GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    for (const row of rows) counts.push({ table, state: row.state, keyId: row.key_id, rows: row.rows });
  }
  return counts;
}

/** Rows per key id they are sealed under, over every table. */
export function rowsByKeyId(counts: readonly SealedRowCount[]): Map<string, number> {
  const byKey = new Map<string, number>();
  for (const { state, keyId, rows } of counts)
    if (state === 'key' && keyId !== null) byKey.set(keyId, (byKey.get(keyId) ?? 0) + rows);
  return byKey;
}

/** Rows in a state, over every table. */
export function rowsIn(counts: readonly SealedRowCount[], state: SealedState): number {
  return counts.filter((count) => count.state === state).reduce((sum, count) => sum + count.rows, 0);
}

export interface UpgradeReport {
  /** Rows an earlier version sealed under a key in the database, now sealed under the keyring's sealing key. */
  readonly resealed: number;
  /** Rows that held their secret as it is, now sealed. */
  readonly sealed: number;
  /** Former rows left as they were: their key is gone from the database, or they do not open under it. */
  readonly stranded: number;
  /** The service_secrets rows deleted (the keys earlier versions sealed under). */
  readonly deletedKeys: readonly string[];
}

/** Passed after each column is rewritten, before the keys are deleted: a test makes the upgrade fail half-way there. */
export const UPGRADE_FAILPOINT = 'sealed-rows.upgrade';

/**
 * Seals under the keyring every row an earlier version left (sealed under a key in the database,
 * or as it is) and deletes those keys from service_secrets, in one transaction: all of it or
 * nothing. The key rows are locked first, so processes starting together do it once; each row is
 * rewritten only if it still holds what was read.
 */
export async function upgradeSealedRows(
  db: Database,
  keyring: SealingKeyring,
  columns: readonly SealedColumn[],
): Promise<UpgradeReport> {
  const names = [...new Set(columns.map((column) => column.formerKeyName))].sort();
  return db.transaction(async (tx) => {
    const { rows: keys } = await tx.query<{ name: string; value: string }>(
      'SELECT name, value FROM service_secrets WHERE name = ANY($1::text[]) ORDER BY name FOR UPDATE',
      [names],
    );
    const formerKeys = new Map(keys.map((row) => [row.name, Buffer.from(row.value, 'base64')]));
    let resealed = 0;
    let sealed = 0;
    let stranded = 0;
    for (const { table, column, binding, formerKeyName } of columns) {
      const { rows } = await tx.query<{ id: string; secret: string }>(
        `SELECT id::text AS id, ${column} AS secret FROM ${table}
          WHERE starts_with(${column}, 'v1.') OR starts_with(${column}, '${PLAINTEXT_PREFIX}') ORDER BY id FOR UPDATE`,
      );
      for (const row of rows) {
        const plaintext = row.secret.startsWith(PLAINTEXT_PREFIX);
        const secret = plaintext ? row.secret : openFormer(row.secret, binding(row.id), formerKeys.get(formerKeyName));
        if (secret === null) {
          stranded++;
          continue;
        }
        if (!(await resealRow(tx, keyring, { table, column, binding }, row, secret))) continue;
        if (plaintext) sealed++;
        else resealed++;
      }
      failpoint(UPGRADE_FAILPOINT);
    }
    if (keys.length > 0)
      await tx.query('DELETE FROM service_secrets WHERE name = ANY($1::text[])', [keys.map((row) => row.name)]);
    return { resealed, sealed, stranded, deletedKeys: keys.map((row) => row.name) };
  });
}

function openFormer(sealed: string, boundTo: string, key: Buffer | undefined): string | null {
  if (key === undefined) return null;
  try {
    return openFormerSealed(sealed, boundTo, key);
  } catch (error) {
    if (error instanceof SealedSecretError) return null;
    throw error;
  }
}

export interface ResealReport {
  /** Rows now sealed under the sealing key that were under another. */
  readonly resealed: number;
  /** Rows another process rewrote between this one's read and its write (a concurrent reseal): left to it. */
  readonly skipped: number;
  /** Rows not opened, per key id they name: a key the keyring does not hold. */
  readonly unknownKeys: ReadonlyMap<string, number>;
  /** Rows under a key the keyring holds that do not open all the same (damaged, or copied from another row). */
  readonly damaged: number;
}

/**
 * Re-seals under the keyring's sealing key every row sealed under another key it holds. Each row
 * is its own guarded UPDATE (only if it still holds what was read), so running servers and a
 * concurrent reseal do not clash, and no long transaction is held.
 */
export async function resealRows(
  db: Queryable,
  keyring: SealingKeyring,
  columns: readonly SealedColumn[],
): Promise<ResealReport> {
  let resealed = 0;
  let skipped = 0;
  let damaged = 0;
  const unknownKeys = new Map<string, number>();
  for (const { table, column, binding } of columns) {
    const { rows } = await db.query<{ id: string; secret: string }>(
      `SELECT id::text AS id, ${column} AS secret FROM ${table}
        WHERE starts_with(${column}, 'v2.') AND split_part(${column}, '.', 2) <> $1 ORDER BY id`,
      [keyring.sealingKeyId],
    );
    for (const row of rows) {
      const keyId = sealedKeyId(row.secret) ?? row.secret.split('.')[1] ?? '';
      if (!keyring.holds(keyId)) {
        unknownKeys.set(keyId, (unknownKeys.get(keyId) ?? 0) + 1);
        continue;
      }
      let secret: string;
      try {
        secret = keyring.open(row.secret, binding(row.id));
      } catch (error) {
        if (!(error instanceof SealedSecretError)) throw error;
        damaged++;
        continue;
      }
      if (await resealRow(db, keyring, { table, column, binding }, row, secret)) resealed++;
      else skipped++;
    }
  }
  return { resealed, skipped, unknownKeys, damaged };
}
