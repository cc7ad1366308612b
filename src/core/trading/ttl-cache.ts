/**
 * A single value loaded at most once per TTL, for reference data that every request reads and
 * that changes only by migration or operator action (currencies, pairs). Concurrent callers
 * share one load; a failed load is not cached.
 */
export function cachedFor<T>(ttlMs: number, load: () => Promise<T>, now: () => number = Date.now): () => Promise<T> {
  let current: { value: Promise<T>; expiresAt: number } | null = null;
  return () => {
    const at = now();
    if (current && current.expiresAt > at) return current.value;
    const value = load();
    const entry = { value, expiresAt: at + ttlMs };
    current = entry;
    value.catch(() => {
      if (current === entry) current = null;
    });
    return value;
  };
}
