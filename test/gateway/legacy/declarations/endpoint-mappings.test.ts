/**
 * The endpoint declarations (mappings/endpoints.v2.ts, and v1 as its changes from v2) and their
 * validator (validateEndpointTable): the shipped tables load and say what the legacy surface is
 * (operations, methods, scopes, idempotency and lifetimes, pagination, filters), and each rule of
 * the validator refuses a copy of the shipped table broken in exactly one place, naming exactly
 * that problem.
 */
import { describe, expect, it } from 'vitest';

import { V1_ENDPOINTS } from '../../../../mappings/endpoints.v1.js';
import { V2_ENDPOINTS } from '../../../../mappings/endpoints.v2.js';
import { LEGACY_RECORDS } from '../../../../mappings/records.js';
import { VALUE_MAPS } from '../../../../mappings/value-maps.js';
import {
  type EndpointContext,
  type EndpointMapping,
  validateEndpointTable,
} from '../../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import { applyGenerationChanges } from '../../../../src/gateway/legacy/declarations/generation-changes.js';
import {
  LEGACY_GENERATIONS,
  LEGACY_OPERATIONS,
  type LegacyGeneration,
} from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import { SHIPPED_CODE } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import { SOURCES } from '../../../../src/gateway/legacy/declarations/record-shapes.js';
import { edited, mappingError } from '../declaration-edits.js';

const CONTEXT: EndpointContext = { records: LEGACY_RECORDS, maps: VALUE_MAPS, checks: SHIPPED_CODE.checks };

const V2: Readonly<Record<string, EndpointMapping>> = V2_ENDPOINTS;
const V1: Readonly<Record<string, EndpointMapping>> = applyGenerationChanges('v1', V2_ENDPOINTS, V1_ENDPOINTS).table;
const TABLES = { v1: V1, v2: V2 };

/** The legacy surface by method: the three reversal and settlement writes are v2's only. */
const V2_ONLY = ['trade/reverse-quote', 'trade/reverse', 'trade/settle'];
const GETS = [
  'available_markets',
  'balances',
  'trades',
  'trade/{id}',
  'deposits',
  'withdrawal_addresses',
  'fiat_withdrawal_addresses',
  'withdrawals',
];
const POSTS = ['generate_quote', 'trade', 'withdrawal', 'fiat_withdrawal', ...V2_ONLY];

const HOUR = 3600;
const PROVENANCE = { source: 'ours', reason: 'A test declaration.' } as const;

/** The problems the validator lists for the generation's shipped table with `edits`. */
function problemsWith(generation: LegacyGeneration, edits: Readonly<Record<string, unknown>>): readonly string[] {
  return mappingError(() => validateEndpointTable(generation, edited(TABLES[generation], edits), CONTEXT)).problems;
}

