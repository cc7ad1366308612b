/**
 * The bench cases, in run order. A case brings up its server process(es) through the context
 * (which stops them after the case) and says what to send. New cases are added to BENCH_CASES.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { z } from 'zod';

import { openPostgres, POSTGRES_DEFAULTS } from '../../src/cli/db/postgres-database.js';
import { CORE_DEFAULTS } from '../../src/core/app.js';
import { WEBHOOK_WORKER_DEFAULTS } from '../../src/core/events/webhook-worker.js';
import { V3_MAX_TOKEN_LIFETIME_SECONDS } from '../../src/core/http/authenticate.js';
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import type { DbPoolMode } from '../../src/lib/db/pool-mode.js';
import { type KeyFile, keyFileSchema, loadKey } from '../../src/lib/keys/key-file.js';
import type { ThrowawayPgBouncer } from '../support/throwaway-pgbouncer.js';
import type { ServerProcess } from './launcher.js';
import { LEGACY_MAX_TOKEN_LIFETIME_SECONDS, LegacySigner, legacyUuidOf } from './legacy-signer.js';
import { type CpuClock, estimateRate, measureSideBySide, probe, type SideBySideRow } from './load.js';
import type { CaseMeasurement, RowMeasurement } from './measurement.js';
import { type PacedRow, pacedTogether } from './paced-load.js';
import { startBenchPgBouncer } from './pgbouncer.js';
import { postgresClock } from './process-cpu.js';
import type { ServerAppName, ServerConfig } from './protocol.js';
import { type CaseReport, formatSignedMs } from './report.js';
import type { PreparedRequest, ReceivedResponse, RequestPlan } from './requests.js';
import { analyzeDatabase, type CleanupStack, createBenchDatabase, createRedisPrefix } from './resources.js';
import { RECEIVER_HITS_PATH, RECEIVER_PATH, STATIC_V3_PATH } from './server-apps.js';
import type { BenchSettings } from './settings.js';
import { DRAIN_POLL_MS, webhookBacklogPlan } from './webhook-delivery.js';

export interface CaseContext {
  readonly settings: BenchSettings;
  /** Undo steps of this case, run when it ends (servers first, as they were started last). */
  readonly cleanup: CleanupStack;
  /** Starts a server process; it is stopped when the case ends. */
  launch(app: ServerAppName, config?: ServerConfig): Promise<ServerProcess>;
  /** The report of a case that ran earlier in this run, when it did (and did not throw). */
  earlierReport(name: string): CaseReport | undefined;
}

export interface CaseTarget {
  /** Base URL the load goes to. */
  readonly url: string;
  readonly plan: RequestPlan;
  /** The processes the case runs; the report shows their RSS. */
  readonly servers: readonly ServerProcess[];
}

/** A throughput a row of a case should reach, in requests per second (a chained plan's row by label; else the first row). */
export interface RateTarget {
  readonly row?: string;
  readonly requestsPerSecond: number;
}

/**
 * Within a side-by-side case (load.ts measureSideBySide): a row's rate as a fraction of another
 * row's, judged on the median of the rounds' ratios.
 */
export interface RowComparison {
  readonly row: string;
  readonly of: string;
  /** The fraction it should reach; without it the ratio is only shown. */
  readonly targetRatio?: number;
}

/** The most a server process of the case may hold (RSS after its run). */
export interface RssTarget {
  readonly app: ServerAppName;
  readonly maxMegabytes: number;
}

/** For a case whose rows run at one fixed rate: how much p99 latency each other row may add to the baseline row's. */
export interface AddedLatencyTarget {
  readonly baselineRow: string;
  readonly maxAddedP99Ms: number;
}

export interface BenchCase {
  readonly name: string;
  readonly description: string;
  /** The throughput this case should reach, as a fraction of the bare case's. */
  readonly targetRatioToBare?: number;
  /** The throughput a row of this case should reach, on this machine. */
  readonly targetRate?: RateTarget;
  /** Rows of this case compared with another of its rows. */
  readonly rowComparisons?: readonly RowComparison[];
  readonly rssTarget?: RssTarget;
  readonly addedLatencyTarget?: AddedLatencyTarget;
  /** Starts a PgBouncer: runs only with BENCH_PGBOUNCER=1. */
  readonly needsPgBouncer?: boolean;
  start(context: CaseContext): Promise<CaseTarget>;
}

type SingleUsePlan = Extract<RequestPlan, { kind: 'single-use' }>;

/** The report's vs-bare ratios are to this case. */
export const BARE_CASE = 'bare';

/** What the core server app sets up (server-apps.ts `core` says what each does); all strings, as the config is. */
interface CoreOptions {
  readonly keyScopes?: string;
  readonly creditLineUsd?: string;
  /** Bench orgs, each with its own live key and books; one when absent. */
  readonly orgs?: number;
  /** USD deposited on each org's live book. */
  readonly fundUsd?: string;
  /** A verified ACTIVE withdrawal account on each org's live book. */
  readonly withdrawalAccount?: 'usd-fedwire';
  /** A webhook endpoint (every event type) on each org's live book. */
  readonly webhookUrl?: string;
  /** Background jobs of the core, on (buildCoreApp's default) or off. */
  readonly withdrawalProcessor?: 'on' | 'off';
  readonly webhookWorker?: 'on' | 'off';
  readonly webhookPollIntervalMs?: string;
}

interface StartedCore {
  readonly server: ServerProcess;
  readonly signers: readonly V3RequestSigner[];
  /** The bench orgs' key files, in the order of `signers`. */
  readonly keyFiles: readonly KeyFile[];
  /** The case's database, which the core runs on (directly, whatever the core's route to it). */
  readonly databaseUrl: string;
  /** The case's Redis key prefix, which the core runs under. */
  readonly redisKeyPrefix: string;
}

/**
 * How a bench core reaches its database: on sessions of its own (FXGATE_DB_POOL_MODE=session,
 * the default), or in transaction mode, directly or through a PgBouncer in transaction pooling.
 */
interface DatabaseRoute {
  readonly poolMode: DbPoolMode;
  readonly pgbouncer?: ThrowawayPgBouncer;
}

/**
 * Starts ONE core process (built with the default issuer) on a fresh database and key prefix,
 * and returns a signer for each of its bench orgs' keys (one org unless `orgs`), in order,
 * making tokens of the longest lifetime v3 accepts. The keys have the view scope, or those of
 * `keyScopes`; `creditLineUsd` sets each org's live book's credit line. `route` says how the
 * core reaches the database.
 */
async function startCore(
  context: CaseContext,
  options: CoreOptions = {},
  route: DatabaseRoute = { poolMode: 'session' },
): Promise<StartedCore> {
  const { settings, cleanup } = context;
  const { orgs, ...rest } = options;
  const databaseUrl = await createBenchDatabase(settings.databaseUrl, cleanup);
  const redisKeyPrefix = createRedisPrefix(settings.redisUrl, cleanup);
  const server = await context.launch('core', {
    databaseUrl: route.pgbouncer?.urlFor(databaseUrl) ?? databaseUrl,
    databasePoolMode: route.poolMode,
    redisUrl: settings.redisUrl,
    redisKeyPrefix,
    ...rest,
    ...(orgs === undefined ? {} : { orgs: String(orgs) }),
  });
  const keyFiles = keyFileSchema.array().parse(server.info.keyFiles);
  if (keyFiles.length !== (orgs ?? 1)) throw new Error(`the core made ${keyFiles.length} bench keys, not ${orgs ?? 1}`);
  const signers = keyFiles.map(
    (keyFile) =>
      new V3RequestSigner(loadKey(keyFile), {
        issuer: CORE_DEFAULTS.issuers[0],
        lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS,
      }),
  );
  return { server, signers, keyFiles, databaseUrl, redisKeyPrefix };
}

/** The core with one bench org: its signer. */
async function startSingleOrgCore(
  context: CaseContext,
  options: Omit<CoreOptions, 'orgs'> = {},
): Promise<{ server: ServerProcess; signer: V3RequestSigner }> {
  const { server, signers } = await startCore(context, options);
  return { server, signer: signers[0]! };
}

/**
 * The trading cases' books: a live book starts without credit, and every trade commits its USD
 * value until settlement (which the bench never runs). A line this large (1e15 USD, against
 * about 1,090 USD a trade) cannot run out in any run; set by SQL on every bench org's live
 * book when the core starts.
 */
const TRADING_CORE = { keyScopes: 'view,trade', creditLineUsd: '1000000000000000' } as const;

/**
 * Orgs of v3-quote-trade-orgs: its workers (BENCH_CONNECTIONS, 50 by default) are dealt over
 * them, worker w on org w mod 25, so 2 workers per org by default.
 */
const TRADING_ORGS = 25;

