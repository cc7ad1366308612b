import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

  it.each(['core', 'gateway', 'all', 'migrate'])(
    'an unknown FXGATE_ name stops `fxgate %s` with exit 2, naming it and the setting it is nearest to',
    async (command) => {
      const result = await fxgate([command], {
        FXGATE_V1_BROWNOUT: '2026-12-10T15:00:00Z/PT1H',
        FXGATE_UPSTREAM_URL: 'http://127.0.0.1:1',
        PORT: '0',
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /^fxgate: invalid configuration:\n {2}- FXGATE_V1_BROWNOUT is not a setting fxgate knows \(did you mean FXGATE_V1_BROWNOUTS\?\)\nUnset the unknown names/,
      );
      expect(result.stdout).not.toContain('listening');
    },
  );

  it('with FXGATE_ALLOW_UNKNOWN_SETTINGS=1, the command runs, with one warning line on its stderr', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fxgate-unknown-'));
    try {
      const result = await fxgate(['migrate'], {
        FXGATE_DATA_DIR: dataDir,
        FXGATE_ALLOW_UNKNOWN_SETTINGS: '1',
        FXGATE_V1_BROWNOUT: 'x',
        FXGATE_ZZZ: '1',
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('applied: ');
      expect(result.stderr).toBe(
        'fxgate: warning: FXGATE_V1_BROWNOUT is not a setting fxgate knows (did you mean FXGATE_V1_BROWNOUTS?); FXGATE_ZZZ is not a setting fxgate knows; started all the same, as FXGATE_ALLOW_UNKNOWN_SETTINGS=1\n',
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
