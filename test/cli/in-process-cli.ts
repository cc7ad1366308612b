/**
 * The CLI run in the test's own process through runCli (src/cli/program.ts), as src/cli/main.ts
 * runs it for a process: the same program, its stdout and stderr captured, its exit code. Its
 * environment holds only what the test passes (and test-env.ts's defaults), as a child of
 * cli-process.ts gets: the test services' DATABASE_URL and REDIS_URL in process.env are not
 * seen unless a test passes them.
 *
 * A server command resolves once it serves, with its stop signals on an emitter of its own:
 * startFxgate returns it to stop with a signal as a process would be, and stopInProcessServers
 * (for afterAll) stops any still running.
 */
import { EventEmitter } from 'node:events';

import type { CliIo, StopSignal } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/program.js';
import { type ExitCode } from '../../src/lib/errors/internal-errors.js';
import { TEST_ENV_DEFAULTS } from './test-env.js';

export interface InProcessResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface InProcessOptions {
  /** The run's folder, for relative paths (default: the test process's). */
  readonly cwd?: string;
  /** The run's clock (CliIo.now): the gateway's lifecycle and the migration schedule read it. Date.now unless given. */
  readonly now?: () => number;
}

/** One run's io: what it printed so far, and the exit of a server command once it stops. */
export class CapturedIo {
  stdout = '';
  stderr = '';
  readonly signals = new EventEmitter();
  readonly io: CliIo;
  /** Resolves with the code a server command ends with through io.exit. */
  readonly exited: Promise<ExitCode>;
  /** Every io.exit call: a run ends once. */
  readonly exitCodes: ExitCode[] = [];

  constructor(env: Readonly<Record<string, string>> = {}, options: InProcessOptions = {}) {
    let resolveExit!: (code: ExitCode) => void;
    this.exited = new Promise((resolve) => (resolveExit = resolve));
    this.io = {
      stdout: { write: (text: string) => (this.stdout += text) },
      stderr: { write: (text: string) => (this.stderr += text) },
      env: { ...TEST_ENV_DEFAULTS, ...env },
      cwd: options.cwd ?? process.cwd(),
      ...(options.now === undefined ? {} : { now: options.now }),
      signals: this.signals,
      exit: (code) => {
        this.exitCodes.push(code);
        resolveExit(code);
      },
    };
  }

  /** True while a server command listens for its stop. */
  get serving(): boolean {
    return this.signals.listenerCount('SIGTERM') > 0;
  }

  result(code: number): InProcessResult {
    return { code, stdout: this.stdout, stderr: this.stderr };
  }
}

const serving = new Set<CapturedIo>();

/** Runs a command to its end: the exit code and what it printed. */
export async function fxgate(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  options: InProcessOptions = {},
): Promise<InProcessResult> {
  const run = new CapturedIo(env, options);
  const code = await runCli(args, run.io);
  if (run.serving) {
    serving.add(run);
    throw new Error(`fxgate ${args.join(' ')} is serving: start it with startFxgate to stop it`);
  }
  return run.result(code);
}

/** A server command running in process. */
export interface InProcessServer {
  readonly stdout: string;
  readonly stderr: string;
  /** Sends the stop signal, as a process would get it, and resolves with how the run ended. */
  stop(signal?: StopSignal): Promise<InProcessResult>;
}

/** Starts a server command; rejects with its output when it ends instead (a refused start). */
export async function startFxgate(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  options: InProcessOptions = {},
): Promise<InProcessServer> {
  const run = new CapturedIo(env, options);
  const code = await runCli(args, run.io);
  if (!run.serving)
    throw new Error(
      `fxgate ${args.join(' ')} ended with ${code} instead of serving\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`,
    );
  serving.add(run);
  return {
    get stdout() {
      return run.stdout;
    },
    get stderr() {
      return run.stderr;
    },
    stop: async (signal = 'SIGTERM') => {
      run.signals.emit(signal, signal);
      const exitCode = await run.exited;
      serving.delete(run);
      return run.result(exitCode);
    },
  };
}

/** For afterAll: no server outlives its suite. */
export async function stopInProcessServers(): Promise<void> {
  const runs = [...serving];
  serving.clear();
  await Promise.all(
    runs.map((run) => {
      run.signals.emit('SIGTERM', 'SIGTERM');
      return run.exited;
    }),
  );
}
