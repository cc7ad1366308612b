/** `fxgate migrate`: applies the SQL migrations the database lacks and says which (declared in definitions/migrate.ts). */
import { Closers } from '../closers.js';
import { describeDatabase, migrateDatabase, openDatabase } from '../database.js';
import type { CliRun } from '../io.js';

export async function migrate(run: CliRun): Promise<void> {
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
}
