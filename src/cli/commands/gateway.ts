/**
 * `fxgate gateway`: the gateway alone, in front of a v3 service at --upstream. It keeps its own
 * registry of legacy keys (DATABASE_URL, or PGlite in FXGATE_DATA_DIR) and signs its v3 calls
 * with the key files in FXGATE_UPSTREAM_KEYS_DIR.
 */
import type { Command } from 'commander';

import { InvalidUpstreamError, upstreamOrigin } from '../../gateway/upstream/pool.js';
import { parseHttpUrl } from '../arguments.js';
import { usageError } from '../exit.js';
import type { CliRun } from '../io.js';
import { listen, serve } from '../serve.js';
import {
  createAdminListener,
  listenAdmin,
  openGatewayDependencies,
  startGateway,
  upstreamKeysDir,
} from '../servers.js';
import { openTracing } from '../tracing.js';

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
    .action((options: { upstream?: string }) =>
      serve(run, async (closers, drain) => {
        const config = run.config();
        const upstream = options.upstream ?? config.FXGATE_UPSTREAM_URL;
        if (upstream === undefined)
          throw usageError('the gateway needs a v3 service to front: pass --upstream URL or set FXGATE_UPSTREAM_URL');
        // A bad upstream is a usage error before anything is opened.
        try {
          upstreamOrigin(upstream);
        } catch (error) {
          if (error instanceof InvalidUpstreamError) throw usageError(error.message);
          throw error;
        }
        await openTracing(run, closers, 'gateway');
        const deps = await openGatewayDependencies(config, closers, (line) => run.err(line));
        const admin = createAdminListener(config, 'gateway', closers);
        const app = await startGateway(config, drain, upstream, deps, admin);
        const url = await listen(app, config.HOST, config.PORT, 'the gateway');
        const adminUrl = await listenAdmin(config, closers, 'gateway', admin, {
          db: deps.database,
          registry: deps.registry,
          keyring: deps.keyring,
        });
        run.out(`fxgate gateway: v3 credentials from ${upstreamKeysDir(config)}/<orgId>.<sandbox|live>.json`);
        if (config.FXGATE_SHADOW_URL !== undefined) {
          run.out(
            `fxgate gateway: shadow mode beside ${config.FXGATE_SHADOW_URL}: ${config.FXGATE_SHADOW_SERVE} answers clients, ${config.FXGATE_SHADOW_SAMPLE * 100}% of reads compared`,
          );
        }
        if (adminUrl !== null) run.out(`fxgate gateway: admin listener on ${adminUrl}`);
        run.out(`fxgate gateway: listening on ${url}, in front of ${upstream}`);
      }),
    );
}
