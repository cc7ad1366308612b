/**
 * `fxgate all` (what `npm start` runs): the core on a loopback port only the gateway uses, and
 * the gateway on HOST:PORT in front of it, so all three generations share one base URL. With
 * FXGATE_SANDBOX_SEED on (by default on the embedded database only) it provides a sandbox org
 * and key on the first start, so a newcomer can call the API at once; otherwise none. Declared
 * in definitions/all.ts.
 */
import { gatewaySchedule } from '../../gateway/app.js';
import { type MigrationSchedule, scheduleLines } from '../../gateway/migration-schedule.js';
import { ProvisioningCredentials } from '../../gateway/upstream/signing-credentials.js';
import { type Config, sandboxSeeded, signingIssuer } from '../../lib/config.js';
import type { Closers } from '../closers.js';
import type { Drain } from '../drain.js';
import type { CliRun } from '../io.js';
import type { Warn } from '../runtime.js';
import { ensureSandboxKey, type SandboxKey } from '../sandbox-key.js';
import { type SeedReport, seedSandbox } from '../sandbox-seed.js';
import { ALL_SEALED_COLUMNS } from '../sealing.js';
import { listen, listeningText, loopbackUrlOf, serve } from '../serve.js';
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

/** What `fxgate all` started: the gateway's URL, the admin listener's (null when off), the sandbox it provided (null when not seeded), the gateway's migration schedule. */
export interface StartedAll {
  readonly url: string;
  readonly adminUrl: string | null;
  readonly sandbox: SandboxKey | null;
  readonly seeded: SeedReport | null;
  readonly schedule: MigrationSchedule;
}

/**
 * Starts everything `fxgate all` serves, registering each part with closers and each listener
 * with drain; warn reports what does not stop the start; now is the gateway's clock (CliRun.now).
 */
export async function startAll(
  config: Config,
  closers: Closers,
  drain: Drain,
  warn: Warn,
  now: () => number = Date.now,
): Promise<StartedAll> {
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
    now,
  );
  let sandbox: SandboxKey | null = null;
  let seeded: SeedReport | null = null;
  if (sandboxSeeded(config)) {
    sandbox = await ensureSandboxKey(config.FXGATE_DATA_DIR, core.deps.registry);
    seeded = await seedSandbox(core.deps.db, sandbox.orgId, sandbox.keyName);
  }
  const url = await listen(gateway, config.HOST, config.PORT, 'the gateway');
  const adminUrl = await listenAdmin(config, closers, 'all', admin, core.deps);
  return { url, adminUrl, sandbox, seeded, schedule: gatewaySchedule(gateway)! };
}

/** Serves until a stop signal (declared in definitions/all.ts). */
export function serveAll(run: CliRun): Promise<void> {
  return serve(run, async (closers, drain) => {
    await openTracing(run, closers, 'all');
    const { url, adminUrl, sandbox, seeded, schedule } = await startAll(
      run.config(),
      closers,
      drain,
      (line) => run.err(line),
      () => run.now(),
    );
    if (sandbox === null || seeded === null) {
      run.out(
        'fxgate: no sandbox org provided (FXGATE_SANDBOX_SEED=on provides one); make orgs and keys with `fxgate keys create --org <uuid> ...`',
      );
    } else {
      run.out(`fxgate: sandbox key ${sandbox.created ? 'created' : 'reused'}: ${sandbox.path}`);
      run.out(
        `fxgate: sandbox deposits: ${seeded.balances.join(', ')}; verified withdrawal accounts: ${seeded.accounts.join(', ')}`,
      );
      run.out(
        `fxgate: try: curl -H @<(npx fxgate sign --key ${sandbox.path} --method GET --path /v3/fx/pairs) ${loopbackUrlOf(url) ?? url}/v3/fx/pairs`,
      );
    }
    // The migration schedule as this process applies it (also GET /admin/schedule, `fxgate schedule`).
    for (const line of scheduleLines(schedule)) run.out(`fxgate: ${line}`);
    if (adminUrl !== null)
      run.out(
        `fxgate: admin listener on ${listeningText(adminUrl, 'GET /metrics, /admin/schedule, /admin/usage, /admin/shadow/report')}`,
      );
    run.out(`fxgate: listening on ${listeningText(url, 'v1, v2 and v3')}`);
  });
}
