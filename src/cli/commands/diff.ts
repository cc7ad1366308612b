/**
 * `fxgate diff`: the tools that prove a move onto the gateway changes nothing a legacy client
 * sees. `generations` runs every legacy operation against its v3 equivalent on a deployment;
 * `report` prints what the shadow mode has compared so far. Each lives in its own module.
 */
import type { Command } from 'commander';

import { registerDiffGenerationsCommand } from '../diff/generations-command.js';
import { registerDiffReportCommand } from '../diff/report-command.js';
import type { CliRun } from '../io.js';

export function registerDiffCommand(program: Command, run: CliRun): void {
  const diff = program
    .command('diff')
    .description('Prove the migration safe: compare the legacy generations with v3, and read the shadow report.');
  registerDiffGenerationsCommand(diff, run);
  registerDiffReportCommand(diff, run);
}
