/** `fxgate keys` as commander declares it; the registry's work (commands/keys.ts) is imported when a subcommand runs. */
import { type Command, Option } from 'commander';

import { SCOPES } from '../../lib/auth/credential-vocabulary.js';
import { collectCidr, parseKeyNameArgument, parseMode, parseOrgId, parseScopes } from '../arguments.js';
import type { CreateKeyOptions } from '../commands/keys.js';
import type { CliRun } from '../io.js';

const IMPORT_HELP = `
Each FILE holds one JSON object, a JSON array of objects, or one object per line (JSON lines):
  {"name": "org/{orgId}/apiKey/{keyId}", "orgId": "{orgId}",
   "publicKey": "-----BEGIN PUBLIC KEY-----\\n...\\n-----END PUBLIC KEY-----\\n",
   "scopes": ["View", "Trade"], "mode": "Live", "ipAllowlist": ["203.0.113.0/24"]}

  name         the key's existing name, kept as it is (in lower case), so the integrator's
               tokens (kid and sub) keep working; its org must be orgId
  publicKey    SPKI PEM, EC P-256 (ES256). Public keys only: a record with a privateKey is
               refused. Export the public half with: openssl pkey -in key.pem -pubout
  scopes       ${SCOPES.join(', ')}, or the dashboard's View and Trade;
               any case, as an array or comma-separated; trade also grants view
               (the dashboard's Trade did)
  mode         sandbox or live, any case
  ipAllowlist  optional addresses or CIDR blocks, as --ip of keys create; none: any address

New orgs are created as keys create does. A file is checked whole, then registered in one
transaction: a bad record (named by file, line and field) imports nothing of its file. A key
already registered with the same public key and settings is reported unchanged, so running an
import again is safe; one registered otherwise is an error, never replaced.

Example:
  fxgate keys import legacy-keys.jsonl
  imported: org/0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c/apiKey/0190c5a9-1111-7c1a-9f3b-2a4d6e8f0b1c
  summary: 1 imported, 0 unchanged, 0 files refused`;

/** The work, imported when a subcommand runs. */
const load = () => import('../commands/keys.js');

export function registerKeysCommand(program: Command, run: CliRun): void {
  const keys = program
    .command('keys')
    .description('Manage API keys in the configured registry (DATABASE_URL, or the embedded database).');

  keys
    .command('create')
    .description(
      'Create a key (and its org if new), register its public key, and write the key file with the private key (mode 0600).',
    )
    .requiredOption('--org <uuid>', 'org id (a UUID); the org is created if it is new', parseOrgId)
    .requiredOption('--mode <mode>', 'sandbox or live', parseMode)
    .requiredOption('--scopes <list>', `comma-separated scopes: ${SCOPES.join(',')}`, parseScopes)
    .addOption(
      new Option('--ip <cidr>', 'allow only this address or CIDR block (repeat for several)')
        .argParser(collectCidr)
        .default([], 'any address'),
    )
    .option('--out <file>', 'where to write the key file (default: ${FXGATE_DATA_DIR}/keys/<keyId>.json)')
    .option('--label <text>', 'a note kept with the key')
    .action(async (options: CreateKeyOptions) => (await load()).createKey(run, options));

  keys
    .command('import')
    .description(
      'Register keys integrators already hold, public halves only, under their existing names so their tokens keep working; each file is imported whole or not at all.',
    )
    .argument('<file...>', 'JSON, JSON array or JSON lines files of key records (see below)')
    .addHelpText('after', IMPORT_HELP)
    .action(async (files: string[]) => (await load()).importKeys(run, files));

  keys
    .command('list')
    .description(
      "List keys: name, mode, scopes, IP allowlist, created, revoked, label; the gateway's own credentials marked with *.",
    )
    .option('--org <uuid>', 'only the keys of this org', parseOrgId)
    .action(async (options: { org?: string }) => (await load()).listKeys(run, options));

  keys
    .command('revoke')
    .description('Revoke a key; running servers stop accepting it within FXGATE_KEY_CACHE_TTL_MS.')
    .argument('<name>', 'the key name, org/{orgId}/apiKey/{keyId}', parseKeyNameArgument)
    .action(async (name: string) => (await load()).revokeKey(run, name));
}
