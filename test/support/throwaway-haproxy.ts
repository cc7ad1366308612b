/**
 * A throwaway HAProxy (Debian's `haproxy`, installed when missing and the run is root) as the load
 * balancer of a test fleet: a child process in the foreground, each frontend on a free loopback
 * port in front of one backend of servers on loopback, every server health-checked on its
 * `/readyz` as docs/operations.md#stopping-and-rolling-restarts tells operators to, and a stats
 * listener whose CSV says which servers HAProxy has in or out. Stopped and removed by stop(), or
 * when the test process exits without it.
 *
 * It may touch: the process it starts and its temporary folder; it binds and reaches 127.0.0.1 only.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { request } from 'undici';

import { captureOutput, hasEnded, stopChild } from './child-processes.js';
import { ensureDebianBinary } from './debian-package.js';
import { cleanupOnExit, freePort, isRoot, unprivilegedAccount, waitUntil } from './local-processes.js';

/** How HAProxy checks a server: `inter`, `fall` and `rise` of its `server` lines, and `timeout check`. */
export interface HealthCheck {
  /** The path checked; 200 keeps the server in, anything else (or no answer) counts as a failure. */
  readonly path: string;
  readonly intervalMs: number;
  /** Failed checks in a row that take a server out. */
  readonly fall: number;
  /** Passed checks in a row that put it back. */
  readonly rise: number;
  /** How long one check may take before it counts as failed. */
  readonly timeoutMs: number;
}

export interface BackendServer {
  readonly name: string;
  readonly port: number;
}

export interface Frontend {
  /** The frontend's and its backend's name (letters, digits, `-`, `_`). */
  readonly name: string;
  readonly servers: readonly BackendServer[];
}

export interface HaproxyOptions {
  readonly frontends: readonly Frontend[];
  readonly check: HealthCheck;
}

/** A server's state as HAProxy's stats CSV gives it: `UP`, `DOWN`, `MAINT`, or a transition such as `UP 1/2`. */
export type ServerStatus = string;

export class ThrowawayHaproxy {
  private constructor(
    private readonly child: ReturnType<typeof spawn>,
    private readonly dir: string,
    private readonly output: () => string,
    private readonly cancelExitHook: () => void,
    /** The base URL of each frontend, by name. */
    readonly urls: Readonly<Record<string, string>>,
    private readonly statsUrl: string,
    readonly description: string,
  ) {}

