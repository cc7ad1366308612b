/**
 * Running a server command: resources are registered as they open, a failed start closes what
 * did open, and SIGINT or SIGTERM closes everything (servers first, then store, database and
 * lock) and exits 0. A later second signal, or a shutdown that hangs, exits at once with 1.
 */
import type { FastifyInstance } from 'fastify';
import { Closers } from './closers.js';
import { CliError, EXIT_CODES, messageOf } from './exit.js';

/** How long in-flight requests get to finish after a signal. */
export const SHUTDOWN_GRACE_MS = 10_000;
/**
 * A repeated signal within this time is the same one delivered twice: Ctrl-C under `npm start`
 * reaches node from the terminal and again from npm. Only a later one means "stop now".
 */
export const REPEATED_SIGNAL_WINDOW_MS = 1_000;

function closeOnSignals(closers: Closers): void {
  let stoppingSince: number | null = null;
  const stop = (signal: NodeJS.Signals): void => {
    if (stoppingSince !== null) {
      if (Date.now() - stoppingSince < REPEATED_SIGNAL_WINDOW_MS) return;
      console.error(`fxgate: ${signal} again, exiting without waiting`);
      process.exit(EXIT_CODES.failure);
    }
    stoppingSince = Date.now();
    console.log(`fxgate: ${signal} received, shutting down`);
    setTimeout(() => {
      console.error(`fxgate: shutdown took longer than ${SHUTDOWN_GRACE_MS} ms, exiting`);
      process.exit(EXIT_CODES.failure);
    }, SHUTDOWN_GRACE_MS).unref();
    closers.closeAll().then(
      () => process.exit(EXIT_CODES.ok),
      (error: unknown) => {
        console.error(`fxgate: ${messageOf(error)}`);
        process.exit(EXIT_CODES.failure);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** Starts a long-running command; it then runs until a signal. */
export async function serve(start: (closers: Closers) => Promise<void>): Promise<void> {
  const closers = new Closers();
  closeOnSignals(closers);
  try {
    await start(closers);
  } catch (error) {
    await closers.closeAll().catch((closeError: unknown) => console.error(`fxgate: ${messageOf(closeError)}`));
    throw error;
  }
}

/** Listens and returns the URL; a taken port is a message naming the setting, not a stack trace. */
export async function listen(app: FastifyInstance, host: string, port: number, what: string, settings = { host: 'HOST', port: 'PORT' }): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliError(`${what} cannot listen on ${host}:${port}: the port is taken (${settings.port})`, undefined, { cause: error });
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new CliError(`${what} cannot listen on ${host}:${port}: no such local address (${settings.host})`, undefined, { cause: error });
    throw error;
  }
}
