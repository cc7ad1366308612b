/**
 * `fxgate secrets status | reseal | generate-key`: the keys webhook signing secrets are sealed
 * with (src/cli/sealing.ts, docs/operations.md#secrets-and-keys). `status` lists the key ids the
 * rows are sealed under and which the process was given; `reseal` seals every row under the
 * sealing key (the first given), after which the others can be removed; `generate-key` prints a
 * new key.
 *
 * status and reseal are state operations: on the database this command opens, with its own keys;
 * or, while a running fxgate holds the embedded data folder, through that process's admin
 * listener, with the keys that process was given (reseal works while `npm start` runs).
 */
import { z } from 'zod';

import type { Queryable } from '../../lib/db/database.js';
import { EXIT_CODES } from '../../lib/errors/internal-errors.js';
import {
  countSealedRows,
  resealRows,
  rowsByKeyId,
  type SealedRowCount,
  upgradeSealedRows,
} from '../../lib/secrets/sealed-rows.js';
import type { CliRun } from '../io.js';
import { ALL_SEALED_COLUMNS } from '../sealing.js';
import { defineOperation } from '../state/operation.js';
import { type StateSession, withState } from '../state/session.js';
import { textTable } from '../text-table.js';

const countSchema = z.object({
  table: z.string(),
  state: z.enum(['key', 'former', 'plaintext', 'unreadable']),
  keyId: z.string().nullable(),
  rows: z.number().int(),
});

const keysSchema = z
  .object({ source: z.string(), sealingKeyId: z.string(), keyIds: z.array(z.string()).readonly() })
  .nullable();

const statusSchema = z.object({
  keys: keysSchema,
  counts: z.array(countSchema).readonly(),
  /** The sealing keys earlier versions kept in the database that are still there (re-sealed from at the next start). */
  formerKeys: z.array(z.string()).readonly(),
});
export type SecretsStatus = z.output<typeof statusSchema>;

const resealSchema = z.object({
  keys: keysSchema.unwrap(),
  upgraded: z.object({
    resealed: z.number().int(),
    sealed: z.number().int(),
    stranded: z.number().int(),
    deletedKeys: z.array(z.string()).readonly(),
  }),
  resealed: z.number().int(),
  skipped: z.number().int(),
  damaged: z.number().int(),
  unknownKeys: z.array(z.object({ keyId: z.string(), rows: z.number().int() })).readonly(),
  counts: z.array(countSchema).readonly(),
});
export type ResealReport = z.output<typeof resealSchema>;

/** The service_secrets rows earlier versions sealed under that are still there. */
async function formerKeysIn(db: Queryable): Promise<string[]> {
  const names = [...new Set(ALL_SEALED_COLUMNS.map((column) => column.formerKeyName))];
  const { rows } = await db.query<{ name: string }>(
    'SELECT name FROM service_secrets WHERE name = ANY($1::text[]) ORDER BY name',
    [names],
  );
  return rows.map((row) => row.name);
}

/** What the secrets commands do with the database, directly or through a running fxgate's admin listener. */
export const secretsOperations = {
  status: defineOperation({
    name: 'secrets/status',
    input: z.object({}),
    output: statusSchema,
    run: async ({ db, sealing }) => {
      const given = await sealing.given();
      return {
        keys:
          given === null
            ? null
            : { source: given.source, sealingKeyId: given.keyring.sealingKeyId, keyIds: given.keyring.keyIds },
        counts: await countSealedRows(db, ALL_SEALED_COLUMNS),
        formerKeys: await formerKeysIn(db),
      };
    },
  }),
  reseal: defineOperation({
    name: 'secrets/reseal',
    input: z.object({}),
    output: resealSchema,
    run: async ({ db, sealing }) => {
      const { keyring, source } = await sealing.resolve();
      // What an earlier version left first (an old process may still seal with an in-database key), then every other key.
      const upgraded = await upgradeSealedRows(db, keyring, ALL_SEALED_COLUMNS);
      const report = await resealRows(db, keyring, ALL_SEALED_COLUMNS);
      return {
        keys: { source, sealingKeyId: keyring.sealingKeyId, keyIds: keyring.keyIds },
        upgraded,
        resealed: report.resealed,
        skipped: report.skipped,
        damaged: report.damaged,
        unknownKeys: [...report.unknownKeys].map(([keyId, rows]) => ({ keyId, rows })),
        counts: await countSealedRows(db, ALL_SEALED_COLUMNS),
      };
    },
  }),
};

/** How a count's rows are named in the table: the key id, or what they are instead. */
function keyLabel(count: Pick<SealedRowCount, 'state' | 'keyId'>): string {
  switch (count.state) {
    case 'key':
      return count.keyId ?? '';
    case 'former':
      return '(in-database key of an earlier version)';
    case 'plaintext':
      return '(not sealed, an earlier version)';
    case 'unreadable':
      return '(damaged)';
  }
}

