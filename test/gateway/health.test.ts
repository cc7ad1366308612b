/**
 * The gateway's /healthz (liveness only) and /readyz: the upstream, and for a gateway serving v1
 * and v2 its own store and the database of its key registry, each against a real server that is
 * then stopped, closed or left silent; and the process's drain. The upstream and the database
 * down make it not ready (503); the store down leaves it ready, `degraded`, naming the store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';

import { openPostgres } from '../../src/cli/db/postgres-database.js';
import { MemoryStore } from '../../src/cli/store/memory-store.js';
import { RedisStore } from '../../src/cli/store/redis-store.js';
import { buildGatewayApp } from '../../src/gateway/app.js';
import { KeyDirectoryCredentials } from '../../src/gateway/upstream/signing-credentials.js';
import type { Database } from '../../src/lib/db/database.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import type { EphemeralStore } from '../../src/lib/store/ephemeral-store.js';
import { createTestPglite, createTestPostgres } from '../support/databases.js';
import { freePort } from '../support/local-processes.js';
import { startThrowawayRedis } from '../support/throwaway-redis.js';
import { TEST_ISSUER, TEST_ISSUERS } from '../support/v3-harness.js';
import { RecordingUpstream } from './recording-upstream.js';

const READINESS_TIMEOUT_MS = 300;
/** A check that is down answers within its timeout; this much more is the test machine's slack. */
const MARGIN_MS = 700;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function upstream(): Promise<RecordingUpstream> {
  const started = await RecordingUpstream.start();
  cleanups.push(() => started.close());
  return started;
}

/** A gateway serving v1 and v2 on the given store and registry database. */
async function legacyGateway(upstreamUrl: string, store: EphemeralStore, database: Database): Promise<FastifyInstance> {
  const dir = await mkdtemp(join(tmpdir(), 'fxgate-readyz-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const app = await buildGatewayApp({
    upstreamUrl,
    logLevel: 'silent',
    readinessTimeoutMs: READINESS_TIMEOUT_MS,
    legacy: {
      registry: new KeyRegistry(database, { cacheTtlMs: 0 }),
      database,
      store,
      credentials: new KeyDirectoryCredentials(dir, TEST_ISSUER),
      issuers: TEST_ISSUERS,
    },
  });
  cleanups.push(() => app.close());
  return app;
}

async function readiness(app: FastifyInstance): Promise<{ status: number; body: unknown; elapsedMs: number }> {
  const started = Date.now();
  const response = await app.inject('/readyz');
  return { status: response.statusCode, body: response.json(), elapsedMs: Date.now() - started };
}

/**
 * A TCP server that accepts connections and never says a word: a database or store that hangs.
 * `stop` cuts its connections, so that a client still waiting on one can close.
 */
async function silentServer(): Promise<{ address: string; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const stop = async (): Promise<void> => {
    for (const socket of sockets) socket.destroy();
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  };
  cleanups.push(stop);
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, stop };
}

describe('a /v3-only gateway', () => {
  it('is live and ready while the upstream answers its /healthz, and checks nothing else', async () => {
    const v3 = await upstream();
    const app = await buildGatewayApp({ upstreamUrl: v3.url, logLevel: 'silent' });
    cleanups.push(() => app.close());
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await readiness(app);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { upstream: 'up' } });
  });

  it("is not ready from the process's stop signal on, asking nothing, and stays live", async () => {
    const v3 = await upstream();
    let draining = false;
    const app = await buildGatewayApp({ upstreamUrl: v3.url, logLevel: 'silent', draining: () => draining });
    cleanups.push(() => app.close());
    expect((await readiness(app)).status).toBe(200);
    draining = true;
    const drained = await readiness(app);
    expect([drained.status, drained.body]).toEqual([503, { status: 'draining' }]);
    // Nothing is asked: with the upstream gone the answer is the same.
    await v3.close();
    expect((await readiness(app)).body).toEqual({ status: 'draining' });
    expect((await app.inject('/healthz')).statusCode).toBe(200);
  });

  it('is live but not ready when the upstream is gone', async () => {
    const v3 = await RecordingUpstream.start();
    await v3.close();
    const app = await buildGatewayApp({ upstreamUrl: v3.url, logLevel: 'silent' });
    cleanups.push(() => app.close());
    expect((await app.inject('/healthz')).statusCode).toBe(200);
    const ready = await readiness(app);
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'unavailable', checks: { upstream: 'down' } });
  });
});

