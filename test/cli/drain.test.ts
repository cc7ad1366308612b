/**
 * A server's stop as a load balancer sees it (src/cli/drain.ts, serve.ts), on the real CLI:
 *
 * - `fxgate gateway` as a child process sent a real SIGTERM, in front of a slow upstream: the
 *   timeline of the drain delay (/readyz 503 at once, requests still served with Connection:
 *   close, the next one on a new connection), then the close (an idle kept-alive connection
 *   closed, nothing accepted, the request under way answered and its connection closed), exit 0;
 *   and a request that never ends, named in the exit 1 at the grace; `fxgate core` likewise, its
 *   admin listener serving metrics through the drain delay;
 * - `fxgate all` in process, embedded and on PostgreSQL: legacy requests counted just before the
 *   stop, during its drain and in its close are in the usage report after a restart; the v3 and legacy
 *   webhook workers stop with deliveries under way and leave them due at once, claimed by no one.
 *
 * Every connection goes to 127.0.0.1.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Closers } from '../../src/cli/closers.js';
import { cliConfig } from '../../src/cli/config.js';
import { openDatabase } from '../../src/cli/database.js';
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import { newUuid } from '../../src/lib/ids.js';
import { readKeyFile } from '../../src/lib/keys/key-file.js';
import { generateSealingKey } from '../../src/lib/secrets/sealing-keys.js';
import { RecordingUpstream } from '../gateway/recording-upstream.js';
import { createTestPostgres, type TestDatabase } from '../support/databases.js';
import { legacyToken } from '../support/independent-signing.js';
import { KeptAliveConnection } from '../support/kept-alive-connection.js';
import type { RawResponse } from '../support/raw-http.js';
import { TEST_ISSUER } from '../support/v3-harness.js';
import { killAllCliProcesses, startCli } from './cli-process.js';
import { fxgate, startFxgate, stopInProcessServers } from './in-process-cli.js';

/** How long the slow upstream takes to answer: well past the drain delay below. */
const SLOW_UPSTREAM_MS = 1_500;
const DRAIN_DELAY_MS = 600;

/** One request on a connection of its own, which the test then drops. */
async function onNewConnection(url: string, path: string): Promise<RawResponse> {
  const connection = await KeptAliveConnection.open(url);
  try {
    return await connection.get(path);
  } finally {
    connection.destroy();
  }
}

