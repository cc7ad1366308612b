/**
 * The migration schedule from the CLI, at a fixed clock (the run's CliIo.now, which the gateway's
 * lifecycle reads too): the lines `fxgate gateway` prints at start-up, `GET /admin/schedule` on
 * its admin listener (behind its token), and `fxgate schedule` asking that listener, as lines and
 * as JSON, and working it out from the same environment with --from-env. A configuration with
 * dates, two brownouts (one active, one upcoming), an exempt org and shadow mode.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseInstant } from '../../../src/lib/time-text.js';
import { RecordingUpstream } from '../../gateway/recording-upstream.js';
import { fxgate, type InProcessServer, startFxgate, stopInProcessServers } from '../in-process-cli.js';

const TOKEN = 'schedule-test-admin-token-0123456789abcdef';
const EXEMPT = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';
/** 2026-11-28T09:30:00Z: 30 min into the first brownout. */
const NOW = parseInstant('2026-11-28T09:30:00Z');
const clock = { now: () => NOW };

const SCHEDULE_ENV = {
  FXGATE_V1_DEPRECATED_AT: '2026-01-01T00:00:00Z',
  FXGATE_V1_SUNSET_AT: '2026-12-31T23:59:59Z',
  FXGATE_V1_BROWNOUTS: '2026-11-28T09:00:00Z/PT1H,2026-12-01T10:00:00Z/2026-12-01T11:00:00Z',
  FXGATE_V1_BROWNOUT_EXEMPT: EXEMPT,
  FXGATE_V2_DEPRECATED_AT: '2027-01-01T00:00:00Z',
  FXGATE_V2_SUNSET_AT: '2027-06-30T00:00:00Z',
  // Loopback, port 1: nothing is read there while no v1/v2 read is made.
  FXGATE_SHADOW_URL: 'http://127.0.0.1:1',
  FXGATE_SHADOW_SAMPLE: '0.5',
  FXGATE_ADMIN_TOKEN: TOKEN,
};

const LINES = [
  'v1: deprecated since 2026-01-01T00:00:00Z, sunset 2026-12-31T23:59:59Z (in 33 d 14 h), then refused (410)',
  'v1 brownout 2026-11-28T09:00:00Z to 2026-11-28T10:00:00Z (active, ends in 30 min), exempt: 1 org',
  'v1 brownout 2026-12-01T10:00:00Z to 2026-12-01T11:00:00Z (in 3 d), exempt: 1 org',
  'v2: deprecated from 2027-01-01T00:00:00Z (in 33 d 14 h), sunset 2027-06-30T00:00:00Z (in 213 d 14 h), then served all the same',
  'shadow mode: beside http://127.0.0.1:1; the gateway answers clients, 50% of reads compared',
];

