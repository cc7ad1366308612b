/**
 * test/support/test-run.ts: run ids, and the sweep that removes what ended runs left on the shared
 * PostgreSQL, Redis and temp folder while keeping a live run's. The fake runs here are made on the
 * real servers under run ids of their own, and the liveness the sweep asks is the test's, so it
 * never judges another run on these servers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { testServices } from './services.js';
import {
  hostTag,
  isRunAlive,
  type Liveness,
  MAX_RUN_AGE_MS,
  newRunId,
  parseRunId,
  removeRun,
  runIdOf,
  type Servers,
  sweepDeadRuns,
  TEST_RUN_ENV,
  testDatabaseName,
  testKeyPrefix,
  testRedisEnv,
} from './test-run.js';

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync('true');
  return child.pid!;
}

describe('run ids', () => {
  it('name the machine, the pid and the start, and parse back', () => {
    const id = newRunId(4242, Date.UTC(2026, 10, 28, 12), 'ab12cd34');
    expect(id).toMatch(/^rab12cd344242t[0-9a-z]+$/);
    expect(parseRunId(id)).toEqual({ id, host: 'ab12cd34', pid: 4242, startedAtMs: Date.UTC(2026, 10, 28, 12) });
    expect(parseRunId('0123456789ab')).toBeNull();
  });

  it('are found in the names the suite makes, and in nothing else', () => {
    const id = newRunId(7, 0, 'cafef00d');
    expect(runIdOf(`fxgate_t_${id}_0123abcd`)).toBe(id);
    expect(runIdOf(`fxgate_t_${id}_template`)).toBe(id);
    expect(runIdOf(`fxgate-test:${id}:t01ab23cd:idem:{x}`)).toBe(id);
    expect(runIdOf(`fxgate-run-${id}`)).toBe(id);
    // The names of older suites and of other software: left alone.
    expect(runIdOf('fxgate_t_0123456789ab')).toBeNull();
    expect(runIdOf('fxgate_tpl_aee217b897c8de85')).toBeNull();
    expect(runIdOf('fxgate-test:3f2c9a7e-1b2d-4c3e-8f9a-0b1c2d3e4f5a:nonce:x')).toBeNull();
    expect(runIdOf(`idem:${id}`)).toBeNull();
  });

  it('this run has one, which its databases and Redis prefixes carry', () => {
    const id = process.env[TEST_RUN_ENV]!;
    expect(parseRunId(id)).not.toBeNull();
    expect(runIdOf(testDatabaseName())).toBe(id);
    expect(runIdOf(testKeyPrefix())).toBe(id);
    expect(runIdOf(testRedisEnv().FXGATE_REDIS_KEY_PREFIX)).toBe(id);
    expect(runIdOf(join(tmpdir()).split('/').at(-1)!)).toBe(id);
  });

  it('a run on this machine is alive while its process is; one from another machine for a day', () => {
    const now = Date.now();
    const here: Liveness = { host: 'aaaaaaaa', now, processExists: (pid) => pid === 1 };
    expect(isRunAlive(parseRunId(newRunId(1, now - 3 * MAX_RUN_AGE_MS, 'aaaaaaaa'))!, here)).toBe(true);
    expect(isRunAlive(parseRunId(newRunId(2, now, 'aaaaaaaa'))!, here)).toBe(false);
    expect(isRunAlive(parseRunId(newRunId(2, now - MAX_RUN_AGE_MS / 2, 'bbbbbbbb'))!, here)).toBe(true);
    expect(isRunAlive(parseRunId(newRunId(1, now - MAX_RUN_AGE_MS - 1000, 'bbbbbbbb'))!, here)).toBe(false);
  });
});

describe('the sweep of ended runs', () => {
  const { databaseUrl, redisUrl } = testServices();
  let tempRoot: string;
  let servers: Servers;
  let admin: pg.Client;
  let redis: Redis;
  const now = Date.now();
  const dead = newRunId(deadPid(), now);
  const live = newRunId(process.pid, now - 1000);
  const elsewhereRecent = newRunId(12345, now - 60_000, hostTag('another-machine'));
  const elsewhereOld = newRunId(12345, now - MAX_RUN_AGE_MS - 60_000, hostTag('another-machine'));
  const runs = [dead, live, elsewhereRecent, elsewhereOld];
  /** An older suite's name, with no run id: never the sweep's. */
  const unnamed = `fxgate_t_${Buffer.from(dead).toString('hex').slice(0, 12)}`;
  const liveness: Liveness = { host: hostTag(), now, processExists: (pid) => pid !== parseRunId(dead)!.pid };

  beforeAll(async () => {
    tempRoot = await mkdtemp(join(tmpdir(), 'sweep-'));
    servers = { databaseUrl, redisUrl, tempRoot };
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    redis = new Redis(redisUrl);
    for (const run of runs) {
      await admin.query(`CREATE DATABASE fxgate_t_${run}_0123abcd`);
      await redis.set(`fxgate-test:${run}:t0123abcd:idem:{o}:k`, 'x', 'EX', 3600);
      await redis.set(`fxgate-test:${run}:cli:nonce:{o}:n`, 'x', 'EX', 3600);
      await mkdir(join(tempRoot, `fxgate-run-${run}`, 'pglite'), { recursive: true });
      await writeFile(join(tempRoot, `fxgate-run-${run}`, 'pglite', 'template.tar'), 'x');
    }
    await admin.query(`CREATE DATABASE ${unnamed}`);
  });

  afterAll(async () => {
    for (const run of runs) await removeRun(servers, run);
    await admin.query(`DROP DATABASE IF EXISTS ${unnamed} WITH (FORCE)`);
    await admin.end();
    redis.disconnect();
    await rm(tempRoot, { recursive: true, force: true });
  });

  async function databasesOf(run: string): Promise<number> {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      `fxgate_t_${run}_0123abcd`,
    ]);
    return rowCount ?? 0;
  }

  it("removes a dead run's databases, keys and folder and an old one from another machine, keeping the live ones'", async () => {
    const removed = await sweepDeadRuns(servers, liveness);

    expect(removed.databases.sort()).toEqual([`fxgate_t_${dead}_0123abcd`, `fxgate_t_${elsewhereOld}_0123abcd`].sort());
    expect(removed.keys).toBe(4);
    expect(removed.folders.sort()).toEqual(
      [join(tempRoot, `fxgate-run-${dead}`), join(tempRoot, `fxgate-run-${elsewhereOld}`)].sort(),
    );
    for (const run of [dead, elsewhereOld]) {
      expect(await databasesOf(run)).toBe(0);
      expect(await redis.keys(`fxgate-test:${run}:*`)).toEqual([]);
      expect(existsSync(join(tempRoot, `fxgate-run-${run}`))).toBe(false);
    }
    for (const run of [live, elsewhereRecent]) {
      expect(await databasesOf(run)).toBe(1);
      expect((await redis.keys(`fxgate-test:${run}:*`)).length).toBe(2);
      expect(existsSync(join(tempRoot, `fxgate-run-${run}`, 'pglite', 'template.tar'))).toBe(true);
    }
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [unnamed]);
    expect(rowCount).toBe(1);
  });

  it("removes one run's everything at its end, a database still in use included", async () => {
    // A connection still open on it, as a test that failed before its drop leaves one.
    const user = new pg.Client({ connectionString: withDatabase(databaseUrl, `fxgate_t_${live}_0123abcd`) });
    user.on('error', () => undefined);
    await user.connect();
    try {
      const removed = await removeRun(servers, live);
      expect(removed).toEqual({
        databases: [`fxgate_t_${live}_0123abcd`],
        keys: 2,
        folders: [join(tempRoot, `fxgate-run-${live}`)],
      });
      expect(await databasesOf(live)).toBe(0);
      expect(await databasesOf(elsewhereRecent)).toBe(1);
    } finally {
      await user.end().catch(() => undefined);
    }
  });
});
