/**
 * `fxgate diff report --url ADMIN_URL [--json]` reads the shadow report from an admin listener
 * and prints it as tables (or as served), and `fxgate gateway` in shadow mode serves the report
 * on its admin listener (FXGATE_ADMIN_PORT), never on its public one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { formatShadowReport } from '../../../src/cli/diff/report-command.js';
import type { ShadowReport } from '../../../src/gateway/shadow/shadow-recorder.js';
import { AdminListener } from '../../../src/lib/admin/admin-listener.js';
import { generateSealingKey } from '../../../src/lib/secrets/sealing-keys.js';
import { RecordingUpstream } from '../../gateway/recording-upstream.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { fxgate, startFxgate, stopInProcessServers } from '../in-process-cli.js';

const EXAMPLE = {
  at: 'data[id=0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c].accountNumber',
  legacy: '"********7766"',
  gateway: '"********6789"',
  seenAt: '2026-11-26T02:00:00.000Z',
};
const REPORT: ShadowReport = {
  since: '2026-11-26T01:00:00.000Z',
  operations: [
    {
      generation: 'v1',
      operation: 'trades',
      compared: 120,
      differing: 0,
      notCompared: 3,
      dropped: 0,
      fields: [],
      noise: [],
    },
    {
      generation: 'v2',
      operation: 'balances',
      compared: 80,
      differing: 0,
      notCompared: 0,
      dropped: 2,
      fields: [],
      noise: [{ path: 'netBalanceInUSD', count: 80 }],
    },
    {
      generation: 'v2',
      operation: 'fiat_withdrawal_addresses',
      compared: 12,
      differing: 3,
      notCompared: 0,
      dropped: 0,
      fields: [{ path: 'data[].accountNumber', count: 3, example: EXAMPLE, examples: [EXAMPLE] }],
      noise: [],
    },
  ],
};

describe('formatShadowReport', () => {
  it('prints the counts per operation, each differing field with its newest example, and the noise apart', () => {
    expect(formatShadowReport(REPORT)).toBe(
      [
        'Shadow report since 2026-11-26T01:00:00.000Z',
        '',
        'GENERATION  OPERATION                  COMPARED  DIFFERING  NOT COMPARED  DROPPED',
        'v1          trades                          120          0             3        0',
        'v2          balances                         80          0             0        2',
        'v2          fiat_withdrawal_addresses        12          3             0        0',
        '',
        'Differing fields (newest example):',
        '',
        'OPERATION                     FIELD                 COUNT  LEGACY          GATEWAY',
        'v2 fiat_withdrawal_addresses  data[].accountNumber      3  "********7766"  "********6789"',
        '',
        'Noise (volatile fields: declared in mappings/, or seen to move between two translations of one request; not differences):',
        '',
        'OPERATION    FIELD            COUNT',
        'v2 balances  netBalanceInUSD     80',
      ].join('\n'),
    );
    expect(formatShadowReport({ since: null, operations: [] })).toBe('No reads compared yet.');
  });
});

describe('fxgate diff report', () => {
  let admin: AdminListener;
  let adminUrl: string;
  beforeAll(async () => {
    admin = new AdminListener({ logLevel: 'silent' });
    admin.add({ method: 'GET', url: '/admin/shadow/report', handler: async () => REPORT });
    adminUrl = await admin.listen('127.0.0.1', 0);
  });
  afterAll(async () => {
    await admin?.close();
  });

  it('prints the report of the admin listener at --url, as a table or as JSON', async () => {
    const printed = await fxgate(['diff', 'report', '--url', adminUrl]);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(`${formatShadowReport(REPORT)}\n`);
    const json = await fxgate(['diff', 'report', '--url', adminUrl, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(REPORT);
  });

  it('ends with 1 when nothing answers at --url, and with 2 without --url', async () => {
    const unreachable = await fxgate(['diff', 'report', '--url', 'http://127.0.0.1:1']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^fxgate: cannot read http:\/\/127\.0\.0\.1:1\/admin\/shadow\/report: /m);
    const missing = await fxgate(['diff', 'report']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '--url <url>'");
  });
});

describe('fxgate gateway in shadow mode', () => {
  let upstream: RecordingUpstream;
  let database: TestDatabase;
  let dataDir: string;
  beforeAll(async () => {
    upstream = await RecordingUpstream.start();
    database = await createTestPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-shadow-cli-'));
  });
  afterAll(async () => {
    await stopInProcessServers();
    await upstream?.close();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the report on FXGATE_ADMIN_PORT only, where `fxgate diff report` reads it', async () => {
    const gateway = await startFxgate(['gateway'], {
      FXGATE_UPSTREAM_URL: upstream.url,
      DATABASE_URL: database.url!,
      FXGATE_SECRETS_KEY: generateSealingKey(),
      FXGATE_DATA_DIR: dataDir,
      PORT: '0',
      FXGATE_ADMIN_PORT: '0',
      FXGATE_SHADOW_URL: 'http://127.0.0.1:1',
      FXGATE_SHADOW_SAMPLE: '0.5',
    });
    const [, url] = gateway.stdout.match(/^fxgate gateway: listening on (http:\/\/\S+), in front of/m)!;
    const [, adminUrl] = gateway.stdout.match(/^fxgate gateway: admin listener on (http:\/\/\S+)$/m)!;
    expect(gateway.stdout).toContain(
      'fxgate gateway: shadow mode: beside http://127.0.0.1:1; the gateway answers clients, 50% of reads compared',
    );
    expect((await fetch(`${url}/admin/shadow/report`)).status).toBe(404);
    expect(await (await fetch(`${adminUrl}/admin/shadow/report`)).json()).toEqual({ since: null, operations: [] });
    const printed = await fxgate(['diff', 'report', '--url', adminUrl!]);
    expect(printed.stdout).toBe('No reads compared yet.\n');
    const onDataPlane = await fxgate(['diff', 'report', '--url', url!]);
    expect(onDataPlane.code).toBe(1);
    expect(onDataPlane.stderr).toContain("answered 404: point --url at the gateway's admin listener");
    expect((await gateway.stop('SIGTERM')).code).toBe(0);
  });

  it('ends with 1 naming FXGATE_ADMIN_PORT when the admin port is taken', async () => {
    const taken = new URL(upstream.url).port;
    const result = await fxgate(['gateway', '--upstream', upstream.url], {
      DATABASE_URL: database.url!,
      FXGATE_SECRETS_KEY: generateSealingKey(),
      FXGATE_DATA_DIR: dataDir,
      PORT: '0',
      FXGATE_ADMIN_PORT: taken,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `fxgate: the admin listener cannot listen on 127.0.0.1:${taken}: the port is taken (FXGATE_ADMIN_PORT)`,
    );
  });

  it('refuses a cut-over list while the gateway serves everyone: exit 2', async () => {
    const result = await fxgate(['gateway', '--upstream', upstream.url], {
      DATABASE_URL: database.url!,
      FXGATE_SECRETS_KEY: generateSealingKey(),
      FXGATE_SHADOW_URL: 'http://127.0.0.1:1',
      FXGATE_CUTOVER_ORGS: '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'FXGATE_CUTOVER_ORGS: lists the orgs served by the gateway while the rest get the legacy answer',
    );
  });
});
