/** `fxgate core` as commander declares it; the server (commands/core.ts) is imported when it runs. */
import type { Command } from 'commander';

import type { CliRun } from '../io.js';

export function registerCoreCommand(program: Command, run: CliRun): void {
  program
    .command('core')
    .description('Serve the native v3 API (/v3/fx/...) on HOST:PORT, with /healthz and /readyz.')
    .action(async () => (await import('../commands/core.js')).serveCore(run));
}
