/**
 * One test run's name, and the cleanup of what runs leave on the shared servers and disk. The
 * PostgreSQL server, the Redis and the temp folder are shared with other runs and other work
 * (several runs at once on one machine, CI beside a developer), so every database, Redis key and
 * temp folder a run makes carries its run id, and only those are ever removed:
 *
 * - databases `fxgate_t_<run>_...` (databases.ts, database-templates.ts),
 * - Redis keys `fxgate-test:<run>:...` (testKeyPrefix; fxgate processes get testRedisEnv),
 * - the temp folder `fxgate-run-<run>` in the system temp folder, the run's TMPDIR.
 *
 * The run id is `r<host><pid>t<start>`: the machine (a hash of its host name), the pid of the
 * vitest process and its start in seconds (base 36). The global setup removes the run's own at
 * its end, and at its start every other run's that is over: on this machine, a run whose process
 * is gone; from another machine sharing the servers, one that started more than MAX_RUN_AGE_MS
 * ago. A run that is alive is never touched. Machines (or containers) that share the servers
 * are told apart by host name, so they need different ones, as they have by default.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import pg from 'pg';

import { testServices } from './services.js';

/** The environment variable with the run id, set by the global setup and inherited by the test processes. */
export const TEST_RUN_ENV = 'FXGATE_TEST_RUN';
/** A run from another machine is taken as over this long after its start: no run of the suite lasts a day. */
export const MAX_RUN_AGE_MS = 24 * 60 * 60 * 1000;

export const DATABASE_PREFIX = 'fxgate_t_';
export const KEY_PREFIX = 'fxgate-test:';
export const FOLDER_PREFIX = 'fxgate-run-';

const RUN_ID = /^r([0-9a-f]{8})(\d+)t([0-9a-z]+)$/;

export interface RunId {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly startedAtMs: number;
}

/** This machine, as run ids name it. */
export function hostTag(hostname = os.hostname()): string {
  return createHash('sha256').update(hostname).digest('hex').slice(0, 8);
}

export function newRunId(pid = process.pid, now = Date.now(), host = hostTag()): string {
  return `r${host}${pid}t${Math.floor(now / 1000).toString(36)}`;
}

export function parseRunId(id: string): RunId | null {
  const match = RUN_ID.exec(id);
  if (match === null) return null;
  return { id, host: match[1]!, pid: Number(match[2]), startedAtMs: parseInt(match[3]!, 36) * 1000 };
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface Liveness {
  readonly host: string;
  readonly now: number;
  processExists(pid: number): boolean;
}

const LOCAL: () => Liveness = () => ({ host: hostTag(), now: Date.now(), processExists });

/** Whether a run may still be using what it made. */
export function isRunAlive(run: RunId, liveness: Liveness = LOCAL()): boolean {
  if (run.host === liveness.host) return liveness.processExists(run.pid);
  return liveness.now - run.startedAtMs < MAX_RUN_AGE_MS;
}

/**
 * This run's id: the global setup's, inherited through the environment. A process outside a
 * vitest run with the global setup (none today) gets one of its own, swept once it is gone.
 */
export function testRunId(): string {
  process.env[TEST_RUN_ENV] ??= newRunId();
  return process.env[TEST_RUN_ENV];
}

/** A Redis key prefix of this run's, unique to the caller: `fxgate-test:<run>:<tag><random>:`. */
export function testKeyPrefix(tag = 't'): string {
  return `${KEY_PREFIX}${testRunId()}:${tag}${randomBytes(4).toString('hex')}:`;
}

/**
 * The test Redis as an fxgate process's environment takes it, under this run's prefix for
 * processes (`fxgate-test:<run>:cli:`): what they store goes with the run. One prefix for every
 * process of the run, as they shared the bare server before.
 */
export function testRedisEnv(): { REDIS_URL: string; FXGATE_REDIS_KEY_PREFIX: string } {
  return { REDIS_URL: testServices().redisUrl, FXGATE_REDIS_KEY_PREFIX: `${KEY_PREFIX}${testRunId()}:cli:` };
}

/** A database name of this run's: `fxgate_t_<run>_<tag>` (lower case, a PostgreSQL identifier as is). */
export function testDatabaseName(tag = randomBytes(6).toString('hex')): string {
  return `${DATABASE_PREFIX}${testRunId()}_${tag}`;
}

/** The run id in a database name, Redis key or folder name the suite made, or null for anything else. */
export function runIdOf(name: string): string | null {
  for (const [prefix, end] of [
    [DATABASE_PREFIX, '_'],
    [KEY_PREFIX, ':'],
    [FOLDER_PREFIX, null],
  ] as const) {
    if (!name.startsWith(prefix)) continue;
    const rest = name.slice(prefix.length);
    const id = end === null ? rest : rest.slice(0, Math.max(0, rest.indexOf(end)));
    return parseRunId(id) === null ? null : id;
  }
  return null;
}

export interface Removed {
  readonly databases: string[];
  readonly keys: number;
  readonly folders: string[];
}

export interface Servers {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  /** The folder holding the runs' temp folders: the system's, not a run's TMPDIR. */
  readonly tempRoot: string;
}

/** Removes what the runs `doomed` accepts made: their databases, Redis keys and temp folders. */
export async function removeRuns(servers: Servers, doomed: (run: string) => boolean): Promise<Removed> {
  return {
    databases: await dropDatabases(servers.databaseUrl, doomed),
    keys: await deleteKeys(servers.redisUrl, doomed),
    folders: await removeFolders(servers.tempRoot, doomed),
  };
}

/** What a run that is over left behind (a killed run, a crashed one): never a live run's. */
export function sweepDeadRuns(servers: Servers, liveness: Liveness = LOCAL()): Promise<Removed> {
  return removeRuns(servers, (id) => {
    const run = parseRunId(id);
    return run !== null && !isRunAlive(run, liveness);
  });
}

/** Everything of one run, at its end. */
export function removeRun(servers: Servers, id: string): Promise<Removed> {
  return removeRuns(servers, (run) => run === id);
}

async function dropDatabases(adminUrl: string, doomed: (run: string) => boolean): Promise<string[]> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname',
      [DATABASE_PREFIX],
    );
    const names = rows
      .map((row) => row.datname)
      .filter((name) => {
        const run = runIdOf(name);
        return run !== null && doomed(run);
      });
    for (const name of names) {
      // The names come from pg_database and were checked against the run id grammar above.
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
    return names;
  } finally {
    await admin.end();
  }
}

async function deleteKeys(redisUrl: string, doomed: (run: string) => boolean): Promise<number> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${KEY_PREFIX}*`, 'COUNT', 1000);
      cursor = next;
      const mine = keys.filter((key) => {
        const run = runIdOf(key);
        return run !== null && doomed(run);
      });
      if (mine.length > 0) deleted += await redis.unlink(...mine);
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

async function removeFolders(tempRoot: string, doomed: (run: string) => boolean): Promise<string[]> {
  const entries = await readdir(tempRoot).catch(() => [] as string[]);
  const mine = entries.filter((entry) => {
    const run = runIdOf(entry);
    return run !== null && doomed(run);
  });
  for (const entry of mine) await rm(join(tempRoot, entry), { recursive: true, force: true });
  return mine.map((entry) => join(tempRoot, entry));
}
