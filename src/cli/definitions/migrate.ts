/** `fxgate migrate` as commander declares it; the migration (commands/migrate.ts) is imported when it runs. */
import type { Command } from 'commander';

import type { CliRun } from '../io.js';

export function registerMigrateCommand(program: Command, run: CliRun): void {
  program
    .command('migrate')
    .description('Apply the pending SQL migrations to the configured database (servers also do this when they start).')
    .action(async () => (await import('../commands/migrate.js')).migrate(run));
}
