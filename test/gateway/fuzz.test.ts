/**
 * Property: whatever a client sends to v1, v2 or through the /v3 passthrough (the gateway in
 * front of the real core, as `fxgate all` runs them), the answer comes within a bound, is never
 * a 5xx, is in the envelope of the path's generation, a refused request moves no money, and the
 * gateway lets go of the connection once the client has gone.
 *
 * One fast-check run (fixed seed) generates most requests, and a sweep makes every string of
 * every valid body, and every query parameter, hostile in turn. Each is sent as raw bytes over
 * node:net, since fetch and the HTTP clients refuse NUL bytes, broken escapes and such. Each
 * check lists every distinct failure with its first example, then replays that example (seed
 * and path) so that fast-check shrinks it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';

import type { EndpointMapping } from '../../src/gateway/legacy/declarations/endpoint-mappings.js';
import {
  V1_ERROR_STATUSES,
  V2_ERROR_CODE_STATUS,
  V2_ERROR_STATUSES,
} from '../../src/gateway/legacy/declarations/error-tables.js';
import { LEGACY_GENERATIONS, LEGACY_OPERATIONS } from '../../src/gateway/legacy/declarations/legacy-operations.js';
import { type LegacyMappings, loadLegacyMappings } from '../../src/gateway/legacy/declarations/mappings-loader.js';
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import { ERROR_CATALOG, isErrorCode } from '../../src/lib/errors/v3-error-catalog.js';
import { idToLegacyUuid } from '../../src/lib/ids.js';
import type { LoadedKey } from '../../src/lib/keys/key-file.js';
import { FEDWIRE_ACCOUNT, postData, postEmpty, quoteAndTrade, recordTestDeposit } from '../support/book-fixtures.js';
import { legacyToken, makeJwt, standardToken } from '../support/independent-signing.js';
import { LegacyHarness } from '../support/legacy-harness.js';
import { v3ErrorEnvelopeSchema } from '../support/v3-assertions.js';
import { TEST_ISSUER } from '../support/v3-harness.js';
import {
  type FuzzRequest,
  fuzzRequests,
  printable,
  type Ref,
  refsOf,
  renderBody,
  renderPieces,
  sweepRequests,
} from './fuzz-generators.js';

const SEED = 20_261_231;
const RUNS = 3_300;
const MIN_REQUESTS = 3_000;
/** Generous next to the gateway's and core's own bounds for a request that needs no slow upstream. */
const RESPONSE_BOUND_MS = 5_000;
/** The client gives up here and records no answer (past the bound, so it also counts as slow). */
const CLIENT_TIMEOUT_MS = 8_000;
/** fast-check's shrinking per distinct failure, and in all, so the file stays near 90 s. */
const SHRINK_MS_PER_FAILURE = 5_000;
const SHRINK_MS_TOTAL = 30_000;
/** How long the gateway may take to let go of a connection whose client has gone. */
const LINGER_GRACE_MS = 1_500;

// ---------------------------------------------------------------------------------------------
// The world: the gateway in front of the core, a funded sandbox book, and what refs name.

let h: LegacyHarness;
let mappings: LegacyMappings;
let arbitrary: fc.Arbitrary<FuzzRequest>;
let port: number;
const keys = {} as { main: LoadedKey; liveView: LoadedKey; otherOrg: LoadedKey; v3: LoadedKey; v3LiveView: LoadedKey };
const fixed = new Map<Ref, string>();
let lastLegacyToken: string | undefined;
let lastV3Headers: Record<string, string> | undefined;
/** The gateway's side of each client connection, by the client's port (the newest one when a port is reused). */
const serverSockets = new Map<number, Socket>();
let setupCalls = 0;
let setupTrades = 0;
let setupWithdrawals = 0;
/** The setup's trades and withdrawals during the run itself (shrinking makes more afterwards). */
let setupInRun = { trades: 0, withdrawals: 0 };

const v3IdOf = (data: Record<string, string>) => data.id!;
const uuidOf = (kind: Parameters<typeof idToLegacyUuid>[0], id: string) => idToLegacyUuid(kind, id)!;

