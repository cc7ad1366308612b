/**
 * Running a server command: resources are registered as they open, a failed start closes what
 * did open, and SIGINT or SIGTERM (from the run's io: the process's, or a test's) closes
 * everything (servers first, then store, database and lock) and ends the run with 0 through
 * io.exit. A later second signal, or a shutdown that hangs, ends it at once with 1.
 */
import type { FastifyInstance } from 'fastify';

import { Closers } from './closers.js';
import { CliError, EXIT_CODES, type ExitCode, messageOf } from './exit.js';
import { type CliRun, STOP_SIGNALS, type StopSignal } from './io.js';

/** How long in-flight requests get to finish after a signal. */
export const SHUTDOWN_GRACE_MS = 10_000;
/**
 * A repeated signal within this time is the same one delivered twice: Ctrl-C under `npm start`
 * reaches node from the terminal and again from npm. Only a later one means "stop now".
 */
export const REPEATED_SIGNAL_WINDOW_MS = 1_000;

/** Closes everything on the run's stop signals and ends the run; returns the listeners' removal. */
function closeOnSignals(run: CliRun, closers: Closers): () => void {
  const { io } = run;
  let stoppingSince: number | null = null;
  let hung: NodeJS.Timeout | undefined;
  let ended = false;
  // Once: in process the run outlives its end, so the timer and the listeners go with it.
  const end = (code: ExitCode): void => {
    if (ended) return;
    ended = true;
    clearTimeout(hung);
    detach();
    io.exit(code);
  };
  const stop = (signal: StopSignal): void => {
    if (stoppingSince !== null) {
      if (Date.now() - stoppingSince < REPEATED_SIGNAL_WINDOW_MS) return;
      run.err(`fxgate: ${signal} again, exiting without waiting`);
      end(EXIT_CODES.failure);
      return;
    }
    stoppingSince = Date.now();
    run.out(`fxgate: ${signal} received, shutting down`);
    hung = setTimeout(() => {
      run.err(`fxgate: shutdown took longer than ${SHUTDOWN_GRACE_MS} ms, exiting`);
      end(EXIT_CODES.failure);
    }, SHUTDOWN_GRACE_MS).unref();
    closers.closeAll().then(
      () => end(EXIT_CODES.ok),
      (error: unknown) => {
        run.err(`fxgate: ${messageOf(error)}`);
        end(EXIT_CODES.failure);
      },
    );
  };
  const detach = (): void => {
    for (const signal of STOP_SIGNALS) io.signals.off(signal, stop);
  };
  for (const signal of STOP_SIGNALS) io.signals.on(signal, stop);
  return detach;
}

/** Starts a long-running command; it then runs until a stop signal, and ends through the run's io.exit. */
export async function serve(run: CliRun, start: (closers: Closers) => Promise<void>): Promise<void> {
  const closers = new Closers();
  const detach = closeOnSignals(run, closers);
  try {
    await start(closers);
  } catch (error) {
    // The run ends with the error (runCli's exit code); nothing is left to stop.
    detach();
    await closers.closeAll().catch((closeError: unknown) => run.err(`fxgate: ${messageOf(closeError)}`));
    throw error;
  }
}

/** Listens and returns the URL; a taken port is a message naming the setting, not a stack trace. */
export async function listen(
  app: FastifyInstance,
  host: string,
  port: number,
  what: string,
  settings = { host: 'HOST', port: 'PORT' },
): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new CliError(`${what} cannot listen on ${host}:${port}: the port is taken (${settings.port})`, undefined, {
        cause: error,
      });
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw new CliError(
        `${what} cannot listen on ${host}:${port}: no such local address (${settings.host})`,
        undefined,
        { cause: error },
      );
    throw error;
  }
}
