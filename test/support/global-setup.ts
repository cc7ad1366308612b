/**
 * Vitest global setup: before any suite runs, a real PostgreSQL and a real Redis answer, and
 * the migrated templates every test database is copied from exist (database-templates.ts).
 *
 * Each service is taken from DATABASE_URL / REDIS_URL (or the defaults in services.ts). When
 * nothing listens there, a throwaway server is started from local binaries and its URL put in
 * process.env, which the test workers inherit: vitest forks them after this setup has run and
 * copies process.env at that moment. Suites that need the services never skip: a machine that
 * can provide neither fails here, saying what to install.
 *
 * It also names the run (test-run.ts): the workers inherit the run id and a temp folder of the
 * run's as TMPDIR. At the start it removes what runs that are over left behind; at the end, once
 * every project's setup has been torn down, what this run made: its databases, Redis keys and
 * temp folder.
 */
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';

import { prepareDatabaseTemplates } from './database-templates.js';
import type { ThrowawayServer } from './local-processes.js';
import type { ProbeResult } from './service-probes.js';
import { probePostgres, probeRedis, redactUrl } from './service-probes.js';
import { TEST_SERVICE_DEFAULTS, testServices } from './services.js';
import {
  FOLDER_PREFIX,
  newRunId,
  parseRunId,
  type Removed,
  removeRun,
  type Servers,
  sweepDeadRuns,
  TEST_RUN_ENV,
} from './test-run.js';
import { startThrowawayPostgres } from './throwaway-postgres.js';
import { startThrowawayRedis } from './throwaway-redis.js';

interface ServiceSpec {
  readonly name: string;
  readonly envVar: 'DATABASE_URL' | 'REDIS_URL';
  readonly defaultUrl: string;
  /** The URL as the test workers should get it. */
  resolveUrl(url: string): string;
  probe(url: string): Promise<ProbeResult>;
  startThrowaway(): Promise<ThrowawayServer>;
}

const SERVICES: readonly ServiceSpec[] = [
  {
    name: 'PostgreSQL',
    envVar: 'DATABASE_URL',
    defaultUrl: TEST_SERVICE_DEFAULTS.databaseUrl,
    resolveUrl: withLibpqUser,
    probe: probePostgres,
    startThrowaway: startThrowawayPostgres,
  },
  {
    name: 'Redis',
    envVar: 'REDIS_URL',
    defaultUrl: TEST_SERVICE_DEFAULTS.redisUrl,
    resolveUrl: (url) => url,
    probe: probeRedis,
    startThrowaway: startThrowawayRedis,
  },
];

const LOG_PREFIX = '[test services]';

/**
 * The run, shared by the setups of every project in the vitest process (each loads this module
 * afresh, so it lives on globalThis): the last teardown removes what the run made.
 */
interface Run {
  readonly id: string;
  readonly servers: Servers;
  readonly previousTmpdir: string | undefined;
  setups: number;
}
const RUN = Symbol.for('fxgate.test-run');
const runs = globalThis as { [RUN]?: Run };

