/**
 * A fleet as the platform team runs one at the edge, for the fleet test: two `fxgate core` and two
 * `fxgate gateway` processes run from the build (`node dist/cli/main.js`, as the product ships),
 * behind one HAProxy whose `gateways` frontend is the clients' base URL and whose `cores`
 * frontend is the gateways' upstream, every server checked on its `/readyz`; PostgreSQL through
 * PgBouncer in transaction pooling; Redis as a primary, a replica and a Sentinel. One sandbox org
 * with a funded book, a verified USD withdrawal account, the integrator's key and the gateways'
 * v3 credential.
 *
 * It may touch: the processes and folders it starts and makes, and the test database it makes on
 * the run's PostgreSQL; every address it uses is on 127.0.0.1.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';

import { seedSandbox } from '../../src/cli/sandbox-seed.js';
import { newUuid } from '../../src/lib/ids.js';
import { type KeyFile, writeKeyFile } from '../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import { generateSealingKey } from '../../src/lib/secrets/sealing-keys.js';
import { ensureBuiltCli } from '../cli/built-cli.js';
import { type CliProcess, type CliResult, startBuiltCli } from '../cli/cli-process.js';
import { createTestPostgres, type TestDatabase } from '../support/databases.js';
import { cleanupOnExit, freePort, waitUntil } from '../support/local-processes.js';
import { type HealthCheck, ThrowawayHaproxy } from '../support/throwaway-haproxy.js';
import { startThrowawayPgBouncer, type ThrowawayPgBouncer } from '../support/throwaway-pgbouncer.js';
import { ThrowawaySentinelSet } from '../support/throwaway-sentinel.js';

/**
 * A drain delay as production would set it, only shorter: long enough for HAProxy to take a
 * stopping process out (below), short enough for four restarts within the test's time.
 */
export const DRAIN_DELAY_MS = 1_500;

/**
 * HAProxy's check, matched to the drain delay: two failed checks 500 ms apart take a process out
 * about 1 s after its /readyz turns 503, inside the 1.5 s it serves on. A check may take 2 s, so
 * that a busy machine does not take a healthy process out.
 */
export const HEALTH_CHECK: HealthCheck = { path: '/readyz', intervalMs: 500, fall: 2, rise: 2, timeoutMs: 2_000 };

/** The data nodes' password, a test constant. */
const REDIS_PASSWORD = 'fleet-redis-password';
/** Server connections per database through PgBouncer: fewer than the four processes' pools together, so they share. */
const PGBOUNCER_POOL_SIZE = 10;
/**
 * Rate limits out of the load's way: each process's defaults (100 reads and 20 writes per key per
 * 10 s) would answer the test's steady load with 429s, which are not what it looks for.
 */
const UNLIMITED = '1000000';

export type ProcessKind = 'core' | 'gateway';

const LISTENING: Record<ProcessKind, RegExp> = {
  core: /^fxgate core: listening on (http:\/\/\S+)$/m,
  gateway: /^fxgate gateway: listening on (http:\/\/\S+), in front of /m,
};

/** How one process's restart went, for the report. */
export interface Restart {
  readonly name: string;
  /** When SIGTERM was sent and when HAProxy had the new process in again (ms since the epoch). */
  readonly from: number;
  readonly to: number;
  /** From SIGTERM to HAProxy having it out, as the test saw HAProxy's stats (polled every 100 ms). */
  readonly outMs: number;
  /** From SIGTERM to its exit. */
  readonly stopMs: number;
  /** From the new start to /readyz 200. */
  readonly startMs: number;
  /** From /readyz 200 to HAProxy having it back in. */
  readonly backInMs: number;
}

/** One fxgate process of the fleet, on a port of its own that survives its restarts. */
export class FleetProcess {
  private cli: CliProcess | null = null;
  /** Every exit so far, with its output. */
  readonly exits: CliResult[] = [];

