/**
 * Host names as Host headers and FXGATE_SANDBOX_HOSTS write them (src/lib/http/host-names.ts),
 * and the setting's schema, which refuses what is no host name.
 */
import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../../src/lib/config.js';
import { ConfigError } from '../../../src/lib/errors/internal-errors.js';
import { normaliseHostName, sandboxHostEntryProblem } from '../../../src/lib/http/host-names.js';

describe('normaliseHostName', () => {
  it.each([
    ['sandbox.api.example.com', 'sandbox.api.example.com'],
    ['Sandbox.API.Example.com', 'sandbox.api.example.com'],
    ['sandbox.api.example.com:8443', 'sandbox.api.example.com'],
    ['SANDBOX.api.example.com.:80', 'sandbox.api.example.com'],
    ['localhost', 'localhost'],
    ['127.0.0.1:8080', '127.0.0.1'],
    ['[::1]:8080', '::1'],
    ['[::1]', '::1'],
    ['::1', '::1'],
  ])('%j names %j', (value, name) => {
    expect(normaliseHostName(value)).toBe(name);
  });

  it.each(['', ' ', 'a b', 'host/path', 'user@host', 'host:port', 'host:123456', '[::1', '[::1]x', '.'])(
    '%j names no host',
    (value) => {
      expect(normaliseHostName(value)).toBeNull();
    },
  );
});

describe('FXGATE_SANDBOX_HOSTS', () => {
  function problems(value: string): readonly string[] {
    try {
      loadConfig({ FXGATE_SANDBOX_HOSTS: value });
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    throw new Error(`accepted ${value}`);
  }

  it('is empty by default and keeps the names as compared, once each', () => {
    expect(loadConfig({}).FXGATE_SANDBOX_HOSTS).toEqual([]);
    expect(
      loadConfig({ FXGATE_SANDBOX_HOSTS: ' Sandbox.Example.com., sandbox.example.com ,,127.0.0.2' })
        .FXGATE_SANDBOX_HOSTS,
    ).toEqual(['sandbox.example.com', '127.0.0.2']);
  });

  it.each([
    ['sandbox.example.com:8443', /names a port; list the host name only/],
    ['[::1]:8443', /names a port/],
    ['https://sandbox.example.com', /is not a host name; list names such as/],
  ])('refuses %j, naming the setting and the fix', (value, message) => {
    const found = problems(value);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^FXGATE_SANDBOX_HOSTS: /);
    expect(found[0]).toMatch(message);
    expect(sandboxHostEntryProblem(value)).toMatch(message);
  });

  it('takes an IPv6 address with or without brackets', () => {
    expect(sandboxHostEntryProblem('::1')).toBeNull();
    expect(sandboxHostEntryProblem('[::1]')).toBeNull();
  });
});
