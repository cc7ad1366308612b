/** `fxgate migrate`: applies the SQL migrations the database lacks and says which. */
import type { Command } from 'commander';

import { Closers } from '../closers.js';
import { describeDatabase, migrateDatabase, openDatabase } from '../database.js';
import type { CliRun } from '../io.js';

export function registerMigrateCommand(program: Command, run: CliRun): void {
  program
    .command('migrate')
    .description('Apply the pending SQL migrations to the configured database (servers also do this when they start).')
    .action(async () => {
      const config = run.config();
      const closers = new Closers();
      try {
        const report = await migrateDatabase(await openDatabase(config, closers, (line) => run.err(line)), config);
        run.out(`database: ${describeDatabase(config)}`);
        for (const name of report.applied) run.out(`applied: ${name}`);
        if (report.applied.length === 0) run.out(`up to date: ${report.alreadyApplied.join(', ')}`);
      } finally {
        await closers.closeAll();
      }
    });
}