/** Rows per key id or state, every given key listed, the sealing one first. */
export function statusTable(status: SecretsStatus): string[] {
  const rows = new Map<string, { rows: number; given: string }>();
  const keys = status.keys;
  for (const keyId of keys?.keyIds ?? [])
    rows.set(keyId, { rows: 0, given: keyId === keys?.sealingKeyId ? 'yes, seals' : 'yes, opens' });
  // Whether the key still there opens them is known only by trying: the next start or reseal does.
  const startFixes =
    status.formerKeys.length > 0 ? 'no: the next start re-seals those its key opens' : 'no: its key is gone';
  const givenOf = (state: SealedRowCount['state']): string =>
    state === 'plaintext'
      ? 'not sealed: sealed at the next start'
      : state === 'former'
        ? startFixes
        : 'no: these do not open';
  for (const count of status.counts) {
    const label = keyLabel(count);
    const entry = rows.get(label) ?? { rows: 0, given: givenOf(count.state) };
    rows.set(label, { ...entry, rows: entry.rows + count.rows });
  }
  return textTable(
    ['KEY ID', 'ROWS', 'GIVEN'],
    [...rows].map(([label, entry]) => [label, entry.rows, entry.given]),
  );
}

/** Where the keys came from; through an admin listener, whose they are. */
function keysLine(keys: SecretsStatus['keys'], session: StateSession): string {
  const whose =
    session.via.kind === 'admin listener'
      ? `, the keys of fxgate (pid ${session.via.pid}), which holds the data folder`
      : '';
  return keys === null
    ? 'sealing key: none given (FXGATE_SECRETS_KEY and FXGATE_SECRETS_KEY_FILE are unset; on the embedded database, the first start makes secrets.key)'
    : `sealing key: ${keys.sealingKeyId} (${keys.source}${whose})`;
}

/** Rows not under the sealing key after a reseal: what keeps the other keys needed. */
function leftBehind(report: ResealReport): number {
  return report.counts
    .filter((count) => count.state !== 'key' || count.keyId !== report.keys.sealingKeyId)
    .reduce((sum, count) => sum + count.rows, 0);
}

function printReseal(run: CliRun, report: ResealReport, session: StateSession): void {
  run.out(keysLine(report.keys, session));
  const { upgraded } = report;
  if (upgraded.resealed + upgraded.sealed > 0 || upgraded.deletedKeys.length > 0)
    run.out(
      `upgraded: ${upgraded.resealed} rows from the in-database keys of an earlier version, ${upgraded.sealed} rows stored unsealed; deleted from the database: ${upgraded.deletedKeys.join(', ') || 'none'}`,
    );
  run.out(
    `re-sealed: ${report.resealed} rows${report.skipped > 0 ? ` (${report.skipped} rewritten meanwhile by another process, left to it)` : ''}`,
  );
  for (const { keyId, rows } of report.unknownKeys)
    run.err(
      `fxgate: ${rows} rows are sealed under key ${keyId}, which was not given: add it to FXGATE_SECRETS_KEY (after the sealing key) and run reseal again`,
    );
  if (report.damaged > 0) run.err(`fxgate: ${report.damaged} rows do not open under the key they name (damaged)`);
  const left = leftBehind(report);
  if (left === 0) {
    const others = report.keys.keyIds.filter((keyId) => keyId !== report.keys.sealingKeyId);
    run.out(
      `every sealed secret is under key ${report.keys.sealingKeyId}` +
        (others.length > 0 ? `: key ${others.join(', ')} can be removed from the configuration` : ''),
    );
  } else {
    run.err(`fxgate: ${left} rows are not under key ${report.keys.sealingKeyId}; keep the keys that open them`);
    run.exitCode = EXIT_CODES.failure;
  }
}

/** `fxgate secrets status`: the key ids and their row counts, as a table or JSON. */
export async function printSecretsStatus(run: CliRun, options: { readonly json?: boolean }): Promise<void> {
  await withState(run, async (session) => {
    const status = await session.run(secretsOperations.status, {});
    if (options.json) {
      run.out(JSON.stringify(status));
      return;
    }
    run.out(keysLine(status.keys, session));
    for (const line of statusTable(status)) run.out(line);
    const unknown = [...rowsByKeyId(status.counts).keys()].filter((keyId) => !status.keys?.keyIds.includes(keyId));
    if (unknown.length > 0)
      run.out(
        `not given: key ${unknown.join(', ')}; a server refuses to start without ${unknown.length === 1 ? 'it' : 'them'}`,
      );
  });
}

/** `fxgate secrets reseal`: every secret under the sealing key; exit 1 when rows are left under a key not given. */
export async function reseal(run: CliRun, options: { readonly json?: boolean }): Promise<void> {
  await withState(run, async (session) => {
    const report = await session.run(secretsOperations.reseal, {});
    if (options.json) {
      run.out(JSON.stringify(report));
      if (leftBehind(report) > 0) run.exitCode = EXIT_CODES.failure;
      return;
    }
    printReseal(run, report, session);
  });
}
