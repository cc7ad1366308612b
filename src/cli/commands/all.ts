/**
 * `fxgate all` (what `npm start` runs): the core on a loopback port only the gateway uses, and
 * the gateway on HOST:PORT in front of it, so all three generations share one base URL. On the
 * first start it provides a sandbox org and key, so a newcomer can call the API at once.
 */
import type { Command } from 'commander';

import { ProvisioningCredentials } from '../../gateway/upstream/credentials.js';
import { type Config, signingIssuer } from '../../lib/config.js';
import type { Closers } from '../closers.js';
import type { Drain } from '../drain.js';
import type { CliRun } from '../io.js';
import type { Warn } from '../runtime.js';
import { ensureSandboxKey, type SandboxKey } from '../sandbox-key.js';
import { type SeedReport, seedSandbox } from '../sandbox-seed.js';
import { ALL_SEALED_COLUMNS } from '../sealing.js';
import { listen, serve } from '../serve.js';
import {
  createAdminListener,
  listenAdmin,
  ownWebhookBase,
  startCore,
  startGateway,
  upstreamKeysDir,
} from '../servers.js';
import { openTracing } from '../tracing.js';

/** The core listens here, on a port the OS picks; the gateway is its only client. */
const CORE_HOST = '127.0.0.1';
const CORE_PORT = 0;
/** The gateway reaches the core over loopback, so the core believes its X-Forwarded-For. */
const LOOPBACK = ['127.0.0.1', '::1'];

/** What `fxgate all` started: the gateway's URL, the admin listener's (null when off), the sandbox it provided. */
export interface StartedAll {
  readonly url: string;
  readonly adminUrl: string | null;
  readonly sandbox: SandboxKey;
  readonly seeded: SeedReport;
}

/**
 * Starts everything `fxgate all` serves, registering each part with closers and each listener
 * with drain; warn reports what does not stop the start.
 */
export async function startAll(config: Config, closers: Closers, drain: Drain, warn: Warn): Promise<StartedAll> {
  // One admin listener for both parts, each adding its own metrics to GET /metrics.
  const admin = createAdminListener(config, 'all', closers);
  // Both parts' sealed columns are checked and upgraded at once, in the core's start.
  const core = await startCore(config, closers, {
    drain,
    // The gateway is its only client: the gateway's listener drains, and closes before it.
    internal: true,
    extraTrustedProxies: LOOPBACK,
    admin,
    sealedColumns: ALL_SEALED_COLUMNS,
    warn,
  });
  const coreUrl = await listen(core.app, CORE_HOST, CORE_PORT, 'the core');
  // One registry and one store for both parts: a key works in every generation, and a
  // token spent at one part cannot be replayed at the other.
  const credentials = new ProvisioningCredentials({
    registry: core.deps.registry,
    dir: upstreamKeysDir(config),
    issuer: signingIssuer(config),
  });
  const gateway = await startGateway(
    config,
    drain,
    coreUrl,
    {
      registry: core.deps.registry,
      database: core.deps.db,
      store: core.store,
      keyring: core.deps.keyring,
      credentials,
      // The core delivers v3 events to the gateway's own receiver, over loopback: that one
      // listener (its public one, never the admin listener) is allowed to the core's webhooks
      // in both modes, when the gateway listens and before it registers anything there.
      ownWebhookBase: (port) => {
        const base = ownWebhookBase(config.HOST, port);
        core.ownDestinations.allow(base);
        return base;
      },
    },
    admin,
  );
  const sandbox = await ensureSandboxKey(config.FXGATE_DATA_DIR, core.deps.registry);
  const seeded = await seedSandbox(core.deps.db, sandbox.orgId, sandbox.keyName);
  const url = await listen(gateway, config.HOST, config.PORT, 'the gateway');
  const adminUrl = await listenAdmin(config, closers, 'all', admin, core.deps);
  return { url, adminUrl, sandbox, seeded };
}

export function registerAllCommand(program: Command, run: CliRun): void {
  program
    .command('all')
    .description(
      'Serve v1, v2 and v3 on one base URL (HOST:PORT): the gateway in front of an in-process core. Creates a sandbox key on first start.',
    )
    .action(() =>
      serve(run, async (closers, drain) => {
        await openTracing(run, closers, 'all');
        const { url, adminUrl, sandbox, seeded } = await startAll(run.config(), closers, drain, (line) =>
          run.err(line),
        );
        run.out(`fxgate: sandbox key ${sandbox.created ? 'created' : 'reused'}: ${sandbox.path}`);
        run.out(
          `fxgate: sandbox deposits: ${seeded.balances.join(', ')}; verified withdrawal accounts: ${seeded.accounts.join(', ')}`,
        );
        run.out(
          `fxgate: try: curl -H @<(npx fxgate sign --key ${sandbox.path} --method GET --path /v3/fx/pairs) ${url}/v3/fx/pairs`,
        );
        if (adminUrl !== null) run.out(`fxgate: admin listener on ${adminUrl} (GET /admin/shadow/report)`);
        run.out(`fxgate: listening on ${url} (v1, v2 and v3)`);
      }),
    );
}
