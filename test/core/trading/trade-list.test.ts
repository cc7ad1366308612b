/**
 * GET /v3/fx/trades against docs/contract.md#pagination-cursor on the real endpoint, over two books
 * of 250 trades each: one made through HTTP (quotes and trades posted concurrently, so created_at
 * ties happen as they do in production), one inserted in SQL with five trades per millisecond,
 * mixed statuses and currencies, to force ties across every page boundary. Both are walked forward
 * (startingAfter) and back (endingBefore) at limits 1, 7, 25 (the default) and 100, each visiting
 * every trade exactly once, newest first; filters, cursor scope and every numbered rule are
 * spot-checked.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { newId } from '../../../src/lib/ids.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

interface TradeRecord {
  id: string;
  buyCurrency: string;
  sellCurrency: string;
  status: string;
  createdAt: string;
  [field: string]: unknown;
}

interface Pagination {
  hasNext: boolean;
  hasPrev: boolean;
  nextCursor: string | null;
  prevCursor: string | null;
}

interface Page {
  data: TradeRecord[];
  pagination: Pagination;
}

type Query = Record<string, string | undefined>;

const TRADE_COUNT = 250;
/** [how the test names it, the limit to send (undefined: none, the default), the page size expected] */
const LIMITS: Array<[string, string | undefined, number]> = [
  ['1', '1', 1],
  ['7', '7', 7],
  ['25 (the default)', undefined, 25],
  ['100', '100', 100],
];

let harness: V3Harness;

