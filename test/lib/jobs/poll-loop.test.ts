import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { createPollLoop, livePollLoops, type TickOutcome } from '../../../src/lib/jobs/poll-loop.js';

/** A tick the test settles by hand, so that it can act while the tick is under way. */
function heldTick() {
  const pending: Array<{ resolve: (outcome: TickOutcome) => void; reject: (error: unknown) => void }> = [];
  const tick = vi.fn(
    () =>
      new Promise<TickOutcome>((resolve, reject) => {
        pending.push({ resolve, reject });
      }),
  );
  const settle = (outcome: TickOutcome | Error) => {
    const next = pending.shift();
    if (!next) throw new Error('no tick is under way');
    if (outcome instanceof Error) next.reject(outcome);
    else next.resolve(outcome);
  };
  return { tick, settle, pending };
}

/** A loop that ticks at once on start, then every second, and ignores errors. */
const AT_ONCE = { name: 'test loop', intervalMs: 1000, firstDelayMs: 0, onError: () => undefined } as const;

describe('createPollLoop', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ticks after the first delay, then after the interval counted from the end of each tick', async () => {
    const { tick, settle } = heldTick();
    const loop = createPollLoop({ ...AT_ONCE, tick });
    loop.start();
    expect(tick).toHaveBeenCalledTimes(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(tick).toHaveBeenCalledTimes(1);
    // A long tick: no second one starts while it runs.
    await vi.advanceTimersByTimeAsync(5000);
    expect(tick).toHaveBeenCalledTimes(1);
    settle('wait');
    await vi.advanceTimersByTimeAsync(999);
    expect(tick).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(tick).toHaveBeenCalledTimes(2);
    settle('wait');
    await loop.stop();
  });

  it('waits the interval before the first tick unless a first delay is given', async () => {
    const tick = vi.fn(async (): Promise<TickOutcome> => 'wait');
    const loop = createPollLoop({ name: 'test loop', tick, intervalMs: 500, onError: () => undefined });
    loop.start();
    await vi.advanceTimersByTimeAsync(499);
    expect(tick).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(tick).toHaveBeenCalledTimes(1);
    await loop.stop();
  });

  it('runs the next tick at once when a tick found work', async () => {
    const outcomes: TickOutcome[] = ['again', 'again', 'wait'];
    const tick = vi.fn(async () => outcomes.shift() ?? 'wait');
    const loop = createPollLoop({ ...AT_ONCE, tick });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(tick).toHaveBeenCalledTimes(1);
    // Far less than the interval: the two ticks after an 'again' ran at once.
    await vi.advanceTimersByTimeAsync(2);
    expect(tick).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(990);
    expect(tick).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(10);
    expect(tick).toHaveBeenCalledTimes(4);
    await loop.stop();
  });

  it('reports a failed tick and retries after the interval, with no unhandled rejection', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const failure = new Error('database down');
      const tick = vi.fn<() => Promise<TickOutcome>>().mockRejectedValueOnce(failure).mockResolvedValue('wait');
      const onError = vi.fn();
      const loop = createPollLoop({ name: 'test loop', tick, intervalMs: 1000, firstDelayMs: 0, onError });
      loop.start();
      await vi.advanceTimersByTimeAsync(0);
      expect(onError).toHaveBeenCalledExactlyOnceWith(failure);
      expect(tick).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(1000);
      expect(tick).toHaveBeenCalledTimes(2);
      expect(onError).toHaveBeenCalledTimes(1);
      await loop.stop();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
    expect(unhandled).not.toHaveBeenCalled();
  });

  it('goes on when the error handler itself throws', async () => {
    const tick = vi.fn<() => Promise<TickOutcome>>().mockRejectedValue(new Error('down'));
    const loop = createPollLoop({
      name: 'test loop',
      tick,
      intervalMs: 100,
      firstDelayMs: 0,
      onError: () => {
        throw new Error('logger broken');
      },
    });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(tick).toHaveBeenCalledTimes(2);
    await expect(loop.stop()).resolves.toBeUndefined();
  });

  it('stop during a tick waits for it, reports no failure it caused, and schedules nothing more', async () => {
    const { tick, settle } = heldTick();
    const onError = vi.fn();
    const loop = createPollLoop({ name: 'test loop', tick, intervalMs: 1000, firstDelayMs: 0, onError });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(tick).toHaveBeenCalledTimes(1);
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    expect(loop.running).toBe(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    // The worker aborts its round on stop; the round then fails, which is not an error to report.
    settle(new Error('aborted by stop'));
    await stopping;
    expect(stopped).toBe(true);
    expect(onError).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(tick).toHaveBeenCalledTimes(1);
  });

  it('stop is idempotent: a second call waits for the same tick, and stop before start resolves', async () => {
    const idle = createPollLoop({
      name: 'test loop',
      tick: async () => 'wait',
      intervalMs: 10,
      onError: () => undefined,
    });
    await expect(idle.stop()).resolves.toBeUndefined();
    await expect(idle.stop()).resolves.toBeUndefined();

    const { tick, settle } = heldTick();
    const loop = createPollLoop({ ...AT_ONCE, tick });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    const first = loop.stop();
    const second = loop.stop();
    let settledCount = 0;
    void first.then(() => (settledCount += 1));
    void second.then(() => (settledCount += 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(settledCount).toBe(0);
    settle('again');
    await Promise.all([first, second]);
    expect(settledCount).toBe(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(tick).toHaveBeenCalledTimes(1);
  });

  it('stop while waiting cancels the pending tick', async () => {
    const tick = vi.fn(async (): Promise<TickOutcome> => 'wait');
    const loop = createPollLoop({ ...AT_ONCE, tick });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(tick).toHaveBeenCalledTimes(1);
    await loop.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(tick).toHaveBeenCalledTimes(1);
  });

  it('start is idempotent while running, and a restart during the old tick schedules one loop only', async () => {
    const { tick, settle, pending } = heldTick();
    const loop = createPollLoop({ ...AT_ONCE, tick });
    loop.start();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(tick).toHaveBeenCalledTimes(1);
    void loop.stop();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(tick).toHaveBeenCalledTimes(1);
    settle('wait');
    await vi.advanceTimersByTimeAsync(1000);
    expect(tick).toHaveBeenCalledTimes(2);
    expect(pending).toHaveLength(1);
    settle('wait');
    await vi.advanceTimersByTimeAsync(1000);
    expect(tick).toHaveBeenCalledTimes(3);
    settle('wait');
    await loop.stop();
  });

  it('wake runs a waiting loop now, and a tick under way once more at once', async () => {
    const { tick, settle } = heldTick();
    const loop = createPollLoop({ ...AT_ONCE, tick });
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(tick).not.toHaveBeenCalled();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    settle('wait');
    await vi.advanceTimersByTimeAsync(10);
    expect(tick).toHaveBeenCalledTimes(1);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(tick).toHaveBeenCalledTimes(2);
    // Woken during the tick: the next runs at once although this one found no full batch.
    loop.wake();
    settle('wait');
    await vi.advanceTimersByTimeAsync(0);
    expect(tick).toHaveBeenCalledTimes(3);
    // The wake was used up: the next waits the interval.
    settle('wait');
    await vi.advanceTimersByTimeAsync(999);
    expect(tick).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(tick).toHaveBeenCalledTimes(4);
    settle('wait');
    await loop.stop();
  });

  it('lists a loop from its start until the tick under way at its stop has ended', async () => {
    const { tick, settle } = heldTick();
    const loop = createPollLoop({ ...AT_ONCE, name: 'listed loop', tick });
    expect(livePollLoops()).not.toContain('listed loop');
    loop.start();
    expect(livePollLoops()).toContain('listed loop');
    await vi.advanceTimersByTimeAsync(0);
    const stopped = loop.stop();
    expect(livePollLoops()).toContain('listed loop');
    settle('wait');
    await stopped;
    expect(livePollLoops()).not.toContain('listed loop');
    loop.start();
    expect(livePollLoops()).toContain('listed loop');
    await loop.stop();
    expect(livePollLoops()).not.toContain('listed loop');
  });
});