beforeAll(async () => {
  mappings = await loadLegacyMappings();
  arbitrary = fuzzRequests(mappings);
  h = await LegacyHarness.start();
  port = Number(new URL(h.gatewayUrl).port);
  h.gateway.server.on('connection', (socket: Socket) => {
    const clientPort = socket.remotePort;
    if (clientPort === undefined) return;
    serverSockets.set(clientPort, socket);
    socket.once('close', () => serverSockets.get(clientPort) === socket && serverSockets.delete(clientPort));
  });
  keys.main = await h.createKey();
  const orgId = keys.main.file.orgId;
  keys.liveView = await h.createKey({ orgId, mode: 'live', scopes: ['view'] });
  keys.otherOrg = await h.createKey();
  keys.v3 = await h.core.createKey({ orgId, mode: 'sandbox' });
  keys.v3LiveView = await h.core.createKey({ orgId, mode: 'live', scopes: ['view'] });
  // Every currency funded, so no trade leaves a debt that would block the withdrawals.
  const { rows } = await h.core.db.query<{ code: string; decimals: number }>('SELECT code, decimals FROM currencies');
  for (const { code, decimals } of rows) {
    await recordTestDeposit(h.core.db, {
      orgId,
      environment: 'sandbox',
      currency: code,
      amount: (10_000_000).toFixed(decimals),
    });
  }
  const fiat = await postData(h.core, keys.v3, '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT);
  const coin = await postData(h.core, keys.v3, '/v3/fx/withdrawal-accounts', {
    currency: 'USDC',
    assetType: 'STABLECOIN',
    accountName: 'Treasury wallet',
    network: 'ETHEREUM',
    address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  });
  for (const account of [fiat, coin])
    await postEmpty(h.core, keys.v3, `/v3/fx/sandbox/withdrawal-accounts/${v3IdOf(account)}/verify`);
  const trade = await quoteAndTrade(h.core, keys.v3, {
    buyCurrency: 'EUR',
    sellCurrency: 'USD',
    amount: '10.00',
    amountCurrency: 'EUR',
  });
  const deposit = await postData(h.core, keys.v3, '/v3/fx/sandbox/deposits', { currency: 'EUR', amount: '1.00' });
  const withdrawal = await postData(h.core, keys.v3, '/v3/fx/withdrawals', {
    withdrawalAccountId: v3IdOf(coin),
    withdrawalAmount: '1.00',
    currency: 'USDC',
  });
  const webhook = await postData(h.core, keys.v3, '/v3/fx/webhook-endpoints', { url: 'https://hooks.example.com/fx' });
  fixed.set('orgId', orgId);
  fixed.set('otherOrgId', keys.otherOrg.file.orgId);
  fixed.set('tradeV3', v3IdOf(trade));
  fixed.set('tradeUuid', uuidOf('trade', v3IdOf(trade)));
  fixed.set('fiatAccountV3', v3IdOf(fiat));
  fixed.set('fiatAccountUuid', uuidOf('withdrawalAccount', v3IdOf(fiat)));
  fixed.set('coinAccountV3', v3IdOf(coin));
  fixed.set('coinAccountUuid', uuidOf('withdrawalAccount', v3IdOf(coin)));
  fixed.set('depositV3', v3IdOf(deposit));
  fixed.set('withdrawalV3', v3IdOf(withdrawal));
  fixed.set('webhookV3', v3IdOf(webhook));
  before = await moneyCounts();
}, 120_000);

afterAll(async () => {
  printSummary();
  // Connections the gateway still holds would keep its close waiting for a minute.
  h?.gateway.server.closeAllConnections();
  await h?.close();
}, 60_000);

/** Makes what a request's refs name: fresh quotes, trades and withdrawals where a valid request needs one. */
async function resolveRefs(request: FuzzRequest): Promise<Map<Ref, string>> {
  const values = new Map(fixed);
  const refs = refsOf(request);
  values.set('randomUuid', randomUUID());
  const quote = async () => {
    setupCalls += 1;
    return v3IdOf(
      await postData(h.core, keys.v3, '/v3/fx/quotes', {
        buyCurrency: 'EUR',
        sellCurrency: 'USD',
        amount: '10.00',
        amountCurrency: 'EUR',
      }),
    );
  };
  const trade = async (buyCurrency: string, sellCurrency: string) => {
    setupCalls += 2;
    setupTrades += 1;
    return v3IdOf(
      await quoteAndTrade(h.core, keys.v3, { buyCurrency, sellCurrency, amount: '5.00', amountCurrency: sellCurrency }),
    );
  };
  if (refs.has('freshQuoteUuid') || refs.has('freshQuoteV3')) {
    const id = await quote();
    values.set('freshQuoteV3', id).set('freshQuoteUuid', uuidOf('quote', id));
  }
  if ([...refs].some((r) => r.startsWith('reversal'))) {
    const tradeId = await trade('EUR', 'USD');
    setupCalls += 1;
    const reverseQuote = v3IdOf(await postData(h.core, keys.v3, `/v3/fx/trades/${tradeId}/reverse-quote`, {}));
    values.set('reversalTradeV3', tradeId).set('reversalTradeUuid', uuidOf('trade', tradeId));
    values.set('reversalQuoteV3', reverseQuote).set('reversalQuoteUuid', uuidOf('quote', reverseQuote));
  }
  if (refs.has('freshWithdrawalV3')) {
    setupCalls += 1;
    setupWithdrawals += 1;
    values.set(
      'freshWithdrawalV3',
      v3IdOf(
        await postData(h.core, keys.v3, '/v3/fx/withdrawals', {
          withdrawalAccountId: fixed.get('coinAccountV3'),
          withdrawalAmount: '1.00',
          currency: 'USDC',
        }),
      ),
    );
  }
  if (refs.has('settleableUuid') || refs.has('settleableV3')) {
    const tradeId = await trade('USDC', 'USD');
    values.set('settleableV3', tradeId).set('settleableUuid', uuidOf('trade', tradeId));
  }
  return values;
}

// ---------------------------------------------------------------------------------------------
// Turning a generated request into bytes.

interface Wire {
  readonly method: string;
  readonly target: Buffer;
  readonly headers: (readonly [string, Buffer])[];
  readonly body: Buffer | undefined;
  readonly chunked: boolean;
}

const text = (value: string) => Buffer.from(value, 'latin1');

function legacyJwt(kind: string, key: LoadedKey): string {
  const claims = (lifetimeSeconds = 60, nowSeconds?: number, keyName = key.file.name) =>
    standardToken({ keyName, issuer: TEST_ISSUER, lifetimeSeconds, nowSeconds });
  switch (kind) {
    case 'openfx-issuer':
      return legacyToken(key, 60, 'openfx');
    case 'expired': {
      const { header, payload } = claims(60, Math.floor(Date.now() / 1000) - 300);
      return makeJwt(header, payload, { kind: 'es256', key: key.privateKey });
    }
    case 'too-long-lived':
      return legacyToken(key, 121);
    case 'alg-none': {
      const { header, payload } = claims();
      return makeJwt({ ...header, alg: 'none' }, payload, { kind: 'none' });
    }
    case 'hs256': {
      const { header, payload } = claims();
      return makeJwt({ ...header, alg: 'HS256' }, payload, { kind: 'hs256', secret: randomBytes(32) });
    }
    case 'unknown-kid': {
      const { header, payload } = claims(60, undefined, `org/${key.file.orgId}/apiKey/${randomUUID()}`);
      return makeJwt(header, payload, { kind: 'es256', key: key.privateKey });
    }
    case 'truncated':
      return legacyToken(key).slice(0, -7);
    case 'flipped-signature': {
      const token = legacyToken(key);
      const last = token.at(-2) === 'A' ? 'B' : 'A';
      return `${token.slice(0, -2)}${last}${token.at(-1)}`;
    }
    default:
      return legacyToken(key);
  }
}

async function authHeaders(
  request: FuzzRequest,
  target: Buffer,
  body: Buffer | undefined,
  idempotencyKey: string | undefined,
): Promise<{ headers: Record<string, Buffer>; key: LoadedKey | null }> {
  const auth = request.auth;
  switch (auth.kind) {
    case 'none':
      return { headers: {}, key: null };
    case 'header':
      return { headers: { authorization: renderPieces(auth.value, fixed) }, key: null };
    case 'poison-kid': {
      const { header, payload } = standardToken({
        keyName: `org/${keys.main.file.orgId}/apiKey/${auth.text}`,
        issuer: TEST_ISSUER,
      });
      const token = makeJwt(header, payload, { kind: 'es256', key: keys.main.privateKey });
      return {
        headers: { authorization: text(`Bearer ${token}`), 'x-request-signature': text('A'.repeat(86)) },
        key: keys.main,
      };
    }
    case 'legacy': {
      const key =
        auth.token === 'live-view-key' ? keys.liveView : auth.token === 'other-org-key' ? keys.otherOrg : keys.main;
      let token = legacyJwt(auth.token, key);
      if (auth.token === 'replayed') token = lastLegacyToken ?? token;
      else if (auth.token === 'valid') lastLegacyToken = token;
      return { headers: { authorization: text(auth.token === 'no-bearer-prefix' ? token : `Bearer ${token}`) }, key };
    }
    case 'v3': {
      if (auth.variant === 'legacy-token')
        return { headers: { authorization: text(`Bearer ${legacyToken(keys.main)}`) }, key: keys.main };
      if (auth.variant === 'replayed' && lastV3Headers)
        return {
          headers: Object.fromEntries(Object.entries(lastV3Headers).map(([k, v]) => [k, text(v)])),
          key: keys.v3,
        };
      const key = auth.variant === 'live-view-key' ? keys.v3LiveView : keys.v3;
      const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
      const signed = await signer.headers({
        method: request.method,
        pathAndQuery: `${target.toString('latin1')}${auth.variant === 'signed-other-path' ? '/x' : ''}`,
        body: auth.variant === 'signed-other-body' ? Buffer.concat([body ?? Buffer.alloc(0), text(' ')]) : body,
        idempotencyKey,
      });
      const out: Record<string, string> = {
        authorization: signed.authorization!,
        'x-request-signature': signed['x-request-signature']!,
      };
      if (auth.variant === 'bad-signature') out['x-request-signature'] = 'B'.repeat(86);
      if (auth.variant === 'no-signature') delete out['x-request-signature'];
      if (auth.variant === 'signed') lastV3Headers = out;
      return { headers: Object.fromEntries(Object.entries(out).map(([k, v]) => [k, text(v)])), key };
    }
  }
}

async function toWire(request: FuzzRequest, values: Map<Ref, string>): Promise<Wire> {
  const target = renderPieces(request.target, values);
  const body = renderBody(request.body, values);
  const spec = request.headers;
  const idem = spec.idempotencyKey;
  const idempotencyKey =
    idem === 'fresh'
      ? `fz-${randomUUID()}`
      : idem === 'absent'
        ? undefined
        : 'pooled' in idem
          ? `${request.family}-pool-${idem.pooled}`
          : undefined;
  const { headers: auth, key } = await authHeaders(request, target, body, idempotencyKey);
  const headers: (readonly [string, Buffer])[] = [['host', text(`127.0.0.1:${port}`)], ...Object.entries(auth)];
  const appMode =
    spec.appMode === 'match'
      ? (key ?? keys.main).file.mode === 'sandbox'
        ? text('SANDBOX')
        : undefined
      : spec.appMode === 'absent'
        ? undefined
        : renderPieces(spec.appMode.value, values);
  if (appMode !== undefined) headers.push(['x-app-mode', appMode]);
  const contentType =
    spec.contentType === 'auto'
      ? body !== undefined
        ? text('application/json')
        : undefined
      : spec.contentType === 'absent'
        ? undefined
        : renderPieces(spec.contentType.value, values);
  if (contentType !== undefined) headers.push(['content-type', contentType]);
  if (idempotencyKey !== undefined) headers.push(['idempotency-key', text(idempotencyKey)]);
  else if (typeof idem === 'object' && 'value' in idem)
    headers.push(['idempotency-key', renderPieces(idem.value, values)]);
  if (spec.requestId) headers.push(['x-request-id', renderPieces(spec.requestId, values)]);
  for (const [name, value] of spec.extra) headers.push([name, renderPieces(value, values)]);
  return { method: request.method, target, headers, body, chunked: request.chunked && body !== undefined };
}

// ---------------------------------------------------------------------------------------------
// A raw HTTP/1.1 exchange: exactly these bytes out, the answer parsed by hand.

interface Answer {
  /** null: no complete answer (reset, closed, or the client's timeout). */
  readonly status: number | null;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly ms: number;
  readonly error?: string;
  /** The client's port: the gateway sees it as the connection's remote port. */
  readonly clientPort?: number;
}

function requestBytes(wire: Wire): Buffer[] {
  const lines: Buffer[] = [text(`${wire.method} `), wire.target, text(' HTTP/1.1\r\n')];
  for (const [name, value] of wire.headers) lines.push(text(`${name}: `), value, text('\r\n'));
  if (wire.body !== undefined && wire.chunked) lines.push(text('transfer-encoding: chunked\r\n'));
  else if (wire.body !== undefined) lines.push(text(`content-length: ${wire.body.length}\r\n`));
  else if (!['GET', 'HEAD'].includes(wire.method)) lines.push(text('content-length: 0\r\n'));
  lines.push(text('\r\n'));
  const out: Buffer[] = [Buffer.concat(lines)];
  if (wire.body !== undefined && wire.chunked) {
    for (let at = 0; at < wire.body.length; at += 65_536) {
      const chunk = wire.body.subarray(at, at + 65_536);
      out.push(Buffer.concat([text(`${chunk.length.toString(16)}\r\n`), chunk, text('\r\n')]));
    }
    out.push(text('0\r\n\r\n'));
  } else if (wire.body !== undefined && wire.body.length > 0) out.push(wire.body);
  return out;
}

/** A complete answer in `data`, or null if more must come; `closed` says the server has finished. */
function parseAnswer(data: Buffer, head: boolean, closed: boolean): Omit<Answer, 'ms'> | null {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? NaN);
  if (!Number.isInteger(status))
    return { status: null, headers: {}, body: data, error: `unreadable status line ${JSON.stringify(lines[0])}` };
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] =
      headers[name] === undefined ? line.slice(colon + 1).trim() : `${headers[name]}, ${line.slice(colon + 1).trim()}`;
  }
  const rest = data.subarray(end + 4);
  if (head || status === 204 || status === 304 || (status >= 100 && status < 200))
    return { status, headers, body: Buffer.alloc(0) };
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd < 0)
        return closed ? { status, headers, body: Buffer.concat(parts), error: 'chunked answer cut off' } : null;
      const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) return { status, headers, body: Buffer.concat(parts) };
      if (rest.length < lineEnd + 2 + size + 2)
        return closed ? { status, headers, body: Buffer.concat(parts), error: 'chunked answer cut off' } : null;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = headers['content-length'];
  if (length !== undefined) {
    const n = Number(length);
    if (rest.length >= n) return { status, headers, body: rest.subarray(0, n) };
    return closed ? { status, headers, body: rest, error: `answer cut off at ${rest.length} of ${n} bytes` } : null;
  }
  return closed ? { status, headers, body: rest } : null;
}

