/** `fxgate secrets` as commander declares it; the sealed rows' work (commands/secrets.ts) is imported when a subcommand runs. */
import type { Command } from 'commander';

import { generateSealingKey } from '../../lib/secrets/sealing-keys.js';
import type { CliRun } from '../io.js';

/** The work, imported when a subcommand runs. */
const load = () => import('../commands/secrets.js');

export function registerSecretsCommand(program: Command, run: CliRun): void {
  const secrets = program
    .command('secrets')
    .description(
      'The keys webhook signing secrets are sealed with in the database (FXGATE_SECRETS_KEY): status, reseal after a rotation, generate-key.',
    );

  secrets
    .command('status')
    .description(
      'List the key ids the sealed secrets are under, with their row counts, and which of them this process was given.',
    )
    .option('--json', 'print {keys, counts} as JSON')
    .action(async (options: { json?: boolean }) => (await load()).printSecretsStatus(run, options));

  secrets
    .command('reseal')
    .description(
      'Seal every secret under the sealing key (the first of FXGATE_SECRETS_KEY), each row in its own guarded update; afterwards the other keys can be removed.',
    )
    .option('--json', 'print the report as JSON')
    .addHelpText(
      'after',
      `
Rotation: make a key (fxgate secrets generate-key), give it first and the old one after it
(FXGATE_SECRETS_KEY=<new>,<old>) to every process, run this, then give the new one alone.
While \`npm start\` runs, this goes through its admin listener, with that process's keys.
Exit 1 when rows are left under a key that was not given.`,
    )
    .action(async (options: { json?: boolean }) => (await load()).reseal(run, options));

  secrets
    .command('generate-key')
    .description('Print a new random key (32 bytes, base64url) for FXGATE_SECRETS_KEY.')
    .action(() => {
      run.out(generateSealingKey());
      run.err(
        'fxgate: give it first in FXGATE_SECRETS_KEY (before the keys in use, which still open what they sealed), then run `fxgate secrets reseal`; keep it apart from the database and its backups',
      );
    });
}
