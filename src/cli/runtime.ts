/**
 * What the CLI's commands run on, resolved from the configuration: the database (migrated on
 * opening, so `keys create` before the first `npm start` works on an empty data folder), the
 * key registry over it, and, for the servers, the ephemeral store.
 */
import type { Config } from '../lib/config.js';
import type { Database } from '../lib/db/database.js';
import { KeyRegistry } from '../lib/keys/key-registry.js';
import type { EphemeralStore } from '../lib/store/ephemeral-store.js';
import type { Closers } from './closers.js';
import { migrateDatabase, openDatabase } from './database.js';
import { messageOf } from './exit.js';
import { MemoryStore } from './store/memory-store.js';
import { describeEndpoint, type RedisEndpoint } from './store/redis-connection.js';
import { RedisStore } from './store/redis-store.js';

export interface Registry {
  readonly db: Database;
  readonly registry: KeyRegistry;
}

export async function openRegistry(config: Config, closers: Closers, warn: Warn): Promise<Registry> {
  const db = await openDatabase(config, closers, warn);
  await migrateDatabase(db, config);
  return { db, registry: new KeyRegistry(db, { cacheTtlMs: config.FXGATE_KEY_CACHE_TTL_MS }) };
}

/** Where a server's start reports what does not stop it: the run's stderr (src/cli/io.ts). */
export type Warn = (line: string) => void;

/**
 * Where the Redis store is: REDIS_URL, or the primary the Sentinels of FXGATE_REDIS_SENTINELS name
 * (config.ts has already refused both at once); null for the in-process store.
 */
export function redisEndpointOf(config: Config): RedisEndpoint | null {
  if (config.FXGATE_REDIS_SENTINELS !== undefined && config.FXGATE_REDIS_SENTINEL_NAME !== undefined) {
    return {
      sentinel: {
        sentinels: config.FXGATE_REDIS_SENTINELS,
        name: config.FXGATE_REDIS_SENTINEL_NAME,
        sentinelPassword: config.FXGATE_REDIS_SENTINEL_PASSWORD,
        username: config.FXGATE_REDIS_USERNAME,
        password: config.FXGATE_REDIS_PASSWORD,
        tls: config.FXGATE_REDIS_TLS === 'on',
      },
    };
  }
  return config.REDIS_URL ? { url: config.REDIS_URL } : null;
}

/**
 * Redis at REDIS_URL or through Sentinel, else the in-process store. A Redis that does not answer
 * yet is reported (through warn) but does not stop the start: writes answer 503 and /readyz says
 * unavailable until it does.
 */
export async function openStore(config: Config, closers: Closers, warn: Warn): Promise<EphemeralStore> {
  const endpoint = redisEndpointOf(config);
  if (endpoint === null) {
    const store = new MemoryStore();
    closers.add('in-process store', () => store.close());
    return store;
  }
  const store = new RedisStore({ ...endpoint, keyPrefix: config.FXGATE_REDIS_KEY_PREFIX });
  closers.add('Redis store', () => store.close());
  try {
    // A Redis found new or emptied gets its epoch marker now, before any token is checked.
    await store.nonceEpoch();
  } catch (error) {
    const setting = endpoint.sentinel === undefined ? 'REDIS_URL' : 'FXGATE_REDIS_SENTINELS';
    warn(`fxgate: warning: Redis (${setting}: ${describeEndpoint(endpoint)}) does not answer yet: ${messageOf(error)}`);
  }
  return store;
}
