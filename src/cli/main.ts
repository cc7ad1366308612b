#!/usr/bin/env node
/**
 * fxgate's command line: the servers (core, gateway, all), key management, migrations, and a
 * request signer for curl. Every command reads the configuration from the environment and,
 * when DATABASE_URL and REDIS_URL are unset, runs on the embedded defaults in FXGATE_DATA_DIR.
 */
// First: it sets V8 flags that must hold before any other module allocates.
import './v8-flags.js';
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerAccountsCommand } from './commands/accounts.js';
import { registerAllCommand } from './commands/all.js';
import { registerCoreCommand } from './commands/core.js';
import { registerDiffCommand } from './commands/diff.js';
import { registerDocsCommand } from './commands/docs.js';
import { registerGatewayCommand } from './commands/gateway.js';
import { registerKeysCommand } from './commands/keys.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerOrgsCommand } from './commands/orgs.js';
import { registerSignCommand } from './commands/sign.js';
import { registerUsageCommand } from './commands/usage.js';
import { registerWebhooksCommand } from './commands/webhooks.js';
import { CliError, EXIT_CODES, messageOf } from './exit.js';

/** package.json is two folders up from both src/cli and dist/cli. */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

function buildProgram(): Command {
  const program = new Command('fxgate')
    .description('The v3 FX trading and settlement core, and the v1/v2 compatibility gateway in front of it.')
    .version(packageVersion())
    // Set before the commands are added, which inherit it: a usage error exits 2, help 0.
    .exitOverride((error) => process.exit(error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage));
  for (const register of [registerAllCommand, registerCoreCommand, registerGatewayCommand, registerKeysCommand, registerOrgsCommand, registerAccountsCommand, registerWebhooksCommand, registerMigrateCommand, registerSignCommand, registerUsageCommand, registerDiffCommand, registerDocsCommand]) {
    register(program);
  }
  return program;
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  console.error(`fxgate: ${messageOf(error)}`);
  process.exit(error instanceof CliError ? error.exitCode : EXIT_CODES.failure);
}
