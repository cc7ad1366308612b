/**
 * The bench cases, in run order. A case brings up its server process(es) through the context
 * (which stops them after the case) and says what to send. New cases are added to BENCH_CASES.
 */
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import { keyFileSchema, loadKey } from '../../src/lib/keys/key-file.js';
import { CORE_DEFAULTS } from '../../src/core/app.js';
import { V3_MAX_TOKEN_LIFETIME_SECONDS } from '../../src/core/http/authenticate.js';
import type { ServerProcess } from './launcher.js';
import type { ServerAppName, ServerConfig } from './protocol.js';
import type { RequestPlan } from './requests.js';
import { createBenchDatabase, createRedisPrefix, type CleanupStack } from './resources.js';
import type { BenchSettings } from './settings.js';

export interface CaseContext {
  readonly settings: BenchSettings;
  /** Undo steps of this case, run when it ends (servers first, as they were started last). */
  readonly cleanup: CleanupStack;
  /** Starts a server process; it is stopped when the case ends. */
  launch(app: ServerAppName, config?: ServerConfig): Promise<ServerProcess>;
}

export interface CaseTarget {
  /** Base URL the load goes to. */
  readonly url: string;
  readonly plan: RequestPlan;
  /** The processes the case runs; the report shows their RSS. */
  readonly servers: readonly ServerProcess[];
}

export interface BenchCase {
  readonly name: string;
  readonly description: string;
  /** The throughput this case should reach, as a fraction of the bare case's. */
  readonly targetRatioToBare?: number;
  start(context: CaseContext): Promise<CaseTarget>;
}

/** Every ratio in the report is to this case. */
export const BARE_CASE = 'bare';

/**
 * Starts the core (built with the default issuer) on a fresh database and key prefix, and
 * returns a signer for its bench key, making tokens of the longest lifetime v3 accepts.
 */
async function startCore(context: CaseContext): Promise<{ server: ServerProcess; signer: V3RequestSigner }> {
  const { settings, cleanup } = context;
  const databaseUrl = await createBenchDatabase(settings.databaseUrl, cleanup);
  const redisKeyPrefix = createRedisPrefix(settings.redisUrl, cleanup);
  const server = await context.launch('core', { databaseUrl, redisUrl: settings.redisUrl, redisKeyPrefix });
  const keyFile = keyFileSchema.parse(server.info.keyFile);
  return { server, signer: new V3RequestSigner(loadKey(keyFile), { issuer: CORE_DEFAULTS.issuer, lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS }) };
}

export const BENCH_CASES: readonly BenchCase[] = [
  {
    name: BARE_CASE,
    description: 'fastify 5, one route returning {hello:"world"}: the reference for every ratio',
    async start(context) {
      const server = await context.launch('bare');
      return { url: server.url, servers: [server], plan: { kind: 'reusable', request: { method: 'GET', path: '/', headers: {} } } };
    },
  },
  {
    name: 'v3-pairs',
    description: 'authenticated GET /v3/fx/pairs on the core: JWT + request signature, nonce and rate limit in Redis, pairs from PostgreSQL through a 5 s cache',
    targetRatioToBare: 0.3,
    async start(context) {
      const { server, signer } = await startCore(context);
      const path = '/v3/fx/pairs';
      return {
        url: server.url,
        servers: [server],
        plan: {
          kind: 'single-use',
          lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS,
          make: async () => ({ method: 'GET', path, headers: await signer.headers({ method: 'GET', pathAndQuery: path }) }),
        },
      };
    },
  },
];
