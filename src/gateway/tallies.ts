/**
 * Counts kept in memory and written in batches (the usage, readiness and shadow reports): the
 * one batching loop they share (TallyBatcher, BatchedRecorder), and when a batch could not be written, it is
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

/**
 * A recorder on a TallyBatcher: it tallies with pendingTally(), and gives the write of a batch
 * and the merge of one put back; flush() and close() are the batcher's.
 */
export abstract class BatchedRecorder<T> {
  private readonly batcher: TallyBatcher<T>;

  protected constructor(options: {
    readonly flushIntervalMs: number;
    readonly onFlushError?: ((error: unknown) => void) | undefined;
  }) {
    this.batcher = new TallyBatcher({
      flushIntervalMs: options.flushIntervalMs,
      write: (batch) => this.write(batch),
      merge: (older, newer) => this.merge(older, newer),
      ...(options.onFlushError === undefined ? {} : { onFlushError: options.onFlushError }),
    });
  }

  /** The pending tally of `key`, begun with `begin()` when there is none. */
  protected pendingTally(key: string, begin: () => T): T {
    return this.batcher.tally(key, begin);
  }

  /** Writes one batch, in one statement; a rejection keeps it for the next flush. */
  protected abstract write(batch: ReadonlyMap<string, T>): Promise<void>;

  /** Folds a newer tally into an older one, when a batch that was not written goes back. */
  protected abstract merge(older: T, newer: T): void;

  /** Writes what is pending; one flush at a time, in order. */
  flush(): Promise<void> {
    return this.batcher.flush();
  }

  /** Stops the timer and writes what is left. */
  close(): Promise<void> {
    return this.batcher.close();
  }
}

/**
 * A batch's rows in the order of their keys, as the columns of an unnest: two processes flushing
 * at once then lock shared rows in the same order instead of deadlocking.
 */
export function columnsInKeyOrder<T>(
  batch: ReadonlyMap<string, T>,
  width: number,
  rowOf: (tally: T) => readonly unknown[],
): unknown[][] {
  return columnsOf(
    [...batch.keys()].sort().map((key) => rowOf(batch.get(key)!)),
    width,
  );
}
