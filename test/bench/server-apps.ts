/**
 * The applications a bench server process can serve. Only server.ts runs them: the load
 * process never serves, so server and load generator never share an event loop.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { buildCoreApp } from '../../src/core/app.js';
import { RATE_LIMIT_PERIOD_MS } from '../../src/core/http/rate-limit.js';
import { migrate } from '../../src/lib/db/migrate.js';
import { openPostgres } from '../../src/lib/db/postgres-database.js';
import { newUuid } from '../../src/lib/ids.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import { RedisStore } from '../../src/lib/store/redis-store.js';
import type { ServerAppName, ServerConfig } from './protocol.js';

export interface ServedApp {
  readonly app: FastifyInstance;
  /** Sent to the load process with the port. */
  readonly info: Readonly<Record<string, unknown>>;
  /** Releases what the app holds besides its listener (pools, connections). */
  close(): Promise<void>;
}

/**
 * Rate limits far above anything the machine can serve: the bench measures the pipeline (the
 * rate-limit step still runs its Redis script per request), not how fast it answers 429.
 * The largest limit the store accepts: GCRA counts whole microseconds, so one request per
 * microsecond of the period (1e7 per 10 s, i.e. 1M req/s).
 */
const HIGHEST_LIMIT = RATE_LIMIT_PERIOD_MS * 1000;
export const BENCH_RATE_LIMITS = { reads: HIGHEST_LIMIT, writes: HIGHEST_LIMIT, periodMs: RATE_LIMIT_PERIOD_MS } as const;

function setting(config: ServerConfig, name: string): string {
  const value = config[name];
  if (value === undefined || value === '') throw new Error(`server config lacks ${name}`);
  return value;
}

/** The floor every other case is compared with: fastify 5 with nothing but a route. */
async function bare(): Promise<ServedApp> {
  const app = Fastify();
  app.get('/', async () => ({ hello: 'world' }));
  return { app, info: {}, close: async () => {} };
}

/**
 * The real core on real PostgreSQL and Redis, in the database and under the key prefix the
 * load process made (it drops them afterwards even if this process dies). It registers one
 * live key with the view scope and hands the key file to the load process, as a dashboard
 * hands one to a client.
 */
async function core(config: ServerConfig): Promise<ServedApp> {
  const db = openPostgres({ connectionString: setting(config, 'databaseUrl') });
  const store = new RedisStore({ url: setting(config, 'redisUrl'), keyPrefix: setting(config, 'redisKeyPrefix') });
  try {
    await migrate(db);
    const registry = new KeyRegistry(db);
    const keyFile = await registry.createKey({ orgId: newUuid(), scopes: ['view'], mode: 'live', label: 'bench' });
    const app = await buildCoreApp({ db, store, registry }, { logLevel: 'warn', rateLimits: { reads: BENCH_RATE_LIMITS.reads, writes: BENCH_RATE_LIMITS.writes } });
    return {
      app,
      info: { keyFile },
      async close() {
        await Promise.allSettled([store.close(), db.close()]);
      },
    };
  } catch (error) {
    await Promise.allSettled([store.close(), db.close()]);
    throw error;
  }
}

export const SERVER_APPS: Record<ServerAppName, (config: ServerConfig) => Promise<ServedApp>> = { bare, core };
