/** `fxgate keys create | import | list | revoke`: API keys in the configured registry (declared in definitions/keys.ts). */
import { access } from 'node:fs/promises';
import { join } from 'node:path';

import { z } from 'zod';

import { PROVISIONED_LABEL } from '../../gateway/upstream/signing-credentials.js';
import type { Mode, Scope } from '../../lib/auth/credential-vocabulary.js';
import { parseKeyName, SCOPES } from '../../lib/auth/credential-vocabulary.js';
import {
  CliError,
  EXIT_CODES,
  InvalidCidrError,
  InvalidKeyRegistrationError,
  KeyImportError,
  KeyImportInvalidError,
} from '../../lib/errors/internal-errors.js';
import { newUuid } from '../../lib/ids.js';
import { generateKeyFile, writeKeyFile } from '../../lib/keys/key-file.js';
import { messageOf, usageError } from '../exit.js';
import type { CliRun } from '../io.js';
import { readKeyImportFile, registerImportedKeys } from '../key-import.js';
import { formatKeyTable } from '../key-table.js';
import { dateCodec, defineOperation, modeSchema } from '../state/operation.js';
import { withState } from '../state/session.js';

const scopesSchema = z.array(z.enum(SCOPES)).min(1);

const apiKeyRecordSchema = z.object({
  name: z.string(),
  orgId: z.string(),
  scopes: z.array(z.enum(SCOPES)).readonly(),
  mode: modeSchema,
  ipAllowlist: z.array(z.string()).readonly(),
  createdAt: dateCodec,
  revokedAt: dateCodec.nullable(),
  label: z.string().nullable(),
});

/** What the keys commands do with the registry, directly or through a running fxgate's admin listener. */
export const keyOperations = {
  /** Registers the public half of a pair the CLI made; the private half stays with the CLI. */
  register: defineOperation({
    name: 'keys/register',
    input: z.object({
      name: z.string(),
      orgId: z.uuid(),
      publicKey: z.string(),
      scopes: scopesSchema,
      mode: modeSchema,
      ipAllowlist: z.array(z.string()),
      label: z.string().optional(),
    }),
    output: z.object({ name: z.string() }),
    run: async ({ registry }, input) => {
      try {
        await registry.registerKey(input);
      } catch (error) {
        if (error instanceof InvalidCidrError || error instanceof InvalidKeyRegistrationError)
          throw usageError(error.message);
        throw error;
      }
      return { name: input.name };
    },
  }),
  /** Registers one file's checked records, whole or not at all. */
  import: defineOperation({
    name: 'keys/import',
    input: z.object({
      file: z.string(),
      records: z.array(
        z.object({
          line: z.number().int().positive(),
          name: z.string(),
          orgId: z.uuid(),
          keyId: z.uuid(),
          publicKeyPem: z.string(),
          scopes: z.array(z.enum(SCOPES)).min(1),
          mode: modeSchema,
          ipAllowlist: z.array(z.string()),
        }),
      ),
    }),
    output: z.array(z.object({ name: z.string(), outcome: z.enum(['imported', 'unchanged']) })),
    run: ({ db }, { file, records }) => registerImportedKeys(db, records, file),
  }),
  list: defineOperation({
    name: 'keys/list',
    input: z.object({ org: z.uuid().optional() }),
    output: z.array(apiKeyRecordSchema),
    run: ({ registry }, { org }) => registry.list(org),
  }),
  /** Through the admin listener, the running process's key cache forgets the key at once. */
  revoke: defineOperation({
    name: 'keys/revoke',
    input: z.object({ name: z.string() }),
    output: z.object({ revoked: z.boolean() }),
    run: async ({ registry }, { name }) => ({ revoked: await registry.revoke(name) }),
  }),
};

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

export interface CreateKeyOptions {
  readonly org: string;
  readonly mode: Mode;
  readonly scopes: Scope[];
  readonly ip: string[];
  readonly out?: string;
  readonly label?: string;
}

export async function createKey(run: CliRun, options: CreateKeyOptions): Promise<void> {
  const config = run.config();
  const out = options.out === undefined ? undefined : run.path(options.out);
  // `keys list` marks the keys with this label as the gateway's own: no other key may pass for one.
  if (options.label === PROVISIONED_LABEL)
    throw usageError(`the label "${PROVISIONED_LABEL}" marks the gateway's own credentials; choose another --label`);
  // Refuse before registering anything: overwriting a key file would lose a private key.
  if (out !== undefined && (await exists(out))) throw usageError(`${out} already exists; choose another --out`);
  // Made here, so that the private key never leaves this process; the registry gets the public half.
  const file = generateKeyFile({ orgId: options.org, keyId: newUuid(), scopes: options.scopes, mode: options.mode });
  await withState(run, (state) =>
    state.run(keyOperations.register, {
      name: file.name,
      orgId: file.orgId,
      publicKey: file.publicKey,
      scopes: file.scopes,
      mode: file.mode,
      ipAllowlist: options.ip,
      label: options.label,
    }),
  );
  const path = out ?? join(config.FXGATE_DATA_DIR, 'keys', `${parseKeyName(file.name)!.keyId}.json`);
  try {
    await writeKeyFile(path, file);
  } catch (error) {
    throw new CliError(
      `key ${file.name} is registered, but writing ${path} failed: ${messageOf(error)}; revoke it with \`fxgate keys revoke ${file.name}\``,
      undefined,
      {
        cause: error,
      },
    );
  }
  run.out(`name: ${file.name}`);
  run.out(`file: ${path}`);
}

/**
 * Imports each file whole or not at all, and goes on to the next after one fails, so that one
 * run reports every file's problems. Exit 2 when a file itself is wrong (running again
 * unchanged cannot help), else 1 when one conflicts with the registry.
 */
export async function importKeys(run: CliRun, files: readonly string[]): Promise<void> {
  const counts = { imported: 0, unchanged: 0 };
  const failed: KeyImportError[] = [];
  await withState(run, async (state) => {
    for (const file of files.map((given) => run.path(given))) {
      try {
        // Read and checked here, where the path means what the operator meant.
        const records = await readKeyImportFile(file);
        for (const key of await state.run(keyOperations.import, { file, records: [...records] })) {
          counts[key.outcome] += 1;
          run.out(`${key.outcome}: ${key.name}`);
        }
      } catch (error) {
        if (!(error instanceof KeyImportError)) throw error;
        failed.push(error);
        run.err(`fxgate: ${error.message}`);
      }
    }
  });
  run.out(
    `summary: ${counts.imported} imported, ${counts.unchanged} unchanged, ${failed.length} file${failed.length === 1 ? '' : 's'} refused`,
  );
  if (failed.length > 0) {
    const invalid = failed.some((error) => error instanceof KeyImportInvalidError);
    throw new CliError(
      `${failed.map((error) => error.file).join(', ')} not imported (see above); fix ${failed.length === 1 ? 'it' : 'them'} and run the import again: keys already imported are reported unchanged`,
      invalid ? EXIT_CODES.usage : EXIT_CODES.failure,
    );
  }
}

export async function listKeys(run: CliRun, options: { readonly org?: string }): Promise<void> {
  const records = await withState(run, (state) => state.run(keyOperations.list, { org: options.org }));
  run.out(records.length > 0 ? formatKeyTable(records) : 'no keys');
}

export async function revokeKey(run: CliRun, name: string): Promise<void> {
  const { revoked } = await withState(run, (state) => state.run(keyOperations.revoke, { name }));
  if (!revoked) throw new CliError(`no active key named ${name}`);
  run.out(`revoked: ${name}`);
}
