/**
 * The settings of the legacy generations' retirement: the migration guide (and its old name),
 * v1's and v2's dates, v1's brownouts, their exempt orgs and what happens after the sunset,
 * validated at load so that a bad value stops start-up naming the variable.
 */
import { afterAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/lib/config.js';
import { ConfigError } from '../../src/lib/errors/internal-errors.js';
import { killAllCliProcesses, runCli } from '../cli/cli-process.js';

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

const ORG = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';

describe('defaults', () => {
  it("are v1's dates as before, refused after its sunset, no brownouts, and no dates for v2", () => {
    expect(loadConfig({})).toMatchObject({
      FXGATE_V1_DEPRECATED_AT: '2026-01-01T00:00:00Z',
      FXGATE_V1_SUNSET_AT: '2026-12-31T23:59:59Z',
      FXGATE_V1_AFTER_SUNSET: 'refuse',
      FXGATE_V1_BROWNOUTS: [],
      FXGATE_V1_BROWNOUT_EXEMPT: [],
    });
    // Unset guides are the gateway's own pages (generation-lifecycle.ts).
    expect(loadConfig({}).FXGATE_MIGRATION_URL).toBeUndefined();
    expect(loadConfig({}).FXGATE_V2_MIGRATION_URL).toBeUndefined();
    expect(loadConfig({}).FXGATE_V2_DEPRECATED_AT).toBeUndefined();
    expect(loadConfig({}).FXGATE_V2_SUNSET_AT).toBeUndefined();
  });
});

describe('FXGATE_MIGRATION_URL and its old name', () => {
  it('reads FXGATE_MIGRATION_GUIDE_URL when the new name is unset', () => {
    expect(loadConfig({ FXGATE_MIGRATION_GUIDE_URL: 'https://example.test/old' }).FXGATE_MIGRATION_URL).toBe(
      'https://example.test/old',
    );
    expect(
      loadConfig({
        FXGATE_MIGRATION_GUIDE_URL: 'https://example.test/same',
        FXGATE_MIGRATION_URL: 'https://example.test/same',
      }).FXGATE_MIGRATION_URL,
    ).toBe('https://example.test/same');
  });

  it('refuses the two names set to different values, and a bad old value under both names', () => {
    expect(
      problems({
        FXGATE_MIGRATION_GUIDE_URL: 'https://example.test/old',
        FXGATE_MIGRATION_URL: 'https://example.test/new',
      }),
    ).toEqual([
      'FXGATE_MIGRATION_GUIDE_URL: renamed FXGATE_MIGRATION_URL, and both are set to different values; unset FXGATE_MIGRATION_GUIDE_URL',
    ]);
    expect(problems({ FXGATE_MIGRATION_GUIDE_URL: 'not a url' })[0]).toMatch(
      /^FXGATE_MIGRATION_GUIDE_URL \(now FXGATE_MIGRATION_URL\): /,
    );
    expect(problems({ FXGATE_MIGRATION_URL: 'not a url' })[0]).toMatch(/^FXGATE_MIGRATION_URL: /);
    expect(problems({ FXGATE_V2_MIGRATION_URL: '/docs/migrate/v2-to-v3' })[0]).toMatch(/^FXGATE_V2_MIGRATION_URL: /);
  });
});

describe('the dates', () => {
  it('take ISO 8601 instants with their zone, v2 once set', () => {
    const config = loadConfig({
      FXGATE_V1_SUNSET_AT: '2027-03-31T23:00:00+01:00',
      FXGATE_V2_DEPRECATED_AT: '2027-01-01T00:00:00Z',
      FXGATE_V2_SUNSET_AT: '2027-12-31T23:59:59Z',
    });
    expect([config.FXGATE_V1_SUNSET_AT, config.FXGATE_V2_DEPRECATED_AT, config.FXGATE_V2_SUNSET_AT]).toEqual([
      '2027-03-31T23:00:00+01:00',
      '2027-01-01T00:00:00Z',
      '2027-12-31T23:59:59Z',
    ]);
  });

  it.each([
    ['FXGATE_V1_DEPRECATED_AT', '2026-01-01', /not an ISO 8601 instant such as 2026-12-31T23:59:59Z/],
    ['FXGATE_V1_SUNSET_AT', '2026-12-31T23:59:59', /add its zone/],
    ['FXGATE_V2_SUNSET_AT', '2026-02-30T00:00:00Z', /names no real date/],
    ['FXGATE_V2_DEPRECATED_AT', 'next year', /not an ISO 8601 instant/],
  ])('refuse %s=%j, naming it', (name, value, message) => {
    const found = problems({ [name]: value });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(new RegExp(`^${name}: `));
    expect(found[0]).toMatch(message);
  });

  it('refuse a sunset before its deprecation, on either generation', () => {
    expect(problems({ FXGATE_V1_SUNSET_AT: '2025-12-31T23:59:59Z' })).toEqual([
      'FXGATE_V1_SUNSET_AT: 2025-12-31T23:59:59Z is before FXGATE_V1_DEPRECATED_AT (2026-01-01T00:00:00Z); the sunset must not come before the deprecation',
    ]);
    expect(
      problems({ FXGATE_V2_DEPRECATED_AT: '2028-01-01T00:00:00Z', FXGATE_V2_SUNSET_AT: '2027-12-31T23:59:59Z' })[0],
    ).toMatch(/^FXGATE_V2_SUNSET_AT: .* is before FXGATE_V2_DEPRECATED_AT/);
    // A sunset equal to its deprecation is allowed (a retirement announced as it happens).
    expect(loadConfig({ FXGATE_V1_SUNSET_AT: '2026-01-01T00:00:00Z' }).FXGATE_V1_SUNSET_AT).toBe(
      '2026-01-01T00:00:00Z',
    );
  });
});

describe('brownouts and the sunset', () => {
  it('read the windows in both forms, and the exempt orgs in lower case', () => {
    const config = loadConfig({
      FXGATE_V1_BROWNOUTS: '2026-12-10T15:00:00Z/PT1H, 2026-12-17T15:00:00Z/2026-12-17T17:00:00Z',
      FXGATE_V1_BROWNOUT_EXEMPT: ORG.toUpperCase(),
      FXGATE_V1_AFTER_SUNSET: 'serve',
    });
    expect(config.FXGATE_V1_BROWNOUTS).toEqual([
      { start: Date.UTC(2026, 11, 10, 15), end: Date.UTC(2026, 11, 10, 16) },
      { start: Date.UTC(2026, 11, 17, 15), end: Date.UTC(2026, 11, 17, 17) },
    ]);
    expect(config.FXGATE_V1_BROWNOUT_EXEMPT).toEqual([ORG]);
    expect(config.FXGATE_V1_AFTER_SUNSET).toBe('serve');
  });

  it.each([
    ['FXGATE_V1_BROWNOUTS', '2026-12-10T15:00:00Z', /start\/duration or start\/end/],
    ['FXGATE_V1_BROWNOUTS', '2026-12-10T15:00:00Z/PT1H,2026-12-17T15:00:00Z/P1M', /window 2: .*years and months/],
    ['FXGATE_V1_BROWNOUTS', '2026-12-10T15:00:00Z/2026-12-10T14:00:00Z', /ends before it starts/],
    ['FXGATE_V1_BROWNOUT_EXEMPT', 'acme', /not an org id/],
    ['FXGATE_V1_AFTER_SUNSET', 'maybe', /refuse.*serve|serve.*refuse/],
  ])('refuse %s=%j, naming it', (name, value, message) => {
    const found = problems({ [name]: value });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(new RegExp(`^${name}: `));
    expect(found[0]).toMatch(message);
  });
});

describe('a bad value at start-up', () => {
  afterAll(killAllCliProcesses);

  it('stops fxgate gateway with exit 2, naming the variable', async () => {
    const result = await runCli(['gateway', '--upstream', 'http://127.0.0.1:9'], {
      FXGATE_V1_BROWNOUTS: '2026-12-10T15:00:00Z/P1M',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/FXGATE_V1_BROWNOUTS: .*years and months have no fixed length/);
  });
});
