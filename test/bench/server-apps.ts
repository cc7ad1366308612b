/**
 * The applications a bench server process can serve. Only server.ts runs them: the load
 * process never serves, so server and load generator never share an event loop.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';

import Fastify from 'fastify';
import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';

import { migrate } from '../../src/cli/db/migrate.js';
import { openPostgres, POSTGRES_DEFAULTS, type PostgresOptions } from '../../src/cli/db/postgres-database.js';
import { RedisStore } from '../../src/cli/store/redis-store.js';
import { startTracing } from '../../src/cli/tracing/start.js';
import { buildCoreApp, CORE_DEFAULTS, type CoreOptions } from '../../src/core/app.js';
import { createWebhookEndpoint } from '../../src/core/events/webhook-endpoints.js';
import { postMovement } from '../../src/core/ledger/ledger.js';
import {
  createWithdrawalAccount,
  verifyWithdrawalAccount,
  withdrawalAccountCreateSchema,
} from '../../src/core/money-movement/withdrawal-accounts.js';
import type { Principal } from '../../src/core/principal.js';
import { referenceData } from '../../src/core/trading/reference-data.js';
import { buildGatewayApp } from '../../src/gateway/app.js';
import { forwardedFor } from '../../src/gateway/forwarded-for.js';
import { GatewayMetrics } from '../../src/gateway/metrics/gateway-metrics.js';
import { createUpstreamPool, upstreamOrigin } from '../../src/gateway/upstream/pool.js';
import { createUpstreamRelay } from '../../src/gateway/upstream/relay.js';
import { ProvisioningCredentials } from '../../src/gateway/upstream/signing-credentials.js';
import { AdminListener } from '../../src/lib/admin/admin-listener.js';
import { type Scope, SCOPES } from '../../src/lib/auth/credential-vocabulary.js';
import {
  DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS,
  DEFAULT_UPSTREAM_DEADLINE_MS,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
} from '../../src/lib/config.js';
import type { Database } from '../../src/lib/db/database.js';
import { DB_POOL_MODES, type DbPoolMode } from '../../src/lib/db/pool-mode.js';
import { newId, newUuid } from '../../src/lib/ids.js';
import type { KeyFile } from '../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import { DECIMAL_PATTERN, parseDecimal } from '../../src/lib/money.js';
import { ExactDestinations, webhookPolicy } from '../../src/lib/net/destination-policy.js';
import { SealingKeyring } from '../../src/lib/secrets/sealing-keyring.js';
import { RATE_LIMIT_PERIOD_MS } from '../../src/lib/store/rate-limit-cell.js';
import { type ServedApp, type ServerAppName, type ServerConfig, setting } from './protocol.js';
import { v1ReadSkeleton, v3ReadSkeleton } from './skeletons.js';

/**
 * Rate limits far above anything the machine can serve: the bench measures the pipeline (the
 * rate-limit step still runs its Redis script per request), not how fast it answers 429.
 * The largest limit the store accepts: GCRA counts whole microseconds, so one request per
 * microsecond of the period (1e7 per 10 s, i.e. 1M req/s).
 */
const HIGHEST_LIMIT = RATE_LIMIT_PERIOD_MS * 1000;
export const BENCH_RATE_LIMITS = {
  reads: HIGHEST_LIMIT,
  writes: HIGHEST_LIMIT,
  periodMs: RATE_LIMIT_PERIOD_MS,
} as const;

/** `keyScopes`: the bench key's scopes, comma-separated; view only when absent. */
function keyScopes(config: ServerConfig): Scope[] {
  const names = (config.keyScopes ?? 'view').split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(SCOPES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`server config keyScopes names unknown scopes: ${unknown.join(', ')}`);
  return names as Scope[];
}

/**
 * `databasePoolMode`: how the server's pool treats its connections (FXGATE_DB_POOL_MODE):
 * `session` when absent, `transaction` through a PgBouncer in transaction pooling.
 */
function databaseOptions(config: ServerConfig): PostgresOptions {
  const poolMode = config.databasePoolMode ?? POSTGRES_DEFAULTS.poolMode;
  if (!(DB_POOL_MODES as readonly string[]).includes(poolMode))
    throw new Error(
      `server config databasePoolMode must be one of ${DB_POOL_MODES.join(', ')}, not ${JSON.stringify(poolMode)}`,
    );
  return { connectionString: setting(config, 'databaseUrl'), poolMode: poolMode as DbPoolMode };
}