/**
 * The withdrawal case's core: its one org's key may withdraw, its live book holds 1e12 USD
 * (deposited by a ledger movement at start; 1.00 USD a withdrawal cannot use it up) and a
 * verified ACTIVE USD FEDWIRE account. Live withdrawals stay PENDING: the withdrawal processor
 * that would take them to the simulated rail is off, so that its rounds (which lock withdrawal
 * rows and post ledger movements) do not compete with the requests measured. The webhook worker
 * is off too (the book has no endpoint, so no deliveries are made; only its polling would run).
 */
const WITHDRAWAL_CORE = {
  keyScopes: 'view,withdraw',
  fundUsd: '1000000000000',
  withdrawalAccount: 'usd-fedwire',
  withdrawalProcessor: 'off',
  webhookWorker: 'off',
} as const satisfies CoreOptions;
const WITHDRAWAL_AMOUNT = '1.00';

/** The ids server-apps.ts `core` hands back with the key files. */
const coreInfoSchema = z.object({ withdrawalAccountIds: z.array(z.string()), webhookEndpointIds: z.array(z.string()) });

/** The webhook worker's idle poll in the webhook-delivery case (the core's default is 1 s). */
const WEBHOOK_POLL_MS = 50;

/** The quote → trade pairs of the trading cases, over each signer's org (a stream per signer). */
function quoteTradePlan(signers: readonly V3RequestSigner[]): RequestPlan {
  const signerOf = (stream: number): V3RequestSigner => {
    const signer = signers[stream];
    if (signer === undefined) throw new Error(`no org for stream ${stream} (${signers.length} orgs)`);
    return signer;
  };
  return {
    kind: 'chained',
    labels: ['quotes', 'trades'],
    lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS,
    ...(signers.length > 1 ? { streams: { count: signers.length, noun: 'org' } } : {}),
    makeFirst: (stream) => signedPost(signerOf(stream), '/v3/fx/quotes', QUOTE_BODY, 'quote'),
    makeSecond: (quote, stream) =>
      signedPost(signerOf(stream), '/v3/fx/trades', JSON.stringify({ quoteId: quoteIdOf(quote) }), 'trade'),
  };
}

/** What each trading case's quote asks: 1,000.00 EUR bought with USD, the price held 60 s (the most v3 gives). */
const QUOTE_BODY = JSON.stringify({
  buyCurrency: 'EUR',
  sellCurrency: 'USD',
  amount: '1000.00',
  amountCurrency: 'EUR',
  validForSeconds: 60,
});

/** How much sooner than its token a v3-trades request's quote may expire (made first, by one round trip). */
const QUOTE_MARGIN_SECONDS = 5;

/** A signed POST with its own Idempotency-Key; the body is sent as the exact string signed. */
async function signedPost(
  signer: V3RequestSigner,
  path: string,
  body: string,
  keyKind: string,
): Promise<PreparedRequest> {
  const headers = await signer.headers({
    method: 'POST',
    pathAndQuery: path,
    body,
    idempotencyKey: `bench-${keyKind}-${randomUUID()}`,
  });
  return { method: 'POST', path, headers, body };
}

/** The id of the quote a 2xx answer to POST /v3/fx/quotes carries. */
function quoteIdOf(answer: ReceivedResponse): string {
  const parsed: unknown = JSON.parse(answer.body);
  const id = (parsed as { data?: { id?: unknown } } | null)?.data?.id;
  if (typeof id !== 'string' || id === '')
    throw new Error(`the quote answer carries no data.id: ${answer.body.slice(0, 200)}`);
  return id;
}

/**
 * POST /v3/fx/trades, each executing a quote made for it on the core at coreUrl just before it is
 * signed (the quote is not timed), dealt round robin over the signers' orgs.
 */
function v3TradePlan(coreUrl: string, signers: readonly V3RequestSigner[]): SingleUsePlan {
  let next = 0;
  const make = async (): Promise<PreparedRequest> => {
    const signer = signers[next++ % signers.length]!;
    const quote = await setupCall(coreUrl, await signedPost(signer, '/v3/fx/quotes', QUOTE_BODY, 'quote'));
    return signedPost(signer, '/v3/fx/trades', JSON.stringify({ quoteId: quoteIdOf(quote) }), 'trade');
  };
  // The quotes live 60 s like the tokens, and each is made just before its token: a few
  // seconds less, so that the pool-age check also covers the quotes.
  return { kind: 'single-use', lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS - QUOTE_MARGIN_SECONDS, make };
}

/** A signed GET. */
async function signedGet(signer: V3RequestSigner, path: string): Promise<PreparedRequest> {
  return { method: 'GET', path, headers: await signer.headers({ method: 'GET', pathAndQuery: path }) };
}

/** A single-use plan of signed v3 GETs of one path. */
function v3GetPlan(signer: V3RequestSigner, path: string): SingleUsePlan {
  return { kind: 'single-use', lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS, make: () => signedGet(signer, path) };
}

/** A single-use plan of legacy GETs of one path, a fresh legacy JWT each. */
function legacyGetPlan(legacy: LegacySigner, path: string): SingleUsePlan {
  return {
    kind: 'single-use',
    lifetimeSeconds: LEGACY_MAX_TOKEN_LIFETIME_SECONDS,
    make: () => legacy.get(path),
    cryptography: 'legacy',
  };
}

/** A single-use plan of v2 POSTs of one body, a fresh legacy JWT and Idempotency-Key each. */
function legacyPostPlan(legacy: LegacySigner, path: string, body: string): SingleUsePlan {
  return {
    kind: 'single-use',
    lifetimeSeconds: LEGACY_MAX_TOKEN_LIFETIME_SECONDS,
    make: () => legacy.post(path, body),
    cryptography: 'legacy',
  };
}

/** One request sent while setting a case up (seeding, reading a cursor); its 2xx answer, or a throw with the server's. */
async function setupCall(url: string, request: PreparedRequest): Promise<ReceivedResponse> {
  const response = await fetch(new URL(request.path, url), {
    method: request.method,
    headers: request.headers,
    body: request.body ?? null,
  });
  const body = await response.text();
  if (!response.ok)
    throw new Error(`setup ${request.method} ${request.path}: ${response.status} ${body.slice(0, 500)}`);
  return { statusCode: response.status, body };
}

const tradeAnswerSchema = z.object({ data: z.object({ id: z.string() }) });
const v3PageSchema = z.object({
  data: z.array(z.object({ id: z.string() })),
  pagination: z.object({ nextCursor: z.string().nullable() }),
});
const legacyPageSchema = z.object({
  data: z.array(z.object({ id: z.string() })),
  meta: z.object({ pagination: z.object({ total: z.number(), page: z.number() }) }),
});

/**
 * `count` trades on the signer's org, made through the core's v3 API as a client makes them (a
 * quote, then the trade executing it), one after the other; their ids, oldest first.
 */
async function seedTrades(coreUrl: string, signer: V3RequestSigner, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let made = 0; made < count; made += 1) {
    const quote = await setupCall(coreUrl, await signedPost(signer, '/v3/fx/quotes', QUOTE_BODY, 'seed-quote'));
    const trade = await setupCall(
      coreUrl,
      await signedPost(signer, '/v3/fx/trades', JSON.stringify({ quoteId: quoteIdOf(quote) }), 'seed-trade'),
    );
    ids.push(tradeAnswerSchema.parse(JSON.parse(trade.body)).data.id);
  }
  return ids;
}

/** The gateway in front of the core, as `fxgate all` wires it: on the core's database (its key registry) and Redis key prefix. */
function startGatewayFor(context: CaseContext, core: StartedCore): Promise<ServerProcess> {
  return context.launch('gateway', {
    upstreamUrl: core.server.url,
    databaseUrl: core.databaseUrl,
    redisUrl: context.settings.redisUrl,
    redisKeyPrefix: core.redisKeyPrefix,
  });
}

interface TradingSetup {
  readonly core: StartedCore;
  /** The gateway, when asked for. */
  readonly gateway: ServerProcess | null;
  /** The bench org's key, as a v3 client and as a legacy client. */
  readonly signer: V3RequestSigner;
  readonly legacy: LegacySigner;
  /** The seeded trades' ids, oldest first. */
  readonly tradeIds: readonly string[];
}

/**
 * A core with one org whose key may view and trade (TRADING_CORE), `trades` trades seeded on its
 * live book through v3, and the gateway in front of it when asked for. The gateway starts after
 * the seeding, so that nothing of the seeding is in its process.
 */
async function startTrading(
  context: CaseContext,
  options: { trades: number; gateway: boolean },
): Promise<TradingSetup> {
  const core = await startCore(context, TRADING_CORE);
  const signer = core.signers[0]!;
  const tradeIds = await seedTrades(core.server.url, signer, options.trades);
  const gateway = options.gateway ? await startGatewayFor(context, core) : null;
  return { core, gateway, signer, legacy: new LegacySigner(core.keyFiles[0]!, CORE_DEFAULTS.issuers[0]), tradeIds };
}

