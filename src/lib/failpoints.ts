/**
 * Failpoints: named places in a write path where a test can make the process fail, to prove
 * that a crash at any step leaves no half-written state and that the retry is safe
 * (docs/contract.md#errors-recovery).
 * Disabled unless a test arms one; then `failpoint(name)` throws at that place. Production code
 * never arms them. The cost when disarmed is one Map lookup on an empty map.
 */

import { FailpointError } from './errors/internal-errors.js';
const armed = new Map<string, number>();

/** Throws FailpointError when `name` is armed (and counts one use of it). */
export function failpoint(name: string): void {
  const left = armed.get(name);
  if (left === undefined) return;
  if (left <= 1) armed.delete(name);
  else armed.set(name, left - 1);
  throw new FailpointError(name);
}

/** Arms `name` for the next `times` passes (tests only). */
export function armFailpoint(name: string, times = 1): void {
  armed.set(name, times);
}

export function disarmAllFailpoints(): void {
  armed.clear();
}

/**
 * For a write that runs as one database statement, whose steps the process cannot interrupt:
 * which of `names` is armed (one pass of it is used up), so the caller can hand it to the
 * statement to fail at that step; null when none is.
 */
export function takeArmedFailpoint(names: readonly string[]): string | null {
  for (const name of names) {
    if (!armed.has(name)) continue;
    try {
      failpoint(name);
    } catch {
      return name;
    }
  }
  return null;
}
