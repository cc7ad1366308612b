/**
 * Counts kept in memory and written in batches (the usage, readiness and shadow reports): the
 * one batching loop they share (TallyBatcher, BatchedRecorder), and when a batch could not be written, it is
 * merged back under what was counted since, so nothing is lost or counted twice; and the recorder
 * whose batch is one upsert of its tallies' columns (UpsertRecorder, the usage and readiness
 * reports). Touches no store itself: each recorder gives its batch's statement and the database.
 */
import type { Queryable } from '../lib/db/database.js';

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

/** A tally counted over a span of sightings (ms since the epoch), as the usage and readiness reports keep them. */
export interface SeenTally {
  count: number;
  firstSeen: number;
  lastSeen: number;
}

/**
 * A newer tally folded into an older one: the counts added, the span widened; true when the
 * newer was seen last, so that its latest values win.
 */
export function mergeSeen(
  older: SeenTally,
  newer: { readonly count: number; readonly firstSeen: number; readonly lastSeen: number },
): boolean {
  older.count += newer.count;
  older.firstSeen = Math.min(older.firstSeen, newer.firstSeen);
  if (newer.lastSeen < older.lastSeen) return false;
  older.lastSeen = newer.lastSeen;
  return true;
}

/** The fields of T that hold numbers: the counts a merge adds. */
type CountKey<T> = { [K in keyof T]: T[K] extends number ? K : never }[keyof T];

/** What an UpsertRecorder writes: its statement, the tally's fields as its columns, and how a batch put back merges. */
export interface UpsertColumns<T extends SeenTally> {
  /** One statement taking each column as an array, $1 the first. */
  readonly sql: string;
  /** The statement's columns in its order, each a field of the tally; firstSeen and lastSeen are written as timestamps. */
  readonly columns: readonly (keyof T)[];
  /** The counts besides `count`, added when a batch goes back. */
  readonly summed: readonly CountKey<T>[];
  /** The fields the last sighting sets: the newer tally's win when it was seen last. */
  readonly latest: readonly (keyof T)[];
}

/** A tally's field as its column: the span's ends as timestamps, any other field as it is. */
function columnValue<T extends SeenTally>(tally: T, field: keyof T): unknown {
  if (field === 'firstSeen' || field === 'lastSeen') return new Date(tally[field as keyof SeenTally]).toISOString();
  return tally[field];
}

/**
 * A recorder whose batch is one upsert of its tallies' columns, the rows in the order of their
 * keys; a batch put back adds its counts and keeps the latest sighting's fields.
 */
export abstract class UpsertRecorder<T extends SeenTally> extends BatchedRecorder<T> {
  /** The clock of the sightings: ms since the epoch, Date.now unless given. */
  protected readonly now: () => number;

  protected constructor(
    private readonly db: Queryable,
    options: {
      readonly flushIntervalMs: number;
      readonly now?: (() => number) | undefined;
      readonly onFlushError?: ((error: unknown) => void) | undefined;
    },
    private readonly upsert: UpsertColumns<T>,
  ) {
    super(options);
    this.now = options.now ?? Date.now;
  }

  protected async write(batch: ReadonlyMap<string, T>): Promise<void> {
    const columns = columnsInKeyOrder(batch, this.upsert.columns.length, (tally) =>
      this.upsert.columns.map((field) => columnValue(tally, field)),
    );
    await this.db.query(this.upsert.sql, columns);
  }

  /** A batch that was not written goes back under what came since. */
  protected merge(older: T, newer: T): void {
    for (const field of this.upsert.summed) (older[field] as number) += newer[field] as number;
    if (mergeSeen(older, newer)) for (const field of this.upsert.latest) older[field] = newer[field];
  }
}