describe('the shipped endpoint declarations', () => {
  it('v2 passes the validator as written, and v1 once its changes from v2 are applied', () => {
    expect(validateEndpointTable('v2', V2_ENDPOINTS, CONTEXT)).toBe(V2_ENDPOINTS);
    expect(validateEndpointTable('v1', V1, CONTEXT)).toBe(V1);
  });

  it.each(LEGACY_GENERATIONS)(
    '%s maps every operation of LEGACY_OPERATIONS, in its order, and nothing else',
    (generation) => {
      expect(Object.keys(TABLES[generation])).toEqual([...LEGACY_OPERATIONS[generation]]);
    },
  );

  it('v1 is v2 without trade/reverse-quote, trade/reverse and trade/settle', () => {
    expect(Object.keys(V2).filter((operation) => !Object.hasOwn(V1, operation))).toEqual(V2_ONLY);
    expect(Object.keys(V1).every((operation) => Object.hasOwn(V2, operation))).toBe(true);
  });

  it('v1 differs from v2 on a shared operation only in idempotency and, for trade, data at the top of the body', () => {
    const sameAsV2 = (mapping: EndpointMapping) => {
      const { dataAlsoAtRoot: _dropped, ...response } = mapping.response;
      return { ...mapping, idempotency: null, response };
    };
    for (const [operation, mapping] of Object.entries(V1))
      expect([operation, sameAsV2(mapping)]).toEqual([operation, sameAsV2(V2[operation]!)]);
  });

  it('reads are GETs and writes POSTs', () => {
    const methods = (table: Readonly<Record<string, EndpointMapping>>) =>
      Object.fromEntries(Object.entries(table).map(([operation, mapping]) => [operation, mapping.method]));
    const expected = Object.fromEntries([
      ...GETS.map((operation) => [operation, 'GET']),
      ...POSTS.map((operation) => [operation, 'POST']),
    ]);
    expect(methods(V2)).toEqual(expected);
    expect(methods(V1)).toEqual(
      Object.fromEntries(Object.entries(expected).filter(([operation]) => !V2_ONLY.includes(operation))),
    );
  });

  it('v2 writes require a key, kept 24 h for trades, 7 days for withdrawals and 30 minutes for quotes; v2 reads honour one if sent', () => {
    const rules = Object.fromEntries(POSTS.map((operation) => [operation, V2[operation]!.idempotency]));
    expect(rules).toEqual({
      generate_quote: { kind: 'required', lifetimeSeconds: 30 * 60 },
      trade: { kind: 'required', lifetimeSeconds: 24 * HOUR },
      withdrawal: { kind: 'required', lifetimeSeconds: 7 * 24 * HOUR },
      fiat_withdrawal: { kind: 'required', lifetimeSeconds: 7 * 24 * HOUR },
      'trade/reverse-quote': { kind: 'required', lifetimeSeconds: 30 * 60 },
      'trade/reverse': { kind: 'required', lifetimeSeconds: 24 * HOUR },
      'trade/settle': { kind: 'required', lifetimeSeconds: 24 * HOUR },
    });
    for (const operation of GETS)
      expect([operation, V2[operation]!.idempotency]).toEqual([
        operation,
        { kind: 'honoured-if-sent', lifetimeSeconds: 24 * HOUR },
      ]);
  });

  it("v1 reads take no key; v1 writes honour one if sent, with v2's lifetimes", () => {
    for (const operation of GETS)
      expect([operation, V1[operation]!.idempotency]).toEqual([operation, { kind: 'none' }]);
    expect(
      Object.fromEntries(
        POSTS.filter((operation) => !V2_ONLY.includes(operation)).map((operation) => [
          operation,
          V1[operation]!.idempotency,
        ]),
      ),
    ).toEqual({
      generate_quote: { kind: 'honoured-if-sent', lifetimeSeconds: 30 * 60 },
      trade: { kind: 'honoured-if-sent', lifetimeSeconds: 24 * HOUR },
      withdrawal: { kind: 'honoured-if-sent', lifetimeSeconds: 7 * 24 * HOUR },
      fiat_withdrawal: { kind: 'honoured-if-sent', lifetimeSeconds: 7 * 24 * HOUR },
    });
  });

  it('v1 trade, and only it, writes its data at the top of the body too', () => {
    const withDataAtRoot = (table: Readonly<Record<string, EndpointMapping>>) =>
      Object.keys(table).filter((operation) => table[operation]!.response.dataAlsoAtRoot !== undefined);
    expect(withDataAtRoot(V1)).toEqual(['trade']);
    expect(withDataAtRoot(V2)).toEqual([]);
    expect(V1.trade!.response.dataAlsoAtRoot?.source).toBe('doc');
  });

  it('scopes: reads view, quotes and trades trade, withdrawals withdraw', () => {
    expect(Object.fromEntries(Object.entries(V2).map(([operation, mapping]) => [operation, mapping.scope]))).toEqual({
      available_markets: 'view',
      balances: 'view',
      generate_quote: 'trade',
      trade: 'trade',
      trades: 'view',
      'trade/{id}': 'view',
      deposits: 'view',
      withdrawal_addresses: 'view',
      fiat_withdrawal_addresses: 'view',
      withdrawals: 'view',
      withdrawal: 'withdraw',
      fiat_withdrawal: 'withdraw',
      'trade/reverse-quote': 'trade',
      'trade/reverse': 'trade',
      'trade/settle': 'trade',
    });
  });

  it('the five lists page with page/limit; deposits filter by currency in v3, the address lists on their records', () => {
    const paginated = (table: Readonly<Record<string, EndpointMapping>>) =>
      Object.keys(table).filter((operation) => table[operation]!.pagination === 'page-limit');
    const lists = ['trades', 'deposits', 'withdrawal_addresses', 'fiat_withdrawal_addresses', 'withdrawals'];
    expect(paginated(V2)).toEqual(lists);
    expect(paginated(V1)).toEqual(lists);
    const filters = Object.fromEntries(
      Object.entries(V2)
        .filter(([, mapping]) => Object.keys(mapping.filters).length > 0)
        .map(([operation, mapping]) => [
          operation,
          Object.fromEntries(
            Object.entries(mapping.filters).map(([name, filter]) => [
              name,
              'v3Query' in filter ? `v3 ${filter.v3Query}` : `record ${filter.field}`,
            ]),
          ),
        ]),
    );
    expect(filters).toEqual({
      deposits: { currency: 'v3 currency' },
      withdrawal_addresses: {
        verified: 'record verified',
        status: 'record status',
        coinNetwork: 'record coinNetworkName',
        coin: 'record coinName',
      },
      fiat_withdrawal_addresses: { verified: 'record verified', status: 'record status', currency: 'record currency' },
    });
  });

  it('the v2 trade composes the trade with the balances and the exposure after it', () => {
    expect(Object.entries(V2.trade!.v3).map(([name, call]) => `${name}: ${call.method} ${call.path}`)).toEqual([
      'trade: POST /v3/fx/trades',
      'balances: GET /v3/fx/balances',
      'exposure: GET /v3/fx/exposure',
    ]);
  });

  it('every declared difference names a known source and gives a one-line sentence as its reason', () => {
    const found: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (typeof node !== 'object' || node === null) return;
      if (Object.hasOwn(node, 'reason')) {
        const { source, reason } = node as { source: unknown; reason: unknown };
        found.push(where);
        expect([where, Object.keys(SOURCES).includes(String(source))]).toEqual([where, true]);
        expect([where, reason]).toEqual([where, expect.stringMatching(/^\S[^\n]* [^\n]*\.$/)]);
      }
      for (const [key, child] of Object.entries(node)) walk(child, `${where}.${key}`);
    };
    walk(V1, 'v1');
    walk(V2, 'v2');
    // The walk reached the kinds of declaration that carry a reason: messages, filters, body fields, layout values, data at the top.
    for (const sample of [
      'v2.balances.response.message',
      'v2.deposits.filters.currency',
      'v2.generate_quote.request.fields.amount',
      'v2.trade.response.data.object.balances',
      'v1.trade.response.dataAlsoAtRoot',
    ]) {
      expect(found).toContain(sample);
    }
  });
});