function gatewayOf(setup: TradingSetup): ServerProcess {
  if (setup.gateway === null) throw new Error('the case started no gateway');
  return setup.gateway;
}

/** Target: a v3 call through the gateway's /v3 passthrough keeps at least this share of the direct rate. */
const PASSTHROUGH_RATIO = 0.8;
/** Target: a legacy read through the gateway keeps at least this share of the same v3 read direct. */
const LEGACY_READ_RATIO = 0.5;
const V1_PAGE_ROW = `gw v1 page 3`;
const V2_QUOTE_ROW = 'gw v2 generate_quote';
const V2_WITHDRAWAL_ROW = 'gw v2 fiat_withdrawal';

/** The bench core's one verified USD FEDWIRE account (WITHDRAWAL_CORE). */
function benchWithdrawalAccountId(core: ServerProcess): string {
  const accountId = coreInfoSchema.parse(core.info).withdrawalAccountIds[0];
  if (accountId === undefined) throw new Error('the core made no bench withdrawal account');
  return accountId;
}

/** POST /v3/fx/quotes with QUOTE_BODY, a fresh token and Idempotency-Key each. */
function v3QuotePlan(signer: V3RequestSigner): SingleUsePlan {
  return {
    kind: 'single-use',
    lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS,
    make: () => signedPost(signer, '/v3/fx/quotes', QUOTE_BODY, 'quote'),
  };
}

/** POST /v3/fx/withdrawals of WITHDRAWAL_AMOUNT USD to the account, a fresh token and Idempotency-Key each. */
function v3WithdrawalPlan(signer: V3RequestSigner, accountId: string): SingleUsePlan {
  const body = JSON.stringify({ withdrawalAccountId: accountId, withdrawalAmount: WITHDRAWAL_AMOUNT, currency: 'USD' });
  return {
    kind: 'single-use',
    lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS,
    make: () => signedPost(signer, '/v3/fx/withdrawals', body, 'withdrawal'),
  };
}

/** The rows every side-by-side gateway case has, besides its legacy row. */
const DIRECT_ROW = 'v3 direct';
const PASSTHROUGH_ROW = 'gw v3 passthrough';

/**
 * A gateway case's rows side by side (load.ts measureSideBySide), each probed with one request
 * first; the CPU time of the gateway, its upstream and any other server is charged to each row.
 */
function sideBySideTarget(
  gateway: ServerProcess,
  upstream: ServerProcess,
  rows: readonly SideBySideRow[],
  /** Servers of rows that do not go through the gateway, charged like it. */
  others: readonly ServerProcess[] = [],
  /** The core's database, analyzed once the rows have warmed up (resources.ts analyzeDatabase). */
  databaseUrl?: string,
): CaseTarget {
  const servers = [gateway, upstream, ...others];
  return {
    url: gateway.url,
    servers,
    plan: {
      kind: 'self-measured',
      async probe() {
        for (const row of rows) await probe(row.url, row.plan);
      },
      measure: (settings) =>
        measureSideBySide(rows, settings, servers, databaseUrl ? () => analyzeDatabase(databaseUrl) : undefined),
    },
  };
}

/**
 * The same v3 request direct to the core and through the gateway's /v3 passthrough, then the
 * legacy request that does the same work through the gateway: the three rows of a gateway case.
 */
function gatewayRows(
  core: ServerProcess,
  gateway: ServerProcess,
  v3: SingleUsePlan,
  legacy: { label: string; plan: SingleUsePlan },
): SideBySideRow[] {
  return [
    { label: DIRECT_ROW, url: core.url, plan: v3 },
    { label: PASSTHROUGH_ROW, url: gateway.url, plan: v3 },
    { label: legacy.label, url: gateway.url, plan: legacy.plan },
  ];
}

/** The throughput targets of a gateway case: the passthrough's, and the legacy row's when it has one. */
function gatewayComparisons(legacyRow: string, legacyTarget?: number): RowComparison[] {
  return [
    { row: PASSTHROUGH_ROW, of: DIRECT_ROW, targetRatio: PASSTHROUGH_RATIO },
    { row: legacyRow, of: DIRECT_ROW, ...(legacyTarget === undefined ? {} : { targetRatio: legacyTarget }) },
  ];
}

/** The trades seeded for the page case: page 3 of 10 is full, with more behind it. */
const PAGE_TRADES = 35;
const PAGE_SIZE = 10;
const PAGE_NUMBER = 3;

/** The v3 cursor after the first `records` trades (newest first): what a v3 client holds when it asks for the next page. */
async function cursorAfter(coreUrl: string, signer: V3RequestSigner, records: number): Promise<string> {
  const answer = await setupCall(coreUrl, await signedGet(signer, `/v3/fx/trades?limit=${records}`));
  const page = v3PageSchema.parse(JSON.parse(answer.body));
  if (page.data.length !== records || page.pagination.nextCursor === null)
    throw new Error(`the first ${records} trades gave no cursor: ${answer.body.slice(0, 300)}`);
  return page.pagination.nextCursor;
}

/** v3 GET of the page of trades after `records` records, from the cursor read at setup. */
async function v3PagePath(coreUrl: string, signer: V3RequestSigner, records: number): Promise<string> {
  return `/v3/fx/trades?limit=${PAGE_SIZE}&startingAfter=${encodeURIComponent(await cursorAfter(coreUrl, signer, records))}`;
}

const STATIC_DIRECT_ROW = 'static-v3 direct';
const RELAY_ALONE_ROW = 'relay alone';
/**
 * A v3 read as the passthrough sees one: the signing headers at their real sizes (an ES256 JWT,
 * an ECDSA signature), which it copies but never checks; static-v3 does not check them either.
 */
const STATIC_V3_REQUEST: PreparedRequest = {
  method: 'GET',
  path: STATIC_V3_PATH,
  headers: { authorization: `Bearer ${'e'.repeat(420)}`, 'x-request-signature': 's'.repeat(96), 'x-app-mode': 'LIVE' },
};

/** What the gateway cases should stay under (issue: gateway RSS < 200 MB). */
const GATEWAY_RSS: RssTarget = { app: 'gateway', maxMegabytes: 200 };
const TRADE_GET = 'trade-get';
const V1_TRADE_ROW = 'gw v1';
const V3_SKELETON_ROW = 'v3 skeleton';
const V1_SKELETON_ROW = 'v1 skeleton';
/** The fixed-rate case's rows together take this fraction of the machine (halfPeakPlan). */
const HALF_PEAK = 0.5;

/** The measured part's uncounted lead-in (paced-load.ts): the connections open and busy before the clock starts. */
const PACED_LEAD_IN_SECONDS = 2;
/**
 * The rows are measured this many times BENCH_DURATION: each gets a third of the requests it
 * would alone, and a p99 rests on its slowest 1%.
 */
const HALF_PEAK_DURATION_FACTOR = 3;

/**
 * The rows together at one fixed rate each (paced-load.ts pacedTogether), such that the mix
 * takes HALF_PEAK of the machine: with peak_i a row's own peak rate, each row is offered
 * HALF_PEAK / sum(1 / peak_i) req/s, so that the shares rate / peak_i add up to HALF_PEAK.
 * The peaks are the rates trade-get measured earlier in this run for the same rows, or, when it
 * did not run, rates estimated here by warm-up rounds. The rows warm up together for
 * warmupSeconds at that rate, then are measured together.
 */
