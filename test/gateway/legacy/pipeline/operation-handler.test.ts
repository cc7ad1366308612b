/**
 * The legacy operation handler, the real gateway, against a scripted v3: a real HTTP server on
 * loopback (RecordingUpstream) that records what the gateway sends and answers what each test
 * sets. (nock cannot stand in here: it patches node:http and the global fetch, and the gateway
 * talks through its own undici Pool.) These tests prove the steps assembled in order: what
 * reaches v3 (ids, exact amounts, keys, the declared calls and queries), what the legacy client
 * reads back in the declared shapes, and what the real core never does on purpose: garbage,
 * hangs, 5xx, unknown codes, refusals of the gateway's own credential.
 */
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { newUuid } from '../../../../src/lib/ids.js';
import { type LoadedKey, loadKey } from '../../../../src/lib/keys/key-file.js';
import { UNLIMITED_LEGACY_RATE } from '../../../support/legacy-harness.js';
import type { RecordedRequest, RecordingUpstream, UpstreamAnswer } from '../../recording-upstream.js';
import { ScriptedGateway } from '../../scripted-gateway.js';
import * as S from '../v3-contract/v3-samples.js';

const TIMEOUT_MS = 400;
const TRADE_ID = '01937a00-1111-7000-8000-000000000001';
const TRADE = {
  object: 'trade',
  id: `trd_${TRADE_ID.replaceAll('-', '')}`,
  quoteId: 'qte_01937a0011117000800000000000000a',
  buyCurrency: 'EUR',
  sellCurrency: 'USD',
  buyAmount: '12345678901234567890.12',
  sellAmount: '13400000000000000000.00',
  referencedCurrency: 'EUR',
  referencedAmount: '12345678901234567890.12',
  rate: '1.08',
  status: 'EXECUTED',
  settlementStage: 'FUNDED',
  clientReferenceId: null,
  originalTradeId: null,
  reversedByTradeId: null,
  source: 'API',
  actorId: 'usr_01937a0011117000800000000000000b',
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-23T10:00:00.000Z',
  settledAt: null,
  metadata: {},
};

let gw: ScriptedGateway;
let upstream: RecordingUpstream;
let url: string;
let key: LoadedKey;

async function legacy(method: 'GET' | 'POST', path: string, body?: string, headers: Record<string, string> = {}) {
  const started = Date.now();
  const response = await request(`${url}${path.replace('{org}', key.file.orgId)}`, {
    method,
    headers: {
      authorization: `Bearer ${gw.token()}`,
      'x-app-mode': 'SANDBOX',
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body,
  });
  const text = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    elapsedMs: Date.now() - started,
    json: () => JSON.parse(text) as unknown,
  };
}

beforeAll(async () => {
  gw = await ScriptedGateway.start({ timeoutMs: TIMEOUT_MS });
  ({ upstream, url, key } = gw);
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
  upstream.answerFor = null;
});

