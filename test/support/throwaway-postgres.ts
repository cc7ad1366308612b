/**
 * A throwaway PostgreSQL server for test runs on machines without one: a fresh cluster in a
 * temp folder, on a free port, with trust auth and a `test` database, removed afterwards.
 * It uses the local binaries (initdb, pg_ctl), as PostgreSQL cannot be embedded.
 */
import { rmSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import pg from 'pg';

import type { Account, ThrowawayServer } from './local-processes.js';
import {
  cleanupOnExit,
  findExecutableDir,
  freePort,
  isRoot,
  runCommand,
  runCommandSync,
  unprivilegedAccount,
  versionedDirs,
} from './local-processes.js';

const POSTGRES_INSTALL_HINT =
  'install PostgreSQL server binaries (initdb, pg_ctl; Debian/Ubuntu: apt-get install postgresql) or set DATABASE_URL to a running server';

/** Debian/Ubuntu keep the server binaries out of PATH, one folder per major version. */
const POSTGRES_DIRS = [...versionedDirs('/usr/lib/postgresql', 'bin'), '/usr/local/pgsql/bin'];

/** How commands run: as root, through runuser as an unprivileged account (postgres refuses root). */
interface Runner {
  readonly account: Account | null;
  run(command: string, args: readonly string[]): Promise<string>;
  runSync(command: string, args: readonly string[]): void;
}

export async function startThrowawayPostgres(): Promise<ThrowawayServer> {
  const binDir = findExecutableDir(['initdb', 'pg_ctl'], POSTGRES_DIRS);
  if (binDir === null) {
    throw new Error(
      `no PostgreSQL server binaries (initdb, pg_ctl) in PATH or /usr/lib/postgresql/*/bin: ${POSTGRES_INSTALL_HINT}`,
    );
  }
  const runner = commandRunner();
  // As root, /tmp rather than $TMPDIR: the account the server runs as must reach the folder,
  // and a root-only TMPDIR (e.g. under /root) would make initdb fail with "Permission denied".
  const base = runner.account === null ? os.tmpdir() : '/tmp';
  const dir = await mkdtemp(path.join(base, 'fxgate-test-pg-'));
  if (runner.account !== null) await chown(dir, runner.account.uid, runner.account.gid);
  const dataDir = path.join(dir, 'data');
  const pgCtl = path.join(binDir, 'pg_ctl');
  const stopServer = (): Promise<string> => runner.run(pgCtl, ['stop', '-D', dataDir, '-m', 'immediate', '-w']);
  let started = false;
  try {
    const port = await freePort();
    await runner.run(path.join(binDir, 'initdb'), [
      '-D',
      dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    // Set before starting: a start that timed out may still leave a server running.
    started = true;
    await runner.run(pgCtl, [
      'start',
      '-D',
      dataDir,
      '-l',
      path.join(dir, 'postgres.log'),
      '-w',
      '-t',
      '60',
      '-o',
      serverOptions(port, dir),
    ]);
    await createDatabase(port, 'test');
    const cancelExitHook = cleanupOnExit(() => {
      runner.runSync(pgCtl, ['stop', '-D', dataDir, '-m', 'immediate', '-w']);
      rmSync(dir, { recursive: true, force: true });
    });
    return {
      url: `postgres://postgres@127.0.0.1:${port}/test`,
      description: `throwaway PostgreSQL from ${binDir}${runner.account ? ` as ${runner.account.name}` : ''} in ${dir}`,
      async stop() {
        cancelExitHook();
        try {
          await stopServer();
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    if (started) await stopServer().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`could not start a throwaway PostgreSQL: ${reason}\n(or set DATABASE_URL to a running server)`, {
      cause: error,
    });
  }
}

/**
 * Loopback TCP only, the Unix socket in our temp folder (the default /var/run/postgresql may
 * not exist or be writable), and no fsync: the data dies with the run anyway.
 */
function serverOptions(port: number, socketDir: string): string {
  return `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
}

function commandRunner(): Runner {
  if (!isRoot()) {
    return { account: null, run: runCommand, runSync: runCommandSync };
  }
  const account = unprivilegedAccount();
  if (account === null) {
    throw new Error(
      `running as root, and no 'postgres' or 'nobody' account to run PostgreSQL as: ${POSTGRES_INSTALL_HINT}`,
    );
  }
  const runuserDir = findExecutableDir(['runuser'], ['/usr/sbin', '/sbin']);
  if (runuserDir === null) {
    throw new Error(`running as root, and runuser (util-linux) is missing to run PostgreSQL as ${account.name}`);
  }
  const runuser = path.join(runuserDir, 'runuser');
  const wrap = (command: string, args: readonly string[]): string[] => ['-u', account.name, '--', command, ...args];
  return {
    account,
    run: (command, args) => runCommand(runuser, wrap(command, args)),
    runSync: (command, args) => runCommandSync(runuser, wrap(command, args)),
  };
}

async function createDatabase(port: number, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}
