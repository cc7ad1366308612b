/**
 * Tracing as a real `fxgate core` process starts it (src/cli/tracing.ts), watched through a
 * preload that lists the packages the process loaded (test/support/loaded-modules.ts): with no
 * OTEL_* variable no SDK or exporter package is loaded at all, with OTLP on exactly the chosen
 * protocol's exporter is, and a gRPC protocol stops the start with a message naming the two that
 * work. The exporter points at a receiver on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { generateSealingKey } from '../../src/lib/secrets/sealing-keys.js';
import { createTestPostgres, type TestDatabase } from '../support/databases.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { killAllCliProcesses, runCli, startCli } from './cli-process.js';

const PRELOAD = ['--import', 'tsx', '--import', './test/support/loaded-modules.ts'];
const SDK_PACKAGES = [
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/resources',
  '@opentelemetry/exporter-trace-otlp-proto',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/otlp-exporter-base',
];

let dir: string;
let receiver: OtlpReceiver;
let database: TestDatabase;
/** The core on a test database of the run's PostgreSQL: it starts sooner than on the embedded one. */
let onPostgres: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fxgate-tracing-cli-'));
  receiver = await OtlpReceiver.start();
  database = await createTestPostgres();
  onPostgres = { DATABASE_URL: database.url!, FXGATE_SECRETS_KEY: generateSealingKey() };
});
afterAll(async () => {
  await killAllCliProcesses();
  await receiver?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** Starts `fxgate core` on PostgreSQL with env, stops it once it listens, and returns what it loaded and printed. */
async function coreLoads(
  name: string,
  env: Record<string, string>,
  whileListening: (url: string) => Promise<void> = async () => {},
): Promise<{ packages: string[]; stdout: string; stderr: string }> {
  const list = join(dir, `${name}.json`);
  const core = startCli(
    ['core'],
    {
      ...onPostgres,
      FXGATE_DATA_DIR: join(dir, name),
      HOST: '127.0.0.1',
      PORT: '0',
      LOADED_MODULES_FILE: list,
      ...env,
    },
    PRELOAD,
  );
  const [, url] = (await core.waitFor(/fxgate core: listening on (\S+)/)) as [string, string];
  await whileListening(url);
  const result = await core.stop();
  expect(result.code, result.stderr).toBe(0);
  return {
    packages: JSON.parse(await readFile(list, 'utf8')) as string[],
    stdout: result.stdout,
    stderr: result.stderr,
  };
}

describe('fxgate core', () => {
  it('loads no SDK or exporter package with tracing off, only the API its boundaries call', async () => {
    const { packages, stdout } = await coreLoads('off', {});
    // The preload saw the process's packages: fastify and pg are there, so an absence means something.
    expect(packages).toEqual(expect.arrayContaining(['fastify', '@opentelemetry/api']));
    for (const name of SDK_PACKAGES) expect(packages).not.toContain(name);
    expect(stdout).not.toContain('tracing on');
  });

  it('loads the protobuf exporter alone when OTLP is on, and exports the last spans in the drain', async () => {
    const traceId = randomBytes(16).toString('hex');
    const { packages, stdout } = await coreLoads(
      'protobuf',
      // Batched every 5 s by default: a minute keeps the span in the batch until the drain flushes it.
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '60000' },
      async (url) => {
        const answer = await request(`${url}/healthz`, {
          headers: { traceparent: `00-${traceId}-${'1'.repeat(16)}-01` },
        });
        await answer.body.dump();
        expect(answer.statusCode).toBe(200);
      },
    );
    expect(receiver.trace(traceId)).toMatchObject([
      { name: 'GET /healthz', parentSpanId: '1'.repeat(16), resource: { 'service.name': 'fxgate-core' } },
    ]);
    expect(packages).toEqual(
      expect.arrayContaining(['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-proto']),
    );
    expect(packages).not.toContain('@opentelemetry/exporter-trace-otlp-http');
    expect(stdout).toContain(
      'fxgate core: tracing on: spans exported over OTLP (http/protobuf) as service fxgate-core',
    );
  });

  it('loads the JSON exporter alone under http/json', async () => {
    const { packages, stdout } = await coreLoads('json', {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'ledger-core',
    });
    expect(packages).toContain('@opentelemetry/exporter-trace-otlp-http');
    expect(packages).not.toContain('@opentelemetry/exporter-trace-otlp-proto');
    expect(stdout).toContain('spans exported over OTLP (http/json) as service ledger-core');
  });

  it('stops with 0 when the collector is down, saying the last spans were lost', async () => {
    // A port nothing listens on any more: every export is refused.
    const gone = await OtlpReceiver.start();
    await gone.close();
    const { stdout, stderr } = await coreLoads(
      'collector-down',
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: gone.endpoint,
        OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
        OTEL_BSP_SCHEDULE_DELAY: '60000',
      },
      async (url) => {
        const answer = await request(`${url}/healthz`, {
          headers: { traceparent: `00-${'2'.repeat(32)}-${'3'.repeat(16)}-01` },
        });
        await answer.body.dump();
      },
    );
    expect(stdout).toContain('tracing on');
    expect(stderr).toContain('tracing: the last spans were not exported (');
  });

  it('refuses grpc at start, naming the protocols that work', async () => {
    const result = await runCli(['core'], {
      ...onPostgres,
      FXGATE_DATA_DIR: join(dir, 'grpc'),
      PORT: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: fxgate exports traces over OTLP/HTTP; set it to http/protobuf (the default) or http/json',
    );
  });
});