/** `orgs`: how many bench orgs (each with its own key and books) to make; one when absent. */
function orgCount(config: ServerConfig): number {
  const text = config.orgs ?? '1';
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`server config orgs must be a positive integer, not ${JSON.stringify(text)}`);
  return count;
}

/** A background job of the core: `on` or `off`; on when absent, as buildCoreApp runs it. */
function jobEnabled(config: ServerConfig, name: string): boolean {
  const value = config[name] ?? 'on';
  if (value !== 'on' && value !== 'off')
    throw new Error(`server config ${name} must be on or off, not ${JSON.stringify(value)}`);
  return value === 'on';
}

/** An optional positive whole number of the config. */
function positiveInteger(config: ServerConfig, name: string): number | undefined {
  const text = config[name];
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`server config ${name} must be a positive integer, not ${JSON.stringify(text)}`);
  return value;
}

/**
 * The core's background jobs as the config sets them (`withdrawalProcessor`, `webhookWorker`:
 * on or off; `webhookPollIntervalMs`); each keeps buildCoreApp's default where not set. The
 * deposit completer always runs as it does by default (it only moves sandbox deposits).
 */
function jobOptions(config: ServerConfig): Pick<CoreOptions, 'withdrawalProcessor' | 'webhookWorker'> {
  const pollIntervalMs = positiveInteger(config, 'webhookPollIntervalMs');
  return {
    withdrawalProcessor: { enabled: jobEnabled(config, 'withdrawalProcessor') },
    webhookWorker: {
      enabled: jobEnabled(config, 'webhookWorker'),
      ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
    },
  };
}

/**
 * Money on the org's live book: a deposit movement as a completed deposit posts it (the org's
 * client account +amount, the rail's in-transit account -amount), without a deposit record.
 */
async function fundLiveBook(db: Database, orgId: string, currency: string, amount: string): Promise<void> {
  if (!DECIMAL_PATTERN.test(amount) || !parseDecimal(amount).isGreaterThan(0))
    throw new Error(`cannot fund a book with ${JSON.stringify(amount)} ${currency}`);
  const value = parseDecimal(amount);
  await db.transaction((tx) =>
    postMovement(tx, {
      orgId,
      environment: 'live',
      kind: 'deposit',
      referenceId: newId('deposit'),
      at: new Date(),
      postings: [
        { account: 'client', currency, amount: value },
        { account: 'rail_in_transit', currency, amount: value.negated() },
      ],
    }),
  );
}

/** The bench's withdrawal account: a published ABA routing number (JPMorgan Chase), as the sandbox seed uses. */
const USD_FEDWIRE_ACCOUNT = withdrawalAccountCreateSchema.parse({
  currency: 'USD',
  assetType: 'FIAT',
  accountName: 'Bench operating account',
  transferType: 'FEDWIRE',
  bankName: 'JPMorgan Chase Bank, N.A.',
  accountNumber: '000123456789',
  routingNumber: '021000021',
});

/**
 * A verified, ACTIVE USD FEDWIRE withdrawal account on the org's live book, made by the code the
 * API runs (creation, then the verification an operator does); returns its id.
 */
async function createVerifiedUsdAccount(db: Database, keyFile: KeyFile): Promise<string> {
  const principal: Principal = {
    orgId: keyFile.orgId,
    environment: 'live',
    keyName: keyFile.name,
    scopes: keyFile.scopes,
  };
  const fingerprint = `sha256:${createHash('sha256').update(JSON.stringify(USD_FEDWIRE_ACCOUNT)).digest('hex')}`;
  const context = { db, reference: referenceData(db), now: () => new Date() };
  const row = await createWithdrawalAccount(context, principal, USD_FEDWIRE_ACCOUNT, {
    key: `bench-account-${newUuid()}`,
    fingerprint,
  });
  const verified = await verifyWithdrawalAccount(db, { orgId: keyFile.orgId, environment: 'live' }, row.id);
  if (verified?.status !== 'ACTIVE' || !verified.verified)
    throw new Error(`the bench withdrawal account ${row.id} did not become ACTIVE and verified`);
  return verified.id;
}