function halfPeakPlan(context: CaseContext, rows: readonly SideBySideRow[]): RequestPlan {
  return {
    kind: 'self-measured',
    async probe() {
      for (const row of rows) await probe(row.url, row.plan);
    },
    async measure(settings): Promise<CaseMeasurement> {
      const earlier = context.earlierReport(TRADE_GET)?.measurement.rows;
      const peaks: number[] = [];
      for (const row of rows) {
        const measured = earlier?.find((candidate) => candidate.label === row.label)?.requestsPerSecond;
        peaks.push(
          measured !== undefined && measured > 0
            ? measured
            : await estimateRate(row.url, () => row.plan.make(), settings),
        );
      }
      const peakSource = `${rows.map((row, index) => `${row.label} ${peaks[index]!.toFixed(0)}`).join(', ')} req/s, ${
        earlier === undefined
          ? `estimated here by warm-up rounds, as ${TRADE_GET} was not in this run`
          : `measured by ${TRADE_GET} earlier in this run`
      }`;
      const rate = Math.max(1, Math.round(HALF_PEAK / peaks.reduce((sum, peak) => sum + 1 / peak, 0)));
      const pacedRows = (samples: boolean): PacedRow[] =>
        rows.map((row) => ({
          label: row.label,
          url: row.url,
          rate,
          make: () => row.plan.make(),
          lifetimeSeconds: row.plan.lifetimeSeconds,
          ...(samples && settings.samplesDir !== undefined
            ? { samplesFile: join(settings.samplesDir, `paced-${row.label.replace(/[^A-Za-z0-9]+/g, '-')}.csv`) }
            : {}),
        }));
      const warmups = await pacedTogether(pacedRows(false), {
        seconds: settings.warmupSeconds,
        leadInSeconds: 0,
        connections: settings.connections,
      });
      for (const warmup of warmups) {
        if (warmup.row.errors > 0 || warmup.row.non2xx > 0) {
          throw new Error(
            `${warmup.row.label} warm-up at ${rate} req/s: ${warmup.row.errors} errors, ${warmup.row.non2xx} non-2xx (${warmup.failureSamples.join(' | ')})`,
          );
        }
      }
      const seconds = settings.durationSeconds * HALF_PEAK_DURATION_FACTOR;
      const runs = await pacedTogether(pacedRows(true), {
        seconds,
        leadInSeconds: PACED_LEAD_IN_SECONDS,
        connections: settings.connections,
      });
      const measured: RowMeasurement[] = runs.map((run) => run.row);
      const notes = [
        `each row offered ${rate} req/s, all rows at once, so that together they take ${HALF_PEAK * 100}% of the machine by their peaks (${peakSource}); ` +
          `open loop, evenly spaced and interleaved, each row over up to ${settings.connections} connections of its own: warmed up ${settings.warmupSeconds} s, ` +
          `then ${seconds} s measured after a ${PACED_LEAD_IN_SECONDS} s lead-in that is not counted; latency from dispatch to the last byte`,
      ];
      const [baseline, ...others] = measured;
      if (baseline !== undefined) {
        for (const row of others) {
          notes.push(
            `${row.label} vs ${baseline.label}: p50 ${formatSignedMs(row.latencyMs.p50 - baseline.latencyMs.p50)}, p99 ${formatSignedMs(row.latencyMs.p99 - baseline.latencyMs.p99)}`,
          );
          if (row.addedMs !== undefined) {
            notes.push(
              `${row.label}, per request (its latency less the gateway's Server-Timing upstream time): added p50 ${row.addedMs.p50.toFixed(2)} ms, p99 ${row.addedMs.p99.toFixed(2)} ms`,
            );
          }
          if (row.gatewayMs !== undefined) {
            notes.push(
              `${row.label}, the gateway handler's own time (Server-Timing gateway): p50 ${row.gatewayMs.p50.toFixed(2)} ms, p99 ${row.gatewayMs.p99.toFixed(2)} ms; the rest of the added time is the hop and waits before the handler ran`,
            );
          }
        }
      }
      notes.push(
        `send lag behind the schedule (load generator): ${runs.map((run) => `${run.row.label} p99 ${run.dispatchLagMs.p99.toFixed(2)} ms, max ${run.dispatchLagMs.max.toFixed(2)} ms`).join('; ')}`,
      );
      for (const run of runs)
        if (run.failureSamples.length > 0)
          notes.push(`${run.row.label}: first failures: ${run.failureSamples.join(' | ')}`);
      return { rows: measured, warmupRates: [], pool: null, chained: null, notes };
    },
  };
}

const SHADOW_OFF_ROW = 'gw v1, shadow off';
const SHADOW_ON_ROW = 'gw v1, shadow on';
const PACED_OFF_ROW = 'paced: shadow off';
const PACED_OFF_AGAIN_ROW = 'paced: shadow off, again';
const PACED_ON_ROW = 'paced: shadow on';
/** The shadow mode's target: a mirrored read costs the gateway at most this many times an unmirrored one. */
const SHADOW_CPU_RATIO = 1.5;

/**
 * The shadow-reads case's measurement, in two parts on one setup. Side by side at full load
 * (measureSideBySide), the same v1 read to a gateway without shadow mode and to one mirroring
 * every read: the CPU one request cost each gateway process. Then all three gateways together
 * at one fixed rate each (as halfPeakPlan, half of the machine by the side-by-side rates): the
 * client's p99 with shadow mode on against off, and, as the measure of the noise, a second
 * gateway without shadow mode against the first.
 */
function shadowReadsPlan(
  gateways: { off: ServerProcess; offAgain: ServerProcess; on: ServerProcess },
  others: readonly ServerProcess[],
  plan: SingleUsePlan,
): RequestPlan {
  const rows: SideBySideRow[] = [
    { label: SHADOW_OFF_ROW, url: gateways.off.url, plan },
    { label: SHADOW_ON_ROW, url: gateways.on.url, plan },
  ];
  const servers = [gateways.off, gateways.on, ...others];
  return {
    kind: 'self-measured',
    async probe() {
      for (const url of [gateways.off.url, gateways.offAgain.url, gateways.on.url]) await probe(url, plan);
    },
    async measure(settings): Promise<CaseMeasurement> {
      const sideBySide = await measureSideBySide(rows, settings, servers);
      const [offRow, onRow] = sideBySide.rows;
      const offCpu = offRow?.cpuMicrosPerRequest?.[0] ?? Number.NaN;
      const onCpu = onRow?.cpuMicrosPerRequest?.[1] ?? Number.NaN;
      const ratio = onCpu / offCpu;
      const peaks = [offRow?.requestsPerSecond ?? 0, offRow?.requestsPerSecond ?? 0, onRow?.requestsPerSecond ?? 0];
      const rate = Math.max(1, Math.round(HALF_PEAK / peaks.reduce((sum, peak) => sum + 1 / Math.max(peak, 1), 0)));
      const pacedRows: PacedRow[] = [
        [PACED_OFF_ROW, gateways.off.url],
        [PACED_OFF_AGAIN_ROW, gateways.offAgain.url],
        [PACED_ON_ROW, gateways.on.url],
      ].map(([label, url]) => ({
        label: label!,
        url: url!,
        rate,
        make: () => plan.make(),
        lifetimeSeconds: plan.lifetimeSeconds,
      }));
      const sampled = pacedRows.map((row) =>
        settings.samplesDir === undefined
          ? row
          : {
              ...row,
              samplesFile: join(settings.samplesDir, `shadow-${row.label.replace(/[^A-Za-z0-9]+/g, '-')}.csv`),
            },
      );
      const warmups = await pacedTogether(pacedRows, {
        seconds: settings.warmupSeconds,
        leadInSeconds: 0,
        connections: settings.connections,
      });
      for (const warmup of warmups) {
        if (warmup.row.errors > 0 || warmup.row.non2xx > 0)
          throw new Error(
            `${warmup.row.label} warm-up at ${rate} req/s: ${warmup.row.errors} errors, ${warmup.row.non2xx} non-2xx (${warmup.failureSamples.join(' | ')})`,
          );
      }
      const seconds = settings.durationSeconds * HALF_PEAK_DURATION_FACTOR;
      const runs = await pacedTogether(sampled, {
        seconds,
        leadInSeconds: PACED_LEAD_IN_SECONDS,
        connections: settings.connections,
      });
      const [off, offAgain, on] = runs.map((run) => run.row);
      const p99 = (row: RowMeasurement | undefined): number => row?.latencyMs.p99 ?? Number.NaN;
      const notes = [
        ...sideBySide.notes,
        `CPU of a v1 trade read to its gateway: ${offCpu.toFixed(0)} µs without shadow mode, ${onCpu.toFixed(0)} µs mirrored (the legacy service asked and the answers compared): ` +
          `${ratio.toFixed(2)}x, ${(onCpu - offCpu).toFixed(0)} µs added; target at most ${SHADOW_CPU_RATIO}x: ${ratio <= SHADOW_CPU_RATIO ? 'met' : 'MISSED'}`,
        `client p99 at ${rate} req/s per gateway, the three together (${seconds} s after a ${PACED_LEAD_IN_SECONDS} s lead-in): shadow off ${p99(off).toFixed(2)} ms, ` +
          `shadow on ${p99(on).toFixed(2)} ms (${formatSignedMs(p99(on) - p99(off))}); the noise, a second gateway without shadow mode: ${p99(offAgain).toFixed(2)} ms (${formatSignedMs(p99(offAgain) - p99(off))})`,
      ];
      for (const run of runs)
        if (run.failureSamples.length > 0)
          notes.push(`${run.row.label}: first failures: ${run.failureSamples.join(' | ')}`);
      return {
        rows: [...sideBySide.rows, ...runs.map((run) => run.row)],
        warmupRates: [],
        pool: null,
        chained: null,
        notes,
      };
    },
  };
}

/**
 * BENCH_METRICS_CONTROL=1: the gateway-metrics case with no metrics on either side, its "on"
 * rows named "off again": two identical gateways, whose difference is this machine's noise.
 */
