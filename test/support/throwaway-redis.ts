/**
 * A throwaway Redis server for test runs on machines without one: the local redis-server on
 * a free port, without persistence, as a child process of the test run (not daemonized, so
 * that we hold its pid and a Ctrl-C on the run reaches it too).
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { captureOutput, hasEnded, stopChild } from './child-processes.js';
import type { ThrowawayServer } from './local-processes.js';
import { cleanupOnExit, findExecutableDir, freePort, waitUntil } from './local-processes.js';
import { probeRedis } from './service-probes.js';

export const REDIS_INSTALL_HINT =
  'install redis-server (Debian/Ubuntu: apt-get install redis-server) or set REDIS_URL to a running server';

export async function startThrowawayRedis(): Promise<ThrowawayServer> {
  const binDir = findExecutableDir(['redis-server'], ['/usr/bin', '/usr/local/bin', '/usr/sbin']);
  if (binDir === null) throw new Error(`no redis-server in PATH, /usr/bin or /usr/local/bin: ${REDIS_INSTALL_HINT}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fxgate-test-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const child = spawn(path.join(binDir, 'redis-server'), serverArgs(port, dir), { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = captureOutput(child);
  try {
    await waitUntil(
      'throwaway Redis',
      async () => (await probeRedis(url, 500)).state === 'up',
      30_000,
      () => exitDescription(child, output()),
    );
  } catch (error) {
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`could not start a throwaway Redis: ${reason}\n(or set REDIS_URL to a running server)`, {
      cause: error,
    });
  }
  const cancelExitHook = cleanupOnExit(() => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url,
    description: `throwaway Redis from ${binDir} (pid ${child.pid ?? '?'}) in ${dir}`,
    async stop() {
      cancelExitHook();
      try {
        await stopChild(child);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Loopback only, and nothing written to disk: the data dies with the run. */
function serverArgs(port: number, dir: string): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--dir',
    dir,
  ];
}

export function exitDescription(child: ChildProcess, output: string): string | null {
  if (!hasEnded(child)) return null;
  return `redis-server exited (${child.exitCode ?? child.signalCode})${output ? `:\n${output}` : ''}`;
}
