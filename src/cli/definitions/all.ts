/** `fxgate all` as commander declares it; the servers (commands/all.ts) are imported when it runs. */
import type { Command } from 'commander';

import type { CliRun } from '../io.js';

export function registerAllCommand(program: Command, run: CliRun): void {
  program
    .command('all')
    .description(
      'Serve v1, v2 and v3 on one base URL (HOST:PORT): the gateway in front of an in-process core. Creates a sandbox key on first start when FXGATE_SANDBOX_SEED is on (by default on the embedded database).',
    )
    .action(async () => (await import('../commands/all.js')).serveAll(run));
}