const json = (body: unknown, headers: Record<string, string> = {}): UpstreamAnswer => ({
  status: 200,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** v3 answering each call by `METHOD path` (no query); anything else is a 404 the test would see as a 500. */
function answerBy(answers: Record<string, unknown>): void {
  upstream.answerFor = (sent: RecordedRequest) => {
    const answer = answers[`${sent.method} ${sent.url.split('?')[0]!}`];
    return answer === undefined
      ? {
          status: 404,
          headers: { 'content-type': 'application/json' },
          body: '{"error":{"code":"ROUTE_NOT_FOUND","type":"NOT_FOUND","message":"x","retryStrategy":"TERMINAL","details":{}}}',
        }
      : json(answer);
  };
}

const sentCalls = () => upstream.requests.map((sent) => `${sent.method} ${sent.url}`);
const QUERY_FAILED = { status: 'error', message: 'Query validation failed' };

describe('what the gateway sends to v3', () => {
  it('v1 trade/{id}: the v3 id from the legacy UUID, signed with the gateway credential, no key', async () => {
    upstream.answer = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: TRADE }),
    };
    const response = await legacy('GET', `/v1/brokerage/{org}/trade/${TRADE_ID.toUpperCase()}`);
    expect(response.status, response.text).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    const sent = upstream.requests[0]!;
    expect(sent.url).toBe(`/v3/fx/trades/${TRADE.id}`);
    expect(sent.headers['x-request-signature']).toMatch(/^[A-Za-z0-9_-]{86}$/);
    const kid = (
      JSON.parse(
        Buffer.from(String(sent.headers.authorization).split(' ')[1]!.split('.')[0]!, 'base64url').toString(),
      ) as { kid: string }
    ).kid;
    expect(kid).toMatch(new RegExp(`^org/${key.file.orgId}/apiKey/`));
    expect(kid).not.toBe(key.file.name);
    expect(sent.headers['idempotency-key']).toBeUndefined();
    // 22 significant digits pass through both ways untouched.
    expect(response.text).toContain('"amount":12345678901234567890.12,"computedAmount":13400000000000000000.00,');
    expect(response.json()).toMatchObject({
      status: 'success',
      message: 'Data fetched successfully',
      data: { id: TRADE_ID, tradingPair: 'EUR/USD', tradeDirection: 'BUY', buy: 'EUR', sell: 'USD' },
    });
  });

  it('Server-Timing tells how long the request waited on v3 and how long the gateway worked besides, within the whole request', async () => {
    const DELAY_MS = 60;
    const timing = (header: unknown) => {
      const match = /^upstream;dur=(\d+\.\d{3}), gateway;dur=(\d+\.\d{3})$/.exec(String(header));
      return match ? { upstream: Number(match[1]), gateway: Number(match[2]) } : null;
    };
    upstream.answer = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: TRADE }),
      delayMs: DELAY_MS,
    };
    const one = await legacy('GET', `/v1/brokerage/{org}/trade/${TRADE_ID}`);
    expect(one.status, one.text).toBe(200);
    const measured = timing(one.headers['server-timing']);
    expect(measured).not.toBeNull();
    expect(measured!.upstream).toBeGreaterThanOrEqual(DELAY_MS - 1);
    expect(measured!.gateway).toBeLessThan(DELAY_MS);
    expect(measured!.upstream + measured!.gateway).toBeLessThanOrEqual(one.elapsedMs + 1);

    // A refusal before any v3 call waited on nothing.
    const refused = await legacy('GET', '/v1/brokerage/{org}/trade/not-a-uuid');
    expect(refused.status).toBe(400);
    expect(timing(refused.headers['server-timing'])?.upstream).toBe(0);
  });

  it('v2 generate_quote: the amount as the exact decimal string, and a v3 key derived from the v2 key', async () => {
    upstream.answer = {
      status: 200,
      body: JSON.stringify({
        data: {
          object: 'quote',
          id: 'qte_01937a0011117000800000000000000a',
          buyCurrency: 'EUR',
          sellCurrency: 'USD',
          buyAmount: '0.10',
          sellAmount: '0.11',
          amountCurrency: 'EUR',
          rate: '1.08',
          reversesTradeId: null,
          createdAt: '2026-11-23T10:00:00.000Z',
          expiresAt: '2026-11-23T10:00:30.000Z',
        },
      }),
    };
    const body = '{"amount":1e-1,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}';
    const first = await legacy('POST', '/v2/brokerage/{org}/generate_quote', body, { 'idempotency-key': 'q-1' });
    expect(first.status, first.text).toBe(200);
    const sent = upstream.requests[0]!;
    expect(sent.url).toBe('/v3/fx/quotes');
    expect(JSON.parse(sent.body.toString())).toEqual({
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      amount: '0.1',
      amountCurrency: 'EUR',
    });
    expect(sent.headers['idempotency-key']).toMatch(/^fxgw2\.[0-9a-f]{64}$/);
    expect(sent.headers['content-type']).toBe('application/json');
    expect(first.text).toContain('"data":{"quote":{"id":"01937a00-1111-7000-8000-00000000000a",');
    expect(first.text).toContain('"referencedAmount":0.10,"quoteAmount":0.11,');
  });

  it('amounts reach v3 exactly as the client wrote them: 1e-7 and 30 digits', async () => {
    upstream.answer = json({ data: S.QUOTE });
    for (const [literal, decimal] of [
      ['1e-7', '0.0000001'],
      ['123456789012345678901234567890', '123456789012345678901234567890'],
      ['0.1', '0.1'],
    ] as const) {
      upstream.requests.length = 0;
      const response = await legacy(
        'POST',
        '/v1/brokerage/{org}/generate_quote',
        `{"amount":${literal},"buy":"EUR","sell":"USD","referencedUnit":"EUR"}`,
      );
      expect(response.status, response.text).toBe(200);
      expect(JSON.parse(upstream.requests[0]!.body.toString())).toMatchObject({ amount: decimal });
    }
  });

  it('v1 trades page 2: cursors walked, meta.pagination from the walk', async () => {
    const records = Array.from({ length: 3 }, (_, i) => ({
      ...TRADE,
      id: `trd_01937a001111700080000000000000${(10 + i).toString()}`,
    }));
    upstream.answer = {
      status: 200,
      body: JSON.stringify({
        data: records,
        pagination: { hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null },
      }),
    };
    const response = await legacy('GET', '/v1/brokerage/{org}/trades?page=2&limit=2');
    expect(response.status, response.text).toBe(200);
    const body = response.json() as { data: { id: string }[]; meta: { pagination: unknown } };
    expect(body.data.map((trade) => trade.id)).toEqual(['01937a00-1111-7000-8000-000000000012']);
    expect(body.meta.pagination).toEqual({ total: 3, start: 2, end: 3, page: 2, limit: 2 });
    expect(upstream.requests[0]!.url).toBe('/v3/fx/trades?limit=100');
  });
});

