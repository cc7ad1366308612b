/**
 * Each of the 22 legacy operations (DESIGN 4) against a scripted v3 (a real loopback server that
 * answers the spec-shaped samples): exactly which v3 calls the gateway makes, with which path,
 * query, body and Idempotency-Key, and that the legacy answer is a 200 in its envelope. The
 * end-to-end suites check the same operations against the real core; this one pins the wire.
 */
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LEGACY_OPERATIONS } from '../../../src/gateway/legacy/operations.js';
import type { UpstreamAnswer } from '../recording-upstream.js';
import { ScriptedGateway } from '../scripted-gateway.js';
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

let gw: ScriptedGateway;

beforeAll(async () => {
  gw = await ScriptedGateway.start();
  gw.upstream.answerFor = (sent): UpstreamAnswer => {
    const body = ANSWERS[`${sent.method} ${sent.url.split('?')[0]}`];
    return body === undefined ? { status: 404, body: '{"error":{"code":"ROUTE_NOT_FOUND","type":"NOT_FOUND","message":"","retryStrategy":"TERMINAL","details":{}}}' } : { status: 200, body: JSON.stringify(body) };
  };
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(() => {
  gw.upstream.requests.length = 0;
});

it('the table covers every operation of DESIGN 4 once', () => {
  const covered = ROWS.map((row) => `${row.generation} ${row.operation}`).sort();
  const all = [...LEGACY_OPERATIONS.v1.map((o) => `v1 ${o}`), ...LEGACY_OPERATIONS.v2.map((o) => `v2 ${o}`)].sort();
  expect(covered).toEqual(all);
});

describe.each(ROWS)('$generation $operation', (row) => {
  it('makes exactly the declared v3 calls and answers 200 in the legacy envelope', async () => {
    const { key, upstream } = gw;
    const v2Key = `op-${row.operation.replaceAll('/', '-')}`;
    const response = await request(`${gw.url}/${row.generation}/brokerage/${key.file.orgId}/${row.path}`, {
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
    expect(response.statusCode, text).toBe(200);
    expect((JSON.parse(text) as { status: string }).status).toBe('success');

    expect(upstream.requests.map((sent) => `${sent.method} ${sent.url}`)).toEqual(row.calls.map(([call]) => call));
    upstream.requests.forEach((sent, index) => {
      const expectedBody = row.calls[index]![1];
      if (expectedBody === null) expect(sent.body.length, `${sent.method} ${sent.url} body`).toBe(0);
      else expect(JSON.parse(sent.body.toString())).toEqual(expectedBody);
      const idempotencyKey = sent.headers['idempotency-key'];
      if (sent.method === 'GET') expect(idempotencyKey).toBeUndefined();
      else expect(idempotencyKey).toMatch(row.generation === 'v1' ? /^fxgw1\.[0-9a-f-]{36}$/ : /^fxgw2\.[0-9a-f]{64}$/);
    });
    if (row.generation === 'v1') expect(response.headers.sunset).toBe('Thu, 31 Dec 2026 23:59:59 GMT');
  });
});
