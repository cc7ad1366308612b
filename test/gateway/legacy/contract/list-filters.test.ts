/**
 * Every query parameter of every legacy operation, on v1 and v2, read from the loaded
 * declarations, so a filter added to the tables later is covered here or this test fails for
 * want of a case. Each filter keeps exactly the records it names and drops the rest, takes its
 * value in any case and as the v3 word where it knows both, and answers a malformed value with
 * the legacy 400; a filter is never ignored. Every operation refuses a query parameter it does
 * not take (an unknown one, or one that belongs to another list) with the legacy 400, before
 * anything reaches v3. Every paginated list pages its records exactly (page 1.., limit 1..50)
 * and refuses a page or limit out of bounds.
 */
import { LosslessNumber } from 'lossless-json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadLegacyMappings } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { LegacyHarness } from '../../../support/legacy-harness.js';
import {
  type Generation,
  GENERATIONS,
  type LegacyClient,
  legacyIdOf,
  type Query,
  type RawRequest,
} from './legacy-client.js';
import {
  EVM_ADDRESSES,
  FEDWIRE_ACCOUNT,
  legacyClients,
  stablecoinAccount,
  SWIFT_ACCOUNT,
  type V3Account,
  V3Side,
  type V3Trade,
  type V3Withdrawal,
} from './v3-setup.js';

const mappings = await loadLegacyMappings();
const { limit: LIMIT, page: PAGE } = mappings.conventions.pagination;

/** The records set up once, by label; each filter case names the labels it keeps. */
type Label =
  | 'depositUsd'
  | 'depositEur'
  | 'depositUsdc'
  | 'depositUsdcPending'
  | 'walletVerified'
  | 'walletPending'
  | 'walletDisabled'
  | 'bankUsd'
  | 'bankEur';

interface FilterCase {
  /** A value that keeps some records and drops others, and exactly what it keeps. */
  readonly value: string;
  readonly keeps: readonly Label[];
  /** The same value spelt otherwise (another case, the v3 word): each keeps the same records. */
  readonly sameAs: readonly string[];
  /** More values, with exactly what each keeps. */
  readonly others: readonly { readonly value: string; readonly keeps: readonly Label[] }[];
  /** Values of the wrong form for this filter; each is the legacy 400 (an empty, repeated or overlong value is tried for every filter). */
  readonly malformed: readonly string[];
}

/**
 * The cases, by operation and filter. The fiat list holds approved (active, verified) accounts
 * only, so its status and verified filters can keep all of them or none: one value of each keeps
 * all, another none, and the accounts that are not approved never appear.
 */
const CASES: Readonly<Record<string, Readonly<Record<string, FilterCase>>>> = {
  deposits: {
    currency: {
      value: 'USDC',
      keeps: ['depositUsdc', 'depositUsdcPending'],
      sameAs: ['usdc', 'Usdc'],
      others: [
        { value: 'EUR', keeps: ['depositEur'] },
        { value: 'JPY', keeps: [] },
      ],
      malformed: ['US1', 'U$D', 'US', 'ABCDEF'],
    },
  },
  withdrawal_addresses: {
    verified: {
      value: 'true',
      keeps: ['walletVerified', 'walletDisabled'],
      sameAs: ['TRUE', 'True'],
      others: [{ value: 'false', keeps: ['walletPending'] }],
      malformed: ['yes', '1', '0', 'truee'],
    },
    status: {
      value: 'Verified',
      keeps: ['walletVerified'],
      sameAs: ['verified', 'VERIFIED', 'ACTIVE', 'active'],
      others: [
        { value: 'Pending', keeps: ['walletPending'] },
        { value: 'PENDING_VERIFICATION', keeps: ['walletPending'] },
        { value: 'disabled', keeps: ['walletDisabled'] },
        { value: 'DISABLED', keeps: ['walletDisabled'] },
      ],
      malformed: ['bogus', 'Enabled', 'PENDING VERIFICATION'],
    },
    coinNetwork: {
      value: 'Ethereum',
      keeps: ['walletVerified', 'walletDisabled'],
      sameAs: ['ethereum', 'ETHEREUM', 'eThErEuM'],
      others: [
        { value: 'Polygon', keeps: ['walletPending'] },
        { value: 'POLYGON', keeps: ['walletPending'] },
        { value: 'Solana', keeps: [] },
        { value: 'Dogechain', keeps: [] },
      ],
      malformed: [],
    },
    coin: {
      value: 'USDC',
      keeps: ['walletVerified', 'walletPending'],
      sameAs: ['usdc', 'UsDc'],
      others: [
        { value: 'USDT', keeps: ['walletDisabled'] },
        { value: 'EURC', keeps: [] },
      ],
      malformed: ['US1', 'U$DC', 'ABCDEF'],
    },
  },
  fiat_withdrawal_addresses: {
    verified: {
      value: 'true',
      keeps: ['bankUsd', 'bankEur'],
      sameAs: ['TRUE', 'True'],
      others: [{ value: 'false', keeps: [] }],
      malformed: ['yes', '1'],
    },
    status: {
      value: 'active',
      keeps: ['bankUsd', 'bankEur'],
      sameAs: ['ACTIVE', 'Active'],
      others: [
        { value: 'disabled', keeps: [] },
        { value: 'DISABLED', keeps: [] },
        { value: 'pending_verification', keeps: [] },
        { value: 'PENDING_VERIFICATION', keeps: [] },
      ],
      malformed: ['bogus', 'Verified'],
    },
    currency: {
      value: 'USD',
      keeps: ['bankUsd'],
      sameAs: ['usd', 'Usd'],
      others: [
        { value: 'EUR', keeps: ['bankEur'] },
        { value: 'GBP', keeps: [] },
      ],
      malformed: ['US1', 'U$D', 'ABCDEF'],
    },
  },
};