const METRICS_CONTROL = process.env.BENCH_METRICS_CONTROL === '1';
const METRICS_ON = METRICS_CONTROL ? 'metrics off again' : 'metrics on';
const METRICS_ROWS = {
  v1Off: 'gw v1, metrics off',
  v1On: `gw v1, ${METRICS_ON}`,
  passthroughOff: 'gw v3 passthrough, metrics off',
  passthroughOn: `gw v3 passthrough, ${METRICS_ON}`,
  relayOff: 'static-v3 via gw, metrics off',
  relayOn: `static-v3 via gw, ${METRICS_ON}`,
} as const;
/** The metrics' target: a gateway keeping them serves at least this share of the same gateway without them. */
const METRICS_RATIO = 0.95;

const TRACING_ROWS = {
  off: 'gw v1, tracing off',
  offAgain: 'gw v1, tracing off, again',
  on: 'gw v1, tracing on',
} as const;

/**
 * An OTLP/HTTP endpoint on 127.0.0.1 that takes every export and drops it (200, empty body), for
 * the tracing case's exporter: the cost measured is the gateway's, not a collector's.
 */
async function startOtlpSink(cleanup: CleanupStack): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.defer('closing the OTLP sink', async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The legacy quote body of the quotes case's v2 row: its v3 request in v2's words. */
const LEGACY_QUOTE_BODY = JSON.stringify({ amount: 1000, buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' });

export const PGBOUNCER_CASE = 'pgbouncer';
const TRADE_ROW = 'trade';
const TRADE_READ_ROW = 'trade read';
/** The pgbouncer case's cores, in row order; the first is the reference of the others. */
const POOL_ROUTES = [
  {
    label: 'session, direct',
    poolMode: 'session',
    throughPgBouncer: false,
    meaning: 'FXGATE_DB_POOL_MODE=session (named statements) straight to PostgreSQL, as every other case runs',
  },
  {
    label: 'transaction, direct',
    poolMode: 'transaction',
    throughPgBouncer: false,
    meaning:
      'FXGATE_DB_POOL_MODE=transaction (unnamed statements, SET LOCAL statement_timeout with each BEGIN) straight to PostgreSQL: the cost of the mode alone',
  },
  {
    label: 'transaction, PgBouncer',
    poolMode: 'transaction',
    throughPgBouncer: true,
    meaning: 'the same through PgBouncer: the mode and the hop',
  },
] as const satisfies readonly { label: string; poolMode: DbPoolMode; throughPgBouncer: boolean; meaning: string }[];
/**
 * PgBouncer's server connections per database in the pgbouncer case: as many as a core's own
 * pool opens directly, so that the rows differ by the hop and the statements, not by how many
 * transactions PostgreSQL runs at once.
 */
const BENCH_PGBOUNCER_POOL_SIZE = POSTGRES_DEFAULTS.maxConnections;

export const BENCH_CASES: readonly BenchCase[] = [
  {
    name: BARE_CASE,
    description: 'fastify 5, one route returning {hello:"world"}: the reference for every ratio',
    async start(context) {
      const server = await context.launch('bare');
      return {
        url: server.url,
        servers: [server],
        plan: { kind: 'reusable', request: { method: 'GET', path: '/', headers: {} } },
      };
    },
  },
  {
    name: 'v3-pairs',
    description:
      'authenticated GET /v3/fx/pairs on the core: JWT + request signature, nonce and rate limit in Redis, pairs from PostgreSQL through a 5 s cache',
    targetRatioToBare: 0.3,
    async start(context) {
      const { server, signer } = await startSingleOrgCore(context);
      const path = '/v3/fx/pairs';
      return {
        url: server.url,
        servers: [server],
        plan: {
          kind: 'single-use',
          lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS,
          make: async () => ({
            method: 'GET',
            path,
            headers: await signer.headers({ method: 'GET', pathAndQuery: path }),
          }),
        },
      };
    },
  },
  {
    name: TRADE_GET,
    description:
      `GET of one trade, seeded through v3 at start (quote, then trade), side by side on one core and gateway (as \`fxgate all\` wires them: ` +
      `one database, one Redis prefix). ${DIRECT_ROW}: GET /v3/fx/trades/{id} to the core (JWT + request signature, nonce and rate limit ` +
      `in Redis, the trade from PostgreSQL). ${PASSTHROUGH_ROW}: the same requests to the gateway's /v3 passthrough (@fastify/http-proxy ` +
      `over loopback, request and answer as they are, checked by the core). ${V1_TRADE_ROW}: v1 GET /v1/brokerage/{org}/trade/{legacy uuid} ` +
      "to the gateway: the legacy JWT (the core's bench key, from the shared registry; nonce in the shared Redis), the gateway's own v3 " +
      'call (its provisioned key, a fresh token and signature) and the answer turned into the v1 trade with exact amounts',
    rowComparisons: gatewayComparisons(V1_TRADE_ROW, LEGACY_READ_RATIO),
    rssTarget: GATEWAY_RSS,
    async start(context) {
      const setup = await startTrading(context, { trades: 1, gateway: true });
      const gateway = gatewayOf(setup);
      const tradeId = setup.tradeIds[0]!;
      const v1Path = setup.legacy.path('v1', `trade/${legacyUuidOf('trade', tradeId)}`);
      const rows = gatewayRows(setup.core.server, gateway, v3GetPlan(setup.signer, `/v3/fx/trades/${tradeId}`), {
        label: V1_TRADE_ROW,
        plan: legacyGetPlan(setup.legacy, v1Path),
      });
      return sideBySideTarget(gateway, setup.core.server, rows, [], setup.core.databaseUrl);
    },
  },
  {
    name: 'read-skeleton',
    description:
      `${TRADE_GET}'s trade read direct and as v1, each beside its skeleton (skeletons.ts): the same requests to a server that does ` +
      "only the read's necessary work on the same libraries (node:http, node:crypto, ioredis, pg, undici), with no framework and " +
      `none of fxgate's pipeline. ${DIRECT_ROW} and ${V3_SKELETON_ROW}: GET /v3/fx/trades/{id} to the core and to the v3 skeleton ` +
      `(the core's database and SELECT); ${V1_TRADE_ROW} and ${V1_SKELETON_ROW}: v1 trade/{uuid} to the gateway and to the v1 ` +
      `skeleton, both calling the core; ${PASSTHROUGH_ROW} and ${RELAY_ALONE_ROW}: the v3 read through the gateway's /v3 passthrough ` +
      "and through the gateway's relay alone in a bare fastify app (upstream-relay). A skeleton's CPU per request is a lower bound for " +
      "its server's on this stack and machine, and a row's rate against direct says what share of the core's rate the hop leaves",
    rowComparisons: [
      { row: DIRECT_ROW, of: V3_SKELETON_ROW },
      { row: V1_TRADE_ROW, of: V1_SKELETON_ROW },
      { row: V1_SKELETON_ROW, of: DIRECT_ROW },
      { row: PASSTHROUGH_ROW, of: DIRECT_ROW },
      { row: RELAY_ALONE_ROW, of: DIRECT_ROW },
    ],
    async start(context) {
      const { settings, cleanup } = context;
      const setup = await startTrading(context, { trades: 1, gateway: true });
      const gateway = gatewayOf(setup);
      const tradeId = setup.tradeIds[0]!;
      const keyFiles = JSON.stringify(setup.core.keyFiles);
      const v3Skeleton = await context.launch('v3-read-skeleton', {
        databaseUrl: setup.core.databaseUrl,
        redisUrl: settings.redisUrl,
        redisKeyPrefix: createRedisPrefix(settings.redisUrl, cleanup),
        keyFiles,
      });
      const v1Skeleton = await context.launch('v1-read-skeleton', {
        upstreamUrl: setup.core.server.url,
        redisUrl: settings.redisUrl,
        redisKeyPrefix: createRedisPrefix(settings.redisUrl, cleanup),
        keyFiles,
        issuer: CORE_DEFAULTS.issuers[0],
      });
      const relay = await context.launch('upstream-relay', { upstreamUrl: setup.core.server.url });
      const v3 = v3GetPlan(setup.signer, `/v3/fx/trades/${tradeId}`);
      const v1 = legacyGetPlan(setup.legacy, setup.legacy.path('v1', `trade/${legacyUuidOf('trade', tradeId)}`));
      const rows: SideBySideRow[] = [
        { label: DIRECT_ROW, url: setup.core.server.url, plan: v3 },
        { label: V3_SKELETON_ROW, url: v3Skeleton.url, plan: v3 },
        { label: V1_TRADE_ROW, url: gateway.url, plan: v1 },
        { label: V1_SKELETON_ROW, url: v1Skeleton.url, plan: v1 },
        { label: PASSTHROUGH_ROW, url: gateway.url, plan: v3 },
        { label: RELAY_ALONE_ROW, url: relay.url, plan: v3 },
      ];
      return sideBySideTarget(
        gateway,
        setup.core.server,
        rows,
        [v3Skeleton, v1Skeleton, relay],
        setup.core.databaseUrl,
      );
    },
  },
  {
    name: 'trade-get-half-peak',
    description:
      `added latency below saturation: ${TRADE_GET}'s three rows (the trade read direct, through the passthrough, and as v1) on one core and ` +
      `gateway, all at once at one fixed rate each, together ${HALF_PEAK * 100}% of the machine; target: a gateway row's p99 is under 5 ms above ` +
      `${DIRECT_ROW}'s. Rates are offered, not peak: the vs-bare column does not apply`,
    addedLatencyTarget: { baselineRow: DIRECT_ROW, maxAddedP99Ms: 5 },
    async start(context) {
      const setup = await startTrading(context, { trades: 1, gateway: true });
      const gateway = gatewayOf(setup);
      const tradeId = setup.tradeIds[0]!;
      const rows = gatewayRows(setup.core.server, gateway, v3GetPlan(setup.signer, `/v3/fx/trades/${tradeId}`), {
        label: V1_TRADE_ROW,
        plan: legacyGetPlan(setup.legacy, setup.legacy.path('v1', `trade/${legacyUuidOf('trade', tradeId)}`)),
      });
      return { url: gateway.url, servers: [gateway, setup.core.server], plan: halfPeakPlan(context, rows) };
    },
  },

  {
    name: 'shadow-reads',
    description:
      `shadow mode's cost: the v1 trade read of ${TRADE_GET} (one trade seeded through v3) to three gateways on one core, ` +
      `as \`fxgate all\` wires them: two without shadow mode and one in shadow mode (FXGATE_SHADOW_SAMPLE=1, the gateway serving) beside ` +
      `static-legacy, a legacy service answering the gateway's own answer to that read, recorded at start, so that every comparison ` +
      `finds nothing (one translation a read, the usual case). Side by side at full load, ${SHADOW_OFF_ROW} and ${SHADOW_ON_ROW}: the CPU ` +
      `a read costs each gateway process (target: mirrored at most ${SHADOW_CPU_RATIO}x). Then the three together at one fixed rate, ` +
      `half of the machine by those rates: the client's p99 with shadow mode on and off (target: unchanged within the noise, which the ` +
      `second gateway without shadow mode shows)`,
    rowComparisons: [{ row: SHADOW_ON_ROW, of: SHADOW_OFF_ROW }],
    rssTarget: GATEWAY_RSS,
    async start(context) {
      const setup = await startTrading(context, { trades: 1, gateway: true });
      const off = gatewayOf(setup);
      const offAgain = await startGatewayFor(context, setup.core);
      const path = setup.legacy.path('v1', `trade/${legacyUuidOf('trade', setup.tradeIds[0]!)}`);
      const recorded = await setupCall(off.url, await setup.legacy.get(path));
      const legacy = await context.launch('static-legacy', { answer: recorded.body });
      const on = await context.launch('gateway', {
        upstreamUrl: setup.core.server.url,
        databaseUrl: setup.core.databaseUrl,
        redisUrl: context.settings.redisUrl,
        redisKeyPrefix: setup.core.redisKeyPrefix,
        shadowUrl: legacy.url,
        shadowSample: '1',
      });
      return {
        url: on.url,
        servers: [on, off, offAgain, setup.core.server, legacy],
        plan: shadowReadsPlan({ off, offAgain, on }, [setup.core.server, legacy], legacyGetPlan(setup.legacy, path)),
      };
    },
  },
  {
    name: 'gateway-metrics',
    description:
      `the gateway's Prometheus metrics, on and off, side by side: two gateways on one core (as \`fxgate all\` wires them), one keeping ` +
      `its metrics (a gateway with an admin listener) and one without, and two more in front of static-v3 the same way. ${METRICS_ROWS.v1Off} ` +
      `and ${METRICS_ROWS.v1On}: ${TRADE_GET}'s v1 trade read; ${METRICS_ROWS.passthroughOff} and ${METRICS_ROWS.passthroughOn}: its /v3 ` +
      `trade read; ${METRICS_ROWS.relayOff} and ${METRICS_ROWS.relayOn}: passthrough-relay's read of static-v3, where nothing behind the ` +
      `gateway costs, so that the CPU per request is the gateway's own. Target: each on row at least ${METRICS_RATIO * 100}% of its off row` +
      (METRICS_CONTROL ? '. BENCH_METRICS_CONTROL=1: no metrics on either side (the noise)' : ''),
    rowComparisons: [
      { row: METRICS_ROWS.v1On, of: METRICS_ROWS.v1Off, targetRatio: METRICS_RATIO },
      { row: METRICS_ROWS.passthroughOn, of: METRICS_ROWS.passthroughOff, targetRatio: METRICS_RATIO },
      { row: METRICS_ROWS.relayOn, of: METRICS_ROWS.relayOff, targetRatio: METRICS_RATIO },
    ],
    rssTarget: GATEWAY_RSS,
    async start(context) {
      const setup = await startTrading(context, { trades: 1, gateway: true });
      const off = gatewayOf(setup);
      const wiring = {
        upstreamUrl: setup.core.server.url,
        databaseUrl: setup.core.databaseUrl,
        redisUrl: context.settings.redisUrl,
        redisKeyPrefix: setup.core.redisKeyPrefix,
      };
      const on = await context.launch('gateway', { ...wiring, metrics: METRICS_CONTROL ? 'off' : 'on' });
      const upstream = await context.launch('static-v3');
      // A passthrough request reads neither the key registry nor the store; the gateways open them at start.
      const staticWiring = {
        upstreamUrl: upstream.url,
        databaseUrl: await createBenchDatabase(context.settings.databaseUrl, context.cleanup),
        redisUrl: context.settings.redisUrl,
        redisKeyPrefix: createRedisPrefix(context.settings.redisUrl, context.cleanup),
      };
      const relayOff = await context.launch('gateway', staticWiring);
      const relayOn = await context.launch('gateway', { ...staticWiring, metrics: METRICS_CONTROL ? 'off' : 'on' });
      const tradeId = setup.tradeIds[0]!;
      const v1 = legacyGetPlan(setup.legacy, setup.legacy.path('v1', `trade/${legacyUuidOf('trade', tradeId)}`));
      const v3 = v3GetPlan(setup.signer, `/v3/fx/trades/${tradeId}`);
      const relay: SingleUsePlan = {
        kind: 'single-use',
        lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS,
        make: async () => STATIC_V3_REQUEST,
      };
      const rows: SideBySideRow[] = [
        { label: METRICS_ROWS.v1Off, url: off.url, plan: v1 },
        { label: METRICS_ROWS.v1On, url: on.url, plan: v1 },
        { label: METRICS_ROWS.passthroughOff, url: off.url, plan: v3 },
        { label: METRICS_ROWS.passthroughOn, url: on.url, plan: v3 },
        { label: METRICS_ROWS.relayOff, url: relayOff.url, plan: relay },
        { label: METRICS_ROWS.relayOn, url: relayOn.url, plan: relay },
      ];
      const servers = [off, on, setup.core.server, relayOff, relayOn, upstream];
      return {
        url: on.url,
        servers,
        plan: {
          kind: 'self-measured',
          async probe() {
            for (const row of rows) await probe(row.url, row.plan);
          },
          measure: (settings) => measureSideBySide(rows, settings, servers),
        },
      };
    },
  },
  {
    name: 'tracing',
    description:
      `the gateway's tracing, off and on, side by side: three gateways on one core (as \`fxgate all\` wires them), two without tracing ` +
      `and one tracing every request (OTLP over http/protobuf, batched, to a sink on 127.0.0.1 that drops what it gets; the core does ` +
      `not trace). Each row is ${TRADE_GET}'s v1 trade read. ${TRACING_ROWS.offAgain} against ${TRACING_ROWS.off} is the noise; ` +
      `${TRACING_ROWS.on} against ${TRACING_ROWS.off} is what tracing costs, in throughput and in the gateway's CPU per request`,
    rowComparisons: [
      { row: TRACING_ROWS.offAgain, of: TRACING_ROWS.off },
      { row: TRACING_ROWS.on, of: TRACING_ROWS.off },
    ],
    rssTarget: GATEWAY_RSS,
    async start(context) {
      const setup = await startTrading(context, { trades: 1, gateway: true });
      const off = gatewayOf(setup);
      const wiring = {
        upstreamUrl: setup.core.server.url,
        databaseUrl: setup.core.databaseUrl,
        redisUrl: context.settings.redisUrl,
        redisKeyPrefix: setup.core.redisKeyPrefix,
      };
      const offAgain = await context.launch('gateway', wiring);
      const on = await context.launch('gateway', {
        ...wiring,
        tracing: 'on',
        otlpEndpoint: await startOtlpSink(context.cleanup),
      });
      const tradeId = setup.tradeIds[0]!;
      const v1 = legacyGetPlan(setup.legacy, setup.legacy.path('v1', `trade/${legacyUuidOf('trade', tradeId)}`));
      const rows: SideBySideRow[] = [
        { label: TRACING_ROWS.off, url: off.url, plan: v1 },
        { label: TRACING_ROWS.offAgain, url: offAgain.url, plan: v1 },
        { label: TRACING_ROWS.on, url: on.url, plan: v1 },
      ];
      const servers = [off, offAgain, on, setup.core.server];
      return {
        url: on.url,
        servers,
        plan: {
          kind: 'self-measured',
          async probe() {
            for (const row of rows) await probe(row.url, row.plan);
          },
          measure: (settings) => measureSideBySide(rows, settings, servers),
        },
      };
    },
  },
  {
    name: 'passthrough-relay',
    description:
      `the gateway's own cost on the /v3 passthrough, with nothing behind it that costs: static-v3 (one fixed answer of a trade read's size ` +
      `and headers, no work) side by side, direct and through a gateway in front of it. ${STATIC_DIRECT_ROW}: GET ${STATIC_V3_PATH} ` +
      `to static-v3, with a v3 request's headers. ${PASSTHROUGH_ROW}: the same to the gateway. ${RELAY_ALONE_ROW}: the same to ` +
      `the gateway's upstream relay alone in a minimal fastify app (no logger, no hook, one route) in front of the same static-v3: ` +
      `the passthrough's CPU per request is compared with its CPU per request at the same load. No target: the figure to watch is the ` +
      `gateway's CPU per request, which ${TRADE_GET}'s passthrough row pays on top of the core's work`,
    rowComparisons: [
      { row: PASSTHROUGH_ROW, of: STATIC_DIRECT_ROW },
      { row: RELAY_ALONE_ROW, of: STATIC_DIRECT_ROW },
    ],
    rssTarget: GATEWAY_RSS,
    async start(context) {
      const upstream = await context.launch('static-v3');
      const gateway = await context.launch('gateway', {
        upstreamUrl: upstream.url,
        // The gateway opens its key registry and store at start; a passthrough request reads neither.
        databaseUrl: await createBenchDatabase(context.settings.databaseUrl, context.cleanup),
        redisUrl: context.settings.redisUrl,
        redisKeyPrefix: createRedisPrefix(context.settings.redisUrl, context.cleanup),
      });
      // Side-by-side rows take single-use plans; nothing checks this request's credentials, so one serves every time.
      const plan: SingleUsePlan = {
        kind: 'single-use',
        lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS,
        make: async () => STATIC_V3_REQUEST,
      };
      const relay = await context.launch('upstream-relay', { upstreamUrl: upstream.url });
      const rows: SideBySideRow[] = [
        { label: STATIC_DIRECT_ROW, url: upstream.url, plan },
        { label: PASSTHROUGH_ROW, url: gateway.url, plan },
        { label: RELAY_ALONE_ROW, url: relay.url, plan },
      ];
      return sideBySideTarget(gateway, upstream, rows, [relay]);
    },
  },
  {
    name: 'trades-page',
    description:
      `page ${PAGE_NUMBER} of ${PAGE_SIZE} trades, ${PAGE_TRADES} seeded through v3, side by side on one core and gateway. ${DIRECT_ROW}: ` +
      `GET /v3/fx/trades?limit=${PAGE_SIZE}&startingAfter=<cursor after the ${(PAGE_NUMBER - 1) * PAGE_SIZE}th trade, read at start> to the core. ` +
      `${PASSTHROUGH_ROW}: the same through the gateway's /v3 passthrough. ${V1_PAGE_ROW}: v1 GET /v1/brokerage/{org}/trades?page=${PAGE_NUMBER}` +
      `&limit=${PAGE_SIZE} to the gateway: legacy JWT, then the page walker (its snapshot of cursors in Redis: the first request walks the ` +
      "list, later ones read the head page up to the page's end) and the v1 trade list, checked at start to hold the same trades as v3's page",
    rowComparisons: gatewayComparisons(V1_PAGE_ROW, LEGACY_READ_RATIO),
    rssTarget: GATEWAY_RSS,
    async start(context) {
      const setup = await startTrading(context, { trades: PAGE_TRADES, gateway: true });
      const gateway = gatewayOf(setup);
      const coreUrl = setup.core.server.url;
      const v3Path = await v3PagePath(coreUrl, setup.signer, (PAGE_NUMBER - 1) * PAGE_SIZE);
      const v1Path = setup.legacy.path('v1', `trades?page=${PAGE_NUMBER}&limit=${PAGE_SIZE}`);
      const v3Page = v3PageSchema.parse(
        JSON.parse((await setupCall(coreUrl, await signedGet(setup.signer, v3Path))).body),
      );
      const expected = v3Page.data.map((trade) => legacyUuidOf('trade', trade.id));
      const v1Page = legacyPageSchema.parse(
        JSON.parse((await setupCall(gateway.url, await setup.legacy.get(v1Path))).body),
      );
      const got = v1Page.data.map((trade) => trade.id);
      if (JSON.stringify(got) !== JSON.stringify(expected) || v1Page.meta.pagination.total !== PAGE_TRADES) {
        throw new Error(
          `v1 page ${PAGE_NUMBER} (total ${v1Page.meta.pagination.total}) is not v3's records after the cursor: ${JSON.stringify(got)} vs ${JSON.stringify(expected)}`,
        );
      }
      const rows = gatewayRows(setup.core.server, gateway, v3GetPlan(setup.signer, v3Path), {
        label: V1_PAGE_ROW,
        plan: legacyGetPlan(setup.legacy, v1Path),
      });
      return sideBySideTarget(gateway, setup.core.server, rows, [], setup.core.databaseUrl);
    },
  },
  {
    name: 'quotes',
    description:
      `a quote (buy 1,000.00 EUR with USD), side by side on one core and gateway. ${DIRECT_ROW}: POST /v3/fx/quotes to the core (JWT + ` +
      'request signature, nonce, rate limit and Idempotency-Key in Redis, the book read and the quote written in PostgreSQL). ' +
      `${PASSTHROUGH_ROW}: the same requests (the client's own token, signature and Idempotency-Key) through the gateway's /v3 passthrough. ` +
      `${V2_QUOTE_ROW}: v2 POST /v2/brokerage/{org}/generate_quote, body ${LEGACY_QUOTE_BODY} (the same request in v2's words), a fresh ` +
      "legacy JWT and Idempotency-Key each: legacy auth, the v2 idempotency record in Redis (claim, then the answer kept), the gateway's " +
      'signed POST /v3/fx/quotes with the derived v3 key, the answer in the legacy quote shape',
    rowComparisons: gatewayComparisons(V2_QUOTE_ROW),
    rssTarget: GATEWAY_RSS,
    async start(context) {
      const core = await startCore(context, TRADING_CORE);
      const gateway = await startGatewayFor(context, core);
      const legacy = new LegacySigner(core.keyFiles[0]!, CORE_DEFAULTS.issuers[0]);
      const rows = gatewayRows(core.server, gateway, v3QuotePlan(core.signers[0]!), {
        label: V2_QUOTE_ROW,
        plan: legacyPostPlan(legacy, legacy.path('v2', 'generate_quote'), LEGACY_QUOTE_BODY),
      });
      return sideBySideTarget(gateway, core.server, rows, [], core.databaseUrl);
    },
  },
  {
    name: 'v3-quote-trade',
    description:
      'single book worst case, no target: POST /v3/fx/quotes then POST /v3/fx/trades executing the quote just made, over and over from ' +
      "each worker, all workers on ONE org's live book, on the core: every request signed with its own token and Idempotency-Key (Redis); " +
      'the trade claims the quote, posts its ledger movement and reserves credit on the book in one PostgreSQL transaction. Every trade of ' +
      'a book takes the same rows (its ledger accounts, its credit row) and holds them until COMMIT (WAL fsync), so this rate is one ' +
      "book's ceiling (one org trading flat out), not the service's. The book's credit line is set to 1e15 USD by SQL at start " +
      '(about 1,090 USD a trade)',
    async start(context) {
      const { server, signers } = await startCore(context, TRADING_CORE);
      return { url: server.url, servers: [server], plan: quoteTradePlan(signers) };
    },
  },
  {
    name: 'v3-quote-trade-orgs',
    description:
      `the service's trade rate, target 500 trades/s: the v3-quote-trade loop (quote, then trade that quote) on the same single core ` +
      `process, database and Redis, but with its workers dealt over ${TRADING_ORGS} orgs (worker w on org w mod ${TRADING_ORGS}: 2 per org ` +
      `at 50 workers), each org with its own live key (view,trade) and its live book's credit line set to 1e15 USD by SQL. Trades of ` +
      'different orgs take different rows, so they commit in parallel; what remains is the per-request work (HTTP, signature, Redis, ' +
      'SQL) on the machine, and 2 trades at a time contending on each book',
    targetRate: { row: 'trades', requestsPerSecond: 500 },
    async start(context) {
      const { server, signers } = await startCore(context, { ...TRADING_CORE, orgs: TRADING_ORGS });
      return { url: server.url, servers: [server], plan: quoteTradePlan(signers) };
    },
  },
  {
    name: 'v3-trades',
    description:
      `the trade endpoint's own rate, target 500 trades/s: POST /v3/fx/trades alone on the core, each executing a quote made for it ` +
      `before the timed run (one POST /v3/fx/quotes each, valid 60 s, while the requests are signed), dealt round robin over ` +
      `${TRADING_ORGS} orgs as in v3-quote-trade-orgs: JWT + request signature, nonce, rate limit and Idempotency-Key in Redis, then ` +
      'the PostgreSQL transaction (claim the quote with the trade insert, ledger movement, credit reservation). The quotes are not timed',
    targetRate: { requestsPerSecond: 500 },
    async start(context) {
      const { server, signers } = await startCore(context, { ...TRADING_CORE, orgs: TRADING_ORGS });
      return { url: server.url, servers: [server], plan: v3TradePlan(server.url, signers) };
    },
  },
  {
    name: 'withdrawals',
    description:
      `a withdrawal of ${WITHDRAWAL_AMOUNT} USD to the one verified ACTIVE USD FEDWIRE account of ONE org's live book (funded with 1e12 USD ` +
      `by a ledger deposit movement at start), side by side on one core and gateway. ${DIRECT_ROW}: POST /v3/fx/withdrawals to the core, ` +
      "each signed with its own token and Idempotency-Key (Redis); the withdrawal locks the account row and the book's USD client " +
      'account, checks the ten withdrawal rules, and writes the PENDING withdrawal, its ledger hold and its event in one PostgreSQL ' +
      "transaction. Withdrawals of one book and currency are serialised by that lock, so this is one book's ceiling. " +
      `${PASSTHROUGH_ROW}: the same requests through the gateway's /v3 passthrough. ${V2_WITHDRAWAL_ROW}: v2 POST /v2/brokerage/{org}/` +
      'fiat_withdrawal, body {"amount":1,"currency":"USD","withdrawalAddressId":<legacy uuid of the account>}, a fresh legacy JWT and ' +
      "Idempotency-Key each: legacy auth, v2 idempotency in Redis, the gateway's signed POST /v3/fx/withdrawals. The core runs with " +
      'its withdrawal processor OFF (withdrawals stay PENDING; its rounds would lock the same rows) and its webhook worker OFF',
    rowComparisons: gatewayComparisons(V2_WITHDRAWAL_ROW),
    rssTarget: GATEWAY_RSS,
    async start(context) {
      const core = await startCore(context, WITHDRAWAL_CORE);
      const accountId = benchWithdrawalAccountId(core.server);
      const gateway = await startGatewayFor(context, core);
      const legacy = new LegacySigner(core.keyFiles[0]!, CORE_DEFAULTS.issuers[0]);
      const body = JSON.stringify({
        amount: Number(WITHDRAWAL_AMOUNT),
        currency: 'USD',
        withdrawalAddressId: legacyUuidOf('withdrawalAccount', accountId),
      });
      const rows = gatewayRows(core.server, gateway, v3WithdrawalPlan(core.signers[0]!, accountId), {
        label: V2_WITHDRAWAL_ROW,
        plan: legacyPostPlan(legacy, legacy.path('v2', 'fiat_withdrawal'), body),
      });
      return sideBySideTarget(gateway, core.server, rows, [], core.databaseUrl);
    },
  },
  {
    name: 'webhook-delivery',
    description:
      "throughput of the core's webhook delivery worker (PostgreSQL 'lock' claims: rounds of up to " +
      `${WEBHOOK_WORKER_DEFAULTS.batchSize} due deliveries, ${WEBHOOK_WORKER_DEFAULTS.concurrency} attempts at once, the core's defaults; ` +
      `idle poll ${WEBHOOK_POLL_MS} ms) POSTing signed withdrawal.completed envelopes over loopback to a receiver process (fastify, ` +
      "answering 200 at once and counting) registered as the one webhook endpoint of ONE org's live book. The bench writes a " +
      "backlog of events with the outbox's recordEvent in one transaction (so the worker, already on, sees none before the " +
      `COMMIT), sized to last BENCH_DURATION at the warm-up rate; the clock runs from the COMMIT until no delivery is PENDING ` +
      `(polled every ${DRAIN_POLL_MS} ms). The row is deliveries/s; errors/non-2xx count failed attempts. Withdrawal processor off`,
    async start(context) {
      const receiver = await context.launch('receiver');
      const { server, keyFiles, databaseUrl } = await startCore(context, {
        webhookUrl: `${receiver.url}${RECEIVER_PATH}`,
        webhookWorker: 'on',
        webhookPollIntervalMs: String(WEBHOOK_POLL_MS),
        withdrawalProcessor: 'off',
      });
      if (coreInfoSchema.parse(server.info).webhookEndpointIds.length !== 1)
        throw new Error('the core did not register the bench webhook endpoint');
      const db = openPostgres({ connectionString: databaseUrl, maxConnections: 2 });
      context.cleanup.defer("closing the bench's own database pool", () => db.close());
      return {
        url: server.url,
        servers: [server, receiver],
        plan: webhookBacklogPlan({
          db,
          orgId: keyFiles[0]!.orgId,
          receiverHitsUrl: `${receiver.url}${RECEIVER_HITS_PATH}`,
        }),
      };
    },
  },
  {
    name: PGBOUNCER_CASE,
    needsPgBouncer: true,
    description:
      `what running through PgBouncer costs (BENCH_PGBOUNCER=1): three cores, each on a database of its own, side by side. ` +
      `${POOL_ROUTES.map((route) => `${route.label}: ${route.meaning}`).join('; ')}. PgBouncer (Debian's, pool_mode transaction) ` +
      `has ${BENCH_PGBOUNCER_POOL_SIZE} server connections per database, as many as a core's own pool opens directly. Rows: ` +
      `${TRADE_ROW}, the trade of v3-trades (a quote made for each before the round, over ${TRADING_ORGS} orgs); ${TRADE_READ_ROW}, ` +
      `the v3 trade read of ${TRADE_GET} (GET /v3/fx/trades/{id} of one trade seeded at start). CPU per request: each core's, ` +
      "the PostgreSQL server processes of each core's database (read from /proc), and PgBouncer's",
    rowComparisons: [TRADE_ROW, TRADE_READ_ROW].flatMap((kind) =>
      POOL_ROUTES.slice(1).map((route) => ({ row: `${kind}: ${route.label}`, of: `${kind}: ${POOL_ROUTES[0].label}` })),
    ),
    async start(context) {
      const { pgbouncer, clock } = await startBenchPgBouncer(
        context.settings,
        context.cleanup,
        BENCH_PGBOUNCER_POOL_SIZE,
      );
      const trades: SideBySideRow[] = [];
      const reads: SideBySideRow[] = [];
      const clocks: CpuClock[] = [];
      const servers: ServerProcess[] = [];
      for (const route of POOL_ROUTES) {
        const core = await startCore(
          context,
          { ...TRADING_CORE, orgs: TRADING_ORGS },
          { poolMode: route.poolMode, ...(route.throughPgBouncer ? { pgbouncer } : {}) },
        );
        const [tradeId] = await seedTrades(core.server.url, core.signers[0]!, 1);
        trades.push({
          label: `${TRADE_ROW}: ${route.label}`,
          url: core.server.url,
          plan: v3TradePlan(core.server.url, core.signers),
        });
        reads.push({
          label: `${TRADE_READ_ROW}: ${route.label}`,
          url: core.server.url,
          plan: v3GetPlan(core.signers[0]!, `/v3/fx/trades/${tradeId!}`),
        });
        clocks.push(
          {
            app: `core (${route.label})`,
            url: core.server.url,
            cpuMicros: () => core.server.cpuMicros(),
            requests: () => core.server.requests(),
            inFlight: () => core.server.inFlight(),
          },
          postgresClock(
            `postgres (${route.label})`,
            context.settings.databaseUrl,
            new URL(core.databaseUrl).pathname.slice(1),
          ),
        );
        servers.push(core.server);
      }
      const rows = [...trades, ...reads];
      return {
        url: servers[0]!.url,
        servers,
        plan: {
          kind: 'self-measured',
          async probe() {
            for (const row of rows) await probe(row.url, row.plan);
          },
          measure: (settings) => measureSideBySide(rows, settings, [...clocks, clock]),
        },
      };
    },
  },
];
