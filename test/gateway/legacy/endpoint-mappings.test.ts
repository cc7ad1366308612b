import { describe, expect, it } from 'vitest';
import { V1_ENDPOINTS } from '../../../mappings/endpoints.v1.js';
import { V2_ENDPOINTS } from '../../../mappings/endpoints.v2.js';
import { type EndpointMapping, type TransformRegistry, transformNames, validateEndpointTable } from '../../../src/gateway/legacy/endpoint-mappings.js';
import { parseJsonPath } from '../../../src/gateway/legacy/json-paths.js';
import { LegacyMappingError } from '../../../src/gateway/legacy/mapping-error.js';
import { LEGACY_OPERATIONS } from '../../../src/gateway/legacy/operations.js';
import { findV3Operation } from '../../../src/gateway/legacy/v3-operations.js';

/** DESIGN 4's table of the legacy surface, transcribed. */
const DESIGN_4 = {
  v1: {
    GET: ['fiat_withdrawal_addresses', 'withdrawal_addresses', 'trades', 'trade/{id}', 'deposits', 'balances'],
    POST: ['generate_quote', 'trade'],
  },
  v2: {
    GET: ['balances', 'available_markets', 'trades', 'deposits', 'withdrawals', 'withdrawal_addresses', 'fiat_withdrawal_addresses'],
    POST: ['generate_quote', 'trade', 'trade/reverse-quote', 'trade/reverse', 'trade/settle', 'withdrawal', 'fiat_withdrawal'],
  },
} as const;

const TABLES = { v1: V1_ENDPOINTS as Record<string, EndpointMapping>, v2: V2_ENDPOINTS as Record<string, EndpointMapping> };

function registryOf(...tables: Record<string, EndpointMapping>[]): TransformRegistry {
  const names = tables.map(transformNames);
  return { request: names.flatMap((entry) => entry.request), response: names.flatMap((entry) => entry.response) };
}
const REGISTRY = registryOf(TABLES.v1, TABLES.v2);

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LegacyMappingError);
    return [...(error as LegacyMappingError).problems];
  }
  throw new Error('expected a LegacyMappingError');
}

type Mutable = Record<string, Record<string, unknown> & { v3: Record<string, unknown>[] }>;
const cloneV1 = () => structuredClone(V1_ENDPOINTS) as unknown as Mutable;
const cloneV2 = () => structuredClone(V2_ENDPOINTS) as unknown as Mutable;

describe("DESIGN 4's operations are all mapped", () => {
  it.each(['v1', 'v2'] as const)('%s: the operation list is exactly DESIGN 4', (generation) => {
    const design = [...DESIGN_4[generation].GET, ...DESIGN_4[generation].POST].sort();
    expect([...LEGACY_OPERATIONS[generation]].sort()).toEqual(design);
    expect(Object.keys(TABLES[generation]).sort()).toEqual(design);
  });

  it.each([
    ...DESIGN_4.v1.GET.map((operation) => ['v1', 'GET', operation] as const),
    ...DESIGN_4.v1.POST.map((operation) => ['v1', 'POST', operation] as const),
    ...DESIGN_4.v2.GET.map((operation) => ['v2', 'GET', operation] as const),
    ...DESIGN_4.v2.POST.map((operation) => ['v2', 'POST', operation] as const),
  ])('%s %s %s has its route and known v3 targets', (generation, method, operation) => {
    const mapping = TABLES[generation][operation]!;
    expect(mapping.legacy).toEqual({ method, path: `/${generation}/brokerage/:orgId/${operation.replace('{id}', ':id')}` });
    for (const call of mapping.v3) expect(findV3Operation(call.method, call.path)).toBeDefined();
  });

  it('both shipped tables pass the load-time validator with their transforms registered', () => {
    expect(() => validateEndpointTable('v1', V1_ENDPOINTS, REGISTRY)).not.toThrow();
    expect(() => validateEndpointTable('v2', V2_ENDPOINTS, REGISTRY)).not.toThrow();
  });

  it('names each transform it needs (the next layer registers them)', () => {
    const names = transformNames({ ...TABLES.v1, ...TABLES.v2 });
    expect(names.response).toContain('legacyQuote');
    expect(names.request).toContain('withdrawalRequest');
    expect(names.request).toEqual([...new Set(names.request)].sort());
  });
});