/** A webhook receiver that takes every request and never answers: a delivery under way for as long as the test likes. */
class SilentReceiver {
  readonly paths: string[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {
    server.on('request', (request: IncomingMessage) => this.paths.push(request.url ?? ''));
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(): Promise<SilentReceiver> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new SilentReceiver(server);
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('fxgate gateway stopped by SIGTERM, as a child process', () => {
  let upstream: RecordingUpstream;
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    upstream = await RecordingUpstream.start();
    upstream.answerFor = (recorded) => {
      const answer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[]}' };
      if (recorded.url.startsWith('/v3/fx/slow')) return { ...answer, delayMs: SLOW_UPSTREAM_MS };
      if (recorded.url.startsWith('/v3/fx/endless')) return { ...answer, hang: true };
      return answer;
    };
    database = await createTestPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-drain-gateway-'));
    env = {
      DATABASE_URL: database.url!,
      FXGATE_SECRETS_KEY: generateSealingKey(),
      FXGATE_DATA_DIR: dataDir,
      FXGATE_UPSTREAM_URL: upstream.url,
      HOST: '127.0.0.1',
      PORT: '0',
    };
  });
  afterAll(async () => {
    await killAllCliProcesses();
    await upstream?.close();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'answers /readyz 503 at once and serves on for the drain delay, then stops accepting, answers what it received and exits 0',
    { timeout: 120_000 },
    async () => {
      const gateway = startCli(['gateway'], {
        ...env,
        FXGATE_DRAIN_DELAY_MS: String(DRAIN_DELAY_MS),
        FXGATE_ADMIN_PORT: '0',
      });
      const [, url] = await gateway.waitFor(/^fxgate gateway: listening on (http:\/\/\S+), in front of /m);
      const [, adminUrl] = gateway.stdout.match(/^fxgate gateway: admin listener on (http:\/\/\S+)$/m)!;
      const idle = await KeptAliveConnection.open(url!);
      expect((await idle.get('/healthz')).headers.connection).toBe('keep-alive');
      const reused = await KeptAliveConnection.open(url!);
      expect((await reused.get('/readyz')).status).toBe(200);
      const slow = await KeptAliveConnection.open(url!);
      const slowAnswer = slow.get('/v3/fx/slow');
      await expect.poll(() => upstream.requests.some((recorded) => recorded.url === '/v3/fx/slow')).toBe(true);

      const signalledAt = performance.now();
      gateway.child.kill('SIGTERM');
      // Readiness goes at once, while everything else is still served.
      await expect
        .poll(async () => (await onNewConnection(url!, '/readyz')).status, { interval: 20, timeout: 2_000 })
        .toBe(503);
      expect(performance.now() - signalledAt).toBeLessThan(DRAIN_DELAY_MS);
      expect((await onNewConnection(url!, '/readyz')).body).toBe('{"status":"draining"}');
      const live = await onNewConnection(url!, '/healthz');
      expect([live.status, live.headers.connection]).toEqual([200, 'close']);
      // A kept-alive client's request is answered with Connection: close, and its next goes on a new connection.
      const during = await reused.get('/v3/fx/trades');
      expect([during.status, during.body, during.headers.connection]).toEqual([200, '{"data":[]}', 'close']);
      await reused.closed;
      const next = await onNewConnection(url!, '/v3/fx/trades');
      expect([next.status, next.headers.connection]).toEqual([200, 'close']);
      expect(idle.isClosed).toBe(false);
      expect(performance.now() - signalledAt).toBeLessThan(DRAIN_DELAY_MS);

      // The delay over, the listener stops accepting: the idle connection is closed, a new one refused.
      const idleClosedAfterMs = (await idle.closed) - signalledAt;
      expect(idleClosedAfterMs).toBeGreaterThanOrEqual(DRAIN_DELAY_MS - 10);
      expect(idleClosedAfterMs).toBeLessThan(DRAIN_DELAY_MS + 1_000);
      // Node closes the idle connections, then the listening socket, in one step; a busy machine may
      // run this client between the two, when a connect still completes and is then reset unserved.
      await expect(onNewConnection(url!, '/healthz')).rejects.toThrow();
      await expect(KeptAliveConnection.open(url!)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      // The admin listener closes only after the public one: metrics while it finishes.
      expect((await onNewConnection(adminUrl!, '/metrics')).status).toBe(200);
      // The request under way is answered, then its connection closed.
      const answered = await slowAnswer;
      expect([answered.status, answered.body, answered.headers.connection]).toEqual([200, '{"data":[]}', 'close']);
      await slow.closed;

      const exited = await gateway.exited;
      const exitedAfterMs = performance.now() - signalledAt;
      expect(exited.code, exited.stderr).toBe(0);
      expect(exitedAfterMs).toBeGreaterThanOrEqual(SLOW_UPSTREAM_MS - 200);
      expect(exitedAfterMs).toBeLessThan(10_000);
      expect(exited.stdout).toContain(
        `fxgate: SIGTERM received, draining: /readyz answers 503, serving on for ${DRAIN_DELAY_MS} ms (FXGATE_DRAIN_DELAY_MS), then shutting down\n`,
      );
      expect(exited.stderr).toBe('');
    },
  );

  it(
    'fxgate core answers /readyz 503 through the drain delay while its admin listener still serves metrics, then exits 0',
    { timeout: 120_000 },
    async () => {
      const core = startCli(['core'], {
        ...env,
        FXGATE_DRAIN_DELAY_MS: String(DRAIN_DELAY_MS),
        FXGATE_ADMIN_PORT: '0',
      });
      const [, url] = await core.waitFor(/^fxgate core: listening on (http:\/\/\S+)$/m);
      const [, adminUrl] = await core.waitFor(/^fxgate core: admin listener on (http:\/\/\S+)$/m);
      expect((await onNewConnection(url!, '/readyz')).status).toBe(200);

      const signalledAt = performance.now();
      core.child.kill('SIGTERM');
      await expect
        .poll(async () => (await onNewConnection(url!, '/readyz')).status, { interval: 20, timeout: 2_000 })
        .toBe(503);
      const metrics = await onNewConnection(adminUrl!, '/metrics');
      expect([metrics.status, metrics.body]).toEqual([200, expect.stringContaining('# TYPE ')]);
      expect((await onNewConnection(url!, '/healthz')).status).toBe(200);
      expect(performance.now() - signalledAt).toBeLessThan(DRAIN_DELAY_MS);

      const exited = await core.exited;
      expect(exited.code, exited.stderr).toBe(0);
      expect(performance.now() - signalledAt).toBeGreaterThanOrEqual(DRAIN_DELAY_MS - 10);
    },
  );

  it('exits 1 at FXGATE_SHUTDOWN_GRACE_MS when a request never ends, naming it', { timeout: 120_000 }, async () => {
    const gateway = startCli(['gateway'], { ...env, FXGATE_SHUTDOWN_GRACE_MS: '1500' });
    const [, url] = await gateway.waitFor(/^fxgate gateway: listening on (http:\/\/\S+), in front of /m);
    const endless = await KeptAliveConnection.open(url!);
    void endless.get('/v3/fx/endless?token=not-for-logs');
    await expect.poll(() => upstream.requests.some((recorded) => recorded.url.startsWith('/v3/fx/endless'))).toBe(true);

    const signalledAt = performance.now();
    gateway.child.kill('SIGTERM');
    const exited = await gateway.exited;
    const exitedAfterMs = performance.now() - signalledAt;
    expect(exited.code).toBe(1);
    expect(exitedAfterMs).toBeGreaterThanOrEqual(1_450);
    expect(exitedAfterMs).toBeLessThan(4_000);
    expect(exited.stderr).toMatch(
      /^fxgate: shutdown took longer than 1500 ms \(FXGATE_SHUTDOWN_GRACE_MS\), exiting; still open: gateway server \(GET \/v3\/fx\/endless \(1\.\d s\)\), .*PostgreSQL pool$/m,
    );
    endless.destroy();
  });
});

/** `fxgate all` on each back end: its environment, with a data folder of its own. */
async function allEnv(backend: 'embedded' | 'PostgreSQL', cleanups: Array<() => Promise<unknown>>) {
  const dataDir = await mkdtemp(join(tmpdir(), 'fxgate-drain-all-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
  if (backend === 'PostgreSQL') {
    const database = await createTestPostgres();
    cleanups.push(() => database.drop());
    // On PostgreSQL the sandbox is provided only when asked.
    Object.assign(env, {
      DATABASE_URL: database.url!,
      FXGATE_SECRETS_KEY: generateSealingKey(),
      FXGATE_SANDBOX_SEED: 'on',
    });
  }
  return { dataDir, env };
}

const LISTENING = /^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m;

describe.each(['embedded', 'PostgreSQL'] as const)('fxgate all on %s, stopped', (backend) => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    await stopInProcessServers();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it(
    'has the legacy requests counted just before the stop, during its drain and in its close in the usage report after a restart',
    { timeout: 180_000 },
    async () => {
      const { env } = await allEnv(backend, cleanups);
      const drained = { ...env, FXGATE_DRAIN_DELAY_MS: '400' };
      const server = await startFxgate(['all'], drained);
      const [, url] = server.stdout.match(LISTENING)!;
      const [, keyPath] = server.stdout.match(/^fxgate: sandbox key created: (\S+)$/m)!;
      const key = await readKeyFile(keyPath!);
      const orgId = key.file.orgId;
      const balances = async (): Promise<number> => {
        const response = await request(`${url}/v2/brokerage/${orgId}/balances`, {
          headers: { authorization: `Bearer ${legacyToken(key)}`, 'x-app-mode': 'SANDBOX' },
        });
        await response.body.dump();
        return response.statusCode;
      };
      expect(await balances()).toBe(200);
      // A quote whose last byte is sent only once the listener has stopped accepting: received
      // before the close, answered and counted in it, moments before the counts are written.
      const quoting = await KeptAliveConnection.open(url!);
      const quote = quoting.postAllButLastByte(
        `/v2/brokerage/${orgId}/generate_quote`,
        '{"amount":1000,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}',
        {
          authorization: `Bearer ${legacyToken(key)}`,
          'x-app-mode': 'SANDBOX',
          'content-type': 'application/json',
          'idempotency-key': newUuid(),
        },
      );
      const stopping = server.stop('SIGTERM');
      // Within the drain delay: still served, and counted.
      expect(await balances()).toBe(200);
      await expect
        .poll(() =>
          KeptAliveConnection.open(url!).then(
            (connection) => connection.destroy(),
            (error: Error) => error,
          ),
        )
        .toMatchObject({ code: 'ECONNREFUSED' });
      quote.finish();
      const quoted = await quote.answer;
      expect([quoted.status, JSON.parse(quoted.body).status, quoted.headers.connection]).toEqual([
        200,
        'success',
        'close',
      ]);
      expect((await stopping).code).toBe(0);

      const restarted = await startFxgate(['all'], env);
      const [, adminUrl] = restarted.stdout.match(/^fxgate: admin listener on (http:\/\/\S+) /m)!;
      const report = (await (await request(`${adminUrl}/admin/usage?generation=v2`)).body.json()) as {
        rows: { orgId: string | null; operation: string; count: number }[];
      };
      expect(report.rows.filter((row) => row.orgId === orgId).map((row) => [row.operation, row.count])).toEqual([
        ['balances', 2],
        ['generate_quote', 1],
      ]);
      expect((await restarted.stop('SIGTERM')).code).toBe(0);
    },
  );

  it(
    'stops the v3 and legacy webhook workers with deliveries under way, leaving them due at once and claimed by no one',
    { timeout: 180_000 },
    async () => {
      const { env } = await allEnv(backend, cleanups);
      const receiver = await SilentReceiver.start();
      cleanups.push(() => receiver.close());
      const orgId = newUuid();
      const keyPath = join(env.FXGATE_DATA_DIR!, 'integrator.json');
      const created = await fxgate(
        ['keys', 'create', '--org', orgId, '--mode', 'sandbox', '--scopes', 'view,trade,webhooks', '--out', keyPath],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      const subscribed = await fxgate(
        ['webhooks', 'add', '--org', orgId, '--mode', 'sandbox', '--url', receiver.url('/legacy')],
        env,
      );
      expect(subscribed.code, subscribed.stderr).toBe(0);

      const server = await startFxgate(['all'], env);
      const [, url] = server.stdout.match(LISTENING)!;
      const key = await readKeyFile(keyPath);
      const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
      const v3 = async (method: 'GET' | 'POST', path: string, body?: object) => {
        const text = body === undefined ? undefined : JSON.stringify(body);
        const idempotencyKey = method === 'POST' ? newUuid() : undefined;
        const headers = await signer.headers({
          method,
          pathAndQuery: path,
          body: text === undefined ? undefined : Buffer.from(text),
          idempotencyKey,
        });
        const response = await request(`${url}${path}`, {
          method,
          headers: {
            ...headers,
            'x-app-mode': 'SANDBOX',
            ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
          },
          body: text,
        });
        return { status: response.statusCode, json: (await response.body.json()) as { data: unknown } };
      };
      const endpoint = await v3('POST', '/v3/fx/webhook-endpoints', { url: receiver.url('/v3') });
      expect(endpoint.status).toBe(200);
      // The gateway's own registration for the legacy subscription, made beside serving.
      await expect
        .poll(async () => ((await v3('GET', '/v3/fx/webhook-endpoints')).json.data as unknown[]).length, {
          timeout: 20_000,
        })
        .toBe(2);
      expect((await v3('POST', '/v3/fx/sandbox/deposits', { currency: 'EUR', amount: '250.00' })).status).toBe(200);
      // One delivery of each worker under way at the silent receiver.
      await expect
        .poll(() => ['/v3', '/legacy'].every((path) => receiver.paths.includes(path)), { timeout: 30_000 })
        .toBe(true);

      const signalledAt = performance.now();
      expect((await server.stop('SIGTERM')).code).toBe(0);
      // Interrupted, not waited out: an attempt may take 10 s.
      expect(performance.now() - signalledAt).toBeLessThan(5_000);

      const closers = new Closers();
      try {
        const db = await openDatabase(cliConfig(env, process.cwd()), closers, () => undefined);
        const v3Deliveries = await db.query<{ status: string; attempts: number; due: boolean }>(
          `SELECT d.status, d.attempts, d.next_attempt_at <= now() AS due
             FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE w.url = $1`,
          [receiver.url('/v3')],
        );
        expect(v3Deliveries.rows.length).toBeGreaterThan(0);
        for (const row of v3Deliveries.rows) expect(row).toEqual({ status: 'PENDING', attempts: 0, due: true });
        const legacyDeliveries = await db.query<{ status: string; attempts: number; leased: boolean; due: boolean }>(
          `SELECT status, attempts, leased_until IS NOT NULL AS leased, next_attempt_at <= now() AS due
             FROM legacy_webhook_deliveries`,
        );
        expect(legacyDeliveries.rows.length).toBeGreaterThan(0);
        for (const row of legacyDeliveries.rows)
          expect(row).toEqual({ status: 'PENDING', attempts: 0, leased: false, due: true });
      } finally {
        await closers.closeAll();
      }
    },
  );
});
