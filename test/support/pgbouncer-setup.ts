/**
 * The `pgbouncer` vitest project's global setup: one throwaway PgBouncer in transaction pooling,
 * with a pool of a few server connections per database, in front of the run's PostgreSQL (after
 * global-setup.ts has made that answer), its address passed to the test workers in
 * FXGATE_TEST_PGBOUNCER_URL. The project sets FXGATE_TEST_BACKEND=pgbouncer, so that the test
 * databases (databases.ts) are reached through it; testPgBouncer() is how a worker finds it.
 */
import { findSharedSession } from '../../src/lib/db/pool-mode.js';
import { startThrowawayPgBouncer } from './throwaway-pgbouncer.js';

export const PGBOUNCER_URL_ENV = 'FXGATE_TEST_PGBOUNCER_URL';

/**
 * Server connections per test database: a few, so that the suites' concurrent requests really
 * share them, and a transaction that waits on a second connection would be seen stuck.
 */
export const TEST_PGBOUNCER_POOL_SIZE = 3;

export default async function setup(): Promise<() => Promise<void>> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl === undefined)
    throw new Error('the pgbouncer setup runs after global-setup.ts, which sets DATABASE_URL');
  const pgbouncer = await startThrowawayPgBouncer({
    serverUrl,
    poolMode: 'transaction',
    poolSize: TEST_PGBOUNCER_POOL_SIZE,
  });
  // The project means nothing unless its connections really share server sessions.
  const shared = await findSharedSession(pgbouncer.url).catch(async (error: unknown) => {
    await pgbouncer.stop();
    throw error;
  });
  if (shared === null) {
    await pgbouncer.stop();
    throw new Error(`${pgbouncer.description}: two connections through it never shared a server session`);
  }
  process.env[PGBOUNCER_URL_ENV] = pgbouncer.url;
  console.log(`[test services] PgBouncer: ${pgbouncer.description}`);
  return async () => {
    delete process.env[PGBOUNCER_URL_ENV];
    await pgbouncer.stop();
  };
}

export interface TestPgBouncer {
  /** A database of the run's PostgreSQL, as a URL, reached through the PgBouncer instead. */
  urlFor(databaseUrl: string): string;
}

/** The run's PgBouncer when this worker runs the `pgbouncer` project; null otherwise. */
export function testPgBouncer(): TestPgBouncer | null {
  if (process.env.FXGATE_TEST_BACKEND !== 'pgbouncer') return null;
  const address = process.env[PGBOUNCER_URL_ENV];
  if (address === undefined)
    throw new Error(`FXGATE_TEST_BACKEND=pgbouncer, but no ${PGBOUNCER_URL_ENV}: the pgbouncer setup did not run`);
  const pooler = new URL(address);
  return {
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.host = pooler.host;
      return url.toString();
    },
  };
}
