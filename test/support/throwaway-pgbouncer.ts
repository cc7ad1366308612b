/**
 * A throwaway PgBouncer (Debian's `pgbouncer`, installed when missing and the run is root) in front
 * of the test PostgreSQL: a child process on a free loopback port, with its own temp folder, every
 * database name passed through to the same name on the server (`* =`), trust auth for the URL's
 * user, and a small pool, so that clients really share server connections. Stopped and removed by
 * stop(), or when the test process exits without it.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { captureOutput, hasEnded, stopChild } from './child-processes.js';
import { ensureDebianBinary } from './debian-package.js';
import type { ThrowawayServer } from './local-processes.js';
import { cleanupOnExit, freePort, isRoot, unprivilegedAccount, waitUntil } from './local-processes.js';
import { probePostgres } from './service-probes.js';

export type PgBouncerPoolMode = 'session' | 'transaction';

export interface PgBouncerOptions {
  /** The PostgreSQL it pools, as a URL whose user clients log in as (its database is not used). */
  readonly serverUrl: string;
  readonly poolMode: PgBouncerPoolMode;
  /** Server connections per database and user. */
  readonly poolSize: number;
  /** Connection parameters PgBouncer accepts and drops instead of refusing the connection (`ignore_startup_parameters`). */
  readonly ignoreStartupParameters?: readonly string[];
  /**
   * Seconds an unused server connection is kept (`server_idle_timeout`): 10 unless given, so
   * that the connections to a test's database go soon after the test; PgBouncer's own is 600.
   */
  readonly serverIdleTimeoutSeconds?: number;
}

export interface ThrowawayPgBouncer extends ThrowawayServer {
  /** `serverUrl` with PgBouncer's host and port: the same user and database, through the pool. */
  readonly url: string;
  /** The same database through this PgBouncer. */
  urlFor(databaseUrl: string): string;
  /** PgBouncer's admin console (`SHOW POOLS`, `SHOW SERVERS` ...), as the URL's user. */
  readonly adminUrl: string;
  /** The PgBouncer process (one process: it does not fork when it runs in the foreground). */
  readonly pid: number;
}

export async function startThrowawayPgBouncer(options: PgBouncerOptions): Promise<ThrowawayPgBouncer> {
  const binary = await ensureDebianBinary({ binary: 'pgbouncer', package: 'pgbouncer' });
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username) || os.userInfo().username;
  // PgBouncer refuses to run as root: it drops to this account once it has read its files.
  const account = isRoot() ? unprivilegedAccount() : null;
  if (isRoot() && account === null)
    throw new Error("running as root, and no 'postgres' or 'nobody' account for PgBouncer");
  const dir = await mkdtemp(path.join(account === null ? os.tmpdir() : '/tmp', 'fxgate-test-pgbouncer-'));
  if (account !== null) await chown(dir, account.uid, account.gid);
  const port = await freePort();
  const config = path.join(dir, 'pgbouncer.ini');
  await writeFile(path.join(dir, 'users.txt'), `${quoted(user)} ""\n`);
  await writeFile(config, configText({ ...options, dir, port, user, server, runAs: account?.name ?? null }));
  const child = spawn(binary, [config], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = captureOutput(child);
  const url = withHost(options.serverUrl, port, user);
  const stop = async (): Promise<void> => {
    try {
      await stopChild(child);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  try {
    await waitUntil(
      'throwaway PgBouncer',
      async () => (await probePostgres(url, 1_000)).state === 'up',
      30_000,
      () => (hasEnded(child) ? `pgbouncer exited (${child.exitCode ?? child.signalCode}):\n${output()}` : null),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const cancelExitHook = cleanupOnExit(() => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = new URL(url);
  admin.pathname = '/pgbouncer';
  return {
    url,
    pid: child.pid!,
    adminUrl: admin.toString(),
    urlFor: (databaseUrl) => withHost(databaseUrl, port, user),
    description: `throwaway PgBouncer ${binary} (pid ${child.pid ?? '?'}, pool_mode ${options.poolMode}, pool size ${options.poolSize}) in ${dir}`,
    async stop() {
      cancelExitHook();
      await stop();
    },
  };
}

interface ConfigInput extends PgBouncerOptions {
  readonly dir: string;
  readonly port: number;
  readonly user: string;
  readonly server: URL;
  readonly runAs: string | null;
}

function configText(input: ConfigInput): string {
  const lines = [
    '[databases]',
    // Every database name goes to the same name on the server: each test database gets its own pool.
    `* = host=${input.server.hostname} port=${input.server.port || '5432'}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${input.port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${path.join(input.dir, 'users.txt')}`,
    `admin_users = ${input.user}`,
    `pool_mode = ${input.poolMode}`,
    `default_pool_size = ${input.poolSize}`,
    // Many clients (every pool of every process a test starts) share the few server connections.
    'max_client_conn = 2000',
    // A client waiting this long for a server connection gets an error rather than a hung test.
    'query_wait_timeout = 20',
    // Server connections to a test's database go soon after it; the database's pool later.
    `server_idle_timeout = ${input.serverIdleTimeoutSeconds ?? 10}`,
    `autodb_idle_timeout = ${Math.max(30, input.serverIdleTimeoutSeconds ?? 0)}`,
    ...(input.ignoreStartupParameters?.length
      ? [`ignore_startup_parameters = ${input.ignoreStartupParameters.join(',')}`]
      : []),
    ...(input.runAs === null ? [] : [`user = ${input.runAs}`]),
  ];
  return `${lines.join('\n')}\n`;
}

/** PgBouncer's auth_file quotes names with double quotes, doubled inside. */
function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function withHost(databaseUrl: string, port: number, user: string): string {
  const parsed = new URL(databaseUrl);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(port);
  if (parsed.username === '') parsed.username = encodeURIComponent(user);
  return parsed.toString();
}