describe('a gateway serving v1 and v2', () => {
  it('reports its Redis store down once the server is stopped, and stays live and ready, degraded', async () => {
    const v3 = await upstream();
    const redis = await startThrowawayRedis();
    cleanups.push(() => redis.stop());
    const store = new RedisStore({ url: redis.url });
    cleanups.push(() => store.close());
    const database = await createTestPglite();
    cleanups.push(() => database.drop());
    const app = await legacyGateway(v3.url, store, database.db);

    const up = await readiness(app);
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ status: 'ready', checks: { upstream: 'up', store: 'up', database: 'up' } });

    await redis.stop();
    const down = await readiness(app);
    expect(down.status).toBe(200);
    expect(down.body).toEqual({ status: 'degraded', checks: { upstream: 'up', store: 'down', database: 'up' } });
    expect(down.elapsedMs).toBeLessThan(READINESS_TIMEOUT_MS + MARGIN_MS);
    expect((await app.inject('/healthz')).statusCode).toBe(200);
  });

  it('reports a store pointed at a closed port, and one that never answers, down within the timeout, degraded', async () => {
    const v3 = await upstream();
    const database = await createTestPglite();
    cleanups.push(() => database.drop());
    for (const url of [`redis://127.0.0.1:${await freePort()}`, `redis://${(await silentServer()).address}`]) {
      const store = new RedisStore({ url });
      cleanups.push(() => store.close());
      const app = await legacyGateway(v3.url, store, database.db);
      const down = await readiness(app);
      expect(down.status, url).toBe(200);
      expect(down.body, url).toEqual({
        status: 'degraded',
        checks: { upstream: 'up', store: 'down', database: 'up' },
      });
      expect(down.elapsedMs, url).toBeLessThan(READINESS_TIMEOUT_MS + MARGIN_MS);
    }
  });

  it('reports its database down once it is closed: PGlite and PostgreSQL', async () => {
    const v3 = await upstream();
    for (const database of [await createTestPglite(), await createTestPostgres()]) {
      cleanups.push(() => database.drop().catch(() => undefined));
      const app = await legacyGateway(v3.url, new MemoryStore(), database.db);
      expect((await readiness(app)).body).toEqual({
        status: 'ready',
        checks: { upstream: 'up', store: 'up', database: 'up' },
      });
      await database.db.close();
      const down = await readiness(app);
      expect(down.status, database.db.driver).toBe(503);
      expect(down.body, database.db.driver).toEqual({
        status: 'unavailable',
        checks: { upstream: 'up', store: 'up', database: 'down' },
      });
    }
  });

  it('reports a database that never answers down within the timeout', async () => {
    const v3 = await upstream();
    const silent = await silentServer();
    const database = openPostgres({ connectionString: `postgres://fxgate@${silent.address}/fxgate` });
    // The pool waits for its connection attempt before it closes: cut it first.
    cleanups.push(async () => {
      await silent.stop();
      await database.close().catch(() => undefined);
    });
    const app = await legacyGateway(v3.url, new MemoryStore(), database);
    const down = await readiness(app);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'unavailable', checks: { upstream: 'up', store: 'up', database: 'down' } });
    expect(down.elapsedMs).toBeLessThan(READINESS_TIMEOUT_MS + MARGIN_MS);
  });

  it('is not ready when its database is down, whatever the store', async () => {
    const v3 = await upstream();
    const database = await createTestPglite();
    await database.db.close();
    const store = new RedisStore({ url: `redis://127.0.0.1:${await freePort()}` });
    cleanups.push(() => store.close());
    const app = await legacyGateway(v3.url, store, database.db);
    const down = await readiness(app);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'unavailable', checks: { upstream: 'up', store: 'down', database: 'down' } });
  });

  it('names every part that is down at once', async () => {
    const v3 = await RecordingUpstream.start();
    await v3.close();
    const database = await createTestPglite();
    await database.db.close();
    const store = new RedisStore({ url: `redis://127.0.0.1:${await freePort()}` });
    cleanups.push(() => store.close());
    const app = await legacyGateway(v3.url, store, database.db);
    const down = await readiness(app);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'unavailable', checks: { upstream: 'down', store: 'down', database: 'down' } });
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
  });
});
