/**
 * `fxgate gateway`: the gateway alone, in front of a v3 service at --upstream. It keeps its own
 * registry of legacy keys (DATABASE_URL, or PGlite in FXGATE_DATA_DIR) and signs its v3 calls
 * with the key files in FXGATE_UPSTREAM_KEYS_DIR. Declared in definitions/gateway.ts.
 */
import { gatewaySchedule } from '../../gateway/app.js';
import { scheduleLines } from '../../gateway/migration-schedule.js';
import { upstreamOrigin } from '../../gateway/upstream/pool.js';
import { InvalidUpstreamError } from '../../lib/errors/internal-errors.js';
import { usageError } from '../exit.js';
import type { CliRun } from '../io.js';
import { listen, listeningText, serve } from '../serve.js';
import {
  createAdminListener,
  listenAdmin,
  openGatewayDependencies,
  startGateway,
  upstreamKeysDir,
} from '../servers.js';
import { openTracing } from '../tracing.js';

export function serveGateway(run: CliRun, options: { readonly upstream?: string }): Promise<void> {
  return serve(run, async (closers, drain) => {
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
    const app = await startGateway(config, drain, upstream, deps, admin, () => run.now());
    const url = await listen(app, config.HOST, config.PORT, 'the gateway');
    const adminUrl = await listenAdmin(config, closers, 'gateway', admin, {
      db: deps.database,
      registry: deps.registry,
      keyring: deps.keyring,
    });
    run.out(`fxgate gateway: v3 credentials from ${upstreamKeysDir(config)}/<orgId>.<sandbox|live>.json`);
    // The migration schedule as this process applies it (also GET /admin/schedule, `fxgate schedule`).
    for (const line of scheduleLines(gatewaySchedule(app)!)) run.out(`fxgate gateway: ${line}`);
    if (adminUrl !== null) run.out(`fxgate gateway: admin listener on ${listeningText(adminUrl)}`);
    run.out(`fxgate gateway: listening on ${listeningText(url)}, in front of ${upstream}`);
  });
}
