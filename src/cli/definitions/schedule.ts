/** `fxgate schedule` as commander declares it; the schedule (commands/schedule.ts) is read when it runs. */
import type { Command } from 'commander';

import { parseHttpUrl } from '../arguments.js';
import type { ScheduleOptions } from '../commands/schedule.js';
import type { CliRun } from '../io.js';

export function registerScheduleCommand(program: Command, run: CliRun): void {
  program
    .command('schedule')
    .description(
      "Print the migration schedule of v1 and v2 (deprecation, sunset, brownouts, exempt orgs, shadow mode, cut-over orgs) with how far off each is, as a running gateway applies it: read from its admin listener's GET /admin/schedule. --from-env works it out from this environment's settings instead.",
    )
    .option(
      '--url <url>',
      "the gateway's admin listener, e.g. http://127.0.0.1:8081 (default: FXGATE_ADMIN_HOST and FXGATE_ADMIN_PORT, or PORT+1 as under `fxgate all`)",
      parseHttpUrl,
    )
    .option('--json', 'print the schedule as JSON, as GET /admin/schedule serves it')
    .option(
      '--from-env',
      "work it out from this environment's settings and clock, asking no process: what a gateway started here would apply",
    )
    .action(async (options: ScheduleOptions) =>
      (await import('../commands/schedule.js')).runScheduleCommand(run, options),
    );
}
