/**
 * The polling loop every background worker runs (the core's polling jobs, the v3 and the legacy
 * webhook delivery workers): a tick on a timer, the next one scheduled when the previous ends,
 * at once when it asked for that or was woken while running. It touches nothing but its own
 * timer and the callbacks it is given; what a tick claims, and what stopping releases, is the
 * worker's own.
 */

/** What a tick asks for next: `again` runs the next tick at once (it found a full batch), `wait` after the interval. */
export type TickOutcome = 'again' | 'wait';

export interface PollLoopOptions {
  /** What livePollLoops() calls it: the worker's name. */
  readonly name: string;
  /** One round of work. A rejection is given to onError and the loop goes on after the interval. */
  readonly tick: () => Promise<TickOutcome>;
  /** Pause after a tick that returned `wait` or failed, counted from its end. */
  readonly intervalMs: number;
  /** Delay before the first tick after start(); the interval unless given. */
  readonly firstDelayMs?: number;
  /** Told of a failed tick while the loop runs (a failure caused by stop() is not reported). */
  readonly onError: (error: unknown) => void;
}

export interface PollLoop {
  /** Starts ticking; does nothing while running. After stop() it may be started again. */
  start(): void;
  /** Runs a tick now if the loop is waiting, or one more at once after the tick under way. */
  wake(): void;
  /**
   * Stops scheduling ticks and resolves once the tick under way, if any, has ended; never rejects,
   * and a second call waits for the same tick.
   */
  stop(): Promise<void>;
  /** Whether start() was called and stop() has not been since. */
  readonly running: boolean;
}

/**
 * The loops that may still tick: started, and not stopped with their last tick ended. A loop
 * missing here runs no tick until it is started again: what a test reads to know, without
 * waiting, that a stopped or disabled worker delivers nothing.
 */
const live = new Set<{ readonly name: string }>();

/** The names of the loops that may still tick, sorted (a name once a loop). */
export function livePollLoops(): string[] {
  return [...live].map((entry) => entry.name).sort();
}

export function createPollLoop(options: PollLoopOptions): PollLoop {
  const entry = { name: options.name };
  let running = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void> = Promise.resolve();
  let woken = false;
  /** A tick under way: it schedules the next itself when it ends. */
  let ticking = false;

  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      timer = null;
      current = runTick();
    }, delayMs);
    // Polling alone must not keep a process alive that has nothing else to do; the server does.
    timer.unref();
  };

  const runTick = async () => {
    ticking = true;
    woken = false;
    let next: TickOutcome = 'wait';
    try {
      next = await options.tick();
    } catch (error) {
      // The work is still where the tick found it (the database was down, say): report and retry.
      if (running) {
        try {
          options.onError(error);
        } catch {
          // A failing logger must not end the loop nor become an unhandled rejection.
        }
      }
    }
    ticking = false;
    if (running) schedule(next === 'again' || woken ? 0 : options.intervalMs);
  };

  return {
    start() {
      if (running) return;
      running = true;
      live.add(entry);
      // Restarted while the tick from before stop() still runs: that tick schedules the next.
      if (!ticking) schedule(options.firstDelayMs ?? options.intervalMs);
    },
    wake() {
      if (!running) return;
      if (timer !== null) {
        clearTimeout(timer);
        schedule(0);
      } else {
        woken = true;
      }
    },
    stop() {
      running = false;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      return current.then(() => {
        if (!running) live.delete(entry);
      });
    },
    get running() {
      return running;
    },
  };
}
