/** `fxgate gateway`: the gateway alone, in front of a v3 service at --upstream. */
import type { Command } from 'commander';
import { parseHttpUrl } from '../arguments.js';
import { cliConfig } from '../config.js';
import { usageError } from '../exit.js';
import { listen, serve } from '../serve.js';
import { startGateway } from '../servers.js';

export function registerGatewayCommand(program: Command): void {
  program
    .command('gateway')
    .description('Serve /v1 and /v2 (translated onto v3) and /v3 (passed through verbatim) on HOST:PORT, in front of a v3 service.')
    .option('--upstream <url>', 'origin of the v3 service, e.g. http://127.0.0.1:8081 (default: FXGATE_UPSTREAM_URL)', parseHttpUrl)
    .action((options: { upstream?: string }) =>
      serve(async (closers) => {
        const config = cliConfig();
        const upstream = options.upstream ?? config.FXGATE_UPSTREAM_URL;
        if (upstream === undefined) throw usageError('the gateway needs a v3 service to front: pass --upstream URL or set FXGATE_UPSTREAM_URL');
        const app = await startGateway(config, closers, upstream);
        const url = await listen(app, config.HOST, config.PORT, 'the gateway');
        console.log(`fxgate gateway: listening on ${url}, in front of ${upstream}`);
      }),
    );
}
