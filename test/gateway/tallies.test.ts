/**
 * mergeTallies: a batch that could not be written merged back under what was counted since;
 * TallyBatcher, the recorders' one batching loop; columnsOf, rows as unnest's columns;
 * UpsertRecorder, a batch as one upsert of its columns and a batch put back merged by its fields.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { columnsInKeyOrder, columnsOf, mergeTallies, TallyBatcher, UpsertRecorder } from '../../src/gateway/tallies.js';
import type { Queryable } from '../../src/lib/db/database.js';

describe('mergeTallies', () => {
  it('folds a newer tally into the older one of its key, keeps keys only one side has, and returns the older map', () => {
    const older = new Map([
      ['a', { count: 2 }],
      ['b', { count: 5 }],
    ]);
    const newer = new Map([
      ['b', { count: 1 }],
      ['c', { count: 7 }],
    ]);
    const merged = mergeTallies(older, newer, (kept, tally) => {
      kept.count += tally.count;
    });
    expect(merged).toBe(older);
    expect([...merged]).toEqual([
      ['a', { count: 2 }],
      ['b', { count: 6 }],
      ['c', { count: 7 }],
    ]);
  });
});

describe('TallyBatcher', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function batcher(write: (batch: ReadonlyMap<string, { count: number }>) => Promise<void>, errors: unknown[] = []) {
    return new TallyBatcher<{ count: number }>({
      flushIntervalMs: 1_000,
      write,
      merge: (older, newer) => {
        older.count += newer.count;
      },
      onFlushError: (error) => errors.push(error),
    });
  }

  it('writes what was tallied once a flush, on its interval and on close, and nothing when nothing is pending', async () => {
    vi.useFakeTimers();
    const written: [string, number][][] = [];
    const recorder = batcher(async (batch) => {
      written.push([...batch].map(([key, tally]) => [key, tally.count]));
    });
    recorder.tally('a', () => ({ count: 0 })).count += 1;
    recorder.tally('a', () => ({ count: 0 })).count += 1;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(written).toEqual([[['a', 2]]]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(written).toHaveLength(1);
    recorder.tally('b', () => ({ count: 5 }));
    await recorder.close();
    expect(written).toEqual([[['a', 2]], [['b', 5]]]);
  });

  it('keeps a batch that could not be written, merged under what came since, and tells of the failure', async () => {
    const errors: unknown[] = [];
    const written: [string, number][][] = [];
    let fail = true;
    const recorder = batcher(async (batch) => {
      if (fail) throw new Error('database down');
      written.push([...batch].map(([key, tally]) => [key, tally.count]));
    }, errors);
    recorder.tally('a', () => ({ count: 0 })).count += 2;
    await recorder.flush();
    expect(errors).toEqual([new Error('database down')]);
    recorder.tally('a', () => ({ count: 0 })).count += 1;
    recorder.tally('b', () => ({ count: 1 }));
    fail = false;
    await recorder.close();
    expect(written).toEqual([
      [
        ['a', 3],
        ['b', 1],
      ],
    ]);
  });
});

describe('columnsOf', () => {
  it('turns rows into the columns of an unnest, as wide as told even when there is no row', () => {
    expect(
      columnsOf(
        [
          ['a', 1],
          ['b', 2],
        ],
        2,
      ),
    ).toEqual([
      ['a', 'b'],
      [1, 2],
    ]);
    expect(columnsOf([], 3)).toEqual([[], [], []]);
  });

  it('puts a batch in the order of its keys', () => {
    const batch = new Map([
      ['b', { count: 2 }],
      ['a', { count: 1 }],
    ]);
    expect(columnsInKeyOrder(batch, 1, (tally) => [tally.count])).toEqual([[1, 2]]);
  });
});

describe('UpsertRecorder', () => {
  interface Tally {
    readonly name: string;
    count: number;
    errors: number;
    firstSeen: number;
    lastSeen: number;
    lastNote: string;
  }

  class NoteRecorder extends UpsertRecorder<Tally> {
    constructor(db: Queryable, now: () => number) {
      super(
        db,
        { flushIntervalMs: 60_000, now },
        {
          sql: 'UPSERT NOTES',
          columns: ['name', 'count', 'errors', 'firstSeen', 'lastSeen', 'lastNote'],
          summed: ['errors'],
          latest: ['lastNote'],
        },
      );
    }

    note(name: string, note: string, error: boolean): void {
      const at = this.now();
      const tally = this.pendingTally(name, () => ({
        name,
        count: 0,
        errors: 0,
        firstSeen: at,
        lastSeen: at,
        lastNote: note,
      }));
      tally.count += 1;
      if (error) tally.errors += 1;
      if (at >= tally.lastSeen) {
        tally.lastSeen = at;
        tally.lastNote = note;
      }
    }
  }

  function database() {
    const calls: { sql: string; params: readonly unknown[] | undefined }[] = [];
    const db: Queryable = {
      query: async <Row>(sql: string, params?: readonly unknown[]) => {
        calls.push({ sql, params });
        return { rows: [] as Row[], rowCount: 0 };
      },
      exec: async () => {},
    };
    return { db, calls };
  }

  it('writes a batch as one statement of its columns, rows in key order, the span as timestamps', async () => {
    const { db, calls } = database();
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const recorder = new NoteRecorder(db, () => clock);
    recorder.note('b', 'first b', false);
    clock += 1_000;
    recorder.note('a', 'only a', true);
    clock += 1_000;
    recorder.note('b', 'last b', true);
    await recorder.close();
    expect(calls).toEqual([
      {
        sql: 'UPSERT NOTES',
        params: [
          ['a', 'b'],
          [1, 2],
          [1, 1],
          ['2026-01-01T00:00:01.000Z', '2026-01-01T00:00:00.000Z'],
          ['2026-01-01T00:00:01.000Z', '2026-01-01T00:00:02.000Z'],
          ['only a', 'last b'],
        ],
      },
    ]);
  });

  it('puts back a batch not written under what came meanwhile: counts added, the span widened, the latest sighting’s fields kept', async () => {
    let failing: (() => void) | null = null;
    const calls: (readonly unknown[] | undefined)[] = [];
    const db: Queryable = {
      query: async <Row>(_sql: string, params?: readonly unknown[]) => {
        if (calls.length === 0 && failing === null) {
          await new Promise<void>((resolve) => (failing = resolve));
          calls.push(undefined);
          throw new Error('database down');
        }
        calls.push(params);
        return { rows: [] as Row[], rowCount: 0 };
      },
      exec: async () => {},
    };
    let clock = 2_000;
    const recorder = new NoteRecorder(db, () => clock);
    recorder.note('a', 'newest', true);
    const failed = recorder.flush();
    await vi.waitFor(() => expect(failing).not.toBeNull());
    clock = 1_000;
    recorder.note('a', 'older', true);
    recorder.note('a', 'older still', false);
    failing!();
    await failed;
    await recorder.close();
    expect(calls).toEqual([
      undefined,
      [['a'], [3], [2], [new Date(1_000).toISOString()], [new Date(2_000).toISOString()], ['newest']],
    ]);
  });
});
