/**
 * Counts kept in memory and written in batches (the usage report, the shadow report): when a
 * batch could not be written, it is merged back under what was counted since, so nothing is lost
 * or counted twice. Pure; touches no store.
 */

/** Merges `newer` into `older`, key by key (`merge` folds a newer tally into an older one), and returns `older`. */
export function mergeTallies<K, T>(
  older: Map<K, T>,
  newer: ReadonlyMap<K, T>,
  merge: (older: T, newer: T) => void,
): Map<K, T> {
  for (const [key, tally] of newer) {
    const kept = older.get(key);
    if (kept === undefined) older.set(key, tally);
    else merge(kept, tally);
  }
  return older;
}
