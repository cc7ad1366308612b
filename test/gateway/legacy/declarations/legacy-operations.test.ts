/**
 * Every legacy operation of both generations (12 on v1, 15 on v2), unit-tested against a v3
 * stubbed with nock: the gateway makes exactly the v3 calls the operation declares, with their
 * path, query, body, signature and Idempotency-Key, and answers 200 in the declared envelope
 * (`{status: 'success', message, data, ...}`, data laid out as the mapping says, meta only on
 * paginated lists). nock answers only the calls a row declares; any other call finds no
 * interceptor, fails in the gateway, and the row is not a 200. The gateway reaches nock through
 * NodeHttpDispatcher (its undici Pool is below nock's patch of node:http). The end-to-end suites
 * check the same operations against the real core.
 */
import nock from 'nock';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { EndpointMapping } from '../../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import {
  LEGACY_GENERATIONS,
  LEGACY_OPERATIONS,
  type LegacyGeneration,
} from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import { loadLegacyMappings } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import { NOCKED_V3_ORIGIN, NockedGateway } from '../../scripted-gateway.js';
import * as S from '../v3-contract/v3-samples.js';

const MAPPINGS = await loadLegacyMappings();
const v3Id = (prefix: string, uuid: string) => `${prefix}_${uuid.replaceAll('-', '')}`;

const STABLECOIN_ACCOUNTS = 'GET /v3/fx/withdrawal-accounts?assetType=STABLECOIN';
const FIAT_ACCOUNTS = 'GET /v3/fx/withdrawal-accounts?assetType=FIAT&status=ACTIVE&verified=true';

/** What v3 answers, by `METHOD url`, else by `METHOD path` (no query). */
const ANSWERS: Record<string, unknown> = {
  'GET /v3/fx/balances': S.BALANCES,
  'GET /v3/fx/exposure': S.EXPOSURE,
  'GET /v3/fx/pairs': { data: [S.PAIR] },
  'GET /v3/fx/trades': S.cursorPage([S.TRADE, S.REVERSAL.trade]),
  [`GET /v3/fx/trades/${S.TRADE.id}`]: { data: S.TRADE },
  'GET /v3/fx/deposits': S.cursorPage([S.DEPOSIT_USDC, S.DEPOSIT_FAILED]),
  'GET /v3/fx/withdrawals': S.cursorPage([S.WITHDRAWAL, S.FIAT_WITHDRAWAL]),
  [STABLECOIN_ACCOUNTS]: { data: [S.WALLET_ACCOUNT] },
  [FIAT_ACCOUNTS]: { data: [S.FIAT_ACCOUNT] },
  'POST /v3/fx/quotes': { data: S.QUOTE },
  'POST /v3/fx/trades': { data: S.TRADE },
  [`POST /v3/fx/trades/${S.TRADE.id}/reverse-quote`]: { data: S.REVERSE_QUOTE },
  [`POST /v3/fx/trades/${S.TRADE.id}/reverse`]: { data: S.REVERSAL },
  [`POST /v3/fx/trades/${S.TRADE.id}/settle`]: { data: S.SETTLED },
  'POST /v3/fx/withdrawals': { data: S.WITHDRAWAL },
};

interface Call {
  /** `METHOD url`, the query in the order the gateway writes it. */
  readonly call: string;
  /** For writes, the JSON body v3 must receive; null: none at all. */
  readonly body: Record<string, unknown> | null;
}

interface OperationCase {
  /** Below /{generation}/brokerage/{org}/. */
  readonly path: string;
  readonly body?: string;
  readonly calls: readonly Call[];
}

const QUOTE_BODY = '{"amount":100.50,"buy":"EUR","sell":"USD","referencedUnit":"EUR","quoteForSeconds":30}';
const V3_QUOTE = {
  buyCurrency: 'EUR',
  sellCurrency: 'USD',
  amount: '100.5',
  amountCurrency: 'EUR',
  validForSeconds: 30,
};
const WITHDRAWAL = (account: string, currency: string) =>
  `{"amount":12.5,"currency":"${currency}","withdrawalAddressId":"${account}"}`;
const get = (call: string): Call => ({ call: `GET ${call}`, body: null });

/**
 * Each operation's request and the v3 calls it declares; both generations send the same. Lists
 * ask for their first page: the page walker keeps a list's cursors per org, so a later page here
 * would start from a cursor another row left behind.
 */