beforeAll(async () => {
  harness = await V3Harness.start({ keyCacheTtlMs: 60_000, core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
});
afterAll(async () => harness?.close());

function pathOf(query: Query): string {
  const params = new URLSearchParams(
    Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const text = params.toString();
  return `/v3/fx/trades${text ? `?${text}` : ''}`;
}

function listRaw(key: LoadedKey, query: Query) {
  return harness.signed({ key, path: pathOf(query) });
}

/** One page, with the checks every page must pass (rules 2, 4, 5, 6). */
async function list(key: LoadedKey, query: Query, pageSize = Number(query.limit ?? 25)): Promise<Page> {
  const response = await listRaw(key, query);
  expect(response.status, response.text).toBe(200);
  const page = response.json<Page>();
  expect(Object.keys(page).sort()).toEqual(['data', 'pagination']);
  expect(Object.keys(page.pagination).sort()).toEqual(['hasNext', 'hasPrev', 'nextCursor', 'prevCursor']);
  expect(page.data.length).toBeLessThanOrEqual(pageSize);
  expect(page.pagination.nextCursor === null, 'nextCursor is null exactly when hasNext is false').toBe(
    !page.pagination.hasNext,
  );
  expect(page.pagination.prevCursor === null, 'prevCursor is null exactly when hasPrev is false').toBe(
    !page.pagination.hasPrev,
  );
  for (let i = 1; i < page.data.length; i += 1) {
    expect(Date.parse(page.data[i - 1]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(page.data[i]!.createdAt));
  }
  return page;
}

/**
 * Walks the whole list forward from the newest page, then back from the last page; returns the
 * ids each way visited. Every page but the last of a direction is full: the end is the flag.
 */
async function walk(
  key: LoadedKey,
  filters: Query,
  limit: string | undefined,
  pageSize: number,
): Promise<{ forward: string[]; backward: string[] }> {
  const base = { ...filters, limit };
  let page = await list(key, base, pageSize);
  expect(page.pagination.hasPrev).toBe(false);
  const forward = page.data.map((t) => t.id);
  let pages = 1;
  while (page.pagination.hasNext) {
    expect(page.data).toHaveLength(pageSize);
    page = await list(key, { ...base, startingAfter: page.pagination.nextCursor! }, pageSize);
    expect(page.data.length, 'no empty page inside a walk').toBeGreaterThan(0);
    // Rule 9: a page inside the list carries both cursors, whatever the direction.
    expect(page.pagination.hasPrev).toBe(true);
    forward.push(...page.data.map((t) => t.id));
    pages += 1;
    expect(pages, 'the walk ends').toBeLessThanOrEqual(TRADE_COUNT + 1);
  }
  const backward = page.data.map((t) => t.id);
  while (page.pagination.hasPrev) {
    page = await list(key, { ...base, endingBefore: page.pagination.prevCursor! }, pageSize);
    expect(page.data.length, 'no empty page inside a walk').toBeGreaterThan(0);
    if (page.pagination.hasPrev) expect(page.data).toHaveLength(pageSize);
    expect(page.pagination.hasNext).toBe(true);
    backward.unshift(...page.data.map((t) => t.id));
    pages += 1;
    expect(pages, 'the walk ends').toBeLessThanOrEqual(2 * TRADE_COUNT + 2);
  }
  return { forward, backward };
}

/** The ids of a book in the order cursor lists require, from the database itself. */
async function expectedOrder(
  orgId: string,
  mode: Mode,
  filter: { status?: string; currency?: string } = {},
): Promise<string[]> {
  const { rows } = await harness.db.query<{ id: string }>(
    `SELECT id FROM trades WHERE org_id = $1 AND environment = $2 AND ($3::text IS NULL OR status = $3)
        AND ($4::text IS NULL OR $4 IN (buy_currency, sell_currency))
      ORDER BY created_at DESC, id DESC`,
    [orgId, mode, filter.status ?? null, filter.currency ?? null],
  );
  return rows.map((row) => row.id);
}

function expectQueryFailed(response: Awaited<ReturnType<typeof listRaw>>, ...paths: string[]): void {
  const error = expectV3Error(response, 'VALIDATION_QUERY_FAILED');
  expect((error.details.issues as { path: string }[]).map((issue) => issue.path).sort()).toEqual([...paths].sort());
}

const PAIRS = [
  { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10' },
  { buyCurrency: 'GBP', sellCurrency: 'USD', amount: '10' },
  { buyCurrency: 'JPY', sellCurrency: 'EUR', amount: '1000' },
  { buyCurrency: 'USDC', sellCurrency: 'GBP', amount: '10' },
  { buyCurrency: 'USD', sellCurrency: 'EUR', amount: '10' },
];

async function postJson(key: LoadedKey, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await harness.signed({
    key,
    method: 'POST',
    path,
    body: JSON.stringify(body),
    idempotencyKey: randomUUID(),
  });
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: Record<string, unknown> }>().data;
}

async function tradeOverHttp(key: LoadedKey, i: number): Promise<string> {
  const pair = PAIRS[i % PAIRS.length]!;
  const quote = await postJson(key, '/v3/fx/quotes', { ...pair, amountCurrency: pair.buyCurrency });
  const trade = await postJson(key, '/v3/fx/trades', { quoteId: quote.id, clientReferenceId: `list-${i}` });
  return trade.id as string;
}

describe('a book of 250 trades made over HTTP (sandbox)', () => {
  let key: LoadedKey;
  let expected: string[];

  beforeAll(async () => {
    key = await harness.createKey({ mode: 'sandbox', scopes: ['view', 'trade'] });
    const batch = 50;
    for (let start = 0; start < TRADE_COUNT; start += batch) {
      await Promise.all(Array.from({ length: batch }, (_, j) => tradeOverHttp(key, start + j)));
    }
    expected = await expectedOrder(key.file.orgId, 'sandbox');
    expect(expected).toHaveLength(TRADE_COUNT);
  });

  it.each(LIMITS)(
    'walks forward and back at limit %s, visiting every trade once, newest first',
    async (_label, limit, pageSize) => {
      const { forward, backward } = await walk(key, {}, limit, pageSize);
      expect(forward).toEqual(expected);
      expect(backward).toEqual(expected);
    },
  );

  it('lists the same records GET /v3/fx/trades/{id} answers, sorted by createdAt then id', async () => {
    const page = await list(key, { limit: '100' });
    for (const record of [page.data[0]!, page.data[50]!, page.data[99]!]) {
      const single = await harness.signed({ key, path: `/v3/fx/trades/${record.id}` });
      expect(single.json<{ data: TradeRecord }>().data).toEqual(record);
    }
    const sorted = [...page.data].sort(
      (a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
    );
    expect(page.data.map((t) => t.id)).toEqual(sorted.map((t) => t.id));
  });

  it('filters by currency on either side, and walks the filtered list both ways', async () => {
    for (const currency of ['JPY', 'GBP', 'USD']) {
      const subset = await expectedOrder(key.file.orgId, 'sandbox', { currency });
      expect(subset.length).toBeGreaterThan(0);
      expect(subset.length).toBeLessThan(TRADE_COUNT);
      const { forward, backward } = await walk(key, { currency }, '7', 7);
      expect(forward).toEqual(subset);
      expect(backward).toEqual(subset);
    }
  });

  it('rule 7: an empty filter result is one page with both flags false', async () => {
    for (const query of [{ status: 'SETTLED' }, { currency: 'USDT' }, { status: 'REVERSED', currency: 'EUR' }]) {
      const page = await list(key, query);
      expect(page).toEqual({
        data: [],
        pagination: { hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null },
      });
    }
    const executed = await walk(key, { status: 'EXECUTED' }, '100', 100);
    expect(executed.forward).toEqual(expected);
  });

  it('keeps a forward walk stable while newer trades arrive', async () => {
    const first = await list(key, { limit: '25' });
    expect(first.data.map((t) => t.id)).toEqual(expected.slice(0, 25));
    const arrived = await tradeOverHttp(key, TRADE_COUNT);
    const second = await list(key, { limit: '25', startingAfter: first.pagination.nextCursor! });
    expect(second.data.map((t) => t.id)).toEqual(expected.slice(25, 50));
    // Going back from the first page's position now finds the newcomer on top.
    const back = await list(key, { limit: '25', endingBefore: first.pagination.nextCursor! });
    expect(back.data.map((t) => t.id)).toEqual([arrived, ...expected.slice(0, 24)]);
    expect(back.pagination.hasPrev).toBe(false);
    expect((await list(key, { limit: '1' })).data[0]!.id).toBe(arrived);
  });
});

describe('a book of 250 trades inserted in SQL, five per millisecond (live)', () => {
  let key: LoadedKey;
  let orgId: string;
  let expected: string[];
  const STATUSES = ['EXECUTED', 'SETTLED', 'REVERSED'];
  const SQL_PAIRS = [
    ['EUR', 'USD'],
    ['GBP', 'JPY'],
    ['USDC', 'EUR'],
    ['JPY', 'GBP'],
  ];

  beforeAll(async () => {
    key = await harness.createKey({ mode: 'live', scopes: ['view', 'trade'] });
    orgId = key.file.orgId;
    const baseMs = Date.parse('2025-03-01T12:00:00.000Z');
    const rows = Array.from({ length: TRADE_COUNT }, (_, i) => {
      const at = baseMs + Math.floor(i / 5);
      // Three trades (0, 100, 200) are the only ones in EURC: a filter whose result fits one page.
      const [buy, sell] = i % 100 === 0 ? ['EURC', 'USD'] : SQL_PAIRS[i % SQL_PAIRS.length]!;
      return {
        tradeId: newId('trade', at),
        quoteId: newId('quote', at),
        buy: buy!,
        sell: sell!,
        status: STATUSES[i % 3]!,
        at: new Date(at).toISOString(),
      };
    });
    const column = <K extends keyof (typeof rows)[number]>(name: K) => rows.map((row) => row[name]);
    await harness.db.query(
      `INSERT INTO quotes (id, org_id, environment, buy_currency, sell_currency, buy_amount, sell_amount, amount_currency, rate, mid_rate,
                           spread_bps, sell_usd_value, actor_key, created_at, expires_at)
       SELECT q.id, $1, 'live', q.buy, q.sell, 10, 12, q.buy, 1.2, 1.2, 20, 12, 'fixture', q.at, q.at + interval '30 seconds'
         FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS q(id, buy, sell, at)`,
      [orgId, column('quoteId'), column('buy'), column('sell'), column('at')],
    );
    await harness.db.query(
      `INSERT INTO trades (id, org_id, environment, quote_id, idempotency_key, request_fingerprint, buy_currency, sell_currency, buy_amount,
                           sell_amount, referenced_currency, referenced_amount, rate, sell_usd_value, status, source, actor_id, metadata,
                           created_at, updated_at, settled_at)
       SELECT t.id, $1, 'live', t.quote_id, t.id, 'sha256:fixture', t.buy, t.sell, 10, 12, t.buy, 10, 1.2, 12, t.status, 'API', 'usr_0190b5a0c0de70008000000000f1c7e5',
              '{}', t.at, t.at, CASE WHEN t.status = 'SETTLED' THEN t.at END
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[]) AS t(id, quote_id, buy, sell, status, at)`,
      [orgId, column('tradeId'), column('quoteId'), column('buy'), column('sell'), column('status'), column('at')],
    );
    expected = await expectedOrder(orgId, 'live');
    expect(expected).toHaveLength(TRADE_COUNT);
    // The fixture is what it claims: 50 instants, 5 trades each, ties broken by id, descending.
    const ordered = [...rows].sort((a, b) => (a.at === b.at ? (a.tradeId < b.tradeId ? 1 : -1) : a.at < b.at ? 1 : -1));
    expect(expected).toEqual(ordered.map((row) => row.tradeId));
  });

  it.each(LIMITS)(
    'walks forward and back at limit %s through ties, visiting every trade once, newest first',
    async (_label, limit, pageSize) => {
      const { forward, backward } = await walk(key, {}, limit, pageSize);
      expect(forward).toEqual(expected);
      expect(backward).toEqual(expected);
    },
  );

  it.each([
    { status: 'SETTLED' },
    { status: 'REVERSED' },
    { currency: 'JPY' },
    { status: 'EXECUTED', currency: 'EUR' },
  ])('filters %o and walks the filtered list both ways', async (filter) => {
    const subset = await expectedOrder(orgId, 'live', filter);
    expect(subset.length).toBeGreaterThan(7);
    const { forward, backward } = await walk(key, filter, '7', 7);
    expect(forward).toEqual(subset);
    expect(backward).toEqual(subset);
    const page = await list(key, { ...filter, limit: '100' });
    for (const trade of page.data) {
      if (filter.status) expect(trade.status).toBe(filter.status);
      if (filter.currency) expect([trade.buyCurrency, trade.sellCurrency]).toContain(filter.currency);
    }
  });

  it('rule 1: no cursor gives the newest page; both cursors are refused', async () => {
    const page = await list(key, {});
    expect(page.data.map((t) => t.id)).toEqual(expected.slice(0, 25));
    expect(page.pagination.hasPrev).toBe(false);
    expect(page.pagination.hasNext).toBe(true);
    const cursor = page.pagination.nextCursor!;
    expectQueryFailed(
      await listRaw(key, { startingAfter: cursor, endingBefore: cursor }),
      'startingAfter',
      'endingBefore',
    );
  });

  it('rule 3: the cursor record is excluded, on both sides', async () => {
    const first = await list(key, { limit: '7' });
    const after = await list(key, { limit: '7', startingAfter: first.pagination.nextCursor! });
    expect(after.data.map((t) => t.id)).toEqual(expected.slice(7, 14));
    const before = await list(key, { limit: '7', endingBefore: after.pagination.prevCursor! });
    expect(before.data.map((t) => t.id)).toEqual(expected.slice(0, 7));
    expect(before.pagination.hasPrev).toBe(false);
    // A shorter page going back: only 3 records are newer than the 4th.
    const fourth = await list(key, {
      limit: '1',
      startingAfter: (await list(key, { limit: '3' })).pagination.nextCursor!,
    });
    expect(fourth.data.map((t) => t.id)).toEqual([expected[3]]);
    const short = await list(key, { limit: '10', endingBefore: fourth.pagination.prevCursor! });
    expect(short.data.map((t) => t.id)).toEqual(expected.slice(0, 3));
  });

  it('rule 6: the end is the flag, even on a full last page', async () => {
    // 250 = 10 × 25: the last page at the default limit is full and still says hasNext false.
    let page = await list(key, {});
    for (let i = 1; i < 10; i += 1) page = await list(key, { startingAfter: page.pagination.nextCursor! });
    expect(page.data).toHaveLength(25);
    expect(page.pagination).toMatchObject({ hasNext: false, nextCursor: null, hasPrev: true });
    expect(page.data.at(-1)!.id).toBe(expected.at(-1));
  });

  it('rule 7: a result that fits one page has both flags false', async () => {
    const page = await list(key, { currency: 'EURC' });
    expect(page.data).toHaveLength(3);
    expect(page.pagination).toEqual({ hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null });
    const whole = await list(key, { status: 'SETTLED', currency: 'EURC' });
    expect(whole.pagination.hasNext || whole.pagination.hasPrev).toBe(false);
  });

  it('rule 8: startingAfter at the oldest record is an empty page with hasNext false; endingBefore at the newest likewise', async () => {
    const cursorAtOldest = await cursorOfOldest();
    const empty = await list(key, { limit: '5', startingAfter: cursorAtOldest });
    expect(empty.data).toEqual([]);
    expect(empty.pagination.hasNext).toBe(false);
    expect(empty.pagination.nextCursor).toBeNull();
    expect(empty.pagination.hasPrev).toBe(true);
    // The way back from the empty page starts with the oldest record.
    const back = await list(key, { limit: '2', endingBefore: empty.pagination.prevCursor! });
    expect(back.data.map((t) => t.id)).toEqual(expected.slice(-2));

    // The first one-record page's nextCursor is positioned at the newest record.
    const cursorAtNewest = (await list(key, { limit: '1' })).pagination.nextCursor!;
    const none = await list(key, { limit: '5', endingBefore: cursorAtNewest });
    expect(none.data).toEqual([]);
    expect(none.pagination).toMatchObject({ hasPrev: false, prevCursor: null, hasNext: true });
  });

  /** A cursor pointing at the oldest record: the prevCursor of the one-record page holding it. */
  async function cursorOfOldest(): Promise<string> {
    const cursor = await cursorBeforeOldest();
    const last = await list(key, { limit: '1', startingAfter: cursor });
    expect(last.data.map((t) => t.id)).toEqual([expected.at(-1)]);
    expect(last.pagination.hasNext).toBe(false);
    return last.pagination.prevCursor!;
  }

  /** The nextCursor of the page ending at the second-oldest record. */
  async function cursorBeforeOldest(): Promise<string> {
    let current = await list(key, { limit: '100' });
    let seen = current.data.length;
    while (seen < TRADE_COUNT - 1) {
      const take = Math.min(100, TRADE_COUNT - 1 - seen);
      current = await list(key, { limit: String(take), startingAfter: current.pagination.nextCursor! });
      seen += current.data.length;
    }
    expect(current.data.at(-1)!.id).toBe(expected.at(-2));
    return current.pagination.nextCursor!;
  }

  it('refuses a cursor made with other filters, for another org or for the other book', async () => {
    const settled = await list(key, { status: 'SETTLED', limit: '5' });
    const cursor = settled.pagination.nextCursor!;
    expect((await list(key, { status: 'SETTLED', startingAfter: cursor })).data.length).toBeGreaterThan(0);
    expectQueryFailed(await listRaw(key, { status: 'REVERSED', startingAfter: cursor }), 'startingAfter');
    expectQueryFailed(await listRaw(key, { startingAfter: cursor }), 'startingAfter');
    expectQueryFailed(
      await listRaw(key, { status: 'SETTLED', currency: 'EUR', startingAfter: cursor }),
      'startingAfter',
    );
    expectQueryFailed(await listRaw(key, { currency: 'JPY', endingBefore: cursor }), 'endingBefore');

    const unfiltered = (await list(key, { limit: '5' })).pagination.nextCursor!;
    const stranger = await harness.createKey({ mode: 'live', scopes: ['view'] });
    expectQueryFailed(await listRaw(stranger, { startingAfter: unfiltered }), 'startingAfter');
    expectQueryFailed(await listRaw(stranger, { endingBefore: unfiltered }), 'endingBefore');
    const sandboxOfSameOrg = await harness.createKey({ mode: 'sandbox', scopes: ['view'], orgId });
    expectQueryFailed(await listRaw(sandboxOfSameOrg, { startingAfter: unfiltered }), 'startingAfter');
    // Opaque and tamper-proof: an altered or foreign string is refused, not interpreted.
    const flipped = `${unfiltered.slice(0, -2)}${unfiltered.endsWith('AA') ? 'BB' : 'AA'}`;
    expectQueryFailed(await listRaw(key, { startingAfter: flipped }), 'startingAfter');
    expectQueryFailed(await listRaw(key, { startingAfter: newId('trade') }), 'startingAfter');
    expectQueryFailed(await listRaw(key, { endingBefore: '' }), 'endingBefore');
    expectQueryFailed(await listRaw(key, { startingAfter: 'x'.repeat(600) }), 'startingAfter');
  });

  it('rejects bad limits (101 is not clamped), unknown parameters and bad filters', async () => {
    expect((await list(key, { limit: '100' })).data).toHaveLength(100);
    for (const limit of ['101', '0', '-1', 'abc', '1.5', '']) expectQueryFailed(await listRaw(key, { limit }), 'limit');
    expectQueryFailed(await listRaw(key, { page: '2' }), 'page');
    expectQueryFailed(await listRaw(key, { offset: '25' }), 'offset');
    expectQueryFailed(await listRaw(key, { status: 'PENDING' }), 'status');
    expectQueryFailed(await listRaw(key, { status: 'executed' }), 'status');
    expectQueryFailed(await listRaw(key, { currency: 'usd' }), 'currency');
  });

  it('needs the view scope, and a trade-only key is refused', async () => {
    const trader = await harness.createKey({ mode: 'live', scopes: ['trade'], orgId });
    expectV3Error(await listRaw(trader, {}), 'AUTH_INSUFFICIENT_SCOPE', { details: { requiredScope: 'view' } });
  });

  it("never lists another org's or the other book's trades", async () => {
    const sandboxOfSameOrg = await harness.createKey({ mode: 'sandbox', scopes: ['view'], orgId });
    expect((await list(sandboxOfSameOrg, {})).data).toEqual([]);
    const stranger = await harness.createKey({ mode: 'live', scopes: ['view'] });
    expect((await list(stranger, {})).data).toEqual([]);
  });
});
