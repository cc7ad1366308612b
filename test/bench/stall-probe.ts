/**
 * A bench server's record of its own pauses, for lining up with the per-request samples of a
 * fixed-rate run (BENCH_SAMPLES_DIR): every garbage collection of 1 ms or more (from
 * perf_hooks), and every time a 2 ms timer fired more than 4 ms late (the event loop was blocked
 * or the thread was not scheduled). Times are Unix epoch milliseconds, as in the samples.
 *
 * On only when BENCH_STALL_PROBE_DIR names a folder (server.ts); the timer adds 500 wake-ups a
 * second to the server, so it is not on by default. Written as `<app>-<pid>.json` when the
 * process exits.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, performance, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';

export const STALL_PROBE_DIR_ENV = 'BENCH_STALL_PROBE_DIR';

const TICK_MS = 2;
/** A tick this late or later is recorded, less the tick itself. */
const LATE_MS = 4;
const MIN_GC_MS = 1;

export type StallEvent =
  | { readonly kind: 'gc'; readonly gc: string; readonly atMs: number; readonly durationMs: number }
  | { readonly kind: 'lag'; readonly atMs: number; readonly durationMs: number };

const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental-marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};

export function startStallProbe(dir: string, app: string): void {
  const events: StallEvent[] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration < MIN_GC_MS) continue;
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? -1;
      events.push({
        kind: 'gc',
        gc: GC_KINDS[kind] ?? String(kind),
        atMs: performance.timeOrigin + entry.startTime,
        durationMs: entry.duration,
      });
    }
  }).observe({ entryTypes: ['gc'] });
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (now - last > LATE_MS)
      events.push({ kind: 'lag', atMs: performance.timeOrigin + last, durationMs: now - last - TICK_MS });
    last = now;
  }, TICK_MS).unref();
  process.on('exit', () => writeFileSync(join(dir, `${app}-${process.pid}.json`), JSON.stringify(events)));
}