describe('the declared calls and shapes, end to end through the handler', () => {
  it('v1 trade: the trade with a fresh v3 key, then balances and exposure without one; the result under data and at the top', async () => {
    answerBy({
      'POST /v3/fx/trades': { data: S.TRADE },
      'GET /v3/fx/balances': S.BALANCES,
      'GET /v3/fx/exposure': S.EXPOSURE,
    });
    const response = await legacy(
      'POST',
      '/v1/brokerage/{org}/trade',
      `{"quoteId":"${S.UUIDS.quote.toUpperCase()}","clientReferenceId":"ref1"}`,
    );
    expect(response.status, response.text).toBe(200);
    expect(sentCalls().sort()).toEqual(['GET /v3/fx/balances', 'GET /v3/fx/exposure', 'POST /v3/fx/trades']);
    const trade = upstream.requests.find((sent) => sent.method === 'POST')!;
    expect(JSON.parse(trade.body.toString())).toEqual({ quoteId: S.QUOTE.id, clientReferenceId: 'ref1' });
    expect(trade.headers['idempotency-key']).toMatch(/^fxgw1\./);
    for (const read of upstream.requests.filter((sent) => sent.method === 'GET'))
      expect(read.headers['idempotency-key']).toBeUndefined();
    const body = response.json() as Record<string, unknown> & { data: Record<string, unknown> };
    expect(Object.keys(body)).toEqual([
      'status',
      'message',
      'data',
      'balances',
      'trade',
      'userCreditLimit',
      'userCreditUsed',
    ]);
    expect(body.trade).toEqual(body.data.trade);
    expect(body.trade).toMatchObject({
      id: S.UUIDS.trade,
      referencedAmount: 100.5,
      referenceAmount: 100.5,
      amount: 108.76,
    });
    expect(response.text).toContain('"balances":{"EUR":50000.00,"USD":-12.50},');
    expect(response.text).toContain('"userCreditLimit":1000000.00,"userCreditUsed":108.76}');
  });

  it('v2 trade: the same result under data only', async () => {
    answerBy({
      'POST /v3/fx/trades': { data: S.TRADE },
      'GET /v3/fx/balances': S.BALANCES,
      'GET /v3/fx/exposure': S.EXPOSURE,
    });
    const response = await legacy('POST', '/v2/brokerage/{org}/trade', `{"quoteId":"${S.UUIDS.quote}"}`, {
      'idempotency-key': 'trade-shape-1',
    });
    expect(response.status, response.text).toBe(200);
    const body = response.json() as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['status', 'message', 'data']);
    expect(body).toMatchObject({
      status: 'success',
      message: 'Trade executed successfully',
      data: { trade: { referenceAmount: 100.5, amount: 108.76 } },
    });
  });

  it('v2 trade/reverse: the trade id of the body goes in the v3 path, the quote id in the v3 body', async () => {
    answerBy({ [`POST /v3/fx/trades/${S.TRADE.id}/reverse`]: { data: S.REVERSAL } });
    const response = await legacy(
      'POST',
      '/v2/brokerage/{org}/trade/reverse',
      `{"tradeId":"${S.UUIDS.trade}","quoteId":"${S.UUIDS.reverseQuote}"}`,
      { 'idempotency-key': 'reverse-1' },
    );
    expect(response.status, response.text).toBe(200);
    expect(sentCalls()).toEqual([`POST /v3/fx/trades/${S.TRADE.id}/reverse`]);
    expect(JSON.parse(upstream.requests[0]!.body.toString())).toEqual({
      quoteId: 'qte_01a207ce99007aaa8bbbcccccccccccc',
    });
    expect(response.text).toContain(
      '"reversalDetails":{"direction":"DEBIT","differentialAmount":0.44,"currency":"USD"}',
    );
    expect(response.json()).toMatchObject({
      data: { trade: { id: S.UUIDS.reversal, status: 'REVERSED', originalTradeId: S.UUIDS.trade } },
    });
  });

  it('v2 trade/settle: no v3 body at all', async () => {
    answerBy({ [`POST /v3/fx/trades/${S.TRADE.id}/settle`]: { data: S.SETTLED } });
    const response = await legacy('POST', '/v2/brokerage/{org}/trade/settle', `{"tradeId":"${S.UUIDS.trade}"}`, {
      'idempotency-key': 'settle-1',
    });
    expect(response.status, response.text).toBe(200);
    expect(upstream.requests[0]!.body.length).toBe(0);
    expect(response.json()).toMatchObject({
      message: 'Trade settled successfully',
      data: { trade: { status: 'SETTLED' } },
    });
  });

  it('withdrawal_addresses: one v3 list of stablecoin accounts, filtered and paged by the gateway', async () => {
    const accounts = Array.from({ length: 5 }, (_, index) => ({
      ...S.WALLET_ACCOUNT,
      id: `wac_01a207ce60007000800000000000b${index.toString().padStart(3, '0')}`,
      verified: index !== 2,
      network: index === 4 ? 'POLYGON' : 'ETHEREUM',
    }));
    upstream.answer = json({ data: accounts });
    const response = await legacy(
      'GET',
      '/v2/brokerage/{org}/withdrawal_addresses?verified=TRUE&coinNetwork=ethereum&page=2&limit=2',
    );
    expect(response.status, response.text).toBe(200);
    expect(sentCalls()).toEqual(['GET /v3/fx/withdrawal-accounts?assetType=STABLECOIN']);
    // Kept: b000, b001, b003 (b002 unverified, b004 on Polygon); page 2 of 2 holds b003.
    const body = response.json() as { data: { id: string; status: string; coinNetworkName: string }[]; meta: unknown };
    expect(body.data.map((address) => [address.id, address.status, address.coinNetworkName])).toEqual([
      ['01a207ce-6000-7000-8000-00000000b003', 'Verified', 'Ethereum'],
    ]);
    expect(body.meta).toEqual({ pagination: { total: 3, start: 2, end: 3, page: 2, limit: 2 } });
  });

  it('deposits: the currency filter goes to v3 in upper case, before the cursor walk', async () => {
    upstream.answer = json(S.cursorPage([S.DEPOSIT_USDC, S.DEPOSIT_FAILED]));
    const response = await legacy('GET', '/v1/brokerage/{org}/deposits?currency=usdc');
    expect(response.status, response.text).toBe(200);
    expect(sentCalls()).toEqual(['GET /v3/fx/deposits?currency=USDC&limit=100']);
    expect(response.json()).toMatchObject({
      data: [
        { status: 'COMPLETED', completedAt: '2026-11-23T09:31:00.000Z' },
        { status: 'ERROR', network: 'FIAT', completedAt: null },
      ],
    });
  });

  it.each([
    ['an unknown query parameter', 'GET', '/v2/brokerage/{org}/trades?status=EXECUTED', undefined],
    ['a closed filter word', 'GET', '/v1/brokerage/{org}/withdrawal_addresses?status=archived', undefined],
    ['a repeated parameter', 'GET', '/v2/brokerage/{org}/deposits?currency=USD&currency=EUR', undefined],
    ['a limit above 50', 'GET', '/v1/brokerage/{org}/trades?limit=51', undefined],
    ['a query on a list that takes none', 'GET', '/v2/brokerage/{org}/balances?page=1', undefined],
    ['a body that is not an object', 'POST', '/v1/brokerage/{org}/generate_quote', '[1,2]'],
    ['a body that is not JSON', 'POST', '/v1/brokerage/{org}/trade', '{"quoteId":'],
    [
      'a lower-case currency',
      'POST',
      '/v1/brokerage/{org}/generate_quote',
      '{"amount":1,"buy":"eur","sell":"USD","referencedUnit":"USD"}',
    ],
    [
      'a zero amount',
      'POST',
      '/v1/brokerage/{org}/withdrawal',
      `{"amount":0,"currency":"USDC","withdrawalAddressId":"${S.UUIDS.walletAccount}"}`,
    ],
    ['no body', 'POST', '/v1/brokerage/{org}/trade', ''],
  ] as const)('%s: the legacy 400, and nothing sent to v3', async (_name, method, path, body) => {
    const response = await legacy(method, path, body);
    expect(response.status, response.text).toBe(400);
    expect(response.json()).toMatchObject(QUERY_FAILED);
    expect(upstream.requests).toEqual([]);
  });
});

