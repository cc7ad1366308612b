/**
 * The least a trade read can cost on fxgate's stack, for the read-skeleton case: node:http,
 * node:crypto, ioredis, pg and undici, with no framework and none of fxgate's request pipeline.
 * What any v3 client or server must do the same way comes from the library (the request
 * signature's check, the v3 signer, ids and decimals). Two server apps (server-apps.ts serves
 * them), each taking the bench's own requests:
 *
 * - `v3-read-skeleton`: `GET /v3/fx/trades/{id}` as the core answers it, cut to its necessary
 *   work: the JWT's header and claims read with JSON.parse, its signature and the request
 *   signature verified on libuv's pool, the nonce claimed and a fixed-window rate limit charged
 *   in one Redis script, the core's own trade SELECT as a named prepared statement, the row
 *   written out with JSON.stringify as pg returns it (the core renames and formats its fields).
 * - `v1-read-skeleton`: v1 `trade/{uuid}` as the gateway answers it, cut the same way: the legacy
 *   JWT verified, nonce and rate limit in one Redis script, a fresh v3 token and request signature
 *   from V3RequestSigner, one v3 call over an undici pool, the v3 trade read with JSON.parse and
 *   written in the v1 field names with its amounts as JSON numbers (copied as text, never a JS
 *   number).
 *
 * Neither is a server to run: each checks only enough to refuse a request that is not the bench's
 * (a bad signature, a nonce seen before), answers every refusal with a bare status, and keeps no
 * request id, log, metric, scope, allowlist or idempotency step. So a skeleton's CPU per request
 * is a lower bound for the real server's on the same machine: what the libraries and the
 * cryptography cost before fxgate's pipeline runs.
 */
import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

import Fastify from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Pool as UndiciPool } from 'undici';

import { TRADE_SELECT } from '../../src/core/trading/trades.js';
import { verifyRequestSignature } from '../../src/lib/auth/request-signature.js';
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import { legacyUuidToId } from '../../src/lib/ids.js';
import { type KeyFile, keyFileSchema, loadKey } from '../../src/lib/keys/key-file.js';
import { DECIMAL_PATTERN } from '../../src/lib/money.js';
import { legacyUuidOf } from './legacy-signer.js';
import { type ServedApp, type ServerConfig, setting } from './protocol.js';

/** How long a claimed nonce is kept: past the longest token lifetime of any generation. */
const NONCE_TTL_MS = 180_000;
const RATE_WINDOW_MS = 10_000;
/**
 * One round trip: the nonce claimed (SET NX) and the key's window charged (INCR, PEXPIRE on the
 * first charge). Returns the claim (1 or 0) and the window's count.
 */
const CLAIM_AND_CHARGE = `
local claimed = redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) and 1 or 0
local count = redis.call('INCR', KEYS[2])
if count == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return {claimed, count}`;

type ClaimingRedis = Redis & {
  claimAndCharge(nonceKey: string, rateKey: string, nonceTtlMs: number, windowMs: number): Promise<[number, number]>;
};

function connectRedis(config: ServerConfig): ClaimingRedis {
  const redis = new Redis(setting(config, 'redisUrl'), { keyPrefix: setting(config, 'redisKeyPrefix') });
  redis.defineCommand('claimAndCharge', { numberOfKeys: 2, lua: CLAIM_AND_CHARGE });
  return redis as ClaimingRedis;
}

/** The token's nonce claimed and its key's window charged; false when the nonce was seen before. */
async function claimOnce(redis: ClaimingRedis, token: ReadToken): Promise<boolean> {
  const [claimed] = await redis.claimAndCharge(
    `nonce:${token.nonce}`,
    `rate:${token.keyName}`,
    NONCE_TTL_MS,
    RATE_WINDOW_MS,
  );
  return claimed === 1;
}

/** `keyFiles`: the bench keys, as the core's `info` gives them (JSON). */
function keyFilesOf(config: ServerConfig): KeyFile[] {
  return keyFileSchema.array().parse(JSON.parse(setting(config, 'keyFiles')));
}

interface PublicKeyEntry {
  readonly orgId: string;
  readonly key: KeyObject;
}

function verifyOnPool(data: string, key: KeyObject, signature: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    verify('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }, signature, (error, valid) =>
      resolve(!error && valid),
    );
  });
}