describe('the static rules of the shipped tables', () => {
  it('v2 keys live 24 h for trades, 7 days for withdrawals, 30 minutes for quotes (spec 8, 4.4)', () => {
    const lifetimes = Object.fromEntries(
      Object.entries(TABLES.v2)
        .filter(([, mapping]) => mapping.legacy.method === 'POST')
        .map(([operation, mapping]) => [operation, mapping.idempotency]),
    );
    expect(lifetimes).toEqual({
      generate_quote: { kind: 'required', lifetimeSeconds: 30 * 60 },
      trade: { kind: 'required', lifetimeSeconds: 24 * 3600 },
      'trade/reverse-quote': { kind: 'required', lifetimeSeconds: 30 * 60 },
      'trade/reverse': { kind: 'required', lifetimeSeconds: 24 * 3600 },
      'trade/settle': { kind: 'required', lifetimeSeconds: 24 * 3600 },
      withdrawal: { kind: 'required', lifetimeSeconds: 7 * 24 * 3600 },
      fiat_withdrawal: { kind: 'required', lifetimeSeconds: 7 * 24 * 3600 },
    });
    for (const operation of DESIGN_4.v2.GET) expect(TABLES.v2[operation]!.idempotency.kind).toBe('honoured-if-sent');
  });

  it('v1 has no idempotency: reads none, writes a fresh v3 key each', () => {
    for (const operation of DESIGN_4.v1.GET) expect(TABLES.v1[operation]!.idempotency).toEqual({ kind: 'none' });
    for (const operation of DESIGN_4.v1.POST) expect(TABLES.v1[operation]!.idempotency).toEqual({ kind: 'fresh-v3-key' });
  });

  it('lists page with page/limit; trades, deposits and withdrawals over v3 cursors', () => {
    for (const generation of ['v1', 'v2'] as const) {
      for (const [operation, mapping] of Object.entries(TABLES[generation])) {
        const expected = ['trades', 'deposits', 'withdrawals'].includes(operation)
          ? 'page-limit/cursor'
          : ['fiat_withdrawal_addresses', 'withdrawal_addresses'].includes(operation)
            ? 'page-limit/bounded'
            : 'none';
        expect([generation, operation, mapping.pagination]).toEqual([generation, operation, expected]);
      }
    }
    expect(TABLES.v1.deposits!.filters).toEqual({ currency: 'currency' });
    expect(TABLES.v2.deposits!.filters).toEqual({ currency: 'currency' });
  });

  it('scopes: reads view, quotes and trades trade, withdrawals withdraw', () => {
    const scopes = Object.fromEntries(Object.entries(TABLES.v2).map(([operation, mapping]) => [operation, mapping.scope]));
    expect(scopes).toEqual({
      balances: 'view',
      available_markets: 'view',
      trades: 'view',
      deposits: 'view',
      withdrawals: 'view',
      withdrawal_addresses: 'view',
      fiat_withdrawal_addresses: 'view',
      generate_quote: 'trade',
      trade: 'trade',
      'trade/reverse-quote': 'trade',
      'trade/reverse': 'trade',
      'trade/settle': 'trade',
      withdrawal: 'withdraw',
      fiat_withdrawal: 'withdraw',
    });
  });

  it('legacy request amounts are read losslessly where legacy clients send numbers', () => {
    expect(TABLES.v1.generate_quote!.amounts.request).toEqual(['amount']);
    expect(TABLES.v2.generate_quote!.amounts.request).toEqual(['amount']);
    expect(TABLES.v2.withdrawal!.amounts.request).toEqual(['amount']);
    expect(TABLES.v2.fiat_withdrawal!.amounts.request).toEqual(['amount']);
    for (const mapping of [...Object.values(TABLES.v1), ...Object.values(TABLES.v2)]) {
      for (const path of [...mapping.amounts.request, ...mapping.amounts.response]) expect(() => parseJsonPath(path)).not.toThrow();
    }
  });

  it('the v2 trade result composes the trade with balances and exposure', () => {
    expect(TABLES.v2.trade!.v3.map((call) => `${call.method} ${call.path}`)).toEqual(['POST /v3/fx/trades', 'GET /v3/fx/balances', 'GET /v3/fx/exposure']);
  });
});