describe('validateEndpointTable: the v3 calls', () => {
  it.each([
    [
      'a v3 path the contract lacks',
      { 'balances.v3.balances.path': '/v3/fx/wallets' },
      ['balances.v3.balances: /v3/fx/wallets is not a v3 path'],
    ],
    [
      'a method the v3 path does not take',
      { 'deposits.v3.deposits.method': 'POST' },
      ['deposits.v3.deposits: POST /v3/fx/deposits is not a v3 operation (it takes GET)'],
    ],
    [
      'a sandbox-only target',
      { 'trade.v3.trade.path': '/v3/fx/sandbox/deposits' },
      ['trade.v3.trade: POST /v3/fx/sandbox/deposits is a sandbox-only simulation'],
    ],
    [
      "a scope that is not the first call's",
      { 'withdrawal.scope': 'trade' },
      ['withdrawal.scope: must be withdraw, the scope of POST /v3/fx/withdrawals'],
    ],
    [
      'a read whose first v3 call is a write (the rate-limit class is the operation method)',
      {
        'trade/{id}.v3.trade': {
          method: 'POST',
          path: '/v3/fx/trades/:id/settle',
          params: { id: { from: 'path', field: 'id', idKind: 'trade' } },
        },
        'trade/{id}.scope': 'trade',
      },
      ['trade/{id}.v3.trade: a legacy GET must call v3 with GET first, in the same rate-limit class'],
    ],
    [
      'a write whose first v3 call is a read',
      {
        'trade/settle.v3.settlement.method': 'GET',
        'trade/settle.v3.settlement.path': '/v3/fx/trades/:id',
        'trade/settle.scope': 'view',
      },
      ['trade/settle.v3.settlement: a legacy POST must call v3 with POST first, in the same rate-limit class'],
    ],
    [
      'a later call that is not a GET',
      { 'trade.v3.balances': { method: 'POST', path: '/v3/fx/quotes' } },
      ['trade.v3.balances: calls after the first must be reads (GET)'],
    ],
    [
      'a path parameter without a source',
      { 'trade/{id}.v3.trade.params': undefined },
      ['trade/{id}.v3.trade.params: no source for :id'],
    ],
    [
      'a source for a parameter the v3 path lacks',
      { 'trade/{id}.v3.trade.params.tradeId': { from: 'path', field: 'id', idKind: 'trade' } },
      ['trade/{id}.v3.trade.params.tradeId: /v3/fx/trades/:id has no :tradeId'],
    ],
    [
      'a path source the legacy path lacks',
      { 'trade/settle.v3.settlement.params.id.from': 'path' },
      ['trade/settle.v3.settlement.params.id: the legacy path has no :tradeId'],
    ],
    [
      'a body source of another id kind than the body field',
      { 'trade/reverse.v3.reversal.params.id.idKind': 'quote' },
      ['trade/reverse.v3.reversal.params.id: the request must declare tradeId as a required id of kind quote'],
    ],
    [
      'a body source the request does not declare',
      { 'trade/settle.request.fields.tradeId': undefined },
      ['trade/settle.v3.settlement.params.id: the request must declare tradeId as a required id of kind trade'],
    ],
    [
      'a body source the request declares optional',
      { 'trade/settle.request.fields.tradeId.required': false },
      ['trade/settle.v3.settlement.params.id: the request must declare tradeId as a required id of kind trade'],
    ],
    [
      'a fixed query parameter v3 does not take',
      { 'withdrawals.v3.withdrawals.query': { network: 'ETHEREUM' } },
      ['withdrawals.v3.withdrawals.query.network: GET /v3/fx/withdrawals takes no query parameter network'],
    ],
  ])('refuses %s', (_rule, edits, expected) => {
    expect(problemsWith('v2', edits)).toEqual(expected);
  });

  it('refuses a mapping that names no v3 call', () => {
    expect(problemsWith('v2', { 'balances.v3': {} })).toEqual(['balances.v3: must name at least one v3 call']);
  });
});