interface ReadToken {
  readonly signingInput: string;
  readonly signature: Buffer;
  readonly keyName: string;
  readonly nonce: string;
  readonly claims: { readonly exp?: unknown; readonly sub?: unknown };
}

/** The bearer JWT's parts; null when it is not one. */
function readToken(authorization: string | undefined): ReadToken | null {
  if (authorization === undefined || !authorization.startsWith('Bearer ')) return null;
  const segments = authorization.slice(7).split('.');
  if (segments.length !== 3) return null;
  try {
    const header = JSON.parse(Buffer.from(segments[0]!, 'base64url').toString()) as { kid?: unknown; nonce?: unknown };
    const claims = JSON.parse(Buffer.from(segments[1]!, 'base64url').toString()) as ReadToken['claims'];
    if (typeof header.kid !== 'string' || typeof header.nonce !== 'string') return null;
    return {
      signingInput: `${segments[0]}.${segments[1]}`,
      signature: Buffer.from(segments[2]!, 'base64url'),
      keyName: header.kid,
      nonce: header.nonce,
      claims,
    };
  } catch {
    return null;
  }
}

function tokenLive(token: ReadToken): boolean {
  return (
    typeof token.claims.exp === 'number' && token.claims.exp > Date.now() / 1000 && token.claims.sub === token.keyName
  );
}

function answer(response: ServerResponse, status: number, body = ''): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

/** A fastify instance that only owns the listener (server.ts listens and closes through it): no request reaches its router. */
function hosted(handler: (request: IncomingMessage, response: ServerResponse) => Promise<void>) {
  return Fastify({
    serverFactory: () =>
      createServer((request, response) => {
        handler(request, response).catch(() => {
          if (!response.headersSent) answer(response, 500);
          else response.destroy();
        });
      }),
  });
}

const V3_TRADE_PREFIX = '/v3/fx/trades/';

/** `v3-read-skeleton`: needs databaseUrl, redisUrl, redisKeyPrefix and keyFiles. */
export async function v3ReadSkeleton(config: ServerConfig): Promise<ServedApp> {
  const keys = new Map<string, PublicKeyEntry>(
    keyFilesOf(config).map((file) => [file.name, { orgId: file.orgId, key: createPublicKey(file.publicKey) }]),
  );
  const db = new pg.Pool({ connectionString: setting(config, 'databaseUrl'), max: 20 });
  const redis = connectRedis(config);
  const statement = `${TRADE_SELECT} WHERE t.id = $1 AND t.org_id = $2 AND t.environment = $3`;

  const app = hosted(async (request, response) => {
    const url = request.url ?? '';
    if (request.method !== 'GET' || !url.startsWith(V3_TRADE_PREFIX)) return answer(response, 404);
    const token = readToken(request.headers.authorization);
    const entry = token === null ? undefined : keys.get(token.keyName);
    const requestSignature = request.headers['x-request-signature'];
    if (token === null || entry === undefined || typeof requestSignature !== 'string' || !tokenLive(token))
      return answer(response, 401);
    const [tokenValid, requestCheck] = await Promise.all([
      verifyOnPool(token.signingInput, entry.key, token.signature),
      verifyRequestSignature(
        entry.key,
        { method: 'GET', pathAndQuery: url, nonce: token.nonce, idempotencyKey: undefined, body: undefined },
        requestSignature,
      ),
    ]);
    if (!tokenValid || requestCheck !== 'VALID') return answer(response, 401);
    if (!(await claimOnce(redis, token))) return answer(response, 401);
    const { rows } = await db.query<Record<string, unknown>>({
      name: 'skeleton-trade',
      text: statement,
      values: [url.slice(V3_TRADE_PREFIX.length), entry.orgId, 'live'],
    });
    const row = rows[0];
    if (row === undefined) return answer(response, 404);
    answer(response, 200, JSON.stringify({ data: row }));
  });
  return {
    app,
    info: {},
    close: async () => {
      await Promise.all([db.end(), redis.quit()]);
    },
  };
}

const V1_PATH = /^\/v1\/brokerage\/([0-9a-f-]{36})\/trade\/([0-9a-f-]{36})$/;

