/**
 * mergeTallies: a batch that could not be written merged back under what was counted since;
 * TallyBatcher, the recorders' one batching loop; columnsOf, rows as unnest's columns.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { columnsInKeyOrder, columnsOf, mergeTallies, TallyBatcher } from '../../src/gateway/tallies.js';

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