describe('validateEndpointTable: pagination and filters', () => {
  const filter = (shape: Record<string, unknown>) => ({ ...shape, ...PROVENANCE });

  it.each([
    [
      'pagination on a POST',
      { 'generate_quote.pagination': 'page-limit' },
      ['generate_quote.pagination: only GET lists paginate'],
    ],
    [
      'pagination over a v3 answer that is not a list',
      { 'trade/{id}.pagination': 'page-limit' },
      [
        'trade/{id}.pagination: GET /v3/fx/trades/:id is not a list',
        "trade/{id}.response.data: a paginated list answers a list node over trade's data",
      ],
    ],
    [
      'a paginated list whose data is not a list node',
      { 'trades.response.data': { record: 'trade', from: 'trades' } },
      ["trades.response.data: a paginated list answers a list node over trades's data"],
    ],
    [
      "a paginated list whose data is not the first call's list",
      { 'trades.response.data.at': 'data.items' },
      ["trades.response.data: a paginated list answers a list node over trades's data"],
    ],
    [
      'a cursor list answered unpaginated',
      { 'withdrawals.pagination': 'none' },
      ['withdrawals.pagination: GET /v3/fx/withdrawals is a cursor list: it must be page-limit'],
    ],
    [
      'a filter named page',
      { 'trades.filters.page': filter({ v3Query: 'limit', value: 'word' }) },
      ['trades.filters.page: page and limit belong to pagination'],
    ],
    [
      'a filter named limit',
      { 'deposits.filters.limit': filter({ v3Query: 'limit', value: 'word' }) },
      ['deposits.filters.limit: page and limit belong to pagination'],
    ],
    [
      'a filter on a POST',
      { 'trade.filters.currency': filter({ v3Query: 'currency', value: 'currency' }) },
      [
        'trade.filters.currency: only GET takes query filters',
        'trade.filters.currency: POST /v3/fx/trades takes no query parameter currency',
      ],
    ],
    [
      'a v3Query filter v3 does not take',
      { 'trades.filters.pair': filter({ v3Query: 'pair', value: 'word' }) },
      ['trades.filters.pair: GET /v3/fx/trades takes no query parameter pair'],
    ],
    [
      'a v3Query filter the call already fixes',
      { 'fiat_withdrawal_addresses.filters.type': filter({ v3Query: 'assetType', value: 'word' }) },
      ['fiat_withdrawal_addresses.filters.type: assetType is already fixed by v3.accounts.query'],
    ],
    [
      'a field filter on a cursor list',
      { 'deposits.filters.status': filter({ field: 'status', value: 'word' }) },
      [
        'deposits.filters.status: a filter on the legacy records needs a list v3 returns whole (a cursor list would page before filtering)',
      ],
    ],
    [
      'a field filter naming a field the listed record lacks',
      { 'withdrawal_addresses.filters.bank': filter({ field: 'bankName', value: 'word' }) },
      ['withdrawal_addresses.filters.bank: the listed record has no field bankName'],
    ],
    [
      'a field filter where data is no paginated list',
      { 'available_markets.filters.buy': filter({ field: 'buy', value: 'currency' }) },
      ['available_markets.filters.buy: a filter on the legacy records needs a paginated list of them as data'],
    ],
    [
      'field filters on a list answered unpaginated',
      { 'withdrawal_addresses.pagination': 'none' },
      ['verified', 'status', 'coinNetwork', 'coin'].map(
        (name) =>
          `withdrawal_addresses.filters.${name}: a filter on the legacy records needs a paginated list of them as data`,
      ),
    ],
    [
      'a map on a filter that is not a word',
      { 'withdrawal_addresses.filters.coin.map': 'networkName' },
      ['withdrawal_addresses.filters.coin.map: only word filters are read through a map'],
    ],
    [
      'a closed filter without a map',
      { 'fiat_withdrawal_addresses.filters.currency.closed': true },
      ['fiat_withdrawal_addresses.filters.currency.closed: only a filter read through a map can be closed'],
    ],
    [
      'a filter map no value map defines',
      { 'withdrawal_addresses.filters.status.map': 'addressStatuses' },
      ['withdrawal_addresses.filters.status.map: no value map named addressStatuses'],
    ],
  ])('refuses %s', (_rule, edits, expected) => {
    expect(problemsWith('v2', edits)).toEqual(expected);
  });
});