function exchange(wire: Wire): Promise<Answer> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ host: '127.0.0.1', port });
    let data = Buffer.alloc(0);
    let settled = false;
    let clientPort: number | undefined;
    const finish = (answer: Omit<Answer, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...answer, ms: performance.now() - started, clientPort });
    };
    const timer = setTimeout(
      () =>
        finish({ status: null, headers: {}, body: data, error: `no complete answer within ${CLIENT_TIMEOUT_MS} ms` }),
      CLIENT_TIMEOUT_MS,
    );
    const head = wire.method === 'HEAD';
    socket.on('connect', () => {
      clientPort = socket.localPort;
      for (const part of requestBytes(wire)) socket.write(part);
    });
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const answer = parseAnswer(data, head, false);
      if (answer) finish(answer);
    });
    const closed = (reason: string) =>
      finish(
        parseAnswer(data, head, true) ?? {
          status: null,
          headers: {},
          body: data,
          error: data.length > 0 ? `${reason} in the middle of the answer` : `${reason} without an answer`,
        },
      );
    socket.on('end', () => closed('connection closed'));
    socket.on('close', () => closed('connection closed'));
    socket.on('error', (error: NodeJS.ErrnoException) => closed(`${error.code ?? error.message}`));
  });
}

// ---------------------------------------------------------------------------------------------
// What every answer must be.

