import { describe, expect, it } from 'vitest';

import { upstreamOrigin } from '../../../src/gateway/upstream/pool.js';
import { InvalidUpstreamError } from '../../../src/lib/errors/internal-errors.js';

describe('upstreamOrigin', () => {
  it('accepts an origin, with or without a trailing slash', () => {
    expect(upstreamOrigin('http://127.0.0.1:8081')).toBe('http://127.0.0.1:8081');
    expect(upstreamOrigin('https://v3.example.com/')).toBe('https://v3.example.com');
  });

  it.each(['http://127.0.0.1:8081/base', 'http://h/?x=1', 'ftp://h', 'not a url', 'http://user:pw@h'])(
    'refuses %s',
    (url) => {
      expect(() => upstreamOrigin(url)).toThrow(InvalidUpstreamError);
    },
  );
});
