import { describe, expect, it } from 'vitest';

import { KnownReplays } from '../../../../src/gateway/legacy/runtime/known-replays.js';

describe('KnownReplays', () => {
  it('knows a replayed token until it expires, then forgets it', () => {
    let now = 1_000;
    const known = new KnownReplays(10, () => now);
    expect(known.has('nonce:{k}:a')).toBe(false);
    known.add('nonce:{k}:a', 2_000);
    expect(known.has('nonce:{k}:a')).toBe(true);
    now = 1_999;
    expect(known.has('nonce:{k}:a')).toBe(true);
    now = 2_000;
    expect(known.has('nonce:{k}:a')).toBe(false);
    expect(known.size).toBe(0);
  });

  it('holds at most maxEntries, dropping the oldest added first', () => {
    const known = new KnownReplays(3, () => 0);
    for (const nonce of ['a', 'b', 'c']) known.add(nonce, 10);
    known.add('a', 10); // added again: now the newest
    known.add('d', 10);
    expect(known.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].filter((nonce) => known.has(nonce))).toEqual(['a', 'c', 'd']);
  });
});