/** What each list holds unfiltered, by label. */
const LISTS: Readonly<Record<string, readonly Label[]>> = {
  deposits: ['depositUsd', 'depositEur', 'depositUsdc', 'depositUsdcPending'],
  withdrawal_addresses: ['walletVerified', 'walletPending', 'walletDisabled'],
  fiat_withdrawal_addresses: ['bankUsd', 'bankEur'],
};

/** Every query parameter any operation takes: a parameter of one list must be refused by the others. */
const EVERY_PARAMETER = [
  ...new Set([
    'page',
    'limit',
    ...GENERATIONS.flatMap((generation) =>
      Object.values(mappings.endpoints[generation]).flatMap((mapping) => Object.keys(mapping.filters)),
    ),
  ]),
];

const operationsOf = (generation: Generation) =>
  Object.entries(mappings.endpoints[generation]).map(([operation, mapping]) => ({ operation, mapping }));
const filterRows = GENERATIONS.flatMap((generation) =>
  operationsOf(generation).flatMap(({ operation, mapping }) =>
    Object.keys(mapping.filters).map((filter) => ({ generation, operation, filter })),
  ),
);
const paginatedRows = GENERATIONS.flatMap((generation) =>
  operationsOf(generation)
    .filter(({ mapping }) => mapping.pagination === 'page-limit')
    .map(({ operation }) => ({ generation, operation })),
);
const operationRows = GENERATIONS.flatMap((generation) =>
  operationsOf(generation).map(({ operation, mapping }) => ({
    generation,
    operation,
    method: mapping.method,
    paginated: mapping.pagination === 'page-limit',
    filters: Object.keys(mapping.filters),
  })),
);

let h: LegacyHarness;
let key: LoadedKey;
let v3: V3Side;
let clients: Record<Generation, LegacyClient>;
const ids = {} as Record<Label, string>;
const labelOf = new Map<string, Label>();
let tradeTarget: V3Trade;
let wallet: V3Account;
let bank: V3Account;