type Expected = 'v1' | 'v2' | 'v3';
type Category = '5xx' | 'envelope' | 'latency' | 'money' | 'lingering';

interface Violation {
  readonly category: Category;
  /** Distinct failures have distinct keys. */
  readonly key: string;
}

interface MoneyCounts {
  readonly trades: number;
  readonly withdrawals: number;
  readonly ledger: number;
  readonly deposits: number;
}

interface Outcome {
  /** From the fast-check run (index is its path), the sweep, or a replay while shrinking. */
  readonly source: 'run' | 'sweep' | 'replay';
  readonly index: number;
  readonly request: FuzzRequest;
  readonly expected: Expected;
  readonly wire: string;
  readonly answer: Answer;
  readonly moved: MoneyCounts;
  readonly creates: 'trade' | 'withdrawal' | null;
  readonly replayed: boolean;
  readonly violations: Violation[];
  /** The gateway's end of the connection. */
  readonly serverSocket: Socket | undefined;
}

async function moneyCounts(): Promise<MoneyCounts> {
  const { rows } = await h.core.db.query<MoneyCounts>(
    'SELECT (SELECT count(*) FROM trades)::int AS trades, (SELECT count(*) FROM withdrawals)::int AS withdrawals, (SELECT count(*) FROM ledger_transactions)::int AS ledger, (SELECT count(*) FROM deposits)::int AS deposits',
  );
  return rows[0]!;
}

const diff = (a: MoneyCounts, b: MoneyCounts): MoneyCounts => ({
  trades: b.trades - a.trades,
  withdrawals: b.withdrawals - a.withdrawals,
  ledger: b.ledger - a.ledger,
  deposits: b.deposits - a.deposits,
});
const moved = (m: MoneyCounts) => m.trades !== 0 || m.withdrawals !== 0 || m.ledger !== 0 || m.deposits !== 0;

