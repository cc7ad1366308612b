/**
 * Small process helpers shared by the throwaway PostgreSQL and Redis servers that the test
 * global setup starts when no real server answers.
 */
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

/**
 * The first directory holding every one of `names` as an executable: PATH first, then the
 * given extra directories. Looking for all names in one directory keeps tools of one
 * installation together (Debian ships initdb and pg_ctl outside PATH, one folder per version).
 */
export function findExecutableDir(names: readonly string[], extraDirs: readonly string[] = []): string | null {
  const pathDirs = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== '');
  for (const dir of [...pathDirs, ...extraDirs]) {
    if (names.every((name) => isExecutable(path.join(dir, name)))) return dir;
  }
  return null;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Subdirectories of `parent` that exist, newest version first (e.g. /usr/lib/postgresql/16/bin). */
export function versionedDirs(parent: string, suffix: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return [];
  }
  return entries
    .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }))
    .map((entry) => path.join(parent, entry, suffix));
}

/**
 * A TCP port that was free a moment ago. Another process could take it before the server
 * binds; the servers then fail to start with a clear error, which is good enough for tests.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port found'))));
    });
  });
}

/** Runs a command to completion; on failure the error carries its output, which says why. */
export function runCommand(command: string, args: readonly string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error === null) {
        resolve(stdout);
        return;
      }
      // error.message repeats the command and stderr; the exit code or signal is what it adds.
      const how = error.killed ? 'timed out' : `exit code ${String(error.code ?? error.signal)}`;
      const output = `${stdout}${stderr}`.trim();
      reject(new Error(`${[command, ...args].join(' ')} failed (${how})${output ? `:\n${output}` : ''}`));
    });
  });
}

/** Polls `ready` until it holds; `failure` lets the caller stop early (e.g. the process died). */
export async function waitUntil(
  what: string,
  ready: () => Promise<boolean>,
  timeoutMs: number,
  failure: () => string | null = () => null,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failed = failure();
    if (failed !== null) throw new Error(`${what}: ${failed}`);
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A server started for this test run only. */
export interface ThrowawayServer {
  readonly url: string;
  /** What was started and where, for the one log line per service. */
  readonly description: string;
  /** Stops the server and removes its temp folder. */
  stop(): Promise<void>;
}

export interface Account {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/**
 * initdb and postgres refuse to run as root, so as root they run as this account: `postgres`
 * where a PostgreSQL package created it, else `nobody`.
 */
export function unprivilegedAccount(): Account | null {
  let passwd: string;
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return null;
  }
  const accounts = new Map<string, Account>();
  for (const line of passwd.split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name && uid && gid) accounts.set(name, { name, uid: Number(uid), gid: Number(gid) });
  }
  return accounts.get('postgres') ?? accounts.get('nobody') ?? null;
}

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/**
 * Runs `cleanup` if the test process exits without its teardown (a crash, a signal handled
 * by vitest), so that a server started in the background does not outlive the run.
 * Returns the function that cancels it once the regular teardown has run.
 */
export function cleanupOnExit(cleanup: () => void): () => void {
  const hook = (): void => {
    try {
      cleanup();
    } catch {
      // Best effort only: the process is exiting and has nowhere to report to.
    }
  };
  process.once('exit', hook);
  return () => process.off('exit', hook);
}

/** execFileSync for the exit hooks above, where nothing asynchronous runs any more. */
export function runCommandSync(command: string, args: readonly string[]): void {
  execFileSync(command, args, { stdio: 'ignore', timeout: 30_000 });
}
