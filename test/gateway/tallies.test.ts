/**
 * mergeTallies: a batch that could not be written merged back under what was counted since.
 */
import { describe, expect, it } from 'vitest';

import { mergeTallies } from '../../src/gateway/tallies.js';

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
