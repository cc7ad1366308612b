/** `fxgate keys create | list | revoke`: API keys in the configured registry. */
import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import type { Mode, Scope } from '../../lib/auth/credentials.js';
import { parseKeyName, SCOPES } from '../../lib/auth/credentials.js';
import { writeKeyFile } from '../../lib/keys/key-file.js';
import { collectCidr, parseKeyNameArgument, parseMode, parseOrgId, parseScopes } from '../arguments.js';
import { Closers } from '../closers.js';
import { cliConfig } from '../config.js';
import { CliError, messageOf, usageError } from '../exit.js';
import { formatKeyTable } from '../key-table.js';
import { openRegistry, type Registry } from '../runtime.js';

/** Runs fn on the registry, then closes the database whatever happened. */
async function withRegistry<T>(fn: (registry: Registry) => Promise<T>): Promise<T> {
  const config = cliConfig();
  const closers = new Closers();
  try {
    return await fn(await openRegistry(config, closers));
  } finally {
    await closers.closeAll();
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

interface CreateOptions {
  readonly org: string;
  readonly mode: Mode;
  readonly scopes: Scope[];
  readonly ip: string[];
  readonly out?: string;
  readonly label?: string;
}

async function createKey(options: CreateOptions): Promise<void> {
  const config = cliConfig();
  // Refuse before registering anything: overwriting a key file would lose a private key.
  if (options.out !== undefined && (await exists(options.out))) throw usageError(`${resolve(options.out)} already exists; choose another --out`);
  const file = await withRegistry(({ registry }) =>
    registry.createKey({ orgId: options.org, scopes: options.scopes, mode: options.mode, ipAllowlist: options.ip, label: options.label }),
  );
  const path = resolve(options.out ?? join(config.FXGATE_DATA_DIR, 'keys', `${parseKeyName(file.name)!.keyId}.json`));
  try {
    await writeKeyFile(path, file);
  } catch (error) {
    throw new CliError(`key ${file.name} is registered, but writing ${path} failed: ${messageOf(error)}; revoke it with \`fxgate keys revoke ${file.name}\``, undefined, {
      cause: error,
    });
  }
  console.log(`name: ${file.name}`);
  console.log(`file: ${path}`);
}

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('Manage API keys in the configured registry (DATABASE_URL, or the embedded database).');

  keys
    .command('create')
    .description('Create a key (and its org if new), register its public key, and write the key file with the private key (mode 0600).')
    .requiredOption('--org <uuid>', 'org id (a UUID); the org is created if it is new', parseOrgId)
    .requiredOption('--mode <mode>', 'sandbox or live', parseMode)
    .requiredOption('--scopes <list>', `comma-separated scopes: ${SCOPES.join(',')}`, parseScopes)
    .addOption(new Option('--ip <cidr>', 'allow only this address or CIDR block (repeat for several)').argParser(collectCidr).default([], 'any address'))
    .option('--out <file>', 'where to write the key file (default: ${FXGATE_DATA_DIR}/keys/<keyId>.json)')
    .option('--label <text>', 'a note kept with the key')
    .action((options: CreateOptions) => createKey(options));

  keys
    .command('list')
    .description('List keys: name, mode, scopes, IP allowlist, created, revoked.')
    .option('--org <uuid>', 'only the keys of this org', parseOrgId)
    .action(async (options: { org?: string }) => {
      const records = await withRegistry(({ registry }) => registry.list(options.org));
      console.log(records.length > 0 ? formatKeyTable(records) : 'no keys');
    });

  keys
    .command('revoke')
    .description('Revoke a key; running servers stop accepting it within FXGATE_KEY_CACHE_TTL_MS.')
    .argument('<name>', 'the key name, org/{orgId}/apiKey/{keyId}', parseKeyNameArgument)
    .action(async (name: string) => {
      const revoked = await withRegistry(({ registry }) => registry.revoke(name));
      if (!revoked) throw new CliError(`no active key named ${name}`);
      console.log(`revoked: ${name}`);
    });
}
