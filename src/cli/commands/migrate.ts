/** `fxgate migrate`: applies the SQL migrations the database lacks and says which. */
import type { Command } from 'commander';
import { Closers } from '../closers.js';
import { cliConfig } from '../config.js';
import { describeDatabase, migrateDatabase, openDatabase } from '../database.js';

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('Apply the pending SQL migrations to the configured database (servers also do this when they start).')
    .action(async () => {
      const config = cliConfig();
      const closers = new Closers();
      try {
        const report = await migrateDatabase(await openDatabase(config, closers), config);
        console.log(`database: ${describeDatabase(config)}`);
        for (const name of report.applied) console.log(`applied: ${name}`);
        if (report.applied.length === 0) console.log(`up to date: ${report.alreadyApplied.join(', ')}`);
      } finally {
        await closers.closeAll();
      }
    });
}