/** The envelope a path's answers must have: v1 and v2 under their prefix, v3's for anything else. */
function expectedEnvelope(target: Buffer): Expected {
  const generation = /^\/(v[12])(?:[/?#]|$)/.exec(target.toString('latin1'))?.[1];
  return generation === 'v1' || generation === 'v2' ? generation : 'v3';
}

/** What a 2xx of this request creates, by the operation the mappings say it calls. */
function creates(request: FuzzRequest): 'trade' | 'withdrawal' | null {
  let call: { method: string; path: string } | undefined;
  if (request.family === 'v1' || request.family === 'v2') {
    const mapping = (mappings.endpoints[request.family] as Record<string, EndpointMapping | undefined>)[
      request.operation
    ];
    if (mapping && mapping.method === request.method) call = Object.values(mapping.v3)[0];
  } else if (request.family === 'v3') {
    const [method, name] = request.operation.split(' ');
    if (method === request.method)
      call = {
        method,
        path:
          name === 'trades'
            ? '/v3/fx/trades'
            : name === 'reverse'
              ? '/v3/fx/trades/:id/reverse'
              : name === 'withdrawals'
                ? '/v3/fx/withdrawals'
                : '',
      };
  }
  if (call?.method !== 'POST') return null;
  if (call.path === '/v3/fx/trades' || call.path === '/v3/fx/trades/:id/reverse') return 'trade';
  if (call.path === '/v3/fx/withdrawals') return 'withdrawal';
  return null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Why an answer on a /v1 or /v2 path is not in its generation's envelope, or null. */
function legacyProblem(generation: 'v1' | 'v2', answer: Answer): string | null {
  const status = answer.status!;
  const parsed = parseJson(answer.body);
  if (parsed === undefined) return `not JSON (content-type ${answer.headers['content-type'] ?? 'none'})`;
  if (!isObject(parsed)) return 'JSON but not an object';
  if (!/^application\/json/.test(answer.headers['content-type'] ?? ''))
    return `content-type ${answer.headers['content-type'] ?? 'none'}`;
  if (status >= 200 && status < 300) {
    if (parsed.status !== 'success') return `2xx with status ${JSON.stringify(parsed.status)}`;
    return typeof parsed.message === 'string' ? null : '2xx without a message';
  }
  const extra = Object.keys(parsed).filter((k) => !['status', 'message', 'error'].includes(k));
  if (extra.length > 0) return `fields beside status, message, error: ${extra.join(', ')}`;
  if (parsed.status !== 'error') return `status ${JSON.stringify(parsed.status)} on a ${status}`;
  if (typeof parsed.message !== 'string' || parsed.message.trim() === '') return 'no message';
  if (
    !(
      generation === 'v1' ? (V1_ERROR_STATUSES as readonly number[]) : (V2_ERROR_STATUSES as readonly number[])
    ).includes(status)
  )
    return `${status} is not a ${generation} status`;
  if (parsed.error !== undefined) {
    const error = parsed.error;
    if (
      !isObject(error) ||
      Object.keys(error).some((k) => k !== 'code' && k !== 'details') ||
      typeof error.details !== 'string'
    )
      return 'error is not {code, details}';
    const code = error.code as string;
    if (!Object.hasOwn(V2_ERROR_CODE_STATUS, code)) return `unknown error.code ${code}`;
    if (V2_ERROR_CODE_STATUS[code as keyof typeof V2_ERROR_CODE_STATUS] !== status)
      return `error.code ${code} on a ${status}`;
  } else if (generation === 'v1' && (status === 409 || status === 422))
    return `v1 ${status} without an idempotency error.code`;
  return null;
}

/** Why a non-2xx answer on any other path is not a cataloged v3 error, or null. */
function v3Problem(answer: Answer): string | null {
  const parsed = parseJson(answer.body);
  if (parsed === undefined) return `not JSON (content-type ${answer.headers['content-type'] ?? 'none'})`;
  const envelope = v3ErrorEnvelopeSchema.safeParse(parsed);
  if (!envelope.success)
    return `not the v3 error envelope (${envelope.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')})`;
  const { code, type, details } = envelope.data.error;
  if (!isErrorCode(code)) return `code ${code} is not in the catalog`;
  const row = ERROR_CATALOG[code];
  if (row.status !== answer.status) return `${code} is ${row.status} in the catalog`;
  if (row.type !== type) return `${code} has type ${row.type} in the catalog`;
  if (!row.details.safeParse(details).success) return `details of ${code} do not fit the catalog`;
  return null;
}

/** The core writes RateLimit-Limit on every answer; the gateway's own v3 errors carry none. */
const fromCore = (answer: Answer) => answer.headers['ratelimit-limit'] !== undefined;

/** A short, stable description of a body, so that answers that differ only in ids group together. */
function shape(answer: Answer): string {
  if (answer.body.length === 0) return '(empty body)';
  const parsed = parseJson(answer.body);
  if (isObject(parsed)) {
    if (isObject(parsed.error) && typeof parsed.error.code === 'string' && parsed.status === undefined) {
      return fromCore(answer)
        ? `code ${parsed.error.code} from the core`
        : `code ${parsed.error.code} "${String(parsed.error.message)}" from the gateway`;
    }
    if (typeof parsed.message === 'string')
      return `message "${parsed.message}"${isObject(parsed.error) ? ` code ${String(parsed.error.code)}` : ''}`;
    return `{${Object.keys(parsed).join(',')}}`;
  }
  return `"${printable(answer.body, 60).replaceAll(/[0-9a-f]{8,}/g, '…')}"`;
}

function violationsOf(
  request: FuzzRequest,
  expected: Expected,
  answer: Answer,
  delta: MoneyCounts,
  creation: Outcome['creates'],
  replayed: boolean,
): Violation[] {
  const out: Violation[] = [];
  const status = answer.status;
  if (status === null) {
    out.push({
      category: 'envelope',
      key: `${expected} path: no answer (${answer.error?.replace(/\d+ of \d+/, 'n of m')})`,
    });
  } else {
    // A 5xx of the core (or of a legacy operation) depends on the operation; one the gateway makes itself does not.
    const where =
      expected === 'v3' && !fromCore(answer) ? `${expected} path` : `${request.family} ${request.operation}`;
    if (status >= 500) out.push({ category: '5xx', key: `${where}: ${status} ${shape(answer)}` });
    const head = request.method === 'HEAD';
    const problem = head
      ? null
      : expected === 'v3'
        ? status >= 300
          ? v3Problem(answer)
          : null
        : legacyProblem(expected, answer);
    if (problem !== null)
      out.push({ category: 'envelope', key: `${expected} path: ${status} ${problem}; ${shape(answer)}` });
    if (answer.error)
      out.push({
        category: 'envelope',
        key: `${expected} path: ${status} ${answer.error.replace(/\d+ of \d+/, 'n of m')}`,
      });
  }
  if (answer.ms > RESPONSE_BOUND_MS)
    out.push({
      category: 'latency',
      key: `${request.family} ${request.operation}: over ${RESPONSE_BOUND_MS} ms (status ${status ?? 'none'})`,
    });
  const ok = status !== null && status >= 200 && status < 300;
  const want = {
    trades: ok && creation === 'trade' && !replayed ? 1 : 0,
    withdrawals: ok && creation === 'withdrawal' && !replayed ? 1 : 0,
  };
  const describe = `Δtrades ${delta.trades}, Δwithdrawals ${delta.withdrawals}, Δledger ${delta.ledger}, Δdeposits ${delta.deposits}`;
  if (!ok && moved(delta))
    out.push({
      category: 'money',
      key: `${request.family} ${request.operation}: ${status ?? 'no answer'} moved money (${describe})`,
    });
  if (ok && (delta.trades !== want.trades || delta.withdrawals !== want.withdrawals)) {
    out.push({
      category: 'money',
      key: `${request.family} ${request.operation}: 2xx${replayed ? ' replay' : ''} created ${delta.trades} trades and ${delta.withdrawals} withdrawals, not ${want.trades} and ${want.withdrawals}`,
    });
  }
  return out;
}

function describeWire(wire: Wire): string {
  const headers = wire.headers
    .filter(([name]) => name !== 'host')
    .map(
      ([name, value]) =>
        `${name}: ${printable(name === 'authorization' || name === 'x-request-signature' ? value.subarray(0, 40) : value, 80)}${value.length > 40 && (name === 'authorization' || name === 'x-request-signature') ? '…' : ''}`,
    );
  const body =
    wire.body === undefined ? 'no body' : `${wire.chunked ? 'chunked ' : ''}body ${printable(wire.body, 200)}`;
  return `${wire.method} ${printable(wire.target, 200)} [${headers.join(' | ')}] ${body}`;
}

const lingeringKey = (expected: Expected, answer: Answer) =>
  `${expected} path: the gateway still holds the connection ${LINGER_GRACE_MS} ms after its ${answer.status ?? 'missing'} answer, the client gone`;

/** Whether the gateway still holds the connection of a client that has gone, after the grace. */
async function lingers(serverSocket: Socket | undefined): Promise<boolean> {
  const deadline = Date.now() + LINGER_GRACE_MS;
  while (serverSocket !== undefined && !serverSocket.destroyed) {
    if (Date.now() > deadline) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

async function runOne(
  request: FuzzRequest,
  source: Outcome['source'],
  index: number,
  waitForRelease = false,
): Promise<Outcome> {
  const values = await resolveRefs(request);
  const wire = await toWire(request, values);
  const ahead = await moneyCounts();
  const answer = await exchange(wire);
  // Our connection is the newest with this port, so this is its other end (gone already if the gateway closed it).
  const serverSocket = answer.clientPort === undefined ? undefined : serverSockets.get(answer.clientPort);
  const delta = diff(ahead, await moneyCounts());
  const expected = expectedEnvelope(wire.target);
  const creation = creates(request);
  const replayed = answer.headers['idempotency-replayed'] === 'true';
  const violations = violationsOf(request, expected, answer, delta, creation, replayed);
  if (waitForRelease && (await lingers(serverSocket)))
    violations.push({ category: 'lingering', key: lingeringKey(expected, answer) });
  return {
    source,
    index,
    request,
    serverSocket,
    expected,
    wire: describeWire(wire),
    answer: { ...answer, body: answer.body.subarray(0, 2_000) },
    moved: delta,
    creates: creation,
    replayed,
    violations,
  };
}

// ---------------------------------------------------------------------------------------------
// The run, and one check per property.

const outcomes: Outcome[] = [];
let before: MoneyCounts;
let after: MoneyCounts | undefined;
let shrinkBudgetMs = SHRINK_MS_TOTAL;

it(`sends ${RUNS} requests generated by fast-check (seed ${SEED}) and a sweep of every string to v1, v2 and /v3, at least ${MIN_REQUESTS} in all`, async () => {
  for (const generation of LEGACY_GENERATIONS) {
    expect(
      Object.keys(mappings.endpoints[generation]).sort(),
      `the ${generation} mappings serve the operation list`,
    ).toEqual([...LEGACY_OPERATIONS[generation]].sort());
  }
  await fc.assert(
    fc.asyncProperty(arbitrary, async (request) => {
      outcomes.push(await runOne(request, 'run', outcomes.length));
    }),
    { seed: SEED, numRuns: RUNS },
  );
  expect(outcomes.length, 'requests of the fast-check run').toBe(RUNS);
  const sweep = sweepRequests(mappings, SEED);
  for (const [i, request] of sweep.entries()) outcomes.push(await runOne(request, 'sweep', i));
  after = await moneyCounts();
  setupInRun = { trades: setupTrades, withdrawals: setupWithdrawals };
  // Every client has gone by now: whatever the gateway still holds after the grace is held for nothing.
  const deadline = Date.now() + LINGER_GRACE_MS;
  const open = (o: Outcome) => o.serverSocket !== undefined && !o.serverSocket.destroyed;
  while (outcomes.some(open) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  for (const o of outcomes.filter(open))
    o.violations.push({ category: 'lingering', key: lingeringKey(o.expected, o.answer) });
  expect(outcomes.length, 'requests actually sent').toBeGreaterThanOrEqual(MIN_REQUESTS);
  const count = (family: string) => outcomes.filter((o) => o.request.family === family).length;
  for (const family of ['v1', 'v2', 'v3']) expect(count(family), `${family} requests`).toBeGreaterThanOrEqual(600);
  expect(count('other'), 'stray paths').toBeGreaterThanOrEqual(100);
  // Every legacy operation must be reached, and answered with success at least once, or the property says little about it.
  for (const generation of LEGACY_GENERATIONS) {
    for (const operation of LEGACY_OPERATIONS[generation]) {
      const mine = outcomes.filter((o) => o.request.family === generation && o.request.operation === operation);
      expect(mine.length, `${generation} ${operation} requests`).toBeGreaterThanOrEqual(20);
      expect(
        mine.filter((o) => o.answer.status === 200).length,
        `${generation} ${operation} answered 200 (a new operation may need valid values in LEGACY_VALID_FIELDS)`,
      ).toBeGreaterThanOrEqual(1);
    }
  }
  for (const name of ['POST trades', 'POST withdrawals', 'POST reverse', 'GET trades']) {
    expect(
      outcomes.filter((o) => o.request.family === 'v3' && o.request.operation === name && o.answer.status === 200)
        .length,
      `/v3 ${name} answered 200`,
    ).toBeGreaterThanOrEqual(1);
  }
  expect(
    outcomes.filter((o) => o.request.tags.includes('body:multi-mb')).length,
    'multi-MB bodies',
  ).toBeGreaterThanOrEqual(3);
}, 180_000);

interface FailureClass {
  readonly category: Category;
  readonly key: string;
  readonly examples: Outcome[];
}

function classes(category: Category): FailureClass[] {
  const byKey = new Map<string, FailureClass>();
  for (const outcome of outcomes) {
    for (const violation of outcome.violations.filter((v) => v.category === category)) {
      const entry = byKey.get(violation.key) ?? { category, key: violation.key, examples: [] };
      entry.examples.push(outcome);
      byKey.set(violation.key, entry);
    }
  }
  return [...byKey.values()].sort((a, b) => b.examples.length - a.examples.length);
}

/** What the failing requests have in common: their most frequent tags, with the share carrying each. */
function commonTags(examples: readonly Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of examples) for (const tag of new Set(o.request.tags)) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6);
  return (
    top
      .map(([tag, n]) => `${tag} ${n === examples.length ? 'all' : `${Math.round((100 * n) / examples.length)}%`}`)
      .join(', ') || '(no tags)'
  );
}

function describeOutcome(outcome: Outcome): string {
  const { answer } = outcome;
  return [
    `      request (${outcome.source === 'run' ? `run #${outcome.index}` : outcome.source === 'sweep' ? `sweep #${outcome.index}` : 'replay'}, ${outcome.request.family} ${outcome.request.operation}): ${outcome.wire}`,
    `      answer: ${answer.status ?? 'none'}${answer.error ? ` (${answer.error})` : ''} in ${answer.ms.toFixed(0)} ms, content-type ${answer.headers['content-type'] ?? 'none'}: ${printable(answer.body, 300)}`,
  ].join('\n');
}

/** Replays the class's first example (seed and path) and lets fast-check shrink it. */
async function shrink(failure: FailureClass): Promise<string> {
  const first = failure.examples.find((o) => o.source === 'run');
  if (first === undefined)
    return '      (met by sweep requests only: each is one hostile string in an otherwise valid request, nothing to shrink)';
  if (shrinkBudgetMs <= 0) return '      (not shrunk: the shrinking time of this file is spent)';
  const started = Date.now();
  let smallest: Outcome | undefined;
  const details = await fc.check(
    fc.asyncProperty(arbitrary, async (request) => {
      const outcome = await runOne(request, 'replay', -1, failure.category === 'lingering');
      if (outcome.violations.some((v) => v.category === failure.category && v.key === failure.key)) {
        smallest = outcome;
        throw new Error(failure.key);
      }
    }),
    {
      seed: SEED,
      path: String(first.index),
      numRuns: 1,
      plugins: [fc.interruptAfterTimeLimit(Math.min(SHRINK_MS_PER_FAILURE, shrinkBudgetMs))],
    },
  );
  shrinkBudgetMs -= Date.now() - started;
  if (!details.failed || smallest === undefined)
    return `      (did not fail again on replay of seed ${SEED}, path ${first.index})`;
  return [
    `      shrunk by fast-check (seed ${SEED}, path ${details.counterexamplePath}, ${details.numShrinks} shrinks${details.interrupted ? ', stopped by the time limit' : ''}):`,
    describeOutcome(smallest),
  ].join('\n');
}

async function reportFailures(category: Category, title: string): Promise<void> {
  expect(outcomes.length, 'the run above sent its requests').toBeGreaterThanOrEqual(MIN_REQUESTS);
  const found = classes(category);
  if (found.length === 0) return;
  const total = found.reduce((n, c) => n + c.examples.length, 0);
  const parts = [`${total} of ${outcomes.length} requests ${title}, ${found.length} distinct:`];
  for (const [i, failure] of found.entries()) {
    parts.push(`\n  ${i + 1}. ${failure.key}  (${failure.examples.length}×)`);
    parts.push(`      the failing requests carry: ${commonTags(failure.examples)}`);
    parts.push(`      first example:\n${describeOutcome(failure.examples[0]!)}`);
    parts.push(await shrink(failure));
  }
  throw new Error(parts.join('\n'));
}

it("answers no 5xx: the setup never makes the upstream fail, so every input here is the client's to fix", async () => {
  await reportFailures('5xx', 'were answered with a 5xx');
}, 60_000);

it("answers every request in its generation's envelope (/v1 and /v2 the legacy one, anything else the cataloged v3 error)", async () => {
  await reportFailures('envelope', 'were answered outside their envelope (or not at all)');
}, 60_000);

it(`answers every request within ${RESPONSE_BOUND_MS} ms`, async () => {
  await reportFailures('latency', `took longer than ${RESPONSE_BOUND_MS} ms`);
}, 60_000);

it('lets go of every connection once its client has gone', async () => {
  await reportFailures('lingering', 'left a connection the gateway still holds after the client had gone');
}, 60_000);

it('a refused request moves no money, and every new trade and withdrawal is a 2xx write', async () => {
  await reportFailures('money', 'broke the money rule');
  const ok = (o: Outcome) => o.answer.status !== null && o.answer.status >= 200 && o.answer.status < 300 && !o.replayed;
  const writes = {
    trades: outcomes.filter((o) => ok(o) && o.creates === 'trade').length,
    withdrawals: outcomes.filter((o) => ok(o) && o.creates === 'withdrawal').length,
  };
  const total = diff(before, after!);
  // The setup's own trades and withdrawals (made for valid reversals, settlements and sandbox transitions) are counted apart.
  expect(
    { trades: total.trades - setupInRun.trades, withdrawals: total.withdrawals - setupInRun.withdrawals },
    'new rows over the run against the 2xx writes that create them',
  ).toEqual(writes);
}, 60_000);

// ---------------------------------------------------------------------------------------------
// The summary of the run, printed once at the end.

function printSummary(): void {
  if (outcomes.length === 0) return;
  const tally = (key: (o: Outcome) => string) => {
    const counts = new Map<string, number>();
    for (const o of outcomes) counts.set(key(o), (counts.get(key(o)) ?? 0) + 1);
    return [...counts.entries()].sort(([a], [b]) => a.localeCompare(b));
  };
  const slowest = outcomes.reduce((a, b) => (b.answer.ms > a.answer.ms ? b : a));
  const lines = [
    `gateway fuzz (seed ${SEED}): ${outcomes.length} requests sent (${outcomes.filter((o) => o.source === 'run').length} generated by fast-check, ${outcomes.filter((o) => o.source === 'sweep').length} in the sweep of every string), plus ${setupCalls} setup calls to the core for fresh quotes, trades and withdrawals`,
    `  by generation: ${tally((o) => (o.request.family === 'other' ? 'stray path' : o.request.family))
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
    `  by status:     ${tally((o) => String(o.answer.status ?? 'no answer'))
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
    ...['v1', 'v2', 'v3', 'other'].map(
      (f) =>
        `  ${f.padEnd(5)} status: ${tally((o) => (o.request.family === f ? String(o.answer.status ?? 'none') : ''))
          .filter(([k]) => k !== '')
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
    ),
    `  /v3 passthrough: ${outcomes.filter((o) => o.request.family === 'v3' && o.request.auth.kind === 'v3' && o.request.auth.variant === 'signed').length} signed, ${outcomes.filter((o) => o.request.family === 'v3' && !(o.request.auth.kind === 'v3' && o.request.auth.variant === 'signed')).length} unsigned or badly signed`,
    `  bodies: ${outcomes.filter((o) => o.request.tags.includes('body:oversize')).length} oversize (${outcomes.filter((o) => o.request.tags.includes('body:multi-mb')).length} of 1-4 MB), ${outcomes.filter((o) => o.request.tags.some((t) => t.endsWith(':nul') || t.endsWith(':raw-nul'))).length} with NUL, ${outcomes.filter((o) => o.request.tags.some((t) => t.includes('surrogate'))).length} with lone surrogates`,
    `  max latency: ${slowest.answer.ms.toFixed(0)} ms (${slowest.request.family} ${slowest.request.operation}, status ${slowest.answer.status ?? 'none'}); bound ${RESPONSE_BOUND_MS} ms`,
    `  money: ${after ? `Δtrades ${after.trades - before.trades} (${setupInRun.trades} made by the setup), Δwithdrawals ${after.withdrawals - before.withdrawals} (${setupInRun.withdrawals} made by the setup)` : 'not measured'}; 2xx writes creating a trade ${outcomes.filter((o) => o.creates === 'trade' && o.answer.status !== null && o.answer.status < 300 && o.answer.status >= 200 && !o.replayed).length}, a withdrawal ${outcomes.filter((o) => o.creates === 'withdrawal' && o.answer.status !== null && o.answer.status < 300 && o.answer.status >= 200 && !o.replayed).length}`,
    `  failures: ${(['5xx', 'envelope', 'latency', 'money', 'lingering'] as const).map((c) => `${c} ${outcomes.filter((o) => o.violations.some((v) => v.category === c)).length} requests in ${classes(c).length} kinds`).join(', ')}`,
  ];
  // The counts a reader of the run needs, in one block.
  // eslint-disable-next-line no-console
  console.log(lines.join('\n'));
}