interface V3Trade {
  readonly id: string;
  readonly quoteId: string;
  readonly buyCurrency: string;
  readonly sellCurrency: string;
  readonly referencedCurrency: string;
  readonly referencedAmount: string;
  readonly buyAmount: string;
  readonly sellAmount: string;
  readonly status: string;
  readonly source: string;
  readonly clientReferenceId: string | null;
  readonly originalTradeId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An amount as a JSON number: the v3 decimal's own digits. */
function jsonNumber(decimal: string): string {
  if (!DECIMAL_PATTERN.test(decimal)) throw new Error(`not a v3 decimal: ${decimal}`);
  return decimal;
}

/** The v1 trade, its amounts written as JSON numbers from the decimals' text. */
function v1Trade(trade: V3Trade): string {
  const bought = trade.referencedCurrency === trade.buyCurrency;
  const counter = bought ? trade.sellCurrency : trade.buyCurrency;
  return (
    `{"id":${JSON.stringify(legacyUuidOf('trade', trade.id))},"tradingPair":${JSON.stringify(`${trade.referencedCurrency}/${counter}`)},` +
    `"referencedUnit":${JSON.stringify(trade.referencedCurrency)},"tradeDirection":"${bought ? 'BUY' : 'SELL'}",` +
    `"amount":${jsonNumber(trade.referencedAmount)},"computedAmount":${jsonNumber(bought ? trade.sellAmount : trade.buyAmount)},` +
    `"createdAtUtc":${JSON.stringify(trade.createdAt)},"updatedAtUtc":${JSON.stringify(trade.updatedAt)},"orderType":"MARKET",` +
    `"status":${JSON.stringify(trade.status)},"source":${JSON.stringify(trade.source)},"buy":${JSON.stringify(trade.buyCurrency)},` +
    `"sell":${JSON.stringify(trade.sellCurrency)},"referencedAmount":${jsonNumber(trade.referencedAmount)},` +
    `"transactedAt":${JSON.stringify(trade.createdAt)},"quoteId":${JSON.stringify(legacyUuidOf('quote', trade.quoteId))},` +
    `"clientReferenceId":${JSON.stringify(trade.clientReferenceId)},` +
    `"originalTradeId":${trade.originalTradeId === null ? 'null' : JSON.stringify(legacyUuidOf('trade', trade.originalTradeId))}}`
  );
}

/**
 * `v1-read-skeleton`: needs upstreamUrl (the core), redisUrl, redisKeyPrefix, keyFiles (the
 * legacy clients' keys, verified) and issuer. Its own v3 calls are signed with the first bench
 * key, as the gateway signs with the key provisioned for it.
 */
export async function v1ReadSkeleton(config: ServerConfig): Promise<ServedApp> {
  const files = keyFilesOf(config);
  const keys = new Map<string, PublicKeyEntry>(
    files.map((file) => [file.name, { orgId: file.orgId, key: createPublicKey(file.publicKey) }]),
  );
  const signer = new V3RequestSigner(loadKey(files[0]!), { issuer: setting(config, 'issuer') });
  const upstream = new UndiciPool(setting(config, 'upstreamUrl'));
  const redis = connectRedis(config);

  const app = hosted(async (request, response) => {
    const path = V1_PATH.exec(request.url ?? '');
    if (request.method !== 'GET' || path === null) return answer(response, 404);
    const token = readToken(request.headers.authorization);
    const entry = token === null ? undefined : keys.get(token.keyName);
    if (token === null || entry === undefined || entry.orgId !== path[1] || !tokenLive(token))
      return answer(response, 401);
    if (!(await verifyOnPool(token.signingInput, entry.key, token.signature))) return answer(response, 401);
    if (!(await claimOnce(redis, token))) return answer(response, 401);

    const tradeId = legacyUuidToId('trade', path[2]!);
    if (tradeId === null) return answer(response, 404);
    const v3Path = `/v3/fx/trades/${tradeId}`;
    const upstreamAnswer = await upstream.request({
      method: 'GET',
      path: v3Path,
      headers: await signer.headers({ method: 'GET', pathAndQuery: v3Path }),
    });
    const text = await upstreamAnswer.body.text();
    if (upstreamAnswer.statusCode !== 200) return answer(response, upstreamAnswer.statusCode === 404 ? 404 : 502);
    const trade = (JSON.parse(text) as { data: V3Trade }).data;
    answer(response, 200, v1Trade(trade));
  });
  return {
    app,
    info: {},
    close: async () => {
      await Promise.all([upstream.close(), redis.quit()]);
    },
  };
}