beforeAll(async () => {
  h = await LegacyHarness.start();
  key = await h.createKey();
  v3 = new V3Side(h, key);
  clients = legacyClients(h, key);
  const name = (label: Label, v3Id: string) => {
    ids[label] = legacyIdOf(v3Id);
    labelOf.set(ids[label], label);
  };

  name('depositUsd', (await v3.deposit({ currency: 'USD', amount: '100000.00' })).id);
  name('depositEur', (await v3.deposit({ currency: 'EUR', amount: '5000.00' })).id);
  name('depositUsdc', (await v3.deposit({ currency: 'USDC', amount: '3000', network: 'ETHEREUM' })).id);
  name(
    'depositUsdcPending',
    (await v3.deposit({ currency: 'USDC', amount: '20', network: 'POLYGON', completeAfterSeconds: 3600 })).id,
  );

  wallet = await v3.account(stablecoinAccount('USDC', 'ETHEREUM', 'ETH USDC Wallet', EVM_ADDRESSES[0]));
  name('walletVerified', wallet.id);
  name(
    'walletPending',
    (await v3.account(stablecoinAccount('USDC', 'POLYGON', 'Polygon wallet', EVM_ADDRESSES[1]), { verify: false })).id,
  );
  const disabled = await v3.account(stablecoinAccount('USDT', 'ETHEREUM', 'Old tether wallet', EVM_ADDRESSES[2]));
  name('walletDisabled', (await v3.setAccount(disabled.id, { status: 'DISABLED' })).id);

  bank = await v3.account(FEDWIRE_ACCOUNT);
  name('bankUsd', bank.id);
  name('bankEur', (await v3.account(SWIFT_ACCOUNT)).id);
  // Fiat accounts that are not approved: never on the fiat list, whatever the filter.
  await v3.account(
    { ...FEDWIRE_ACCOUNT, accountName: 'Not verified yet', accountNumber: '000987654321' },
    { verify: false },
  );
  const closed = await v3.account({ ...FEDWIRE_ACCOUNT, accountName: 'Closed account', accountNumber: '000555555555' });
  await v3.setAccount(closed.id, { status: 'DISABLED' });

  await v3.trade({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10.00', amountCurrency: 'EUR' });
  await v3.trade({ buyCurrency: 'USD', sellCurrency: 'EUR', amount: '12.00', amountCurrency: 'USD' });
  await v3.trade({ buyCurrency: 'USDC', sellCurrency: 'USD', amount: '30', amountCurrency: 'USDC' });
  tradeTarget = (await v3.all<V3Trade>('/v3/fx/trades'))[0]!;
  await v3.withdraw({ withdrawalAccountId: wallet.id, withdrawalAmount: '1.5', currency: 'USDC' });
  await v3.withdraw({ withdrawalAccountId: bank.id, withdrawalAmount: '20.00', currency: 'USD' });
  await v3.withdraw({ withdrawalAccountId: bank.id, withdrawalAmount: '30.00', currency: 'USD' });
});
afterAll(async () => {
  await h?.close();
});

interface ListBody {
  readonly status: string;
  readonly data: readonly { readonly id: string }[];
  readonly meta: {
    readonly pagination: {
      readonly total: number;
      readonly start: number;
      readonly end: number;
      readonly page: number;
      readonly limit: number;
    };
  };
}

/** A list operation called with this query; expects a success and returns its body (numbers as JS numbers: pagination is all small integers). */
async function list(generation: Generation, operation: string, query: Query): Promise<ListBody> {
  const answer = await clients[generation].send({ method: 'GET', path: operation, query });
  expect(
    answer.status,
    `${generation} ${operation}?${new URLSearchParams(query as Record<string, string>)}: ${answer.text}`,
  ).toBe(200);
  const body = JSON.parse(answer.text) as ListBody;
  expect(body.status).toBe('success');
  return body;
}

/** The labels of what a list answered, in order; an unknown record is a failure. */
function labels(body: ListBody): Label[] {
  return body.data.map((record) => {
    const label = labelOf.get(record.id);
    expect(label, `a record the setup did not make: ${record.id}`).toBeDefined();
    return label!;
  });
}

async function expectKeeps(
  generation: Generation,
  operation: string,
  query: Query,
  keeps: readonly Label[],
): Promise<void> {
  const body = await list(generation, operation, { ...query, limit: String(LIMIT.max) });
  expect([...labels(body)].sort(), `${operation} ${JSON.stringify(query)}`).toEqual([...keeps].sort());
  expect(body.meta.pagination.total).toBe(keeps.length);
}

/** The legacy 400: exactly `{status: 'error', message}`. */
async function expectLegacy400(generation: Generation, request: RawRequest): Promise<void> {
  const answer = await clients[generation].send(request);
  const where = `${generation} ${request.method} ${request.path} ${JSON.stringify(request.query)}`;
  expect(answer.status, `${where}: ${answer.text}`).toBe(400);
  expect(JSON.parse(answer.text), where).toEqual({ status: 'error', message: 'Query validation failed' });
}

describe('the declarations', () => {
  it('name the filters this suite has cases for, and nothing else', () => {
    expect(filterRows.length).toBeGreaterThan(0);
    const declared = new Set(filterRows.map(({ operation, filter }) => `${operation}.${filter}`));
    const cased = Object.entries(CASES).flatMap(([operation, filters]) =>
      Object.keys(filters).map((filter) => `${operation}.${filter}`),
    );
    expect([...declared].sort()).toEqual(cased.sort());
    const filtered = new Set(filterRows.map(({ operation }) => operation));
    expect([...filtered].sort()).toEqual(Object.keys(LISTS).sort());
  });
});

describe.each(filterRows)('$generation $operation ?$filter', ({ generation, operation, filter }) => {
  const filterCase = () => {
    const found = CASES[operation]?.[filter];
    expect(found, `no case for the filter ${filter} of ${operation}: add one to CASES`).toBeDefined();
    return found!;
  };

  it('unfiltered, the list holds the records the cases are written against', async () => {
    const universe = LISTS[operation];
    expect(universe, `no record set for ${operation}: add one to LISTS`).toBeDefined();
    await expectKeeps(generation, operation, {}, universe!);
  });

  it('keeps exactly the records it names, whatever the case or vocabulary of the value', async () => {
    const { value, keeps, sameAs, others } = filterCase();
    const universe = LISTS[operation]!;
    const kept = [keeps, ...others.map((other) => other.keeps)];
    expect(keeps.length, 'the main value must keep something').toBeGreaterThan(0);
    expect(
      kept.some((set) => set.length < universe.length),
      'some value must drop something',
    ).toBe(true);
    await expectKeeps(generation, operation, { [filter]: value }, keeps);
    for (const spelling of sameAs) await expectKeeps(generation, operation, { [filter]: spelling }, keeps);
    for (const other of others) await expectKeeps(generation, operation, { [filter]: other.value }, other.keeps);
  });

  it('answers a malformed value with the legacy 400', async () => {
    const { value, malformed } = filterCase();
    const cases: Query[] = [
      ...malformed.map((text) => ({ [filter]: text })),
      { [filter]: '' },
      { [filter]: [value, value] },
      { [filter]: 'x'.repeat(65) },
    ];
    for (const query of cases) await expectLegacy400(generation, { method: 'GET', path: operation, query });
  });

  it('pages what it keeps', async () => {
    const { value, keeps } = filterCase();
    const body = await list(generation, operation, { [filter]: value, limit: '1', page: String(keeps.length) });
    expect(body.data).toHaveLength(1);
    expect(body.meta.pagination).toEqual({
      total: keeps.length,
      start: keeps.length - 1,
      end: keeps.length,
      page: keeps.length,
      limit: 1,
    });
    expect(keeps).toContain(labels(body)[0]);
  });
});

describe.each(GENERATIONS)('%s filters together', (generation) => {
  it('withdrawal_addresses: every filter given applies', async () => {
    await expectKeeps(generation, 'withdrawal_addresses', { coin: 'USDC', verified: 'true' }, ['walletVerified']);
    await expectKeeps(generation, 'withdrawal_addresses', { coin: 'usdc', coinNetwork: 'polygon', status: 'Pending' }, [
      'walletPending',
    ]);
    await expectKeeps(generation, 'withdrawal_addresses', { coin: 'USDT', status: 'Verified' }, []);
  });

  it('fiat_withdrawal_addresses: every filter given applies', async () => {
    await expectKeeps(
      generation,
      'fiat_withdrawal_addresses',
      { currency: 'EUR', status: 'active', verified: 'true' },
      ['bankEur'],
    );
  });
});

/** A request each operation would accept, so that a refusal can only be the query's. */
function acceptableRequest(operation: string, quoteId: string, tradeId: string): Omit<RawRequest, 'query'> | undefined {
  const requests: Record<string, Omit<RawRequest, 'query'>> = {
    available_markets: { method: 'GET', path: 'available_markets' },
    balances: { method: 'GET', path: 'balances' },
    generate_quote: {
      method: 'POST',
      path: 'generate_quote',
      body: { amount: new LosslessNumber('25'), buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' },
    },
    trade: { method: 'POST', path: 'trade', body: { quoteId } },
    trades: { method: 'GET', path: 'trades' },
    'trade/{id}': { method: 'GET', path: `trade/${tradeId}` },
    deposits: { method: 'GET', path: 'deposits' },
    withdrawal_addresses: { method: 'GET', path: 'withdrawal_addresses' },
    fiat_withdrawal_addresses: { method: 'GET', path: 'fiat_withdrawal_addresses' },
    withdrawals: { method: 'GET', path: 'withdrawals' },
    withdrawal: {
      method: 'POST',
      path: 'withdrawal',
      body: { amount: new LosslessNumber('1'), currency: 'USDC', withdrawalAddressId: legacyIdOf(wallet.id) },
    },
    fiat_withdrawal: {
      method: 'POST',
      path: 'fiat_withdrawal',
      body: { amount: new LosslessNumber('1.00'), currency: 'USD', withdrawalAddressId: legacyIdOf(bank.id) },
    },
    'trade/reverse-quote': { method: 'POST', path: 'trade/reverse-quote', body: { tradeId } },
    'trade/reverse': { method: 'POST', path: 'trade/reverse', body: { tradeId, quoteId } },
    'trade/settle': { method: 'POST', path: 'trade/settle', body: { tradeId } },
  };
  return requests[operation];
}

describe('a query parameter an operation does not take', () => {
  it.each(operationRows)(
    '$generation $operation: an unknown one, or one of another list, is the legacy 400 and reaches nothing',
    async ({ generation, operation, paginated, filters }) => {
      const quote = await v3.post<{ id: string }>('/v3/fx/quotes', {
        buyCurrency: 'EUR',
        sellCurrency: 'USD',
        amount: '5.00',
        amountCurrency: 'EUR',
      });
      const target = tradeTarget;
      const request = acceptableRequest(operation, legacyIdOf(quote.id), legacyIdOf(target.id));
      expect(request, `no acceptable request for ${operation}: add one to acceptableRequest`).toBeDefined();
      const tradesBefore = (await v3.all<V3Trade>('/v3/fx/trades')).length;
      const withdrawalsBefore = (await v3.all<V3Withdrawal>('/v3/fx/withdrawals')).length;

      const taken = new Set([...(paginated ? ['page', 'limit'] : []), ...filters]);
      const refused = ['unknownParam', 'Limit', ...EVERY_PARAMETER.filter((name) => !taken.has(name))];
      for (const name of refused) await expectLegacy400(generation, { ...request!, query: { [name]: '1' } });

      // Nothing moved: no trade, no withdrawal, the trade still as it was, and a quote the request named still unspent.
      expect(await v3.all<V3Trade>('/v3/fx/trades')).toHaveLength(tradesBefore);
      expect(await v3.all<V3Withdrawal>('/v3/fx/withdrawals')).toHaveLength(withdrawalsBefore);
      expect((await v3.get<V3Trade>(`/v3/fx/trades/${target.id}`)).data.status).toBe(target.status);
      if (request!.body !== undefined && 'quoteId' in request!.body)
        await v3.post('/v3/fx/trades', { quoteId: quote.id });
    },
  );
});

describe.each(paginatedRows)('$generation $operation pagination', ({ generation, operation }) => {
  it(`defaults to page ${PAGE.default}, limit ${LIMIT.default}`, async () => {
    const body = await list(generation, operation, {});
    const { total } = body.meta.pagination;
    expect(total, 'the setup must give every list at least two records').toBeGreaterThanOrEqual(2);
    expect(body.meta.pagination).toEqual({
      total,
      start: 0,
      end: Math.min(LIMIT.default, total),
      page: PAGE.default,
      limit: LIMIT.default,
    });
  });

  it('walks every record one page at a time, in the order of the whole list, and answers an empty page past the end', async () => {
    const whole = await list(generation, operation, { limit: String(LIMIT.max) });
    const { total } = whole.meta.pagination;
    expect(whole.data).toHaveLength(total);
    expect(whole.meta.pagination).toEqual({ total, start: 0, end: total, page: 1, limit: LIMIT.max });
    for (let page = 1; page <= total; page += 1) {
      const one = await list(generation, operation, { page: String(page), limit: '1' });
      expect(one.data.map((record) => record.id)).toEqual([whole.data[page - 1]!.id]);
      expect(one.meta.pagination).toEqual({ total, start: page - 1, end: page, page, limit: 1 });
    }
    const two = await list(generation, operation, { page: '2', limit: '2' });
    expect(two.data.map((record) => record.id)).toEqual(whole.data.slice(2, 4).map((record) => record.id));
    const past = await list(generation, operation, { page: String(total + 1), limit: '1' });
    expect(past.data).toEqual([]);
    expect(past.meta.pagination).toEqual({ total, start: total, end: total, page: total + 1, limit: 1 });
  });

  it(`takes limit ${LIMIT.min} to ${LIMIT.max} and page from ${PAGE.min}; refuses anything else with the legacy 400`, async () => {
    await list(generation, operation, { limit: String(LIMIT.min) });
    await list(generation, operation, { limit: String(LIMIT.max), page: String(PAGE.min) });
    const bad: Query[] = [
      { limit: String(LIMIT.min - 1) },
      { limit: String(LIMIT.max + 1) },
      { limit: '-1' },
      { limit: '1.5' },
      { limit: 'ten' },
      { limit: '' },
      { limit: ['5', '5'] },
      { page: String(PAGE.min - 1) },
      { page: '-1' },
      { page: '1.0' },
      { page: 'one' },
      { page: '' },
      { page: ['1', '1'] },
    ];
    for (const query of bad) await expectLegacy400(generation, { method: 'GET', path: operation, query });
  });
});