describe('fxgate schedule, and the schedule at the gateway start', () => {
  let upstream: RecordingUpstream;
  let dataDir: string;
  let gateway: InProcessServer;
  let adminUrl: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    upstream = await RecordingUpstream.start();
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-schedule-'));
    env = {
      ...SCHEDULE_ENV,
      FXGATE_UPSTREAM_URL: upstream.url,
      FXGATE_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      FXGATE_ADMIN_PORT: '0',
    };
    gateway = await startFxgate(['gateway'], env, clock);
    [, adminUrl] = gateway.stdout.match(/^fxgate gateway: admin listener on (http:\/\/\S+)$/m) as [string, string];
  });
  afterAll(async () => {
    await stopInProcessServers();
    await upstream?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('prints the schedule among its start-up lines, before it says it listens', () => {
    const lines = gateway.stdout.split('\n');
    const first = lines.indexOf(`fxgate gateway: ${LINES[0]}`);
    expect(first).toBeGreaterThan(0);
    expect(lines.slice(first, first + LINES.length)).toEqual(LINES.map((line) => `fxgate gateway: ${line}`));
    expect(lines.findIndex((line) => line.startsWith('fxgate gateway: listening on '))).toBeGreaterThan(first);
    expect(gateway.stderr).toBe('');
  });

  it('serves it on GET /admin/schedule, behind the admin token, with instants and seconds-until', async () => {
    const refused = await request(`${adminUrl}/admin/schedule`);
    expect(refused.statusCode).toBe(401);
    await refused.body.dump();
    const response = await request(`${adminUrl}/admin/schedule`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.statusCode).toBe(200);
    const body = (await response.body.json()) as Record<string, unknown>;
    expect(body).toEqual({
      now: '2026-11-28T09:30:00Z',
      migrationUrl: '/docs/migrate/v1-to-v2',
      generations: {
        v1: {
          deprecation: { at: '2026-01-01T00:00:00Z', secondsUntil: -(331 * 86_400 + 9 * 3600 + 1800) },
          sunset: { at: '2026-12-31T23:59:59Z', secondsUntil: 33 * 86_400 + 14 * 3600 + 29 * 60 + 59 },
          afterSunset: 'refuse',
          refusedNow: 'brownout',
          brownouts: [
            {
              start: '2026-11-28T09:00:00Z',
              end: '2026-11-28T10:00:00Z',
              state: 'active',
              secondsUntilStart: -1800,
              secondsUntilEnd: 1800,
            },
            {
              start: '2026-12-01T10:00:00Z',
              end: '2026-12-01T11:00:00Z',
              state: 'upcoming',
              secondsUntilStart: 3 * 86_400 + 1800,
              secondsUntilEnd: 3 * 86_400 + 5400,
            },
          ],
          brownoutExempt: [EXEMPT],
        },
        v2: {
          deprecation: { at: '2027-01-01T00:00:00Z', secondsUntil: 33 * 86_400 + 14 * 3600 + 1800 },
          sunset: { at: '2027-06-30T00:00:00Z', secondsUntil: 213 * 86_400 + 14 * 3600 + 1800 },
          afterSunset: 'serve',
          refusedNow: null,
          brownouts: [],
          brownoutExempt: [],
        },
      },
      shadow: { mode: 'on', legacyOrigin: 'http://127.0.0.1:1', sample: 0.5, serve: 'gateway' },
      cutoverOrgs: [],
    });
  });

  it('is what `fxgate schedule` prints from the admin listener, the token from its environment', async () => {
    const printed = await fxgate(['schedule', '--url', adminUrl], { FXGATE_ADMIN_TOKEN: TOKEN });
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toBe(
      [
        `Migration schedule at 2026-11-28T09:30:00Z, from the gateway at ${adminUrl}:`,
        ...LINES.map((line) => `  ${line}`),
        '',
      ].join('\n'),
    );
    const asJson = await fxgate(['schedule', '--url', adminUrl, '--json'], { FXGATE_ADMIN_TOKEN: TOKEN });
    expect(asJson.code, asJson.stderr).toBe(0);
    const served = await request(`${adminUrl}/admin/schedule`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(JSON.parse(asJson.stdout)).toEqual(await served.body.json());
    // The admin listener named by the environment is the default.
    const port = new URL(adminUrl).port;
    const byEnvironment = await fxgate(['schedule', '--json'], { FXGATE_ADMIN_TOKEN: TOKEN, FXGATE_ADMIN_PORT: port });
    expect(byEnvironment.code, byEnvironment.stderr).toBe(0);
    expect(JSON.parse(byEnvironment.stdout)).toEqual(JSON.parse(asJson.stdout));
  });

  it('works out the same schedule from the same environment with --from-env, asking no process', async () => {
    const fromEnv = await fxgate(['schedule', '--from-env', '--json'], env, clock);
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    const served = await fxgate(['schedule', '--url', adminUrl, '--json'], { FXGATE_ADMIN_TOKEN: TOKEN });
    expect(JSON.parse(fromEnv.stdout)).toEqual(JSON.parse(served.stdout));
    const lines = await fxgate(['schedule', '--from-env'], env, clock);
    expect(lines.stdout.split('\n')[0]).toBe(
      "Migration schedule at 2026-11-28T09:30:00Z, from this environment's settings (--from-env):",
    );
  });

  it('names the fix when it cannot ask: a wrong token, no admin listener named, both --url and --from-env', async () => {
    const wrong = await fxgate(['schedule', '--url', adminUrl], { FXGATE_ADMIN_TOKEN: `${TOKEN}-other` });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("answered 401: FXGATE_ADMIN_TOKEN is not the admin listener's token");
    const none = await fxgate(['schedule'], { FXGATE_ADMIN_PORT: 'off' });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("pass --url with the gateway's admin listener");
    const both = await fxgate(['schedule', '--url', adminUrl, '--from-env'], {});
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('pass either --url or --from-env');
  });
});