describe('a replayed legacy token', () => {
  const AUTH_401 = {
    status: 'error',
    message: 'The authorization key provided is either invalid or expired, please try again',
  };

  it("on a read: 401 and nothing of the v3 answer, though the first replay's read went out while its check ran", async () => {
    upstream.answer = {
      status: 200,
      headers: { 'content-type': 'application/json', 'ratelimit-limit': '20' },
      body: JSON.stringify({ data: TRADE }),
    };
    const token = gw.token();
    const path = `/v1/brokerage/{org}/trade/${TRADE_ID}`;
    const first = await legacy('GET', path, undefined, { authorization: `Bearer ${token}` });
    expect(first.status, first.text).toBe(200);
    const replay = await legacy('GET', path, undefined, { authorization: `Bearer ${token}` });
    expect(replay.status).toBe(401);
    expect(replay.json()).toEqual(AUTH_401);
    // The key's own rate-limit headers (the replay was charged to it), never v3's.
    expect(replay.headers['ratelimit-limit']).toBe(String(UNLIMITED_LEGACY_RATE.reads));
    expect(upstream.requests).toHaveLength(2);
    // Caught once, the token's later replays never reach v3.
    const again = await legacy('GET', path, undefined, { authorization: `Bearer ${token}` });
    expect(again.status).toBe(401);
    expect(again.json()).toEqual(AUTH_401);
    expect(upstream.requests).toHaveLength(2);
  });

  it('on a read with an idempotency key, and on a write: 401 before anything is sent', async () => {
    upstream.answer = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: [] }),
    };
    const keyed = gw.token();
    const headers = { authorization: `Bearer ${keyed}`, 'idempotency-key': 'read-1' };
    expect((await legacy('GET', '/v2/brokerage/{org}/withdrawal_addresses', undefined, headers)).status).toBe(200);
    const sent = upstream.requests.length;
    expect(
      (
        await legacy('GET', '/v2/brokerage/{org}/withdrawal_addresses', undefined, {
          ...headers,
          'idempotency-key': 'read-2',
        })
      ).status,
    ).toBe(401);
    const write = gw.token();
    const body = '{"amount":1,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}';
    const first = await legacy('POST', '/v2/brokerage/{org}/generate_quote', body, {
      authorization: `Bearer ${write}`,
      'idempotency-key': 'w-1',
    });
    expect(first.status).not.toBe(401);
    const afterWrite = upstream.requests.length;
    const replay = await legacy('POST', '/v2/brokerage/{org}/generate_quote', body, {
      authorization: `Bearer ${write}`,
      'idempotency-key': 'w-2',
    });
    expect(replay.status).toBe(401);
    expect(replay.json()).toEqual(AUTH_401);
    expect(upstream.requests.length).toBe(afterWrite);
    expect(afterWrite).toBe(sent + 1);
  });
});