describe('validateEndpointTable: idempotency per generation', () => {
  it.each([
    [
      'v2',
      'a POST without a required key',
      { 'trade.idempotency': { kind: 'honoured-if-sent', lifetimeSeconds: 24 * HOUR } },
      'trade.idempotency: v2 writes require Idempotency-Key',
    ],
    [
      'v2',
      'a GET that does not honour a key',
      { 'balances.idempotency': { kind: 'none' } },
      'balances.idempotency: v2 reads honour a key if sent',
    ],
    [
      'v1',
      'a GET that takes a key',
      { 'trades.idempotency': { kind: 'honoured-if-sent', lifetimeSeconds: 24 * HOUR } },
      'trades.idempotency: v1 reads take no key',
    ],
    [
      'v1',
      'a POST that requires a key',
      { 'trade.idempotency': { kind: 'required', lifetimeSeconds: 24 * HOUR } },
      'trade.idempotency: v1 writes honour a key if sent',
    ],
    [
      'v1',
      'a POST that takes no key',
      { 'withdrawal.idempotency': { kind: 'none' } },
      'withdrawal.idempotency: v1 writes honour a key if sent',
    ],
  ] as const)('%s: refuses %s', (generation, _rule, edits, expected) => {
    expect(problemsWith(generation, edits)).toEqual([expected]);
  });

  it('refuses a key kept for no time', () => {
    expect(problemsWith('v2', { 'withdrawal.idempotency.lifetimeSeconds': 0 })).toEqual([
      expect.stringMatching(/^withdrawal\.idempotency\.lifetimeSeconds: Too small/),
    ]);
  });
});

