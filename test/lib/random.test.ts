import { describe, expect, it } from 'vitest';

import { MAX_POOLED_RANDOM_BYTES, randomBytesPooled, randomHex } from '../../src/lib/random.js';

describe('pooled random bytes', () => {
  it('hands out the size asked, as bytes or lower-case hex', () => {
    expect(randomBytesPooled(16)).toHaveLength(16);
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
    expect(randomHex(1)).toMatch(/^[0-9a-f]{2}$/);
    expect(randomBytesPooled(MAX_POOLED_RANDOM_BYTES)).toHaveLength(MAX_POOLED_RANDOM_BYTES);
  });

  it('never hands out the same bytes twice, across many refills of the pool', () => {
    // 40,000 draws of 16 bytes is about 156 refills of the 4 KiB pool; sizes that do not divide
    // it make draws straddle the refill point.
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i += 1) {
      seen.add(randomHex(16));
      seen.add(randomBytesPooled(i % 7 === 0 ? 250 : 16).toString('hex'));
    }
    expect(seen.size).toBe(40_000);
  });

  it('gives each buffer memory of its own, which a refill of the pool leaves alone', () => {
    const first = randomBytesPooled(16);
    const copy = Buffer.from(first);
    for (let i = 0; i < 600; i += 1) randomHex(16); // 9,600 bytes: at least two refills
    expect(first.equals(copy)).toBe(true);
  });

  it('looks uniform: each hex digit about 1/16 of 320,000', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 10_000; i += 1)
      for (const digit of randomHex(16)) counts.set(digit, (counts.get(digit) ?? 0) + 1);
    expect(counts.size).toBe(16);
    for (const count of counts.values()) expect(Math.abs(count - 20_000)).toBeLessThan(1_000); // about 7 standard deviations
  });

  it.each([0, -1, 1.5, MAX_POOLED_RANDOM_BYTES + 1, Number.NaN])('refuses a size of %s', (size) => {
    expect(() => randomHex(size)).toThrow(RangeError);
    expect(() => randomBytesPooled(size)).toThrow(RangeError);
  });
});
