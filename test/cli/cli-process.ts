/**
 * The real CLI as a child process: from the TypeScript sources through tsx (startCli, runCli),
 * so that tests need no build, or the built dist/cli/main.js as the `fxgate` bin runs it
 * (startBuiltCli; built-cli.ts makes sure it is fresh). Each child gets a clean configuration
 * (only what the test passes, plus PATH and HOME, and the defaults of test-env.ts), and
 * every child still running is killed by killAllCliProcesses().
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { configSchema } from '../../src/lib/config.js';
import { TEST_ENV_DEFAULTS } from './test-env.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONFIG_NAMES = new Set(Object.keys(configSchema.shape));
export const CLI_TIMEOUT_MS = 60_000;

const running = new Set<ChildProcess>();

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The parent's environment without any fxgate setting (the test services put DATABASE_URL and REDIS_URL there). */
function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CONFIG_NAMES.has(name)));
  return { ...inherited, ...TEST_ENV_DEFAULTS, ...env };
}

export class CliProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<CliResult>;
  private readonly command: string;

  constructor(
    readonly child: ChildProcess,
    args: readonly string[],
  ) {
    this.command = `fxgate ${args.join(' ')}`;
    running.add(child);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => {
        running.delete(child);
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      });
    });
  }

  /** Resolves with the first match of pattern in stdout; rejects when the process exits first or time runs out. */
  waitFor(pattern: RegExp, timeoutMs = CLI_TIMEOUT_MS): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = this.stdout.match(pattern);
        if (match) {
          done();
          resolve(match);
        }
        return match !== null;
      };
      const onExit = (): void => {
        if (check()) return;
        done();
        reject(
          new Error(
            `${this.command} exited before printing ${pattern}\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`,
          ),
        );
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `${this.command} did not print ${pattern} within ${timeoutMs} ms\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`,
          ),
        );
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.child.stdout!.off('data', onData);
        this.child.off('close', onExit);
      };
      const onData = (): void => void check();
      if (check()) return;
      this.child.stdout!.on('data', onData);
      this.child.once('close', onExit);
    });
  }

  /** Sends the signal and waits for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<CliResult> {
    this.child.kill(signal);
    return this.exited;
  }
}

/** The node arguments that run the CLI: its sources through tsx, or the build. */
const ENTRIES = {
  source: ['--import', 'tsx', 'src/cli/main.ts'],
  built: ['dist/cli/main.js'],
} as const;
export type CliEntry = keyof typeof ENTRIES;

function spawnCli(
  entry: CliEntry,
  args: readonly string[],
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): CliProcess {
  const child = spawn(process.execPath, [...nodeArgs, ...ENTRIES[entry], ...args], {
    cwd: REPO_ROOT,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new CliProcess(child, args);
}

/** `nodeArgs` go before the entry (a preload a test watches the process with). */
export function startCli(
  args: readonly string[],
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
): CliProcess {
  return spawnCli('source', args, env, nodeArgs);
}

/** The built CLI, as `npx fxgate` and `npm start` run it. */
export function startBuiltCli(args: readonly string[], env: Record<string, string> = {}): CliProcess {
  return spawnCli('built', args, env);
}

/** Runs a command to its end (killing it after timeoutMs). */
export async function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = CLI_TIMEOUT_MS,
  entry: CliEntry = 'source',
): Promise<CliResult> {
  const cli = spawnCli(entry, args, env);
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), timeoutMs);
  try {
    return await cli.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** For afterAll: no child outlives its suite. */
export async function killAllCliProcesses(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          if (!child.kill('SIGKILL')) resolve();
        }),
    ),
  );
}
