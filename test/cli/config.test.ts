import { afterAll, describe, expect, it } from 'vitest';

import { fxgate, stopInProcessServers } from './in-process-cli.js';

describe('configuration at start-up', () => {
  afterAll(stopInProcessServers);

  it.each([
    ['PORT', 'abc'],
    ['FXGATE_RATE_LIMIT_READS', '0'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['FXGATE_JWT_ISSUER', 'fx-service,,openfx'],
  ])('a bad %s=%s stops the command with exit 2, naming the variable', async (name, value) => {
    const result = await fxgate(['migrate'], { [name]: value });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^fxgate: invalid configuration:\\n  - ${name}: `));
    expect(result.stdout).toBe('');
  });

  it.each(['core', 'gateway', 'all'])(
    'a bad FXGATE_REQUEST_TIMEOUT_MS stops `fxgate %s` before it listens, naming the variable',
    async (command) => {
      const result = await fxgate([command], {
        FXGATE_REQUEST_TIMEOUT_MS: '10',
        FXGATE_UPSTREAM_URL: 'http://127.0.0.1:1',
        PORT: '0',
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^fxgate: invalid configuration:\n {2}- FXGATE_REQUEST_TIMEOUT_MS: /);
      expect(result.stdout).not.toContain('listening');
    },
  );
});
