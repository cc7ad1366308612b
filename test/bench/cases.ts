/**
 * The bench cases, in run order. A case brings up its server process(es) through the context
 * (which stops them after the case) and says what to send. New cases are added to BENCH_CASES.
 */
import { randomUUID } from 'node:crypto';
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import { keyFileSchema, loadKey } from '../../src/lib/keys/key-file.js';
import { CORE_DEFAULTS } from '../../src/core/app.js';
import { V3_MAX_TOKEN_LIFETIME_SECONDS } from '../../src/core/http/authenticate.js';
import type { ServerProcess } from './launcher.js';
import type { ServerAppName, ServerConfig } from './protocol.js';
import type { PreparedRequest, ReceivedResponse, RequestPlan } from './requests.js';
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

/** A throughput a row of a case should reach, in requests per second (a chained plan's row, by label). */
export interface RateTarget {
  readonly row: string;
  readonly requestsPerSecond: number;
}

export interface BenchCase {
  readonly name: string;
  readonly description: string;
  /** The throughput this case should reach, as a fraction of the bare case's. */
  readonly targetRatioToBare?: number;
  /** The throughput a row of this case should reach, on this machine. */
  readonly targetRate?: RateTarget;
  start(context: CaseContext): Promise<CaseTarget>;
}

/** Every ratio in the report is to this case. */
export const BARE_CASE = 'bare';

interface CoreOptions {
  readonly keyScopes?: string;
  readonly creditLineUsd?: string;
  /** Bench orgs, each with its own live key and books; one when absent. */
  readonly orgs?: number;
}

/**
 * Starts ONE core process (built with the default issuer) on a fresh database and key prefix,
 * and returns a signer for each of its bench orgs' keys (one org unless `orgs`), in order,
 * making tokens of the longest lifetime v3 accepts. The keys have the view scope, or those of
 * `keyScopes`; `creditLineUsd` sets each org's live book's credit line.
 */
async function startCore(context: CaseContext, options: CoreOptions = {}): Promise<{ server: ServerProcess; signers: readonly V3RequestSigner[] }> {
  const { settings, cleanup } = context;
  const { orgs, ...rest } = options;
  const databaseUrl = await createBenchDatabase(settings.databaseUrl, cleanup);
  const redisKeyPrefix = createRedisPrefix(settings.redisUrl, cleanup);
  const server = await context.launch('core', {
    databaseUrl,
    redisUrl: settings.redisUrl,
    redisKeyPrefix,
    ...rest,
    ...(orgs === undefined ? {} : { orgs: String(orgs) }),
  });
  const keyFiles = keyFileSchema.array().parse(server.info.keyFiles);
  if (keyFiles.length !== (orgs ?? 1)) throw new Error(`the core made ${keyFiles.length} bench keys, not ${orgs ?? 1}`);
  const signers = keyFiles.map(
    (keyFile) => new V3RequestSigner(loadKey(keyFile), { issuer: CORE_DEFAULTS.issuer, lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS }),
  );
  return { server, signers };
}

/** The core with one bench org: its signer. */
async function startSingleOrgCore(context: CaseContext, options: Omit<CoreOptions, 'orgs'> = {}): Promise<{ server: ServerProcess; signer: V3RequestSigner }> {
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
    makeSecond: (quote, stream) => signedPost(signerOf(stream), '/v3/fx/trades', JSON.stringify({ quoteId: quoteIdOf(quote) }), 'trade'),
  };
}

/** What each trading case's quote asks: 1,000.00 EUR bought with USD, the price held 60 s (the most v3 gives). */
const QUOTE_BODY = JSON.stringify({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '1000.00', amountCurrency: 'EUR', validForSeconds: 60 });

/** A signed POST with its own Idempotency-Key; the body is sent as the exact string signed. */
async function signedPost(signer: V3RequestSigner, path: string, body: string, keyKind: string): Promise<PreparedRequest> {
  const headers = await signer.headers({ method: 'POST', pathAndQuery: path, body, idempotencyKey: `bench-${keyKind}-${randomUUID()}` });
  return { method: 'POST', path, headers, body };
}

/** The id of the quote a 2xx answer to POST /v3/fx/quotes carries. */
function quoteIdOf(answer: ReceivedResponse): string {
  const parsed: unknown = JSON.parse(answer.body);
  const id = (parsed as { data?: { id?: unknown } } | null)?.data?.id;
  if (typeof id !== 'string' || id === '') throw new Error(`the quote answer carries no data.id: ${answer.body.slice(0, 200)}`);
  return id;
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
      const { server, signer } = await startSingleOrgCore(context);
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
  {
    name: 'v3-quotes',
    description:
      'POST /v3/fx/quotes alone on the core (buy 1,000.00 EUR with USD): JWT + request signature, nonce, rate limit and Idempotency-Key in Redis, ' +
      'the book read and the quote written in PostgreSQL',
    async start(context) {
      const { server, signer } = await startSingleOrgCore(context, TRADING_CORE);
      return {
        url: server.url,
        servers: [server],
        plan: { kind: 'single-use', lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS, make: () => signedPost(signer, '/v3/fx/quotes', QUOTE_BODY, 'quote') },
      };
    },
  },
  {
    name: 'v3-quote-trade',
    description:
      'single book worst case, no target: POST /v3/fx/quotes then POST /v3/fx/trades executing the quote just made, over and over from ' +
      'each worker, all workers on ONE org\'s live book, on the core: every request signed with its own token and Idempotency-Key (Redis); ' +
      'the trade locks the quote, reserves credit on the book and posts its ledger movement in one PostgreSQL transaction. Every trade of ' +
      'a book takes the same rows (its ledger accounts, its credit row) and holds them until COMMIT (WAL fsync), so this rate is one ' +
      'book\'s ceiling (one org trading flat out), not the service\'s. The book\'s credit line is set to 1e15 USD by SQL at start ' +
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
];