describe('the load-time validator', () => {
  it('rejects a table missing an operation, or with an unknown one', () => {
    const table = cloneV1();
    delete table.trades;
    table['trade/reverse'] = table.trade!;
    expect(problemsOf(() => validateEndpointTable('v1', table, REGISTRY))).toEqual([
      'trades: no mapping for this v1 operation (DESIGN 4)',
      'trade/reverse: not a v1 operation (unknown key)',
    ]);
  });

  it('rejects unknown fields at every level', () => {
    const table = cloneV2();
    table.balances!.cache = true;
    table.trades!.v3[0]!.headers = {};
    // A fresh object: withdrawal and fiat_withdrawal share one constant, and structuredClone keeps sharing.
    table.withdrawal!.idempotency = { kind: 'required', lifetimeSeconds: 60, scope: 'org' };
    (table.deposits!.amounts as Record<string, unknown>).both = [];
    const problems = problemsOf(() => validateEndpointTable('v2', table, REGISTRY));
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/balances.*cache/);
    expect(problems.join('\n')).toMatch(/trades\.v3\.0.*headers/);
    expect(problems.join('\n')).toMatch(/withdrawal\.idempotency.*scope/);
    expect(problems.join('\n')).toMatch(/deposits\.amounts.*both/);
  });

  it('rejects a v3 target the contract does not have', () => {
    const table = cloneV1();
    table.balances!.v3[0]!.path = '/v3/fx/wallets';
    table.deposits!.v3[0]!.method = 'POST';
    table.trade!.v3[0]!.path = '/v3/fx/sandbox/deposits';
    table.trades!.v3[0]!.path = '/v2/trades';
    const problems = problemsOf(() => validateEndpointTable('v1', table, REGISTRY));
    expect(problems).toContain('balances.v3[0]: /v3/fx/wallets is not a v3 path');
    expect(problems).toContain('deposits.v3[0]: POST /v3/fx/deposits is not a v3 operation (it takes GET)');
    expect(problems).toContain('trade.v3[0]: POST /v3/fx/sandbox/deposits is a sandbox-only simulation');
    expect(problems.join('\n')).toMatch(/trades\.v3\.0\.path/);
  });

  it('rejects a scope that is not the v3 operation\'s', () => {
    const table = cloneV2();
    table.withdrawal!.scope = 'trade';
    table.balances!.scope = 'withdraw';
    expect(problemsOf(() => validateEndpointTable('v2', table, REGISTRY))).toEqual([
      'balances.scope: must be view, the scope of GET /v3/fx/balances',
      'withdrawal.scope: must be withdraw, the scope of POST /v3/fx/withdrawals',
    ]);
  });

  it('rejects transform names nobody registered', () => {
    expect(problemsOf(() => validateEndpointTable('v2', V2_ENDPOINTS, { request: [], response: ['balanceList'] }))).toEqual(
      expect.arrayContaining([
        'generate_quote.transforms.request: no request transform is registered as quoteRequest',
        'generate_quote.transforms.response: no response transform is registered as legacyQuote',
      ]),
    );
    const table = cloneV2();
    (table.balances!.transforms as Record<string, unknown>).response = 'made up';
    expect(problemsOf(() => validateEndpointTable('v2', table, REGISTRY)).join('\n')).toMatch(/balances\.transforms\.response: a name of letters and digits/);
    const onlyV1 = registryOf(TABLES.v1);
    expect(problemsOf(() => validateEndpointTable('v2', V2_ENDPOINTS, onlyV1))).toContain('trade/reverse.transforms.response: no response transform is registered as v2ReversalResult');
  });

  it('rejects idempotency that does not fit the generation', () => {
    const v2 = cloneV2();
    v2.trade!.idempotency = { kind: 'honoured-if-sent', lifetimeSeconds: 60 };
    v2.balances!.idempotency = { kind: 'required', lifetimeSeconds: 60 };
    v2.withdrawal!.idempotency = { kind: 'required', lifetimeSeconds: 0 };
    const v2Problems = problemsOf(() => validateEndpointTable('v2', v2, REGISTRY));
    expect(v2Problems).toContain('trade.idempotency: v2 writes require Idempotency-Key (spec 9)');
    expect(v2Problems).toContain('balances.idempotency: v2 reads honour a key if sent (spec 9)');
    expect(v2Problems.join('\n')).toMatch(/withdrawal\.idempotency\.lifetimeSeconds/);
    const v1 = cloneV1();
    v1.trade!.idempotency = { kind: 'required', lifetimeSeconds: 86_400 };
    v1.trades!.idempotency = { kind: 'fresh-v3-key' };
    expect(problemsOf(() => validateEndpointTable('v1', v1, REGISTRY))).toEqual([
      'trades.idempotency: v1 reads have none (spec 9)',
      'trade.idempotency: v1 writes get a fresh v3 key per request (DESIGN 4)',
    ]);
  });

  it('rejects pagination that does not fit the v3 list', () => {
    const table = cloneV2();
    table.trades!.pagination = 'page-limit/bounded';
    table.balances!.pagination = 'page-limit/cursor';
    table.trade!.pagination = 'page-limit/cursor';
    const problems = problemsOf(() => validateEndpointTable('v2', table, REGISTRY));
    expect(problems).toContain('trades.pagination: page-limit/bounded needs a bounded v3 list, and GET /v3/fx/trades is cursor');
    expect(problems).toContain('balances.pagination: page-limit/cursor needs a cursor v3 list, and GET /v3/fx/balances is bounded');
    expect(problems).toContain('trade.pagination: only GET lists paginate');
  });

  it('rejects path parameters without a source, or with one that cannot exist', () => {
    const v1 = cloneV1();
    delete v1['trade/{id}']!.v3[0]!.params;
    v1.balances!.v3[0]!.params = { id: { from: 'path', field: 'id', idKind: 'balance' } };
    expect(problemsOf(() => validateEndpointTable('v1', v1, REGISTRY))).toEqual([
      'trade/{id}.v3[0].params: no source for :id',
      'balances.v3[0].params.id: /v3/fx/balances has no :id',
      'balances.v3[0].params.id: the legacy path has no :id',
    ]);
    const v2 = cloneV2();
    (v2['trade/settle']!.v3[0]!.params as Record<string, Record<string, unknown>>).id!.from = 'path';
    (v2['trade/reverse']!.v3[0]!.params as Record<string, Record<string, unknown>>).id!.idKind = 'order';
    const problems = problemsOf(() => validateEndpointTable('v2', v2, REGISTRY));
    expect(problems).toContain('trade/settle.v3[0].params.id: the legacy path has no :tradeId');
    expect(problems.join('\n')).toMatch(/trade\/reverse\.v3\.0\.params\.id\.idKind/);
  });

  it('rejects body sources, request amounts and filters where they cannot apply', () => {
    const table = cloneV1();
    table['trade/{id}']!.v3[0]!.params = { id: { from: 'body', field: 'tradeId', idKind: 'trade' } };
    (table.trades!.amounts as Record<string, unknown>).request = ['amount'];
    table.trade!.filters = { currency: 'currency' };
    const problems = problemsOf(() => validateEndpointTable('v1', table, REGISTRY));
    expect(problems).toContain('trade/{id}.v3[0].params.id: a GET has no body to read it from');
    expect(problems).toContain('trades.amounts.request: a GET has no body');
    expect(problems).toContain('trade.filters.currency: only GET takes query filters');
  });

  it('rejects filters and fixed query parameters v3 does not take', () => {
    const table = cloneV2();
    table.trades!.filters = { page: 'limit', pair: 'pair' };
    table.withdrawals!.v3[0]!.query = { network: 'ETHEREUM' };
    table.fiat_withdrawal_addresses!.filters = { type: 'assetType' };
    const problems = problemsOf(() => validateEndpointTable('v2', table, REGISTRY));
    expect(problems).toEqual([
      'trades.filters.page: page and limit belong to pagination',
      'trades.filters.pair: GET /v3/fx/trades takes no query parameter pair',
      'withdrawals.v3[0].query.network: GET /v3/fx/withdrawals takes no query parameter network',
      'fiat_withdrawal_addresses.filters.type: assetType is already fixed by v3[0].query',
    ]);
  });

  it('rejects malformed amount paths', () => {
    const table = cloneV2();
    (table.balances!.amounts as Record<string, unknown>).response = ['data[0].amount', 'netBalanceInUSD'];
    expect(problemsOf(() => validateEndpointTable('v2', table, REGISTRY))).toEqual([expect.stringMatching(/^balances\.amounts\.response\.0: not a JSON path/)]);
  });

  it('rejects a legacy route that is not the operation\'s, and writes after the first call', () => {
    const table = cloneV2();
    (table.trades!.legacy as Record<string, unknown>).path = '/v2/brokerage/:orgId/trade';
    table.trade!.v3[1] = { method: 'POST', path: '/v3/fx/quotes' };
    expect(problemsOf(() => validateEndpointTable('v2', table, REGISTRY))).toEqual([
      'trades.legacy.path: must be /v2/brokerage/:orgId/trades (the operation\'s own route)',
      'trade.v3[1]: calls after the first must be reads (GET)',
    ]);
  });

  it('rejects input that is no table, and a mapping without v3 calls', () => {
    expect(() => validateEndpointTable('v1', null, REGISTRY)).toThrow(LegacyMappingError);
    expect(() => validateEndpointTable('v1', [], REGISTRY)).toThrow(LegacyMappingError);
    const table = cloneV1();
    table.balances!.v3 = [];
    expect(problemsOf(() => validateEndpointTable('v1', table, REGISTRY)).join('\n')).toMatch(/^balances\.v3/);
  });

  it('names the table and lists every problem in its message', () => {
    const table = cloneV1();
    delete table.balances;
    table.trades!.scope = 'trade';
    try {
      validateEndpointTable('v1', table, REGISTRY);
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toBe(
        'mappings/endpoints.v1 is not a valid legacy mapping table (2 problems):\n' +
          '- balances: no mapping for this v1 operation (DESIGN 4)\n' +
          '- trades.scope: must be view, the scope of GET /v3/fx/trades',
      );
    }
  });
});
