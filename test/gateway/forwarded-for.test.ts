import { describe, expect, it } from 'vitest';

import { forwardedFor } from '../../src/gateway/forwarded-for.js';

describe('forwardedFor', () => {
  it('is the socket address when no proxy is trusted', () => {
    expect(forwardedFor({ ip: '198.51.100.7' })).toBe('198.51.100.7');
  });

  it('keeps the trusted part of the chain, client first, socket last', () => {
    expect(forwardedFor({ ip: '203.0.113.9', ips: ['10.0.0.2', '10.0.0.1', '203.0.113.9'] })).toBe(
      '203.0.113.9, 10.0.0.1, 10.0.0.2',
    );
  });
});
