/**
 * The start-up check of src/lib/db/pool-mode.ts against a real PgBouncer (Debian's 1.18) in front
 * of the test PostgreSQL: it finds one server session serving two open connections through
 * transaction pooling, with a pool of one server connection as well as of three, and never on a
 * direct connection or through session pooling, where a connection keeps its session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findSharedSession } from '../../../src/lib/db/pool-mode.js';
import { testServices } from '../../support/services.js';
import {
  type PgBouncerPoolMode,
  startThrowawayPgBouncer,
  type ThrowawayPgBouncer,
} from '../../support/throwaway-pgbouncer.js';

const started: ThrowawayPgBouncer[] = [];

async function pgbouncer(poolMode: PgBouncerPoolMode, poolSize: number): Promise<ThrowawayPgBouncer> {
  const server = await startThrowawayPgBouncer({ serverUrl: testServices().databaseUrl, poolMode, poolSize });
  started.push(server);
  return server;
}

afterAll(async () => {
  await Promise.all(started.map((server) => server.stop()));
});

describe('findSharedSession', () => {
  let transaction: ThrowawayPgBouncer;
  let single: ThrowawayPgBouncer;
  let session: ThrowawayPgBouncer;
  beforeAll(async () => {
    [transaction, single, session] = await Promise.all([
      pgbouncer('transaction', 3),
      pgbouncer('transaction', 1),
      pgbouncer('session', 3),
    ]);
  });

  it('finds nothing on a direct connection: each connection is its own server process', async () => {
    expect(await findSharedSession(testServices().databaseUrl)).toBeNull();
  });

  it('finds the server process two connections share through PgBouncer in transaction pooling', async () => {
    const shared = await findSharedSession(transaction.url);
    expect(shared).not.toBeNull();
    expect(shared!.backendPid).toBeGreaterThan(0);
  });

  it('finds it with a pool of one server connection too, without waiting on it', async () => {
    const begun = Date.now();
    expect(await findSharedSession(single.url)).not.toBeNull();
    expect(Date.now() - begun).toBeLessThan(5_000);
  });

  it('finds nothing through PgBouncer in session pooling, where a connection keeps its server session', async () => {
    expect(await findSharedSession(session.url)).toBeNull();
  });

  it('fails, rather than finding nothing, when it cannot connect', async () => {
    const unreachable = new URL(transaction.url);
    unreachable.pathname = '/pgbouncer_no_such_database';
    await expect(findSharedSession(unreachable.toString())).rejects.toThrow();
  });
});
