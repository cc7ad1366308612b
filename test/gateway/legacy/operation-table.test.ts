/**
 * Each of the 22 legacy operations (DESIGN 4), unit-tested against a v3 stubbed with nock: exactly
 * which v3 calls the gateway makes, with which path, query, body, signature and Idempotency-Key,
 * and that the legacy answer is a 200 in its envelope. nock answers only the calls a row
 * declares; any other call finds no interceptor, fails in the gateway, and the row is not a 200.
 * The gateway reaches nock through NodeHttpDispatcher (its undici Pool is below nock's patch of
 * node:http). The end-to-end suites check the same operations against the real core.
 */
import nock from 'nock';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_OPERATIONS } from '../../../src/gateway/legacy/operations.js';
import { NOCKED_V3_ORIGIN, NockedGateway } from '../scripted-gateway.js';
import * as S from './transforms/v3-samples.js';

const v3Id = (prefix: string, uuid: string) => `${prefix}_${uuid.replaceAll('-', '')}`;
const page = (data: readonly unknown[]) => ({ data, pagination: { hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null } });

/** What v3 answers, by `METHOD path` (no query). */
const ANSWERS: Record<string, unknown> = {
  'GET /v3/fx/balances': S.BALANCES,
  'GET /v3/fx/exposure': S.EXPOSURE,
  'GET /v3/fx/pairs': { data: [S.PAIR] },
  'GET /v3/fx/trades': page([S.TRADE]),
  [`GET /v3/fx/trades/${S.TRADE.id}`]: { data: S.TRADE },
  'GET /v3/fx/deposits': page([S.DEPOSIT_USDC, S.DEPOSIT_USD]),
  'GET /v3/fx/withdrawals': page([S.WITHDRAWAL]),
  'GET /v3/fx/withdrawal-accounts': { data: [S.FIAT_ACCOUNT, S.WALLET_ACCOUNT] },
  'POST /v3/fx/quotes': { data: S.QUOTE },
  'POST /v3/fx/trades': { data: S.TRADE },
  [`POST /v3/fx/trades/${S.TRADE.id}/reverse-quote`]: { data: S.REVERSE_QUOTE },
  [`POST /v3/fx/trades/${S.TRADE.id}/reverse`]: { data: S.REVERSAL },
  [`POST /v3/fx/trades/${S.TRADE.id}/settle`]: { data: S.SETTLED },
  'POST /v3/fx/withdrawals': { data: S.WITHDRAWAL },
};

interface Row {
  readonly generation: 'v1' | 'v2';
  readonly operation: string;
  readonly method: 'GET' | 'POST';
  /** Below /{generation}/brokerage/{org}/. */
  readonly path: string;
  readonly body?: string;
  /** The v3 calls: `METHOD url` and, for writes, the JSON body sent (null: none). */
  readonly calls: readonly (readonly [string, Record<string, unknown> | null])[];
}

const QUOTE_BODY = '{"amount":100.50,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}';
const V3_QUOTE = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.5', amountCurrency: 'EUR' };
const TRADE_BODY = `{"quoteId":"${S.UUIDS.quote}"}`;
const WITHDRAWAL = (account: string, currency: string) => `{"amount":12.5,"currency":"${currency}","withdrawalAddressId":"${account}"}`;

