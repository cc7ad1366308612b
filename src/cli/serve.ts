/**
 * Running a server command: resources are registered as they open, a failed start closes what
 * did open, and SIGINT or SIGTERM (from the run's io: the process's, or a test's) stops it as a
 * load balancer needs (docs/operations.md#stopping-and-rolling-restarts): `/readyz` answers 503
 * at once while the listeners go on serving for the drain delay, then everything closes
 * (listeners first, answering what they received, then store, database and lock) and the run
 * ends with 0 through io.exit. Past the grace, counted from the signal, it ends with 1 naming
 * what was still open; a later second signal ends it at once with 1.
 */
import type { AddressInfo } from 'node:net';

import type { FastifyInstance } from 'fastify';

import { type Config, drainDelayMs } from '../lib/config.js';
import { CliError, EXIT_CODES, type ExitCode } from '../lib/errors/internal-errors.js';
import { Closers } from './closers.js';
import { Drain } from './drain.js';
import { messageOf } from './exit.js';
import { type CliRun, STOP_SIGNALS, type StopSignal } from './io.js';

/**
 * A repeated signal within this time is the same one delivered twice: Ctrl-C under `npm start`
 * reaches node from the terminal and again from npm. Only a later one means "stop now".
 */
export const REPEATED_SIGNAL_WINDOW_MS = 1_000;

/** A stop's two bounds, from the configuration. */
export interface StopTiming {
  /** Serving on with /readyz at 503 (FXGATE_DRAIN_DELAY_MS). */
  readonly drainDelayMs: number;
  /** From the signal to the exit, the delay included (FXGATE_SHUTDOWN_GRACE_MS). */
  readonly graceMs: number;
}

function stopTiming(config: Config): StopTiming {
  return { drainDelayMs: drainDelayMs(config), graceMs: config.FXGATE_SHUTDOWN_GRACE_MS };
}

/** Stops everything on the run's stop signals and ends the run; returns the listeners' removal. */
function stopOnSignals(run: CliRun, closers: Closers, drain: Drain, timing: StopTiming): () => void {
  const { io } = run;
  let stoppingSince: number | null = null;
  let delay: NodeJS.Timeout | undefined;
  let overrun: NodeJS.Timeout | undefined;
  let ended = false;
  // Once: in process the run outlives its end, so the timers and the listeners go with it.
  const end = (code: ExitCode): void => {
    if (ended) return;
    ended = true;
    clearTimeout(delay);
    clearTimeout(overrun);
    detach();
    io.exit(code);
  };
  const close = (): void => {
    closers.closeAll().then(
      () => end(EXIT_CODES.ok),
      (error: unknown) => {
        run.err(`fxgate: ${messageOf(error)}`);
        end(EXIT_CODES.failure);
      },
    );
  };
  const stop = (signal: StopSignal): void => {
    if (stoppingSince !== null) {
      if (Date.now() - stoppingSince < REPEATED_SIGNAL_WINDOW_MS) return;
      run.err(`fxgate: ${signal} again, exiting without waiting`);
      end(EXIT_CODES.failure);
      return;
    }
    stoppingSince = Date.now();
    drain.begin();
    overrun = setTimeout(() => {
      const open = closers.stillOpen();
      run.err(
        `fxgate: shutdown took longer than ${timing.graceMs} ms (FXGATE_SHUTDOWN_GRACE_MS), exiting; still open: ${open.length === 0 ? 'nothing' : open.join(', ')}`,
      );
      end(EXIT_CODES.failure);
    }, timing.graceMs).unref();
    if (timing.drainDelayMs === 0) {
      run.out(`fxgate: ${signal} received, shutting down`);
      close();
      return;
    }
    run.out(
      `fxgate: ${signal} received, draining: /readyz answers 503, serving on for ${timing.drainDelayMs} ms (FXGATE_DRAIN_DELAY_MS), then shutting down`,
    );
    delay = setTimeout(close, timing.drainDelayMs);
  };
  const detach = (): void => {
    for (const signal of STOP_SIGNALS) io.signals.off(signal, stop);
  };
  for (const signal of STOP_SIGNALS) io.signals.on(signal, stop);
  return detach;
}

/**
 * Starts a long-running command; it then runs until a stop signal, and ends through the run's
 * io.exit. `start` registers what it opens with closers, and its listeners with drain.
 */
export async function serve(run: CliRun, start: (closers: Closers, drain: Drain) => Promise<void>): Promise<void> {
  const closers = new Closers();
  const drain = new Drain(closers);
  const detach = stopOnSignals(run, closers, drain, stopTiming(run.config()));
  try {
    await start(closers, drain);
  } catch (error) {
    // The run ends with the error (runCli's exit code); nothing is left to stop.
    detach();
    await closers.closeAll().catch((closeError: unknown) => run.err(`fxgate: ${messageOf(closeError)}`));
    throw error;
  }
}

/** `http://host:port` of an address a server is bound to, an IPv6 address in brackets. */
export function boundUrl(address: AddressInfo): string {
  return address.family === 'IPv6' || address.address.includes(':')
    ? `http://[${address.address}]:${address.port}`
    : `http://${address.address}:${address.port}`;
}

/** The same URL as a client on this host reaches it: a wildcard bind (0.0.0.0, ::) over loopback; null for any other. */
export function loopbackUrlOf(url: string): string | null {
  const { hostname, port } = new URL(url);
  if (hostname === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (hostname === '[::]') return `http://[::1]:${port}`;
  return null;
}

/**
 * The URL a start-up line shows, with its notes in brackets: the bound URL, and for a wildcard
 * bind also the loopback one to paste (`http://0.0.0.0:8080 (every interface; on this host
 * http://127.0.0.1:8080)`).
 */
export function listeningText(url: string, ...notes: string[]): string {
  const local = loopbackUrlOf(url);
  const all = local === null ? notes : [...notes, `every interface; on this host ${local}`];
  return all.length === 0 ? url : `${url} (${all.join('; ')})`;
}

/**
 * Listens and returns the URL of the address really bound (server.address(): `http://0.0.0.0:8080`
 * for HOST=0.0.0.0, not one of the interfaces behind it); a taken port is a message naming the
 * setting, not a stack trace.
 */
export async function listen(
  app: FastifyInstance,
  host: string,
  port: number,
  what: string,
  settings = { host: 'HOST', port: 'PORT' },
): Promise<string> {
  try {
    await app.listen({ host, port });
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
  const address = app.server.address();
  // A pipe or a socket path has no URL; fastify listens on neither here.
  if (address === null || typeof address === 'string') throw new Error(`${what} is bound to ${String(address)}`);
  return boundUrl(address);
}