const CASES: Readonly<Record<string, OperationCase>> = {
  available_markets: { path: 'available_markets', calls: [get('/v3/fx/pairs')] },
  balances: { path: 'balances', calls: [get('/v3/fx/balances')] },
  generate_quote: { path: 'generate_quote', body: QUOTE_BODY, calls: [{ call: 'POST /v3/fx/quotes', body: V3_QUOTE }] },
  trade: {
    path: 'trade',
    body: `{"quoteId":"${S.UUIDS.quote}"}`,
    calls: [
      { call: 'POST /v3/fx/trades', body: { quoteId: S.QUOTE.id } },
      get('/v3/fx/balances'),
      get('/v3/fx/exposure'),
    ],
  },
  trades: { path: 'trades?page=1&limit=5', calls: [get('/v3/fx/trades?limit=100')] },
  'trade/{id}': { path: `trade/${S.UUIDS.trade}`, calls: [get(`/v3/fx/trades/${S.TRADE.id}`)] },
  deposits: { path: 'deposits?currency=usdc', calls: [get('/v3/fx/deposits?currency=USDC&limit=100')] },
  withdrawal_addresses: { path: 'withdrawal_addresses?verified=true', calls: [get(STABLECOIN_ACCOUNTS.slice(4))] },
  fiat_withdrawal_addresses: { path: 'fiat_withdrawal_addresses', calls: [get(FIAT_ACCOUNTS.slice(4))] },
  withdrawals: { path: 'withdrawals?limit=1', calls: [get('/v3/fx/withdrawals?limit=100')] },
  withdrawal: {
    path: 'withdrawal',
    body: WITHDRAWAL(S.UUIDS.walletAccount, 'USDC'),
    calls: [
      {
        call: 'POST /v3/fx/withdrawals',
        body: { withdrawalAccountId: v3Id('wac', S.UUIDS.walletAccount), withdrawalAmount: '12.5', currency: 'USDC' },
      },
    ],
  },
  fiat_withdrawal: {
    path: 'fiat_withdrawal',
    body: WITHDRAWAL(S.UUIDS.fiatAccount, 'USD'),
    calls: [
      {
        call: 'POST /v3/fx/withdrawals',
        body: { withdrawalAccountId: v3Id('wac', S.UUIDS.fiatAccount), withdrawalAmount: '12.5', currency: 'USD' },
      },
    ],
  },
  'trade/reverse-quote': {
    path: 'trade/reverse-quote',
    body: `{"tradeId":"${S.UUIDS.trade}"}`,
    calls: [{ call: `POST /v3/fx/trades/${S.TRADE.id}/reverse-quote`, body: null }],
  },
  'trade/reverse': {
    path: 'trade/reverse',
    body: `{"tradeId":"${S.UUIDS.trade}","quoteId":"${S.UUIDS.reverseQuote}","clientReferenceId":"undo-1"}`,
    calls: [
      {
        call: `POST /v3/fx/trades/${S.TRADE.id}/reverse`,
        body: { quoteId: v3Id('qte', S.UUIDS.reverseQuote), clientReferenceId: 'undo-1' },
      },
    ],
  },
  'trade/settle': {
    path: 'trade/settle',
    body: `{"tradeId":"${S.UUIDS.trade}"}`,
    calls: [{ call: `POST /v3/fx/trades/${S.TRADE.id}/settle`, body: null }],
  },
};

interface Row extends OperationCase {
  readonly generation: LegacyGeneration;
  readonly operation: string;
  readonly mapping: EndpointMapping;
}

const ROWS: readonly Row[] = LEGACY_GENERATIONS.flatMap((generation) =>
  LEGACY_OPERATIONS[generation].map((operation) => ({
    generation,
    operation,
    mapping: (MAPPINGS.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation]!,
    ...CASES[operation]!,
  })),
);

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
const SIGNED = {
  authorization: /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/,
  'x-request-signature': /^[A-Za-z0-9_-]{86}$/,
} as const;

