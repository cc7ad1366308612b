/**
 * src/cli/serve.ts in process, its stop signals sent on the run's own emitter: a signal closes
 * everything newest first and ends the run with 0; the same signal delivered twice is one; a
 * later second one ends it at once with 1; a failed close ends it with 1; a failed start closes
 * what did open and listens for nothing more. The signals of a real process are main.test.ts's.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { describe, expect, it } from 'vitest';

import { EXIT_CODES } from '../../src/cli/exit.js';
import { CliRun, STOP_SIGNALS } from '../../src/cli/io.js';
import { REPEATED_SIGNAL_WINDOW_MS, serve } from '../../src/cli/serve.js';
import { CapturedIo } from './in-process-cli.js';

function listeners(captured: CapturedIo): number {
  return STOP_SIGNALS.reduce((sum, signal) => sum + captured.signals.listenerCount(signal), 0);
}

describe('serve', () => {
  it('closes everything newest first on SIGTERM and ends the run with 0, listening no more', async () => {
    const captured = new CapturedIo();
    const closed: string[] = [];
    await serve(new CliRun(captured.io), async (closers) => {
      closers.add('database', async () => void closed.push('database'));
      closers.add('server', async () => void closed.push('server'));
    });
    expect(listeners(captured)).toBe(STOP_SIGNALS.length);
    captured.signals.emit('SIGTERM', 'SIGTERM');
    expect(await captured.exited).toBe(EXIT_CODES.ok);
    expect(closed).toEqual(['server', 'database']);
    expect(captured.stdout).toBe('fxgate: SIGTERM received, shutting down\n');
    expect(captured.stderr).toBe('');
    expect(listeners(captured)).toBe(0);
  });

  it('takes a signal repeated within the window as the same one, and a later one as "stop now" with 1', async () => {
    const captured = new CapturedIo();
    let release!: () => void;
    await serve(new CliRun(captured.io), async (closers) => {
      closers.add('slow server', () => new Promise<void>((resolve) => (release = resolve)));
    });
    captured.signals.emit('SIGINT', 'SIGINT');
    captured.signals.emit('SIGINT', 'SIGINT');
    await sleep(REPEATED_SIGNAL_WINDOW_MS + 100);
    expect(captured.stderr).toBe('');
    captured.signals.emit('SIGTERM', 'SIGTERM');
    expect(await captured.exited).toBe(EXIT_CODES.failure);
    expect(captured.stdout).toBe('fxgate: SIGINT received, shutting down\n');
    expect(captured.stderr).toBe('fxgate: SIGTERM again, exiting without waiting\n');
    // The close finishing afterwards ends nothing twice.
    release();
    await sleep(10);
    expect(captured.exitCodes).toEqual([EXIT_CODES.failure]);
  });

  it('ends the run with 1 when a close fails, saying which', async () => {
    const captured = new CapturedIo();
    await serve(new CliRun(captured.io), async (closers) => {
      closers.add('store', () => Promise.reject(new Error('connection reset')));
    });
    captured.signals.emit('SIGTERM', 'SIGTERM');
    expect(await captured.exited).toBe(EXIT_CODES.failure);
    expect(captured.stderr).toBe('fxgate: closing store failed: connection reset\n');
  });

  it('closes what a failed start opened, rethrows its error and listens for no signal', async () => {
    const captured = new CapturedIo();
    const closed: string[] = [];
    const failure = new Error('cannot listen');
    await expect(
      serve(new CliRun(captured.io), async (closers) => {
        closers.add('database', async () => void closed.push('database'));
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(closed).toEqual(['database']);
    expect(listeners(captured)).toBe(0);
    expect(captured.exitCodes).toEqual([]);
  });
});