  static async start(options: HaproxyOptions): Promise<ThrowawayHaproxy> {
    const binary = await ensureDebianBinary({ binary: 'haproxy', package: 'haproxy' });
    // As root, HAProxy drops to an unprivileged account once it has bound its ports.
    const account = isRoot() ? unprivilegedAccount() : null;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fxgate-test-haproxy-'));
    if (account !== null) await chown(dir, account.uid, account.gid);
    const ports = new Map<string, number>();
    for (const frontend of options.frontends) ports.set(frontend.name, await freePort());
    const statsPort = await freePort();
    const config = path.join(dir, 'haproxy.cfg');
    await writeFile(config, configText(options, ports, statsPort, account?.name ?? null));
    // -db: in the foreground, so that the test holds the pid; -f: this configuration only.
    const child = spawn(binary, ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = captureOutput(child);
    const statsUrl = `http://127.0.0.1:${statsPort}/stats;csv`;
    const remove = async (): Promise<void> => {
      try {
        await stopChild(child);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };
    try {
      await waitUntil(
        'throwaway HAProxy',
        async () => (await readStats(statsUrl).catch(() => null)) !== null,
        30_000,
        () => (hasEnded(child) ? `haproxy exited (${child.exitCode ?? child.signalCode}):\n${output()}` : null),
      );
    } catch (error) {
      await remove();
      throw error;
    }
    const cancelExitHook = cleanupOnExit(() => {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    const urls = Object.fromEntries([...ports].map(([name, port]) => [name, `http://127.0.0.1:${port}`]));
    return new ThrowawayHaproxy(
      child,
      dir,
      output,
      cancelExitHook,
      urls,
      statsUrl,
      `throwaway HAProxy ${binary} (pid ${child.pid ?? '?'}) in ${dir}`,
    );
  }

  url(frontend: string): string {
    const url = this.urls[frontend];
    if (url === undefined) throw new Error(`no frontend ${frontend}`);
    return url;
  }

  /** Each server's status in a backend, as HAProxy sees it now. */
  async statuses(backend: string): Promise<Map<string, ServerStatus>> {
    const rows = await readStats(this.statsUrl);
    return new Map(
      rows
        .filter((row) => row.pxname === backend && row.svname !== 'FRONTEND' && row.svname !== 'BACKEND')
        .map((row) => [row.svname!, row.status ?? '']),
    );
  }

  /** Until HAProxy has the server in the given state (`UP`: in the rotation; `DOWN`: out of it). */
  async waitForStatus(backend: string, server: string, status: 'UP' | 'DOWN', timeoutMs = 30_000): Promise<void> {
    let last: ServerStatus | undefined;
    await waitUntil(
      `HAProxy to see ${backend}/${server} ${status}`,
      async () => {
        // A stats page that does not answer once is asked again at the next poll.
        last = (await this.statuses(backend).catch(() => undefined))?.get(server);
        return last === status;
      },
      timeoutMs,
      () => (hasEnded(this.child) ? `haproxy exited:\n${this.output()}` : null),
    ).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`${reason} (last seen: ${last ?? 'no such server'})\n${this.output()}`, { cause: error });
    });
  }

  /** What HAProxy printed (its warnings and alerts), for failure messages. */
  log(): string {
    return this.output();
  }

  async stop(): Promise<void> {
    this.cancelExitHook();
    try {
      await stopChild(this.child);
    } finally {
      await rm(this.dir, { recursive: true, force: true });
    }
  }
}

/** The stats CSV's rows as objects keyed by its header (`# pxname,svname,...`). */
async function readStats(url: string): Promise<Record<string, string>[]> {
  const response = await request(url, { headersTimeout: 2_000, bodyTimeout: 2_000 });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`HAProxy stats answered ${response.statusCode}`);
  const [header, ...lines] = text.trim().split('\n');
  const names = (header ?? '').replace(/^# /, '').split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, index) => [names[index] ?? '', value])));
}

function configText(
  options: HaproxyOptions,
  ports: ReadonlyMap<string, number>,
  statsPort: number,
  runAs: string | null,
): string {
  const { check } = options;
  const lines = [
    'global',
    '  maxconn 4096',
    ...(runAs === null ? [] : [`  user ${runAs}`]),
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout http-request 10s',
    // Longer than undici's own idle timeout (4 s), so that the client, not HAProxy, closes an idle connection.
    '  timeout http-keep-alive 10s',
    `  timeout check ${check.timeoutMs}ms`,
    // No retry on another server: what reaches a server that stopped accepting fails, so that a
    // test's count of failed requests is the servers' doing, not hidden by the balancer.
    '  retries 0',
    '  option forwardfor',
    '',
  ];
  for (const frontend of options.frontends) {
    lines.push(
      `frontend ${frontend.name}`,
      `  bind 127.0.0.1:${ports.get(frontend.name)!}`,
      `  default_backend ${frontend.name}`,
      '',
      `backend ${frontend.name}`,
      '  balance roundrobin',
      `  option httpchk GET ${check.path}`,
      '  http-check expect status 200',
      `  default-server inter ${check.intervalMs}ms fastinter ${check.intervalMs}ms downinter ${check.intervalMs}ms fall ${check.fall} rise ${check.rise}`,
      ...frontend.servers.map((server) => `  server ${server.name} 127.0.0.1:${server.port} check`),
      '',
    );
  }
  lines.push('listen stats', `  bind 127.0.0.1:${statsPort}`, '  stats enable', '  stats uri /stats', '');
  return lines.join('\n');
}