  constructor(
    readonly name: string,
    readonly kind: ProcessKind,
    readonly port: number,
    readonly adminPort: number | null,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get adminUrl(): string | null {
    return this.adminPort === null ? null : `http://127.0.0.1:${this.adminPort}`;
  }

  /** Starts it from dist/ and resolves once its /readyz answers 200. */
  async start(): Promise<void> {
    const cli = startBuiltCli([this.kind], this.env);
    this.cli = cli;
    // A test process that ends without its teardown leaves no fxgate behind.
    const cancelExitHook = cleanupOnExit(() => cli.child.kill('SIGKILL'));
    void cli.exited.then(cancelExitHook, cancelExitHook);
    await cli.waitFor(LISTENING[this.kind]);
    await waitUntil(
      `${this.name} /readyz 200`,
      async () => (await readiness(this.url)) === 200,
      30_000,
      () => (cli.child.exitCode === null ? null : `${this.name} exited:\n${cli.stderr}`),
    );
  }

  /** Sends the signal and resolves with how it exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<CliResult> {
    const cli = this.cli;
    if (cli === null) throw new Error(`${this.name} is not running`);
    this.cli = null;
    const result = await cli.stop(signal);
    this.exits.push(result);
    return result;
  }

  get running(): boolean {
    return this.cli !== null;
  }
}

async function readiness(url: string): Promise<number | null> {
  try {
    const response = await request(`${url}/readyz`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
    await response.body.dump();
    return response.statusCode;
  } catch {
    return null;
  }
}

export interface FleetBook {
  readonly orgId: string;
  /** The integrator's key: view, trade, withdraw; sandbox. */
  readonly key: KeyFile;
  /** The verified USD (FEDWIRE) withdrawal account the seed made. */
  readonly usdAccountId: string;
}

export class Fleet {
  private constructor(
    readonly database: TestDatabase,
    readonly pgbouncer: ThrowawayPgBouncer,
    readonly redis: ThrowawaySentinelSet,
    readonly haproxy: ThrowawayHaproxy,
    readonly processes: readonly FleetProcess[],
    readonly book: FleetBook,
    private readonly dirs: readonly string[],
  ) {}

  /** The clients' base URL: HAProxy in front of the gateways. */
  get baseUrl(): string {
    return this.haproxy.url('gateways');
  }

  process(name: string): FleetProcess {
    const found = this.processes.find((candidate) => candidate.name === name);
    if (found === undefined) throw new Error(`no process ${name}`);
    return found;
  }

  static async start(): Promise<Fleet> {
    const cleanups: (() => Promise<unknown>)[] = [];
    try {
      return await Fleet.assemble(cleanups);
    } catch (error) {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      throw error;
    }
  }

  private static async assemble(cleanups: (() => Promise<unknown>)[]): Promise<Fleet> {
    const [, database, redis] = await Promise.all([
      ensureBuiltCli(),
      createTestPostgres(),
      ThrowawaySentinelSet.start({ password: REDIS_PASSWORD }),
    ]);
    cleanups.push(
      () => database.drop(),
      () => redis.stop(),
    );
    // What the operations guide has operators set for fxgate's role, on this database only (the
    // run's server is shared): the bound of a statement outside a transaction in transaction
    // pooling. Before PgBouncer opens any session to it, which would not see the setting.
    const name = new URL(database.url!).pathname.slice(1);
    await database.db.query(`ALTER DATABASE ${name} SET statement_timeout = '10s'`);
    const pgbouncer = await startThrowawayPgBouncer({
      serverUrl: database.url!,
      poolMode: 'transaction',
      poolSize: PGBOUNCER_POOL_SIZE,
    });
    cleanups.push(() => pgbouncer.stop());
    const keysDir = await mkdtemp(join(tmpdir(), 'fxgate-fleet-keys-'));
    cleanups.push(() => rm(keysDir, { recursive: true, force: true }));
    const book = await seedBook(database, keysDir);

    const [core1, core2, gateway1, gateway2, admin1, admin2] = await Promise.all(
      [1, 2, 3, 4, 5, 6].map(() => freePort()),
    );
    const haproxy = await ThrowawayHaproxy.start({
      frontends: [
        {
          name: 'gateways',
          servers: [
            { name: 'gateway-1', port: gateway1! },
            { name: 'gateway-2', port: gateway2! },
          ],
        },
        {
          name: 'cores',
          servers: [
            { name: 'core-1', port: core1! },
            { name: 'core-2', port: core2! },
          ],
        },
      ],
      check: HEALTH_CHECK,
    });
    cleanups.push(() => haproxy.stop());

    const shared: Record<string, string> = {
      HOST: '127.0.0.1',
      DATABASE_URL: pgbouncer.urlFor(database.url!),
      FXGATE_DB_POOL_MODE: 'transaction',
      FXGATE_REDIS_SENTINELS: redis.sentinelList,
      FXGATE_REDIS_SENTINEL_NAME: redis.masterName,
      FXGATE_REDIS_PASSWORD: REDIS_PASSWORD,
      FXGATE_SECRETS_KEY: generateSealingKey(),
      FXGATE_DRAIN_DELAY_MS: String(DRAIN_DELAY_MS),
      // HAProxy adds X-Forwarded-For: the client's address is believed from it.
      FXGATE_TRUSTED_PROXIES: '127.0.0.1',
      FXGATE_RATE_LIMIT_READS: UNLIMITED,
      FXGATE_RATE_LIMIT_WRITES: UNLIMITED,
      FXGATE_LEGACY_RATE_LIMIT_READS: UNLIMITED,
      FXGATE_LEGACY_RATE_LIMIT_WRITES: UNLIMITED,
      // A lock whose release a failover lost lives this long: a client waiting it out must still
      // find its quote unexpired (the default, 30 s, is a quote's whole lifetime).
      FXGATE_IDEMPOTENCY_LOCK_TTL_MS: '5000',
      LOG_LEVEL: 'warn',
    };
    const dirs: string[] = [keysDir];
    const make = async (name: string, kind: ProcessKind, port: number, adminPort: number | null) => {
      const dataDir = await mkdtemp(join(tmpdir(), `fxgate-fleet-${name}-`));
      dirs.push(dataDir);
      return new FleetProcess(name, kind, port, adminPort, {
        ...shared,
        FXGATE_DATA_DIR: dataDir,
        PORT: String(port),
        FXGATE_ADMIN_PORT: adminPort === null ? 'off' : String(adminPort),
        ...(kind === 'gateway' ? { FXGATE_UPSTREAM_URL: haproxy.url('cores'), FXGATE_UPSTREAM_KEYS_DIR: keysDir } : {}),
      });
    };
    const processes = [
      await make('core-1', 'core', core1!, null),
      await make('core-2', 'core', core2!, null),
      await make('gateway-1', 'gateway', gateway1!, admin1!),
      await make('gateway-2', 'gateway', gateway2!, admin2!),
    ];
    const fleet = new Fleet(database, pgbouncer, redis, haproxy, processes, book, dirs);
    cleanups.push(() => fleet.stopProcesses());
    // The cores first (the gateways' /readyz asks the upstream), each pair at once.
    await Promise.all(processes.filter((p) => p.kind === 'core').map((p) => p.start()));
    await Promise.all(processes.filter((p) => p.kind === 'gateway').map((p) => p.start()));
    await Promise.all(processes.map((p) => haproxy.waitForStatus(backendOf(p), p.name, 'UP')));
    return fleet;
  }