describe('validateEndpointTable: the request body', () => {
  it.each([
    ['a GET with a request', { 'balances.request': { fields: {} } }, ['balances.request: a GET has no body']],
    [
      'a POST without one',
      { 'generate_quote.request': null },
      ['generate_quote.request: a POST declares its body (an empty field list for none)'],
    ],
    [
      'an id field without its idKind',
      { 'trade.request.fields.quoteId.idKind': undefined },
      ['trade.request.fields.quoteId.idKind: an id field names its idKind'],
    ],
    [
      'an idKind on a field that is no id',
      { 'trade.request.fields.clientReferenceId.idKind': 'trade' },
      ['trade.request.fields.clientReferenceId: Unrecognized key: "idKind"'],
    ],
    [
      'oneOf on a field that is no integer',
      { 'generate_quote.request.fields.buy.oneOf': [1, 2] },
      ['generate_quote.request.fields.buy: Unrecognized key: "oneOf"'],
    ],
    [
      'maxLength on a field that is no string',
      { 'generate_quote.request.fields.amount.maxLength': 20 },
      ['generate_quote.request.fields.amount: Unrecognized key: "maxLength"'],
    ],
    [
      'two fields sent as the same v3 field',
      { 'generate_quote.request.fields.sell.to': 'buyCurrency' },
      ['generate_quote.request.fields.sell.to: buyCurrency is already sent by another field'],
    ],
    [
      'a request check nothing registers',
      { 'generate_quote.request.checks': ['buyDiffersFromSell', 'sameSide'] },
      ['generate_quote.request.checks: no request check is registered as sameSide'],
    ],
  ])('refuses %s', (_rule, edits, expected) => {
    expect(problemsWith('v2', edits)).toEqual(expected);
  });
});

describe('validateEndpointTable: the response layout', () => {
  it.each([
    [
      'a layout node reading a call the mapping does not make',
      { 'trade.response.data.object.userCreditLimit.from': 'credit' },
      [
        'trade.response.data.object.userCreditLimit.from: no v3 call named credit (the mapping calls trade, balances, exposure)',
      ],
    ],
    [
      'a root node reading a call the mapping does not make',
      { 'balances.response.root.netBalanceInUSD.from': 'totals' },
      ['balances.response.root.netBalanceInUSD.from: no v3 call named totals (the mapping calls balances)'],
    ],
    [
      'a record node naming no record shape',
      { 'trade/{id}.response.data.record': 'order' },
      ['trade/{id}.response.data: no record shape named order in mappings/records'],
    ],
    [
      'a list node naming no record shape',
      { 'available_markets.response.data.object.tradingPairs.list': 'pair' },
      ['available_markets.response.data.object.tradingPairs: no record shape named pair in mappings/records'],
    ],
    [
      'keyedBy naming no field of the v3 record',
      { 'available_markets.response.data.object.tradeLimits.keyedBy': 'pair' },
      ['available_markets.response.data.object.tradeLimits.keyedBy: the v3 pair record has no field pair'],
    ],
    [
      'an entries key that is no v3 field',
      { 'trade.response.data.object.balances.key': 'code' },
      ['trade.response.data.object.balances: the v3 balance record has no field code'],
    ],
    [
      'an entries value that is no v3 field',
      { 'trade.response.data.object.balances.value': 'total' },
      ['trade.response.data.object.balances: the v3 balance record has no field total'],
    ],
    [
      'data at the top of the body when data is no object',
      { 'balances.response.dataAlsoAtRoot': PROVENANCE },
      ['balances.response.dataAlsoAtRoot: only an object data can also be written at the root'],
    ],
  ])('refuses %s', (_rule, edits, expected) => {
    expect(problemsWith('v2', edits)).toEqual(expected);
  });

  it('refuses a layout node of no known kind', () => {
    expect(problemsWith('v2', { 'balances.response.data': { list: 'balance' } })).toEqual([
      'balances.response.data: Invalid input',
    ]);
  });

  it('declares the reversal details answer only: v3 answers them once, with the reversal', () => {
    expect(V2['trade/reverse']!.response.data).toMatchObject({
      object: { reversalDetails: { answerOnly: { source: 'spec', reason: expect.stringMatching(/\.$/) } } },
    });
    // Nothing else is: every other value of every answer is read back through v3.
    const answerOnly = JSON.stringify(TABLES).match(/"answerOnly"/g) ?? [];
    expect(answerOnly).toHaveLength(1);
  });

  it('takes answerOnly on a node read from a write, with its source and reason', () => {
    expect(() =>
      validateEndpointTable('v2', edited(V2, { 'trade.response.data.object.trade.answerOnly': PROVENANCE }), CONTEXT),
    ).not.toThrow();
  });

  it.each([
    [
      'answerOnly on a node a read serves again',
      { 'trade.response.data.object.userCreditLimit.answerOnly': PROVENANCE },
      [
        'trade.response.data.object.userCreditLimit.answerOnly: exposure is a read (GET /v3/fx/exposure), which can be read again',
      ],
    ],
    [
      'answerOnly on a list of a read',
      { 'trades.response.data.answerOnly': PROVENANCE },
      ['trades.response.data.answerOnly: trades is a read (GET /v3/fx/trades), which can be read again'],
    ],
    [
      'answerOnly without its reason',
      { 'trade/reverse.response.data.object.reversalDetails.answerOnly': { source: 'spec' } },
      ['trade/reverse.response.data: Invalid input'],
    ],
    [
      'answerOnly with an unknown field',
      { 'trade/reverse.response.data.object.reversalDetails.answerOnly': { ...PROVENANCE, why: 'x' } },
      ['trade/reverse.response.data.object.reversalDetails.answerOnly: Unrecognized key: "why"'],
    ],
  ])('refuses %s', (_rule, edits, expected) => {
    expect(problemsWith('v2', edits)).toEqual(expected);
  });
});

