/**
 * src/cli/serve.ts in process, its stop signals sent on the run's own emitter: a signal closes
 * everything newest first and ends the run with 0; with a drain delay, the drain begins at the
 * signal and the close comes after the delay; past the grace the run ends with 1 naming what was
 * still open; the same signal delivered twice is one; a later second one ends it at once with
 * 1; a failed close ends it with 1; a failed start closes what did open and listens for nothing
 * more. The signals of a real process are main.test.ts's and drain.test.ts's.
 */

import { describe, expect, it, vi } from 'vitest';

import { CliRun, STOP_SIGNALS } from '../../src/cli/io.js';
import { boundUrl, listeningText, loopbackUrlOf, REPEATED_SIGNAL_WINDOW_MS, serve } from '../../src/cli/serve.js';
import { EXIT_CODES } from '../../src/lib/errors/internal-errors.js';
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

  it('begins the drain at the signal, and closes once FXGATE_DRAIN_DELAY_MS has passed', async () => {
    const captured = new CapturedIo({ FXGATE_DRAIN_DELAY_MS: '300' });
    let closedAfterMs: number | null = null;
    let signalled = 0;
    let draining!: () => boolean;
    await serve(new CliRun(captured.io), async (closers, drain) => {
      draining = drain.draining;
      closers.addListener('server', async () => void (closedAfterMs = performance.now() - signalled));
    });
    expect(draining()).toBe(false);
    signalled = performance.now();
    captured.signals.emit('SIGTERM', 'SIGTERM');
    expect(draining()).toBe(true);
    expect(closedAfterMs).toBeNull();
    expect(await captured.exited).toBe(EXIT_CODES.ok);
    expect(closedAfterMs).toBeGreaterThanOrEqual(299);
    expect(closedAfterMs).toBeLessThan(1_000);
    expect(captured.stdout).toBe(
      'fxgate: SIGTERM received, draining: /readyz answers 503, serving on for 300 ms (FXGATE_DRAIN_DELAY_MS), then shutting down\n',
    );
  });

  it('ends the run with 1 at FXGATE_SHUTDOWN_GRACE_MS, counted from the signal, naming what is still open', async () => {
    const captured = new CapturedIo({ FXGATE_DRAIN_DELAY_MS: '200', FXGATE_SHUTDOWN_GRACE_MS: '1000' });
    await serve(new CliRun(captured.io), async (closers) => {
      closers.add('database', async () => undefined);
      closers.addListener(
        'gateway server',
        () => new Promise<void>(() => undefined),
        () => ['GET /v3/fx/trades (0.8 s)'],
      );
      closers.addListener('admin listener', async () => undefined);
    });
    const signalled = performance.now();
    captured.signals.emit('SIGTERM', 'SIGTERM');
    expect(await captured.exited).toBe(EXIT_CODES.failure);
    const endedAfterMs = performance.now() - signalled;
    expect(endedAfterMs).toBeGreaterThanOrEqual(999);
    expect(endedAfterMs).toBeLessThan(1_500);
    // The admin listener was added later, so it closed first here: the hung one is all that was left with the database.
    expect(captured.stderr).toBe(
      'fxgate: shutdown took longer than 1000 ms (FXGATE_SHUTDOWN_GRACE_MS), exiting; still open: gateway server (GET /v3/fx/trades (0.8 s)), database\n',
    );
    expect(listeners(captured)).toBe(0);
  });

  it('takes a signal repeated within the window as the same one, and a later one as "stop now" with 1', async () => {
    const captured = new CapturedIo();
    let release!: () => void;
    // The close serve starts, seen: serve reacts to its end before the test does.
    let closing: Promise<void> | undefined;
    await serve(new CliRun(captured.io), async (closers) => {
      closers.add('slow server', () => new Promise<void>((resolve) => (release = resolve)));
      const closeAll = closers.closeAll.bind(closers);
      closers.closeAll = () => (closing = closeAll());
    });
    // The window is read off the clock: only Date is faked, the timers of the stop run as they do.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      captured.signals.emit('SIGINT', 'SIGINT');
      captured.signals.emit('SIGINT', 'SIGINT');
      expect(captured.stderr).toBe('');
      vi.setSystemTime(Date.now() + REPEATED_SIGNAL_WINDOW_MS + 100);
      captured.signals.emit('SIGTERM', 'SIGTERM');
    } finally {
      vi.useRealTimers();
    }
    expect(await captured.exited).toBe(EXIT_CODES.failure);
    expect(captured.stdout).toBe('fxgate: SIGINT received, shutting down\n');
    expect(captured.stderr).toBe('fxgate: SIGTERM again, exiting without waiting\n');
    // The close finishing afterwards ends nothing twice.
    release();
    await closing;
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

describe('the URL a start-up line shows', () => {
  it('is the bound address, with a loopback URL to paste for a wildcard bind', () => {
    expect(boundUrl({ address: '0.0.0.0', family: 'IPv4', port: 8080 })).toBe('http://0.0.0.0:8080');
    expect(boundUrl({ address: '::', family: 'IPv6', port: 8080 })).toBe('http://[::]:8080');
    expect(boundUrl({ address: '10.1.2.3', family: 'IPv4', port: 81 })).toBe('http://10.1.2.3:81');
    expect(loopbackUrlOf('http://0.0.0.0:8080')).toBe('http://127.0.0.1:8080');
    expect(loopbackUrlOf('http://[::]:8080')).toBe('http://[::1]:8080');
    expect(loopbackUrlOf('http://10.1.2.3:81')).toBeNull();
    expect(listeningText('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(listeningText('http://127.0.0.1:8080', 'v1, v2 and v3')).toBe('http://127.0.0.1:8080 (v1, v2 and v3)');
    expect(listeningText('http://0.0.0.0:8080', 'v1, v2 and v3')).toBe(
      'http://0.0.0.0:8080 (v1, v2 and v3; every interface; on this host http://127.0.0.1:8080)',
    );
  });
});