describe('what the legacy client is told when v3 misbehaves', () => {
  it.each([
    ['a 502 without the v3 envelope', { status: 502, body: '<html>bad gateway</html>' }],
    ['a 200 whose body is not JSON', { status: 200, body: 'not json' }],
    ['a 200 without data', { status: 200, body: '{"ok":true}' }],
    [
      'a trade whose amount is a JSON number',
      { status: 200, body: JSON.stringify({ data: { ...TRADE, buyAmount: 1.5 } }) },
    ],
    [
      'a 401 refusing the gateway credential',
      {
        status: 401,
        body: '{"error":{"code":"AUTH_TOKEN_INVALID","type":"AUTHENTICATION_ERROR","message":"x","retryStrategy":"TERMINAL","details":{}}}',
      },
    ],
  ])('%s: v1 500, v2 500, in their envelopes', async (_name, answer) => {
    upstream.answer = { headers: { 'content-type': 'application/json' }, ...answer };
    const v1 = await legacy('GET', `/v1/brokerage/{org}/trade/${TRADE_ID}`);
    expect(v1.status).toBe(500);
    expect(v1.json()).toEqual({ status: 'error', message: 'An internal error has occurred' });
    const v2 = await legacy('GET', '/v2/brokerage/{org}/balances');
    expect(v2.status).toBe(500);
    expect(v2.json()).toEqual({ status: 'error', message: 'An internal error has occurred' });
  });

  it.each([
    [
      'a record without an id',
      {
        data: [{ ...TRADE, id: undefined }],
        pagination: { hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null },
      },
    ],
    [
      'an id that is not text',
      {
        data: [{ ...TRADE, id: 42 }],
        pagination: { hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null },
      },
    ],
    [
      'data that is not a list',
      { data: TRADE, pagination: { hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null } },
    ],
    ['no pagination', { data: [TRADE] }],
    [
      'a cursor that is not text',
      { data: [TRADE], pagination: { hasNext: true, hasPrev: false, nextCursor: 7, prevCursor: null } },
    ],
  ])('a cursor page with %s: legacy 500, never a walk on a broken cursor', async (_name, page) => {
    upstream.answer = { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(page) };
    for (const path of ['/v1/brokerage/{org}/trades', '/v2/brokerage/{org}/trades?page=2&limit=1']) {
      const response = await legacy('GET', path);
      expect(response.status, response.text).toBe(500);
      expect(response.json()).toEqual({ status: 'error', message: 'An internal error has occurred' });
    }
  });

  it('a hanging v3 is a legacy 500 within the configured timeout, never a hang', async () => {
    upstream.answer = { status: 200, hang: true };
    const response = await legacy('GET', '/v2/brokerage/{org}/balances');
    expect(response.status).toBe(500);
    expect(response.elapsedMs).toBeLessThan(TIMEOUT_MS * 4);
  });

  it("429 from v3: legacy 429 with v3's Retry-After, and the key's own rate-limit headers rather than v3's", async () => {
    upstream.answer = {
      status: 429,
      headers: {
        'content-type': 'application/json',
        'retry-after': '7',
        'ratelimit-limit': '20',
        'ratelimit-reset': '7',
      },
      body: '{"error":{"code":"RATE_LIMIT_EXCEEDED","type":"RATE_LIMITED","message":"slow down","retryStrategy":"WAIT_THEN_RETRY_SAME_KEY","details":{}}}',
    };
    for (const path of ['/v1/brokerage/{org}/balances', '/v2/brokerage/{org}/balances']) {
      const response = await legacy('GET', path);
      expect(response.status).toBe(429);
      expect(response.headers['retry-after']).toBe('7');
      expect(response.headers['ratelimit-limit']).toBe(String(UNLIMITED_LEGACY_RATE.reads));
      expect(response.headers['ratelimit-reset']).not.toBe('7');
      expect(response.json()).toEqual({ status: 'error', message: 'Too many requests, please try again later' });
    }
  });

  it('a code newer than the catalog goes by its type (CONFLICT is v2 409, v1 400)', async () => {
    upstream.answer = {
      status: 409,
      body: '{"error":{"code":"TRADE_SOMETHING_NEW","type":"CONFLICT","message":"x","retryStrategy":"TERMINAL","details":{}}}',
    };
    expect((await legacy('GET', '/v2/brokerage/{org}/balances')).status).toBe(409);
    expect((await legacy('GET', '/v1/brokerage/{org}/balances')).status).toBe(400);
  });

  it('a v3 message or details never reach the legacy body', async () => {
    upstream.answer = {
      status: 404,
      body: '{"error":{"code":"TRADE_NOT_FOUND","type":"NOT_FOUND","message":"secret internals","retryStrategy":"TERMINAL","details":{"x":"y"}}}',
    };
    const response = await legacy('GET', `/v1/brokerage/{org}/trade/${TRADE_ID}`);
    expect(response.status).toBe(400);
    expect(response.text).not.toContain('secret');
    expect(response.json()).toEqual({ status: 'error', message: 'Trade not found' });
  });

  it('no v3 credential for the org: legacy 500, nothing sent', async () => {
    const stranger = loadKey(await gw.registry.createKey({ orgId: newUuid(), scopes: ['view'], mode: 'sandbox' }));
    const response = await request(`${url}/v2/brokerage/${stranger.file.orgId}/balances`, {
      headers: { authorization: `Bearer ${gw.token(stranger)}`, 'x-app-mode': 'SANDBOX' },
    });
    expect(response.statusCode).toBe(500);
    await response.body.dump();
    expect(upstream.requests).toEqual([]);
  });
});
