/**
 * The core's /healthz (liveness) and /readyz on real servers: ready while the database and the
 * store answer; with its Redis stopped still ready, `degraded` and naming the store, since writes
 * answer their 503 and reads go on; not ready once its database is closed; and 503 `draining`
 * from the process's stop signal on while everything else, liveness included, is still served.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { RedisStore } from '../../../src/cli/store/redis-store.js';
import { testServices } from '../../support/services.js';
import { startThrowawayRedis } from '../../support/throwaway-redis.js';
import { V3Harness } from '../../support/v3-harness.js';

describe('the core health routes', () => {
  let harness: V3Harness;
  let draining = false;
  beforeAll(async () => {
    harness = await V3Harness.start({ core: { draining: () => draining } });
  });
  afterAll(async () => harness?.close());

  it('are live and ready, then not ready from the stop signal on while still live and serving', async () => {
    expect((await harness.app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await harness.app.inject('/readyz');
    expect([ready.statusCode, ready.json()]).toEqual([
      200,
      { status: 'ready', checks: { database: 'up', store: 'up' } },
    ]);
    draining = true;
    const drained = await harness.app.inject('/readyz');
    expect([drained.statusCode, drained.json()]).toEqual([503, { status: 'draining' }]);
    expect((await harness.app.inject('/healthz')).statusCode).toBe(200);
    expect((await harness.app.inject('/v3/openapi.json')).statusCode).toBe(200);
  });
});

async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: testServices().databaseUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

describe('the core readiness with a part down', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('stays ready, degraded, with its Redis stopped, and says the store is down', async () => {
    const redis = await startThrowawayRedis();
    cleanups.push(() => redis.stop());
    const harness = await V3Harness.start({ store: new RedisStore({ url: redis.url }) });
    cleanups.push(() => harness.close());
    expect((await harness.app.inject('/readyz')).statusCode).toBe(200);

    await redis.stop();
    const degraded = await harness.app.inject('/readyz');
    expect([degraded.statusCode, degraded.json()]).toEqual([
      200,
      { status: 'degraded', checks: { database: 'up', store: 'down' } },
    ]);
    expect((await harness.app.inject('/healthz')).statusCode).toBe(200);
  });

  it('is not ready once its database is closed', async () => {
    const harness = await V3Harness.start({ driver: 'postgres' });
    const { rows } = await harness.db.query<{ name: string }>('SELECT current_database() AS name');
    // The harness's own teardown would close the database a second time and fail before dropping it.
    cleanups.push(async () => {
      await harness.close().catch(() => undefined);
      await dropDatabase(rows[0]!.name);
    });
    await harness.db.close();
    const down = await harness.app.inject('/readyz');
    expect([down.statusCode, down.json()]).toEqual([
      503,
      { status: 'unavailable', checks: { database: 'down', store: 'up' } },
    ]);
  });
});
