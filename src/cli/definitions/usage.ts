/**
 * `fxgate usage` as commander declares it; the report (commands/usage.ts), or with `--readiness`
 * the readiness report (commands/usage-readiness.ts), is read when it runs.
 */
import { type Command, Option } from 'commander';

import type { CliRun } from '../io.js';
import { type ReadinessSource, USAGE_FORMATS, type UsageCommandOptions, type UsageSource } from './usage-options.js';

/** `source` replaces the run's configured database (a test's fixed reports and clock). */
export function registerUsageCommand(
  program: Command,
  run: CliRun,
  source?: UsageSource & Partial<Pick<ReadinessSource, 'readiness'>>,
): void {
  program
    .command('usage')
    .description(
      'Print who still calls v1 and v2, from the usage report in the configured database: requests per org, key and operation, the 410s of brownouts and of the sunset, the 429s of spent legacy rate limits, first and last seen, last client address.',
    )
    .option('--generation <generation>', 'only v1 or only v2 (default: both; required with --readiness)')
    .option(
      '--readiness',
      "what would break for each key and operation on the next generation (v1 on v2, v2 on v3): the blockers its requests met, each with a masked example and the migration guide's section",
    )
    .option(
      '--since <when>',
      'only the rows seen since then: a duration back from now (7d, 24h, 30m) or an ISO 8601 timestamp (2026-12-01T00:00:00Z)',
    )
    .addOption(
      new Option(
        '--format <format>',
        'table for people, json as GET /admin/usage serves it, csv (RFC 4180, a header row) for a spreadsheet or a mailing list',
      )
        .choices(USAGE_FORMATS)
        .default('table'),
    )
    .action(async (options: UsageCommandOptions & { readonly readiness?: true }) => {
      const usage = await import('../commands/usage.js');
      if (options.readiness === true) {
        const readiness = await import('../commands/usage-readiness.js');
        const given = source?.readiness;
        const from =
          given === undefined ? readiness.configuredReadinessSource(run) : { readiness: given, now: source!.now };
        await usage.runUsageCommand(run, options, readiness.readinessReport(from));
        return;
      }
      await usage.runUsageCommand(run, options, usage.usageReport(source ?? usage.configuredSource(run)));
    });
}