/** The floor every other case is compared with: fastify 5 with nothing but a route. */
async function bare(): Promise<ServedApp> {
  const app = Fastify();
  app.get('/', async () => ({ hello: 'world' }));
  return { app, info: {}, close: async () => {} };
}

/** Where static-v3 answers. */
export const STATIC_V3_PATH = '/v3/fx/trades/trd_static';

/**
 * One fixed v3-shaped answer: the size and headers of the bench core's answer to a trade read,
 * with none of its work. For the passthrough-relay case, in which it stands behind the gateway
 * so that the gateway's own cost per request is what varies.
 */
async function staticV3(): Promise<ServedApp> {
  const body = JSON.stringify({
    data: {
      id: 'trd_0193a1b2c3d4e5f60718293a4b5c6d7e',
      quoteId: 'quo_0193a1b2c3d4e5f60718293a4b5c6d7e',
      status: 'PENDING_SETTLEMENT',
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      buyAmount: '1000.00',
      sellAmount: '1086.95',
      rate: '0.92000000',
      inverseRate: '1.08695652',
      fee: '0.00',
      feeCurrency: 'USD',
      environment: 'live',
      createdAt: '2026-11-25T20:00:00.000Z',
      settledAt: null,
      reversedAt: null,
    },
  });
  const app = Fastify();
  app.get(STATIC_V3_PATH, async (_request, reply) =>
    reply
      .headers({
        'content-type': 'application/json; charset=utf-8',
        'ratelimit-limit': '10000000',
        'ratelimit-remaining': '9999999',
        'ratelimit-reset': '10',
      })
      .send(body),
  );
  return { app, info: {}, close: async () => {} };
}

/**
 * A legacy service that costs nothing: every request is answered 200 with one fixed body
 * (`answer`, recorded by the case from the gateway itself, so that a comparison finds it the
 * same). For the shadow-reads case, in which it stands where the real legacy service would.
 * The body is written indented, numbers with their own digits: the same answer in other bytes,
 * as another service would write it, so that the comparison runs field by field.
 */
async function staticLegacy(config: ServerConfig): Promise<ServedApp> {
  const body = stringifyLossless(parseLossless(setting(config, 'answer')), undefined, 1)!;
  const app = Fastify();
  app.all('/*', async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(body));
  return { app, info: {}, close: async () => {} };
}

/**
 * The real core on real PostgreSQL and Redis, in the database and under the key prefix the
 * load process made (it drops them afterwards even if this process dies). It makes `orgs`
 * bench orgs (one by default), registers one live key for each (view scope, or `keyScopes`)
 * and hands the key files to the load process (`keyFiles`, one per org, in order), as a
 * dashboard hands one to a client. A live book starts without credit: `creditLineUsd` sets
 * each bench org's, with the UPDATE an operator's `fxgate orgs set-credit-line` makes.
 *
 * For withdrawals and webhooks, on each bench org's live book: `fundUsd` deposits that many USD
 * (fundLiveBook); `withdrawalAccount: 'usd-fedwire'` registers and verifies a USD FEDWIRE
 * account (ids in `withdrawalAccountIds`, in org order); `webhookUrl` registers a webhook
 * endpoint for every event type (ids in `webhookEndpointIds`). Background jobs: see jobOptions.
 * The pool's mode: see databaseOptions.
 */