describe('validateEndpointTable: the table as a whole', () => {
  it('refuses unknown keys at every level (strict objects)', () => {
    const problems = problemsWith('v2', {
      'balances.cache': true,
      'trades.v3.trades.headers': {},
      'withdrawal.idempotency.scope': 'org',
      'deposits.filters.currency.operator': 'eq',
      'generate_quote.request.fields.amount.min': 0,
      'generate_quote.request.strict': true,
      'trade.response.message.lang': 'en',
      'balances.response.root.netBalanceInUSD.round': 2,
      'trade/{id}.v3.trade.params.id.format': 'uuid',
    });
    expect([...problems].sort()).toEqual(
      [
        'balances: Unrecognized key: "cache"',
        'trades.v3.trades: Unrecognized key: "headers"',
        'withdrawal.idempotency: Unrecognized key: "scope"',
        'deposits.filters.currency: Unrecognized key: "operator"',
        'generate_quote.request.fields.amount: Unrecognized key: "min"',
        'generate_quote.request: Unrecognized key: "strict"',
        'trade.response.message: Unrecognized key: "lang"',
        'balances.response.root.netBalanceInUSD: Unrecognized key: "round"',
        'trade/{id}.v3.trade.params.id: Unrecognized key: "format"',
      ].sort(),
    );
  });

  it('refuses a missing operation and an unknown one', () => {
    expect(problemsWith('v2', { trades: undefined, 'trade/cancel': V2.trade })).toEqual([
      'trades: no mapping for this v2 operation',
      'trade/cancel: not a v2 operation (unknown key)',
    ]);
    expect(problemsWith('v1', { 'trade/settle': V2['trade/settle'] })).toEqual([
      'trade/settle: not a v1 operation (unknown key)',
    ]);
  });

  it('refuses input that is no table', () => {
    for (const input of [null, [], 'endpoints', 42])
      expect(mappingError(() => validateEndpointTable('v2', input, CONTEXT)).problems).toHaveLength(1);
  });

  it('names the table and lists every problem in its message', () => {
    const error = mappingError(() =>
      validateEndpointTable('v1', edited(V1, { balances: undefined, 'trades.scope': 'trade' }), CONTEXT),
    );
    expect(error.table).toBe('mappings/endpoints.v1');
    expect(error.message).toBe(
      'mappings/endpoints.v1 is not a valid legacy mapping table (2 problems):\n' +
        '- balances: no mapping for this v1 operation\n' +
        '- trades.scope: must be view, the scope of GET /v3/fx/trades',
    );
  });
});
