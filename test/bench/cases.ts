/**
 * The bench cases, in run order. A case brings up its server process(es) through the context
 * (which stops them after the case) and says what to send. New cases are added to BENCH_CASES.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import { openPostgres } from '../../src/lib/db/postgres-database.js';
import { keyFileSchema, loadKey, type KeyFile } from '../../src/lib/keys/key-file.js';
import { CORE_DEFAULTS } from '../../src/core/app.js';
import { WEBHOOK_WORKER_DEFAULTS } from '../../src/core/events/webhook-worker.js';
import { V3_MAX_TOKEN_LIFETIME_SECONDS } from '../../src/core/http/authenticate.js';
import type { ServerProcess } from './launcher.js';
import type { ServerAppName, ServerConfig } from './protocol.js';
import type { PreparedRequest, ReceivedResponse, RequestPlan } from './requests.js';
import { createBenchDatabase, createRedisPrefix, type CleanupStack } from './resources.js';
import { RECEIVER_HITS_PATH, RECEIVER_PATH } from './server-apps.js';
import type { BenchSettings } from './settings.js';
import { DRAIN_POLL_MS, webhookBacklogPlan } from './webhook-delivery.js';

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
  /** The case's database, which the core runs on. */
  readonly databaseUrl: string;
}

/**
 * Starts ONE core process (built with the default issuer) on a fresh database and key prefix,
 * and returns a signer for each of its bench orgs' keys (one org unless `orgs`), in order,
 * making tokens of the longest lifetime v3 accepts. The keys have the view scope, or those of
 * `keyScopes`; `creditLineUsd` sets each org's live book's credit line.
 */
async function startCore(context: CaseContext, options: CoreOptions = {}): Promise<StartedCore> {
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
  return { server, signers, keyFiles, databaseUrl };
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
  {
    name: 'v3-withdrawals',
    description:
      `POST /v3/fx/withdrawals on the core, ${WITHDRAWAL_AMOUNT} USD each to the one verified ACTIVE USD FEDWIRE account of ONE org's ` +
      'live book (funded with 1e12 USD by a ledger deposit movement at start), every request signed with its own token and ' +
      'Idempotency-Key (Redis); the withdrawal locks the account row and the book\'s USD client account, checks the spec\'s ten ' +
      'rules, and writes the PENDING withdrawal, its ledger hold and its event in one PostgreSQL transaction. Withdrawals of one ' +
      'book and currency are serialised by that lock, so this is one book\'s ceiling. The core runs with its withdrawal processor ' +
      'OFF (withdrawals stay PENDING; its rounds would lock the same rows) and its webhook worker OFF',
    async start(context) {
      const { server, signers } = await startCore(context, WITHDRAWAL_CORE);
      const signer = signers[0]!;
      const accountId = coreInfoSchema.parse(server.info).withdrawalAccountIds[0];
      if (accountId === undefined) throw new Error('the core made no bench withdrawal account');
      const body = JSON.stringify({ withdrawalAccountId: accountId, withdrawalAmount: WITHDRAWAL_AMOUNT, currency: 'USD' });
      return {
        url: server.url,
        servers: [server],
        plan: { kind: 'single-use', lifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS, make: () => signedPost(signer, '/v3/fx/withdrawals', body, 'withdrawal') },
      };
    },
  },
  {
    name: 'webhook-delivery',
    description:
      'throughput of the core\'s webhook delivery worker (PostgreSQL \'lock\' claims: rounds of up to ' +
      `${WEBHOOK_WORKER_DEFAULTS.batchSize} due deliveries, ${WEBHOOK_WORKER_DEFAULTS.concurrency} attempts at once, the core's defaults; ` +
      `idle poll ${WEBHOOK_POLL_MS} ms) POSTing signed withdrawal.completed envelopes over loopback to a receiver process (fastify, ` +
      'answering 200 at once and counting) registered as the one webhook endpoint of ONE org\'s live book. The bench writes a ' +
      'backlog of events with the outbox\'s recordEvent in one transaction (so the worker, already on, sees none before the ' +
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
      if (coreInfoSchema.parse(server.info).webhookEndpointIds.length !== 1) throw new Error('the core did not register the bench webhook endpoint');
      const db = openPostgres({ connectionString: databaseUrl, maxConnections: 2 });
      context.cleanup.defer('closing the bench\'s own database pool', () => db.close());
      return {
        url: server.url,
        servers: [server, receiver],
        plan: webhookBacklogPlan({ db, orgId: keyFiles[0]!.orgId, receiverHitsUrl: `${receiver.url}${RECEIVER_HITS_PATH}` }),
      };
    },
  },
];
