/** `fxgate gateway` as commander declares it; the server (commands/gateway.ts) is imported when it runs. */
import type { Command } from 'commander';

import { parseHttpUrl } from '../arguments.js';
import type { CliRun } from '../io.js';

export function registerGatewayCommand(program: Command, run: CliRun): void {
  program
    .command('gateway')
    .description(
      'Serve /v1 and /v2 (translated onto v3) and /v3 (passed through verbatim) on HOST:PORT, in front of a v3 service.',
    )
    .option(
      '--upstream <url>',
      'origin of the v3 service, e.g. http://127.0.0.1:8081 (default: FXGATE_UPSTREAM_URL)',
      parseHttpUrl,
    )
    .action(async (options: { upstream?: string }) =>
      (await import('../commands/gateway.js')).serveGateway(run, options),
    );
}