/** One interceptor per declared call, each answering once from ANSWERS; returns them all. */
function expectCalls(row: Pick<Row, 'generation' | 'calls'>): nock.Scope[] {
  return row.calls.map(({ call, body }) => {
    const [method, url] = call.split(' ') as ['GET' | 'POST', string];
    const answer = ANSWERS[call] ?? ANSWERS[`${method} ${url.split('?')[0]!}`];
    if (answer === undefined) throw new Error(`no v3 answer for ${call}`);
    const write = method === 'POST';
    // A GET must carry no Idempotency-Key; a write carries v1's fresh key or v2's derived one.
    const scope = nock(NOCKED_V3_ORIGIN, write ? {} : { badheaders: ['idempotency-key'] })
      .matchHeader('authorization', SIGNED.authorization)
      .matchHeader('x-request-signature', SIGNED['x-request-signature']);
    if (write)
      scope.matchHeader(
        'idempotency-key',
        row.generation === 'v1' ? /^fxgw1\.[0-9a-f-]{36}$/ : /^fxgw2\.[0-9a-f]{64}$/,
      );
    const interceptor = write
      ? scope.post(url, body === null ? (sent: unknown) => sent === '' : (body as nock.RequestBodyMatcher))
      : scope.get(url);
    return interceptor.reply(200, answer as nock.Body, { 'content-type': 'application/json' });
  });
}

/** The declared envelope: status, message, data laid out as the mapping says, root fields, meta only on paginated lists. */
function expectEnvelope(body: Record<string, unknown>, row: Row): void {
  const { response } = row.mapping;
  expect(body.status).toBe('success');
  expect(body.message).toBe(response.message.text);
  const data = response.data;
  const fieldsOf = (record: string) => Object.keys(MAPPINGS.records[record]!.fields);
  if ('list' in data) {
    expect(Array.isArray(body.data)).toBe(true);
    const list = body.data as Record<string, unknown>[];
    expect(list.length).toBeGreaterThan(0);
    for (const record of list) expect(Object.keys(record)).toEqual(fieldsOf(data.list));
  } else if ('record' in data) {
    expect(Object.keys(body.data as object)).toEqual(fieldsOf(data.record));
  } else if ('object' in data) {
    expect(Object.keys(body.data as object)).toEqual(Object.keys(data.object));
    if (response.dataAlsoAtRoot)
      for (const key of Object.keys(data.object))
        expect(body[key]).toEqual((body.data as Record<string, unknown>)[key]);
  }
  for (const key of Object.keys(response.root ?? {})) expect(body).toHaveProperty(key);
  if (row.mapping.pagination === 'page-limit')
    expect(body.meta).toMatchObject({ pagination: { total: expect.any(Number) as number } });
  else expect(body).not.toHaveProperty('meta');
}

it('the table covers every operation of both generations once: 12 on v1, 15 on v2', () => {
  expect(ROWS.filter((row) => row.generation === 'v1')).toHaveLength(12);
  expect(ROWS.filter((row) => row.generation === 'v2')).toHaveLength(15);
  expect(Object.keys(CASES).sort()).toEqual([...LEGACY_OPERATIONS.v2].sort());
  for (const row of ROWS)
    expect(
      row.calls.map(({ call }) => call.split(' ')[0]),
      `${row.generation} ${row.operation}`,
    ).toEqual(Object.values(row.mapping.v3).map((call) => call.method));
});

describe.each(ROWS)('$generation $operation', (row) => {
  it('makes exactly the declared v3 calls and answers 200 in the declared envelope', async () => {
    const scopes = expectCalls(row);
    const v2Key = `op-${row.operation.replaceAll(/[/{}]/g, '-')}`;
    const response = await request(`${gw.url}/${row.generation}/brokerage/${gw.key.file.orgId}/${row.path}`, {
      method: row.mapping.method,
      headers: {
        authorization: `Bearer ${gw.token()}`,
        'x-app-mode': 'SANDBOX',
        ...(row.body ? { 'content-type': 'application/json' } : {}),
        ...(row.generation === 'v2' && row.mapping.method === 'POST' ? { 'idempotency-key': v2Key } : {}),
      },
      body: row.body,
    });
    const text = await response.body.text();
    expect(response.statusCode, `${text}; v3 calls not made: ${nock.pendingMocks().join(', ')}`).toBe(200);
    expectEnvelope(JSON.parse(text) as Record<string, unknown>, row);
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
    expectCalls({ generation: 'v2', calls: [{ call: 'POST /v3/fx/quotes', body: { ...V3_QUOTE, amount: '100.51' } }] });
    const response = await request(`${gw.url}/v2/brokerage/${gw.key.file.orgId}/generate_quote`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gw.token()}`,
        'x-app-mode': 'SANDBOX',
        'content-type': 'application/json',
        'idempotency-key': 'mismatch-1',
      },
      body: QUOTE_BODY,
    });
    expect(response.statusCode).toBe(500);
    await response.body.dump();
    expect(nock.pendingMocks()).toHaveLength(1);
  });
});
