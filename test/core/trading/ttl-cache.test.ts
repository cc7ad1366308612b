import { describe, expect, it } from 'vitest';

import { cachedFor } from '../../../src/core/trading/ttl-cache.js';

describe('cachedFor', () => {
  it('loads once per TTL and shares one load between concurrent callers', async () => {
    let clock = 0;
    let loads = 0;
    const get = cachedFor(
      1000,
      async () => ++loads,
      () => clock,
    );
    expect(await Promise.all([get(), get(), get()])).toEqual([1, 1, 1]);
    clock = 999;
    expect(await get()).toBe(1);
    clock = 1000;
    expect(await get()).toBe(2);
    expect(loads).toBe(2);
  });

  it('does not keep a failed load', async () => {
    let attempt = 0;
    const get = cachedFor(60_000, async () => {
      attempt += 1;
      if (attempt === 1) throw new Error('database down');
      return 'ok';
    });
    await expect(get()).rejects.toThrow('database down');
    expect(await get()).toBe('ok');
  });
});