async function core(config: ServerConfig): Promise<ServedApp> {
  const db = openPostgres(databaseOptions(config));
  const store = new RedisStore({ url: setting(config, 'redisUrl'), keyPrefix: setting(config, 'redisKeyPrefix') });
  try {
    await migrate(db);
    const registry = new KeyRegistry(db);
    // The bench server's own key, as a process is given one at start-up.
    const keyring = SealingKeyring.of([randomBytes(32)]);
    const scopes = keyScopes(config);
    const accountKind = config.withdrawalAccount;
    if (accountKind !== undefined && accountKind !== 'usd-fedwire')
      throw new Error(`server config withdrawalAccount must be usd-fedwire, not ${JSON.stringify(accountKind)}`);
    const keyFiles: KeyFile[] = [];
    const withdrawalAccountIds: string[] = [];
    const webhookEndpointIds: string[] = [];
    // The bench's receiver is on loopback and its books are live: the receiver is allowed exactly, as `fxgate all` allows its own listener.
    const outbound = { exact: new ExactDestinations() };
    if (config.webhookUrl !== undefined) outbound.exact.allow(config.webhookUrl);
    for (let org = 0; org < orgCount(config); org += 1) {
      const orgId = newUuid();
      const keyFile = await registry.createKey({ orgId, scopes, mode: 'live', label: 'bench' });
      keyFiles.push(keyFile);
      if (config.fundUsd !== undefined) await fundLiveBook(db, orgId, 'USD', config.fundUsd);
      if (accountKind !== undefined) withdrawalAccountIds.push(await createVerifiedUsdAccount(db, keyFile));
      if (config.webhookUrl !== undefined) {
        const { row } = await createWebhookEndpoint(
          db,
          keyring,
          { orgId, environment: 'live', url: config.webhookUrl, eventTypes: [], at: new Date() },
          webhookPolicy('live', outbound),
        );
        webhookEndpointIds.push(row.id);
      }
      if (config.creditLineUsd !== undefined) {
        const { rowCount } = await db.query(
          "UPDATE org_environments SET credit_line_usd = $1::numeric, updated_at = now() WHERE org_id = $2 AND environment = 'live'",
          [config.creditLineUsd, orgId],
        );
        if (rowCount !== 1) throw new Error(`the bench org ${orgId} has no live book to set the credit line of`);
      }
    }
    const app = await buildCoreApp(
      { db, store, registry, keyring },
      {
        logLevel: 'warn',
        rateLimits: { reads: BENCH_RATE_LIMITS.reads, writes: BENCH_RATE_LIMITS.writes },
        ...jobOptions(config),
        outbound,
      },
    );
    return {
      app,
      info: { keyFiles, withdrawalAccountIds, webhookEndpointIds },
      async close() {
        await Promise.allSettled([store.close(), db.close()]);
      },
    };
  } catch (error) {
    await Promise.allSettled([store.close(), db.close()]);
    throw error;
  }
}

/**
 * The gateway in front of a bench core (`upstreamUrl`), wired as `fxgate all` wires it: on the
 * core's database (`databaseUrl`: its key registry, so the core's bench keys are legacy keys
 * too, and the gateway's own upstream keys are registered where the core looks them up) and the
 * core's Redis key prefix (`redisUrl`, `redisKeyPrefix`: one nonce space, so a token spent at
 * one cannot be replayed at the other; also v2 idempotency records and the page snapshots).
 * Its v3 credential per org and mode is provisioned on first use (ProvisioningCredentials) into
 * a temporary key folder of its own, removed when it closes. Both parts use the core's default
 * issuers (and sign with the first), as the bench core is built with them. With `shadowUrl` it
 * runs in shadow mode beside the legacy service there, comparing `shadowSample` of its reads (1
 * when absent), the gateway serving. With `metrics: 'on'` it keeps its Prometheus metrics on an
 * admin listener of its own (a port the OS picks; nothing scrapes it), as the CLI's gateway does
 * when its admin listener is on: the process's default metrics run too. Off when absent. With
 * `tracing: 'on'` it traces as OTEL_EXPORTER_OTLP_ENDPOINT=`otlpEndpoint` turns it on in the
 * CLI (http/protobuf, batched, every request sampled); off when absent.
 */