export default async function setup(): Promise<() => Promise<void>> {
  const started: ThrowawayServer[] = [];
  const previousEnv = new Map(
    [...SERVICES.map((service) => service.envVar), TEST_RUN_ENV].map((name) => [name, process.env[name]]),
  );
  let run: Run | undefined;
  const teardown = async (): Promise<void> => {
    if (run !== undefined && --run.setups === 0) await endRun(run);
    await stopAll(started);
    for (const [envVar, value] of previousEnv) restoreEnv(envVar, value);
  };
  try {
    for (const service of SERVICES) {
      const throwaway = await ensureService(service);
      if (throwaway !== null) started.push(throwaway);
    }
    run = await joinRun();
    await prepareDatabaseTemplates(process.env.DATABASE_URL!);
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}

/** This process's run: the first project's setup starts it (sweeping ended runs), the others join it. */
async function joinRun(): Promise<Run> {
  const current = runs[RUN];
  if (current !== undefined && parseRunId(current.id)?.pid === process.pid) {
    current.setups += 1;
    return current;
  }
  const id = newRunId();
  const { databaseUrl, redisUrl } = testServices();
  const servers: Servers = { databaseUrl, redisUrl, tempRoot: os.tmpdir() };
  const swept = await sweepDeadRuns(servers);
  if (swept.databases.length + swept.keys + swept.folders.length > 0)
    console.log(`${LOG_PREFIX} removed what ended runs left: ${describeRemoved(swept)}`);
  const folder = join(servers.tempRoot, `${FOLDER_PREFIX}${id}`);
  await mkdir(folder, { recursive: true });
  const run: Run = { id, servers, previousTmpdir: process.env.TMPDIR, setups: 1 };
  runs[RUN] = run;
  process.env[TEST_RUN_ENV] = id;
  // The workers' and their children's temp files land in the run's folder, removed with the run.
  process.env.TMPDIR = folder;
  return run;
}

/** Removes what the run made; a failure is reported, not fatal: the next run's sweep removes it. */
async function endRun(run: Run): Promise<void> {
  delete runs[RUN];
  restoreEnv('TMPDIR', run.previousTmpdir);
  try {
    const removed = await removeRun(run.servers, run.id);
    console.log(`${LOG_PREFIX} run ${run.id} removed ${describeRemoved(removed)}`);
  } catch (error) {
    console.warn(
      `${LOG_PREFIX} could not remove everything run ${run.id} made (${(error as Error).message}); the next run removes it`,
    );
  }
}

function describeRemoved(removed: Removed): string {
  return `${removed.databases.length} databases, ${removed.keys} Redis keys, ${removed.folders.length} temp folders`;
}

/** Makes one service answer; returns the throwaway server started for it, if any. */
async function ensureService(service: ServiceSpec): Promise<ThrowawayServer | null> {
  const configured = process.env[service.envVar];
  const url = service.resolveUrl(configured ?? service.defaultUrl);
  const source = configured === undefined ? 'default' : service.envVar;
  const probe = await service.probe(url);
  if (probe.state === 'up') {
    process.env[service.envVar] = url;
    console.log(`${LOG_PREFIX} ${service.name}: using ${redactUrl(url)} (${source})`);
    return null;
  }
  // A server that answers but refuses us was asked for by name: replacing it would hide the
  // misconfiguration. Only the unconfigured default may fall back to a throwaway server.
  if (probe.state === 'refused' && configured !== undefined) {
    throw new Error(
      `${service.name} at ${redactUrl(url)} (${service.envVar}) answered with an error: ${probe.reason}. Fix the server or the URL.`,
    );
  }
  const throwaway = await service.startThrowaway();
  process.env[service.envVar] = throwaway.url;
  console.log(
    `${LOG_PREFIX} ${service.name}: ${redactUrl(url)} (${source}) ${probe.state}: ${probe.reason}; ` +
      `using ${throwaway.url}, a ${throwaway.description}`,
  );
  return throwaway;
}

/** Stops every server, newest first, even if one of them fails to stop. */
async function stopAll(servers: ThrowawayServer[]): Promise<void> {
  const failures: unknown[] = [];
  for (const server of servers.splice(0).reverse()) {
    try {
      await server.stop();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, `${LOG_PREFIX} could not stop every throwaway server`);
}

/**
 * A URL without a user name gets the login user, as psql and libpq do. node-postgres instead
 * reads only $PGUSER and $USER, which root shells in CI and containers often lack; the server
 * then rejects the connection ("no PostgreSQL user name specified").
 */
function withLibpqUser(url: string): string {
  const parsed = new URL(url);
  if (parsed.username !== '' || process.env.PGUSER || process.env.USER) return url;
  parsed.username = encodeURIComponent(os.userInfo().username);
  return parsed.toString();
}

function restoreEnv(envVar: string, value: string | undefined): void {
  if (value === undefined) delete process.env[envVar];
  else process.env[envVar] = value;
}
