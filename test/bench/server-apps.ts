/**
 * The applications a bench server process can serve. Only server.ts runs them: the load
 * process never serves, so server and load generator never share an event loop.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { buildCoreApp } from '../../src/core/app.js';
import { RATE_LIMIT_PERIOD_MS } from '../../src/core/http/rate-limit.js';
import { migrate } from '../../src/lib/db/migrate.js';
import { openPostgres } from '../../src/lib/db/postgres-database.js';
import { SCOPES, type Scope } from '../../src/lib/auth/credentials.js';
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

/** `keyScopes`: the bench key's scopes, comma-separated; view only when absent. */
function keyScopes(config: ServerConfig): Scope[] {
  const names = (config.keyScopes ?? 'view').split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(SCOPES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`server config keyScopes names unknown scopes: ${unknown.join(', ')}`);
  return names as Scope[];
}

/** `orgs`: how many bench orgs (each with its own key and books) to make; one when absent. */
function orgCount(config: ServerConfig): number {
  const text = config.orgs ?? '1';
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1) throw new Error(`server config orgs must be a positive integer, not ${JSON.stringify(text)}`);
  return count;
}

/** The floor every other case is compared with: fastify 5 with nothing but a route. */
async function bare(): Promise<ServedApp> {
  const app = Fastify();
  app.get('/', async () => ({ hello: 'world' }));
  return { app, info: {}, close: async () => {} };
}

/**
 * The real core on real PostgreSQL and Redis, in the database and under the key prefix the
 * load process made (it drops them afterwards even if this process dies). It makes `orgs`
 * bench orgs (one by default), registers one live key for each (view scope, or `keyScopes`)
 * and hands the key files to the load process (`keyFiles`, one per org, in order), as a
 * dashboard hands one to a client. A live book starts without credit: `creditLineUsd` sets
 * each bench org's, with the UPDATE an operator's `fxgate orgs set-credit-line` makes.
 */
async function core(config: ServerConfig): Promise<ServedApp> {
  const db = openPostgres({ connectionString: setting(config, 'databaseUrl') });
  const store = new RedisStore({ url: setting(config, 'redisUrl'), keyPrefix: setting(config, 'redisKeyPrefix') });
  try {
    await migrate(db);
    const registry = new KeyRegistry(db);
    const scopes = keyScopes(config);
    const keyFiles: unknown[] = [];
    for (let org = 0; org < orgCount(config); org += 1) {
      const orgId = newUuid();
      keyFiles.push(await registry.createKey({ orgId, scopes, mode: 'live', label: 'bench' }));
      if (config.creditLineUsd !== undefined) {
        const { rowCount } = await db.query(
          "UPDATE org_environments SET credit_line_usd = $1::numeric, updated_at = now() WHERE org_id = $2 AND environment = 'live'",
          [config.creditLineUsd, orgId],
        );
        if (rowCount !== 1) throw new Error(`the bench org ${orgId} has no live book to set the credit line of`);
      }
    }
    const app = await buildCoreApp({ db, store, registry }, { logLevel: 'warn', rateLimits: { reads: BENCH_RATE_LIMITS.reads, writes: BENCH_RATE_LIMITS.writes } });
    return {
      app,
      info: { keyFiles },
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
