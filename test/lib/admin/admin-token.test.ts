/**
 * The admin listener's token rules (src/lib/admin/admin-token.ts): which hosts are loopback, when
 * a token is required, and how a bearer header is compared. Nothing here listens.
 */
import { describe, expect, it } from 'vitest';

import { bearerTokenMatches, checkAdminExposure, isLoopbackHost } from '../../../src/lib/admin/admin-token.js';
import { AdminTokenRequiredError } from '../../../src/lib/errors/internal-errors.js';

const TOKEN = 'k7Vn3q-9XbT2wYzL0pR5sUaC8dEfGhJ4mN6oQ1rS';

describe('isLoopbackHost', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    'localhost',
    'LOCALHOST',
  ])('%s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each([
    '0.0.0.0',
    '::',
    '[::]',
    '10.0.0.1',
    '192.168.1.10',
    '128.0.0.1',
    '::ffff:10.0.0.1',
    'fe80::1',
    'example.test',
    'localhost.example.test',
    '127.0.0.1.example.test',
    '',
  ])('%j is not', (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('checkAdminExposure', () => {
  it('asks for no token on loopback, and takes any host with one', () => {
    expect(() => checkAdminExposure('127.0.0.1', undefined)).not.toThrow();
    expect(() => checkAdminExposure('::1', undefined)).not.toThrow();
    expect(() => checkAdminExposure('0.0.0.0', TOKEN)).not.toThrow();
  });

  it.each(['0.0.0.0', '::', '10.1.2.3', 'admin.example.test'])(
    'refuses %s without a token, saying what to set and never what a token is',
    (host) => {
      let caught: unknown;
      try {
        checkAdminExposure(host, undefined);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(AdminTokenRequiredError);
      expect((caught as AdminTokenRequiredError).code).toBe('FXGATE_ADMIN_TOKEN_REQUIRED');
      expect((caught as Error).message).toContain(`would bind ${host}, which is not a loopback address`);
      expect((caught as Error).message).toMatch(/Set FXGATE_ADMIN_TOKEN .*FXGATE_ADMIN_HOST.*FXGATE_ADMIN_PORT=off/);
    },
  );
});

describe('bearerTokenMatches', () => {
  it.each<[string | undefined, boolean]>([
    [`Bearer ${TOKEN}`, true],
    [`bearer ${TOKEN}`, true],
    [`BEARER  ${TOKEN}`, true],
    [undefined, false],
    ['', false],
    [TOKEN, false],
    [`Basic ${TOKEN}`, false],
    [`Bearer ${TOKEN}x`, false],
    [`Bearer ${TOKEN.slice(0, -1)}`, false],
    [`Bearer ${TOKEN} `, false],
    [`Bearer ${TOKEN} ${TOKEN}`, false],
    ['Bearer ', false],
  ])('%j: %s', (header, matches) => {
    expect(bearerTokenMatches(header, TOKEN)).toBe(matches);
  });
});
