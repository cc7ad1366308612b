/** `fxgate core`: the native v3 service alone, on HOST:PORT. */
import type { Command } from 'commander';
import { cliConfig } from '../config.js';
import { listen, serve } from '../serve.js';
import { createAdminListener, listenAdmin, startCore } from '../servers.js';

export function registerCoreCommand(program: Command): void {
  program
    .command('core')
    .description('Serve the native v3 API (/v3/fx/...) on HOST:PORT, with /healthz and /readyz.')
    .action(() =>
      serve(async (closers) => {
        const config = cliConfig();
        // Created first: the core adds its metrics to it.
        const admin = createAdminListener(config, 'core');
        const { app, deps } = await startCore(config, closers, [], admin);
        const url = await listen(app, config.HOST, config.PORT, 'the core');
        const adminUrl = await listenAdmin(config, closers, 'core', admin, deps);
        console.log(`fxgate core: listening on ${url}`);
        if (adminUrl !== null) console.log(`fxgate core: admin listener on ${adminUrl}`);
      }),
    );
}
