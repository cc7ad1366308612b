/**
 * Counts kept in memory and written in batches (the usage, readiness and shadow reports): the
 * one batching loop they share (TallyBatcher), and when a batch could not be written, it is
 * merged back under what was counted since, so nothing is lost or counted twice. Touches no store
 * itself: each recorder gives the write of its batch.
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

export interface TallyBatcherOptions<T> {
  /** How often the pending tallies are written. */
  readonly flushIntervalMs: number;
  /** Writes one batch, in one statement; a rejection keeps the batch for the next flush. */
  readonly write: (batch: ReadonlyMap<string, T>) => Promise<void>;
  /** Folds a newer tally into an older one (mergeTallies), when a batch that was not written goes back. */
  readonly merge: (older: T, newer: T) => void;
  readonly onFlushError?: (error: unknown) => void;
}

/**
 * The batching loop of a recorder: tallies by key in memory, one write a flush (every
 * `flushIntervalMs` and on close, one at a time, in order); a batch that could not be written is
 * merged back under what was counted since.
 */
export class TallyBatcher<T> {
  private pending = new Map<string, T>();
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: TallyBatcherOptions<T>) {
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
    this.timer.unref();
  }

  /** The pending tally of `key`, begun with `begin()` when there is none. */
  tally(key: string, begin: () => T): T {
    let tally = this.pending.get(key);
    if (tally === undefined) {
      tally = begin();
      this.pending.set(key, tally);
    }
    return tally;
  }

  /** Writes what is pending; one flush at a time, in order. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.options.write(batch);
    } catch (error) {
      this.pending = mergeTallies(batch, this.pending, this.options.merge);
      this.options.onFlushError?.(error);
    }
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/** Rows as the columns of an `unnest($1::type[], ...)` insert: column `c` holds every row's value `c`. */
export function columnsOf(rows: Iterable<readonly unknown[]>, width: number): unknown[][] {
  const columns: unknown[][] = Array.from({ length: width }, () => []);
  for (const row of rows) row.forEach((value, column) => columns[column]!.push(value));
  return columns;
}
