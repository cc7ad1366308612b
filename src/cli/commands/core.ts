/** `fxgate core`: the native v3 service alone, on HOST:PORT (declared in definitions/core.ts). */
import type { CliRun } from '../io.js';
import { listen, listeningText, serve } from '../serve.js';
import { createAdminListener, listenAdmin, startCore } from '../servers.js';
import { openTracing } from '../tracing.js';

export function serveCore(run: CliRun): Promise<void> {
  return serve(run, async (closers, drain) => {
    await openTracing(run, closers, 'core');
    const config = run.config();
    // Created first: the core adds its metrics to it.
    const admin = createAdminListener(config, 'core', closers);
    const { app, deps } = await startCore(config, closers, { drain, admin, warn: (line) => run.err(line) });
    const url = await listen(app, config.HOST, config.PORT, 'the core');
    const adminUrl = await listenAdmin(config, closers, 'core', admin, deps);
    run.out(`fxgate core: listening on ${listeningText(url)}`);
    if (adminUrl !== null) run.out(`fxgate core: admin listener on ${listeningText(adminUrl)}`);
  });
}