const ROWS: readonly Row[] = [
  { generation: 'v1', operation: 'fiat_withdrawal_addresses', method: 'GET', path: 'fiat_withdrawal_addresses', calls: [['GET /v3/fx/withdrawal-accounts?assetType=FIAT&status=ACTIVE&verified=true', null]] },
  { generation: 'v1', operation: 'withdrawal_addresses', method: 'GET', path: 'withdrawal_addresses', calls: [['GET /v3/fx/withdrawal-accounts?assetType=STABLECOIN&status=ACTIVE&verified=true', null]] },
  { generation: 'v1', operation: 'trades', method: 'GET', path: 'trades', calls: [['GET /v3/fx/trades?limit=100', null]] },
  { generation: 'v1', operation: 'trade/{id}', method: 'GET', path: `trade/${S.UUIDS.trade}`, calls: [[`GET /v3/fx/trades/${S.TRADE.id}`, null]] },
  { generation: 'v1', operation: 'deposits', method: 'GET', path: 'deposits?currency=USDC', calls: [['GET /v3/fx/deposits?currency=USDC&limit=100', null]] },
  { generation: 'v1', operation: 'balances', method: 'GET', path: 'balances', calls: [['GET /v3/fx/balances', null]] },
  { generation: 'v1', operation: 'generate_quote', method: 'POST', path: 'generate_quote', body: QUOTE_BODY, calls: [['POST /v3/fx/quotes', V3_QUOTE]] },
  {
    generation: 'v1',
    operation: 'trade',
    method: 'POST',
    path: 'trade',
    body: TRADE_BODY,
    calls: [['POST /v3/fx/trades', { quoteId: S.QUOTE.id }], ['GET /v3/fx/balances', null], ['GET /v3/fx/exposure', null]],
  },
  { generation: 'v2', operation: 'balances', method: 'GET', path: 'balances', calls: [['GET /v3/fx/balances', null]] },
  { generation: 'v2', operation: 'available_markets', method: 'GET', path: 'available_markets', calls: [['GET /v3/fx/pairs', null]] },
  { generation: 'v2', operation: 'trades', method: 'GET', path: 'trades?page=1&limit=5', calls: [['GET /v3/fx/trades?limit=100', null]] },
  { generation: 'v2', operation: 'deposits', method: 'GET', path: 'deposits', calls: [['GET /v3/fx/deposits?limit=100', null]] },
  { generation: 'v2', operation: 'withdrawals', method: 'GET', path: 'withdrawals', calls: [['GET /v3/fx/withdrawals?limit=100', null]] },
  { generation: 'v2', operation: 'withdrawal_addresses', method: 'GET', path: 'withdrawal_addresses', calls: [['GET /v3/fx/withdrawal-accounts?assetType=STABLECOIN&status=ACTIVE&verified=true', null]] },
  { generation: 'v2', operation: 'fiat_withdrawal_addresses', method: 'GET', path: 'fiat_withdrawal_addresses', calls: [['GET /v3/fx/withdrawal-accounts?assetType=FIAT&status=ACTIVE&verified=true', null]] },
  { generation: 'v2', operation: 'generate_quote', method: 'POST', path: 'generate_quote', body: QUOTE_BODY, calls: [['POST /v3/fx/quotes', V3_QUOTE]] },
  {
    generation: 'v2',
    operation: 'trade',
    method: 'POST',
    path: 'trade',
    body: TRADE_BODY,
    calls: [['POST /v3/fx/trades', { quoteId: S.QUOTE.id }], ['GET /v3/fx/balances', null], ['GET /v3/fx/exposure', null]],
  },
  { generation: 'v2', operation: 'trade/reverse-quote', method: 'POST', path: 'trade/reverse-quote', body: `{"tradeId":"${S.UUIDS.trade}"}`, calls: [[`POST /v3/fx/trades/${S.TRADE.id}/reverse-quote`, null]] },
  {
    generation: 'v2',
    operation: 'trade/reverse',
    method: 'POST',
    path: 'trade/reverse',
    body: `{"tradeId":"${S.UUIDS.trade}","quoteId":"${S.UUIDS.reverseQuote}","clientReferenceId":"undo-1"}`,
    calls: [[`POST /v3/fx/trades/${S.TRADE.id}/reverse`, { quoteId: v3Id('qte', S.UUIDS.reverseQuote), clientReferenceId: 'undo-1' }]],
  },
  { generation: 'v2', operation: 'trade/settle', method: 'POST', path: 'trade/settle', body: `{"tradeId":"${S.UUIDS.trade}"}`, calls: [[`POST /v3/fx/trades/${S.TRADE.id}/settle`, null]] },
  {
    generation: 'v2',
    operation: 'withdrawal',
    method: 'POST',
    path: 'withdrawal',
    body: WITHDRAWAL(S.UUIDS.walletAccount, 'USDC'),
    calls: [['POST /v3/fx/withdrawals', { withdrawalAccountId: v3Id('wac', S.UUIDS.walletAccount), withdrawalAmount: '12.5', currency: 'USDC' }]],
  },
  {
    generation: 'v2',
    operation: 'fiat_withdrawal',
    method: 'POST',
    path: 'fiat_withdrawal',
    body: WITHDRAWAL(S.UUIDS.fiatAccount, 'USD'),
    calls: [['POST /v3/fx/withdrawals', { withdrawalAccountId: v3Id('wac', S.UUIDS.fiatAccount), withdrawalAmount: '12.5', currency: 'USD' }]],
  },
];

