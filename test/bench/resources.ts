/**
 * What a bench run allocates on the shared services, and how it gives it back: a fresh
 * PostgreSQL database per case (dropped afterwards) and a Redis key prefix per case (its keys
 * deleted afterwards with SCAN + DEL: other users share the Redis, so never FLUSHALL).
 * The load process owns both, so they are released even when a server process dies.
 */
import { randomBytes } from 'node:crypto';

import { Redis } from 'ioredis';
import pg from 'pg';

/** Undo steps, run newest first; a failing step does not stop the others. */
export class CleanupStack {
  private readonly steps: { label: string; run: () => Promise<unknown> }[] = [];

  defer(label: string, run: () => Promise<unknown>): void {
    this.steps.push({ label, run });
  }

  /** Runs every step once; returns the failures, described. */
  async runAll(): Promise<string[]> {
    const failures: string[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step.run();
      } catch (error) {
        failures.push(`${step.label}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return failures;
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates `fxgate_bench_<random>` next to the database of adminUrl; the drop is deferred on cleanup. */
export async function createBenchDatabase(adminUrl: string, cleanup: CleanupStack): Promise<string> {
  // The name is ours (hex only), so interpolating it is safe; CREATE DATABASE takes no parameters.
  const name = `fxgate_bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  // FORCE: a server that was killed may have left connections behind.
  cleanup.defer(`dropping database ${name}`, () =>
    adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  );
  return withDatabase(adminUrl, name);
}

/**
 * Gathers the planner's statistics of the bench database, as autovacuum does in a service that
 * has run a while. A fresh database has none, and without them PostgreSQL costs a unique
 * idempotency look-up and a scan of the book's list index the same and may take the scan, which
 * reads every earlier row of the book: the rate of a write falls as its rows pile up.
 */
export async function analyzeDatabase(databaseUrl: string): Promise<void> {
  await adminQuery(databaseUrl, 'ANALYZE');
}

/** Keys deleted per DEL: large enough to be quick, small enough not to block Redis. */
const DELETE_BATCH = 1_000;

/** Deletes every key under the prefix; returns how many there were. */
export async function purgeRedisPrefix(redisUrl: string, prefix: string): Promise<number> {
  // No keyPrefix on this client: SCAN patterns are not prefixed by ioredis.
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let deleted = 0;
    const stream = redis.scanStream({ match: `${prefix}*`, count: DELETE_BATCH });
    for await (const keys of stream as AsyncIterable<string[]>) {
      if (keys.length === 0) continue;
      deleted += await redis.del(...keys);
    }
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/** A key prefix of our own (no braces: RedisStore reserves them for hash tags); purged on cleanup. */
export function createRedisPrefix(redisUrl: string, cleanup: CleanupStack): string {
  const prefix = `fxgate_bench_${randomBytes(6).toString('hex')}:`;
  cleanup.defer(`deleting Redis keys ${prefix}*`, () => purgeRedisPrefix(redisUrl, prefix));
  return prefix;
}