async function gateway(config: ServerConfig): Promise<ServedApp> {
  if (config.tracing !== undefined && config.tracing !== 'on' && config.tracing !== 'off')
    throw new Error(`server config tracing must be on or off, not ${JSON.stringify(config.tracing)}`);
  if (config.tracing === 'on') process.env.OTEL_EXPORTER_OTLP_ENDPOINT = setting(config, 'otlpEndpoint');
  // Before the app is built: its request hooks are installed only when tracing is on.
  const tracing = config.tracing === 'on' ? await startTracing(process.env, 'gateway') : null;
  const db = openPostgres(databaseOptions(config));
  const store = new RedisStore({ url: setting(config, 'redisUrl'), keyPrefix: setting(config, 'redisKeyPrefix') });
  let keysDir: string | null = null;
  const admin = config.metrics === 'on' ? new AdminListener({ logLevel: 'warn' }) : null;
  const release = async (): Promise<void> => {
    await Promise.allSettled([
      store.close(),
      db.close(),
      keysDir === null ? Promise.resolve() : rm(keysDir, { recursive: true, force: true }),
      admin?.close(),
    ]);
    await tracing?.shutdown();
  };
  try {
    keysDir = await mkdtemp(join(os.tmpdir(), 'fxgate-bench-gateway-keys-'));
    const registry = new KeyRegistry(db);
    const credentials = new ProvisioningCredentials({ registry, dir: keysDir, issuer: CORE_DEFAULTS.issuers[0] });
    const shadow =
      config.shadowUrl === undefined
        ? {}
        : { shadow: { legacyUrl: config.shadowUrl, sample: Number(config.shadowSample ?? '1') } };
    if (config.metrics !== undefined && config.metrics !== 'on' && config.metrics !== 'off')
      throw new Error(`server config metrics must be on or off, not ${JSON.stringify(config.metrics)}`);
    const app = await buildGatewayApp({
      upstreamUrl: setting(config, 'upstreamUrl'),
      logLevel: 'warn',
      ...(admin === null ? {} : { admin, metrics: new GatewayMetrics() }),
      legacy: {
        registry,
        database: db,
        store,
        credentials,
        issuers: CORE_DEFAULTS.issuers,
        rateLimits: { reads: BENCH_RATE_LIMITS.reads, writes: BENCH_RATE_LIMITS.writes },
        ...shadow,
      },
    });
    await admin?.listen('127.0.0.1', 0);
    return { app, info: {}, close: release };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * The gateway's upstream relay alone (src/gateway/upstream/relay.ts) in a minimal fastify app
 * (no logger, no hook, one route) in front of `upstreamUrl`, with the gateway's own pool
 * settings and deadline: the reference the passthrough's CPU is compared with at the same rate.
 * An upstream failure is a bare 502, which no bench row expects.
 */
async function upstreamRelay(config: ServerConfig): Promise<ServedApp> {
  const origin = upstreamOrigin(setting(config, 'upstreamUrl'));
  const pool = createUpstreamPool({
    origin,
    connectTimeoutMs: DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS,
    timeoutMs: DEFAULT_UPSTREAM_TIMEOUT_MS,
  });
  const relay = createUpstreamRelay({
    origin,
    dispatcher: pool,
    forwardedFor,
    deadlineMs: DEFAULT_UPSTREAM_DEADLINE_MS,
    onFailure: (reply) => void reply.code(502).send(),
  });
  const app = Fastify();
  app.all('/v3/*', (request, reply) => {
    const query = request.url.indexOf('?');
    relay(request, reply, query === -1 ? request.url : request.url.slice(0, query));
  });
  return { app, info: {}, close: () => pool.close() };
}

/** Where the receiver takes webhook deliveries. */
export const RECEIVER_PATH = '/webhooks';
/** What the receiver has taken so far: GET answers {hits, events}. */
export const RECEIVER_HITS_PATH = '/hits';

/**
 * A webhook receiver on loopback, as fast as fastify answers: every POST to RECEIVER_PATH is
 * answered 200 with no body and counted (hits, and distinct event ids: delivery is at least
 * once, so a retried event is two hits of one event). No signature check: the bench measures the
 * sender.
 */
async function receiver(): Promise<ServedApp> {
  const app = Fastify();
  let hits = 0;
  const events = new Set<string>();
  app.post(RECEIVER_PATH, async (request, reply) => {
    hits += 1;
    const id = (request.body as { id?: unknown } | null)?.id;
    if (typeof id === 'string') events.add(id);
    return reply.code(200).send();
  });
  app.get(RECEIVER_HITS_PATH, async () => ({ hits, events: events.size }));
  return { app, info: {}, close: async () => {} };
}

export const SERVER_APPS: Record<ServerAppName, (config: ServerConfig) => Promise<ServedApp>> = {
  bare,
  'static-v3': staticV3,
  'static-legacy': staticLegacy,
  core,
  gateway,
  'upstream-relay': upstreamRelay,
  receiver,
  'v3-read-skeleton': v3ReadSkeleton,
  'v1-read-skeleton': v1ReadSkeleton,
};
