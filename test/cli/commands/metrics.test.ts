/**
 * GET /metrics as the CLI's servers serve it (started in process through runCli, as the command
 * line starts them): `fxgate core` with FXGATE_ADMIN_PORT on an admin
 * listener of its own, and `fxgate all` with the gateway's and the core's metrics on the one
 * admin listener they share (PORT+1), the process's own metrics once. The data plane answers
 * no /metrics. Read in the text format and checked against the exposition grammar.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';

import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { newUuid } from '../../../src/lib/ids.js';
import { loadKey, readKeyFile } from '../../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { generateSealingKey } from '../../../src/lib/secrets/sealing-keys.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { legacyToken } from '../../support/independent-signing.js';
import { type Family, parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { testRedisEnv } from '../../support/test-run.js';
import { startFxgate, stopInProcessServers } from '../in-process-cli.js';

async function scrape(adminUrl: string): Promise<Map<string, Family>> {
  const response = await request(`${adminUrl}/metrics`);
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheusText(await response.body.text());
}

/** Answers counted as `unknown` under these generations (the gateway) or at all (the core), whatever the status. */
function unknownCount(families: Map<string, Family>, name: string, generations?: readonly string[]): number {
  return families
    .get(name)!
    .samples.filter(
      (sample) =>
        sample.labels.operation === 'unknown' &&
        (generations === undefined || generations.includes(sample.labels.generation!)),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** GETs each path and reads its answer to the end (a document is larger than dump() reads before it cuts the connection); each must be a 200. */
async function fetchAll(base: string, paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    const response = await request(`${base}${path}`);
    expect(response.statusCode, path).toBe(200);
    await response.body.arrayBuffer();
  }
}

function familiesWith(families: Map<string, Family>, prefix: string): string[] {
  return [...families.keys()].filter((name) => name.startsWith(prefix)).sort();
}

const CORE_FAMILIES = [
  'fxgate_core_ledger_balanced',
  'fxgate_core_ledger_check_timestamp_seconds',
  'fxgate_core_request_duration_seconds',
  'fxgate_core_requests_total',
  'fxgate_core_trades_total',
  'fxgate_core_webhook_backlog',
  'fxgate_core_withdrawal_transitions_total',
];

let database: TestDatabase | undefined;
let dataDir: string | undefined;

afterAll(async () => {
  await stopInProcessServers();
  await database?.drop();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describe('GET /metrics from the CLI', () => {
  it('fxgate core: its own admin listener with FXGATE_ADMIN_PORT, the core families and the process metrics', async () => {
    database = await createTestPostgres();
    const core = await startFxgate(['core'], {
      DATABASE_URL: database.url!,
      FXGATE_SECRETS_KEY: generateSealingKey(),
      ...testRedisEnv(),
      HOST: '127.0.0.1',
      PORT: '0',
      FXGATE_ADMIN_PORT: '0',
    });
    const [, url] = core.stdout.match(/^fxgate core: listening on (http:\/\/\S+)$/m)!;
    const [, adminUrl] = core.stdout.match(/^fxgate core: admin listener on (http:\/\/\S+)$/m)!;
    const key = loadKey(
      await new KeyRegistry(database.db).createKey({ orgId: newUuid(), scopes: ['view'], mode: 'live' }),
    );
    const signer = new V3RequestSigner(key, { issuer: 'fx-service' });
    const pairs = await request(`${url}/v3/fx/pairs`, {
      headers: await signer.headers({ method: 'GET', pathAndQuery: '/v3/fx/pairs' }),
    });
    expect(pairs.statusCode).toBe(200);
    await pairs.body.dump();
    await fetchAll(url!, ['/v3/openapi.json', '/docs']);
    expect((await request(`${url}/metrics`)).statusCode).toBe(404);

    const families = await scrape(adminUrl!);
    expect(familiesWith(families, 'fxgate_core_')).toEqual(CORE_FAMILIES);
    expect(familiesWith(families, 'fxgate_gateway_')).toEqual([]);
    // The document is no API operation and no 404: it has a name of its own; the page is its route.
    expect(
      sampleValue(families, 'fxgate_core_requests_total', { operation: 'openapi_document', status_class: '2xx' }),
    ).toBe(1);
    expect(sampleValue(families, 'fxgate_core_requests_total', { operation: '/docs', status_class: '2xx' })).toBe(1);
    expect(unknownCount(families, 'fxgate_core_requests_total')).toBe(1);
    expect(families.has('process_cpu_user_seconds_total')).toBe(true);
    expect(
      sampleValue(families, 'fxgate_core_requests_total', { operation: 'GET /v3/fx/pairs', status_class: '2xx' }),
    ).toBe(1);
    expect(sampleValue(families, 'fxgate_core_requests_total', { operation: 'unknown', status_class: '4xx' })).toBe(1);
    // An empty ledger balances, checked by this scrape.
    expect(sampleValue(families, 'fxgate_core_ledger_balanced')).toBe(1);
    expect(sampleValue(families, 'fxgate_core_ledger_check_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect((await core.stop('SIGINT')).code).toBe(0);
  });

  // PGlite's first start creates its database cluster (initdb), which takes seconds on a busy machine.
  it(
    'fxgate all: one admin listener with the gateway and the core families side by side',
    { timeout: 180_000 },
    async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'fxgate-all-metrics-'));
      const server = await startFxgate(['all'], { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' });
      const [, url] = server.stdout.match(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m)!;
      const [, adminUrl] = server.stdout.match(/^fxgate: admin listener on (http:\/\/\S+)/m)!;
      const [, keyPath] = server.stdout.match(/^fxgate: sandbox key created: (\S+)$/m)!;
      const key = await readKeyFile(keyPath!);
      const signer = new V3RequestSigner(key, { issuer: 'fx-service' });
      const pairs = await request(`${url}/v3/fx/pairs`, {
        headers: await signer.headers({ method: 'GET', pathAndQuery: '/v3/fx/pairs' }),
      });
      expect(pairs.statusCode).toBe(200);
      await pairs.body.dump();
      const balances = await request(`${url}/v2/brokerage/${key.file.orgId}/balances`, {
        headers: { authorization: `Bearer ${legacyToken(key)}`, 'x-app-mode': 'SANDBOX' },
      });
      expect(balances.statusCode).toBe(200);
      await balances.body.dump();
      await fetchAll(url!, ['/v1/openapi.json', '/v2/openapi.json', '/v3/openapi.json', '/docs']);
      expect((await request(`${url}/metrics`)).statusCode).toBe(404);

      // The grammar check refuses a family declared twice: the process metrics are there once.
      const families = await scrape(adminUrl!);
      expect(familiesWith(families, 'fxgate_core_')).toEqual(CORE_FAMILIES);
      expect(familiesWith(families, 'fxgate_gateway_')).toEqual([
        'fxgate_gateway_idempotency_total',
        'fxgate_gateway_rate_limited_total',
        'fxgate_gateway_request_duration_seconds',
        'fxgate_gateway_requests_total',
        'fxgate_gateway_upstream_duration_seconds',
        'fxgate_gateway_upstream_failures_total',
        'fxgate_gateway_webhook_backlog',
        'fxgate_gateway_webhook_deliveries_total',
      ]);
      expect(families.has('process_cpu_user_seconds_total')).toBe(true);
      expect(
        sampleValue(families, 'fxgate_gateway_requests_total', {
          generation: 'v3',
          operation: 'GET /v3/fx/pairs',
          status_class: '2xx',
        }),
      ).toBe(1);
      expect(
        sampleValue(families, 'fxgate_gateway_requests_total', {
          generation: 'v2',
          operation: 'balances',
          status_class: '2xx',
        }),
      ).toBe(1);
      // The core saw the passthrough's read, and the gateway's own v3 call for v2 balances.
      expect(
        sampleValue(families, 'fxgate_core_requests_total', { operation: 'GET /v3/fx/pairs', status_class: '2xx' }),
      ).toBe(1);
      expect(
        sampleValue(families, 'fxgate_core_requests_total', { operation: 'GET /v3/fx/balances', status_class: '2xx' }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        sampleValue(families, 'fxgate_gateway_upstream_duration_seconds_count', {
          generation: 'v2',
          operation: 'balances',
        }),
      ).toBe(
        sampleValue(families, 'fxgate_core_requests_total', { operation: 'GET /v3/fx/balances', status_class: '2xx' }),
      );
      // The documents: each generation's under openapi_document (v3's through the passthrough, and in the core), none unknown.
      for (const generation of ['v1', 'v2', 'v3'])
        expect(
          sampleValue(families, 'fxgate_gateway_requests_total', {
            generation,
            operation: 'openapi_document',
            status_class: '2xx',
          }),
          generation,
        ).toBe(1);
      expect(unknownCount(families, 'fxgate_gateway_requests_total', ['v1', 'v2', 'v3'])).toBe(0);
      expect(
        sampleValue(families, 'fxgate_gateway_requests_total', {
          generation: 'none',
          operation: '/docs',
          status_class: '2xx',
        }),
      ).toBe(1);
      expect(
        sampleValue(families, 'fxgate_core_requests_total', { operation: 'openapi_document', status_class: '2xx' }),
      ).toBe(1);
      expect(unknownCount(families, 'fxgate_core_requests_total')).toBe(0);
      expect((await server.stop('SIGINT')).code).toBe(0);
    },
  );
});
