/** The test of a request's Host against FXGATE_SANDBOX_HOSTS (src/gateway/legacy/runtime/sandbox-hosts.ts). */
import { describe, expect, it } from 'vitest';

import { SandboxHosts } from '../../../../src/gateway/legacy/runtime/sandbox-hosts.js';

describe('SandboxHosts', () => {
  const hosts = new SandboxHosts(['sandbox.example.com', '::1']);

  it.each([
    'sandbox.example.com',
    'SANDBOX.Example.COM',
    'sandbox.example.com:8080',
    'sandbox.example.com.:443',
    '[::1]:80',
  ])('%j is a sandbox host', (host) => {
    expect(hosts.includes(host)).toBe(true);
  });

  it.each([undefined, '', 'example.com', 'api.sandbox.example.com', 'sandbox.example.com.evil', '127.0.0.1', 'x:y'])(
    '%j is not',
    (host) => {
      expect(hosts.includes(host)).toBe(false);
    },
  );

  it('knows none when none is configured', () => {
    expect(new SandboxHosts([]).includes('sandbox.example.com')).toBe(false);
  });
});