  /**
   * SIGTERM, the exit, a new start on the same port, /readyz 200, and HAProxy's checks passing
   * again, so that the next restart never leaves a backend without a server.
   */
  async restart(name: string): Promise<Restart> {
    const target = this.process(name);
    const from = Date.now();
    const stopping = performance.now();
    const takenOut = this.haproxy
      .waitForStatus(backendOf(target), name, 'DOWN', 10_000)
      .then(() => performance.now() - stopping);
    // Awaited below; until then, a failed stop must not leave its rejection unhandled.
    takenOut.catch(() => undefined);
    const exit = await target.stop('SIGTERM');
    if (exit.code !== 0)
      throw new Error(`${name} exited ${String(exit.code ?? exit.signal)} after SIGTERM:\n${exit.stderr}`);
    const outMs = await takenOut;
    const starting = performance.now();
    await target.start();
    const ready = performance.now();
    await this.haproxy.waitForStatus(backendOf(target), name, 'UP');
    return {
      name,
      from,
      to: Date.now(),
      outMs: Math.round(outMs),
      stopMs: Math.round(starting - stopping),
      startMs: Math.round(ready - starting),
      backInMs: Math.round(performance.now() - ready),
    };
  }

  /** SIGTERM to every process still running, at once; the exits in `exits`. */
  async stopProcesses(): Promise<void> {
    await Promise.all(this.processes.filter((p) => p.running).map((p) => p.stop('SIGTERM')));
  }

  async stop(): Promise<void> {
    const steps = [
      () => this.stopProcesses(),
      () => this.haproxy.stop(),
      () => this.pgbouncer.stop(),
      () => this.redis.stop(),
      () => this.database.drop(),
      ...this.dirs.map((dir) => () => rm(dir, { recursive: true, force: true })),
    ];
    const failures: unknown[] = [];
    for (const step of steps) await step().catch((error: unknown) => failures.push(error));
    if (failures.length > 0) throw new AggregateError(failures, 'the fleet did not stop cleanly');
  }
}

function backendOf(process: FleetProcess): string {
  return process.kind === 'gateway' ? 'gateways' : 'cores';
}

/**
 * The org: the integrator's key, the gateways' own v3 credential in the key folder they read
 * (`<orgId>.sandbox.json`), and the sandbox seed `fxgate all` makes (deposits through the
 * deposit code, two verified withdrawal accounts).
 */
async function seedBook(database: TestDatabase, keysDir: string): Promise<FleetBook> {
  const registry = new KeyRegistry(database.db);
  const orgId = newUuid();
  const key = await registry.createKey({ orgId, mode: 'sandbox', scopes: ['view', 'trade', 'withdraw'] });
  const gatewayKey = await registry.createKey({
    orgId,
    mode: 'sandbox',
    scopes: ['view', 'trade', 'withdraw', 'webhooks'],
  });
  await writeKeyFile(join(keysDir, `${orgId}.sandbox.json`), gatewayKey);
  await seedSandbox(database.db, orgId, key.name);
  const { rows } = await database.db.query<{ id: string }>(
    `SELECT id FROM withdrawal_accounts WHERE org_id = $1 AND environment = 'sandbox' AND currency = 'USD'`,
    [orgId],
  );
  if (rows.length !== 1) throw new Error(`the sandbox seed made ${rows.length} USD withdrawal accounts, not 1`);
  return { orgId, key, usdAccountId: rows[0]!.id };
}
