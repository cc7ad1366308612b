/** `fxgate core`: the native v3 service alone, on HOST:PORT. */
import type { Command } from 'commander';
import { cliConfig } from '../config.js';
import { listen, serve } from '../serve.js';
import { startCore } from '../servers.js';

export function registerCoreCommand(program: Command): void {
  program
    .command('core')
    .description('Serve the native v3 API (/v3/fx/...) on HOST:PORT, with /healthz and /readyz.')
    .action(() =>
      serve(async (closers) => {
        const config = cliConfig();
        const { app } = await startCore(config, closers);
        const url = await listen(app, config.HOST, config.PORT, 'the core');
        console.log(`fxgate core: listening on ${url}`);
      }),
    );
}