let gw: NockedGateway;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  gw = await NockedGateway.start();
});
afterEach(() => {
  nock.cleanAll();
});
afterAll(async () => {
  await gw?.close();
  nock.enableNetConnect();
  nock.restore();
});

/** What the gateway's calls must carry, whatever the operation. */
const SIGNED = { authorization: /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/, 'x-request-signature': /^[A-Za-z0-9_-]{86}$/ } as const;

/** One interceptor per declared call, each answering once from ANSWERS; returns them all. */
function expectCalls(row: Row): nock.Scope[] {
  return row.calls.map(([call, body]) => {
    const [method, url] = call.split(' ') as ['GET' | 'POST', string];
    const answer = ANSWERS[`${method} ${url.split('?')[0]!}`];
    if (answer === undefined) throw new Error(`no v3 answer for ${call}`);
    const write = method === 'POST';
    // A GET must carry no Idempotency-Key; a write carries v1's fresh key or v2's derived one.
    const scope = nock(NOCKED_V3_ORIGIN, write ? {} : { badheaders: ['idempotency-key'] })
      .matchHeader('authorization', SIGNED.authorization)
      .matchHeader('x-request-signature', SIGNED['x-request-signature']);
    if (write) scope.matchHeader('idempotency-key', row.generation === 'v1' ? /^fxgw1\.[0-9a-f-]{36}$/ : /^fxgw2\.[0-9a-f]{64}$/);
    const interceptor = write
      ? scope.post(url, body === null ? (sent: unknown) => sent === '' : (body as nock.RequestBodyMatcher))
      : scope.get(url);
    return interceptor.reply(200, answer as nock.Body, { 'content-type': 'application/json' });
  });
}

it('the table covers every operation of DESIGN 4 once', () => {
  const covered = ROWS.map((row) => `${row.generation} ${row.operation}`).sort();
  const all = [...LEGACY_OPERATIONS.v1.map((o) => `v1 ${o}`), ...LEGACY_OPERATIONS.v2.map((o) => `v2 ${o}`)].sort();
  expect(covered).toEqual(all);
});

describe.each(ROWS)('$generation $operation', (row) => {
  it('makes exactly the declared v3 calls and answers 200 in the legacy envelope', async () => {
    const scopes = expectCalls(row);
    const v2Key = `op-${row.operation.replaceAll('/', '-')}`;
    const response = await request(`${gw.url}/${row.generation}/brokerage/${gw.key.file.orgId}/${row.path}`, {
      method: row.method,
      headers: {
        authorization: `Bearer ${gw.token()}`,
        'x-app-mode': 'SANDBOX',
        ...(row.body ? { 'content-type': 'application/json' } : {}),
        ...(row.generation === 'v2' && row.method === 'POST' ? { 'idempotency-key': v2Key } : {}),
      },
      body: row.body,
    });
    const text = await response.body.text();
    expect(response.statusCode, `${text}; v3 calls not made: ${nock.pendingMocks().join(', ')}`).toBe(200);
    expect((JSON.parse(text) as { status: string }).status).toBe('success');
    for (const scope of scopes) scope.done();
    if (row.generation === 'v1') expect(response.headers.sunset).toBe('Thu, 31 Dec 2026 23:59:59 GMT');
  });
});

describe('the nocked v3 itself', () => {
  it('fails a call no row declared, so that an extra call cannot pass unseen', async () => {
    // balances is one call; with no interceptor at all the gateway's call finds nothing.
    const response = await request(`${gw.url}/v2/brokerage/${gw.key.file.orgId}/balances`, {
      headers: { authorization: `Bearer ${gw.token()}`, 'x-app-mode': 'SANDBOX' },
    });
    expect(response.statusCode).toBe(500);
    await response.body.dump();
  });

  it('refuses a write whose body differs from the declared one', async () => {
    const row = ROWS.find((candidate) => candidate.generation === 'v2' && candidate.operation === 'generate_quote')!;
    expectCalls({ ...row, calls: [['POST /v3/fx/quotes', { ...V3_QUOTE, amount: '100.51' }]] });
    const response = await request(`${gw.url}/v2/brokerage/${gw.key.file.orgId}/generate_quote`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.token()}`, 'x-app-mode': 'SANDBOX', 'content-type': 'application/json', 'idempotency-key': 'mismatch-1' },
      body: QUOTE_BODY,
    });
    expect(response.statusCode).toBe(500);
    await response.body.dump();
    expect(nock.pendingMocks()).toHaveLength(1);
  });
});
