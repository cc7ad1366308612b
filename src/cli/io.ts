/**
 * Where one run of the CLI reads and writes: its output streams, the environment its
 * configuration comes from, the folder relative paths are resolved against, and how a server
 * command's run ends. The process entry (main.ts) passes the process's own; tests pass captured
 * ones and run the CLI in process. Commands print, read settings and end through these only.
 */
import { resolve } from 'node:path';

import type { Config } from '../lib/config.js';
import { EXIT_CODES, type ExitCode } from '../lib/errors/internal-errors.js';
import { cliConfig } from './config.js';

export interface CliWriter {
  write(text: string): unknown;
  /** A terminal's, for wrapping help to its width. */
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** The signals a server command stops on. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** What a server command listens to for its stop: the process itself, or a test's emitter. */
export interface SignalSource {
  on(signal: StopSignal, listener: (signal: StopSignal) => void): unknown;
  off(signal: StopSignal, listener: (signal: StopSignal) => void): unknown;
}

export interface CliIo {
  readonly stdout: CliWriter;
  readonly stderr: CliWriter;
  /** The configuration is read from here (src/lib/config.ts), never from process.env directly. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Relative paths, on the command line or in the environment, are resolved against it. */
  readonly cwd: string;
  /** A server command runs until one of STOP_SIGNALS arrives here. */
  readonly signals: SignalSource;
  /** Ends a server command's run once it has shut down (or given up): the process's exit for the real CLI. */
  exit(code: ExitCode): void;
  /** The clock of the gateway's lifecycle and of the migration schedule, ms since the epoch; Date.now unless given (a test's fixed one). */
  readonly now?: () => number;
}

/** The process's own streams, environment, folder, signals and exit. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signals: process,
    exit: (code) => process.exit(code),
  };
}

/**
 * One run of the CLI as its commands see it: lines printed to its io, paths resolved against
 * its folder, and the configuration read from its environment once, a bad value ending the run
 * with exit 2.
 */
export class CliRun {
  private resolved: Config | null = null;
  /** What the run ends with when its command returns; a command that fails without an error sets it (`diff generations`). */
  exitCode: ExitCode = EXIT_CODES.ok;

  constructor(readonly io: CliIo) {}

  /** The run's clock (CliIo.now), ms since the epoch. */
  now(): number {
    return this.io.now?.() ?? Date.now();
  }

  /** One line on stdout. */
  out(line: string): void {
    this.io.stdout.write(`${line}\n`);
  }

  /** One line on stderr. */
  err(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }

  /** A path as given, resolved against the run's folder. */
  path(path: string): string {
    return resolve(this.io.cwd, path);
  }

  /** The configuration from the run's environment; its folders resolved against the run's folder. */
  config(): Config {
    this.resolved ??= cliConfig(this.io.env, this.io.cwd, (line) => this.err(line));
    return this.resolved;
  }
}
