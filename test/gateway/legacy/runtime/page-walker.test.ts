import { randomUUID } from 'node:crypto';

import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MemoryStore } from '../../../../src/cli/store/memory-store.js';
import { RedisStore } from '../../../../src/cli/store/redis-store.js';
import {
  type CursorListPage,
  type FetchCursorPage,
  PAGE_TOTALS_MODES,
  PAGE_WALKER_DEFAULTS,
  type PageResult,
  type PageTotalsMode,
  PageWalker,
  type PageWalkerOptions,
} from '../../../../src/gateway/legacy/runtime/page-walker.js';
import {
  CursorRejectedError,
  PageWalkError,
  StoreUnavailableError,
} from '../../../../src/lib/errors/internal-errors.js';
import { type EphemeralStore } from '../../../../src/lib/store/ephemeral-store.js';
import { testServices } from '../../../support/services.js';
import { testKeyPrefix } from '../../../support/test-run.js';

const { redisUrl } = testServices();

interface ListRecord {
  readonly id: string;
}

/**
 * A v3 cursor list as docs/contract.md#pagination-cursor describes it: newest first, `limit` at
 * most 100, `startingAfter` excludes the cursor's record, both flags and cursors on every page,
 * null cursors exactly when the flag is false, an empty page with hasNext false when positioned at
 * the oldest record.
 * Cursors are opaque to the walker (base64url JSON) and carry a generation, so that a test can
 * make every cursor issued so far "expire".
 */
class V3List {
  records: ListRecord[];
  calls = 0;
  /** Every cursor is refused, old or new: v3 that will not take any cursor. */
  rejectEveryCursor = false;
  /** The most records one answer holds: `limit` is a maximum, v3 may return fewer. */
  servesAtMost = 100;
  private generation = 0;
  private counter = 0;

  constructor(size: number) {
    this.records = this.make(size);
  }

  /** n new records at the head, as new trades arrive. */
  prepend(n: number): void {
    this.records = [...this.make(n), ...this.records];
  }

  /** n records at the tail, older than all: what the lists served never do. */
  append(n: number): void {
    this.records = [...this.records, ...this.make(n)];
  }

  expireCursors(): void {
    this.generation += 1;
  }

  slice(page: number, limit: number): ListRecord[] {
    return this.records.slice((page - 1) * limit, page * limit);
  }

  readonly fetch: FetchCursorPage = async ({ limit, startingAfter }) => {
    this.calls += 1;
    // The walker must never ask for what v3 would refuse.
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new Error(`simulator: limit ${limit} out of range`);
    let from = 0;
    if (startingAfter !== undefined) {
      const position = this.decode(startingAfter);
      if (position === undefined) throw new CursorRejectedError();
      from = position + 1;
    }
    const data = this.records.slice(from, from + Math.min(limit, this.servesAtMost));
    const last = data.at(-1);
    const hasNext = from + data.length < this.records.length;
    const hasPrev = from > 0;
    const firstOrCursorRecord = data[0] ?? this.records[from - 1];
    return {
      data,
      pagination: {
        hasNext,
        hasPrev,
        nextCursor: hasNext && last !== undefined ? this.encode(last.id) : null,
        prevCursor: hasPrev && firstOrCursorRecord !== undefined ? this.encode(firstOrCursorRecord.id) : null,
      },
    };
  };

  private make(n: number): ListRecord[] {
    const made: ListRecord[] = [];
    for (let i = 0; i < n; i += 1) made.unshift({ id: `rec-${(this.counter += 1)}` });
    return made;
  }

  private encode(id: string): string {
    return Buffer.from(JSON.stringify({ g: this.generation, id })).toString('base64url');
  }

  /** The index of the cursor's record, or undefined when v3 would refuse the cursor. */
  private decode(cursor: string): number | undefined {
    if (this.rejectEveryCursor) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || !('g' in parsed) || !('id' in parsed)) return undefined;
    if (parsed.g !== this.generation) return undefined;
    const index = this.records.findIndex((record) => record.id === parsed.id);
    return index < 0 ? undefined : index;
  }
}

const coldCost = (total: number): number => Math.max(1, Math.ceil(total / 100));
/**
 * What a cold request for page `page` costs: reads of 100 from the head, to the end of the list
 * ('exact'), or until the page's end is covered or the list ends ('bounded').
 */
const coldCostIn = (mode: PageTotalsMode, total: number, page: number, limit: number): number =>
  mode === 'exact' ? coldCost(total) : Math.min(coldCost(total), Math.ceil((page * limit) / 100));
const lastPage = (total: number, limit: number): number => Math.max(1, Math.ceil(total / limit));
const ids = (records: readonly ListRecord[]): string[] => records.map((record) => record.id);
const newKey = (): string => `lpages:{org-${randomUUID()}:sandbox}:/v3/fx/trades`;

/** Asks for a page and checks the walker's own call count against the simulator's. */
async function ask(
  walker: PageWalker,
  listKey: string,
  list: V3List,
  page: number,
  limit: number,
): Promise<PageResult> {
  const before = list.calls;
  const result = await walker.page(listKey, { page, limit }, list.fetch);
  expect(result.upstreamCalls).toBe(list.calls - before);
  return result;
}

/**
 * Asks and checks the page against the array: the records, the total, the cost. A total is exact
 * (the list's length), always so with 'exact' totals; with 'bounded' totals it may instead be a
 * lower bound that still shows a next page: the page is full, and the total lies above the page's
 * end and at most at the list's length. `total`, when given, pins the value.
 */
async function expectPage(
  walker: PageWalker,
  listKey: string,
  list: V3List,
  page: number,
  limit: number,
  calls?: number,
  total?: number,
): Promise<PageResult> {
  const result = await ask(walker, listKey, list, page, limit);
  expect(ids(result.records)).toEqual(ids(list.slice(page, limit)));
  if (walker.totals === 'exact') expect(result.totalExact).toBe(true);
  if (result.totalExact) {
    expect(result.total).toBe(list.records.length);
  } else {
    expect(result.records).toHaveLength(limit);
    expect(result.total).toBeGreaterThan(page * limit);
    expect(result.total).toBeLessThanOrEqual(list.records.length);
  }
  if (total !== undefined) expect(result.total).toBe(total);
  if (calls !== undefined) expect(result.upstreamCalls).toBe(calls);
  return result;
}

/** A store whose cache is down, as a dead Redis would answer. */
class DownCacheStore extends MemoryStore {
  constructor(private readonly failReads: boolean) {
    super();
  }
  override async cacheGet(key: string): Promise<string | null> {
    if (this.failReads) throw new StoreUnavailableError('cache down');
    return super.cacheGet(key);
  }
  override async cacheSet(): Promise<void> {
    throw new StoreUnavailableError('cache down');
  }
}

interface StoreCase {
  readonly name: string;
  open(): { store: EphemeralStore; cleanup: () => Promise<void> };
}

const STORES: StoreCase[] = [
  {
    name: 'MemoryStore',
    open() {
      const store = new MemoryStore();
      return { store, cleanup: () => store.close() };
    },
  },
  {
    name: 'RedisStore',
    open() {
      const keyPrefix = testKeyPrefix();
      const store = new RedisStore({ url: redisUrl, keyPrefix });
      return {
        store,
        async cleanup() {
          await store.close();
          // Never FLUSHALL: other suites share this Redis.
          const admin = new Redis(redisUrl);
          let cursor = '0';
          do {
            const [next, keys] = await admin.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
            if (keys.length > 0) await admin.del(...keys);
            cursor = next;
          } while (cursor !== '0');
          await admin.quit();
        },
      };
    },
  },
];

/** Every store with every totals mode: what the modes share runs against both. */
const STORE_MODES = STORES.flatMap((storeCase) => PAGE_TOTALS_MODES.map((mode) => ({ ...storeCase, mode })));

/** The stored snapshot's JSON, as far as the tests look into it. */
interface SnapshotJson {
  readonly known: number;
  readonly ended: boolean;
  readonly cursors: Record<string, string>;
  readonly recent: number[];
}

/** Opens a store for a describe block, with a walker maker and a reader of stored snapshots. */
function useStore(storeCase: StoreCase): {
  store: () => EphemeralStore;
  snapshotOf: (listKey: string) => Promise<SnapshotJson>;
} {
  let store: EphemeralStore;
  let cleanup: () => Promise<void>;
  beforeAll(() => {
    ({ store, cleanup } = storeCase.open());
  });
  afterAll(async () => {
    await cleanup();
  });
  return {
    store: () => store,
    async snapshotOf(listKey) {
      const text = await store.cacheGet(listKey);
      if (text === null) throw new Error('no snapshot');
      return JSON.parse(text) as SnapshotJson;
    },
  };
}

const SIZES = [0, 1, 49, 50, 51, 100, 101, 250];

describe('the V3List simulator', () => {
  it('follows the cursor rules: cursors exclude their record, flags and cursors agree, an empty last page', async () => {
    const list = new V3List(5);
    const first = await list.fetch({ limit: 2 });
    expect(ids(first.data)).toEqual(ids(list.records.slice(0, 2)));
    expect(first.pagination).toMatchObject({ hasNext: true, hasPrev: false, prevCursor: null });
    const second = await list.fetch({ limit: 3, startingAfter: first.pagination.nextCursor ?? '' });
    expect(ids(second.data)).toEqual(ids(list.records.slice(2, 5)));
    expect(second.pagination).toMatchObject({ hasNext: false, hasPrev: true, nextCursor: null });
    expect(second.pagination.prevCursor).toEqual(expect.any(String));
    // A cursor on the oldest record: empty data and hasNext false, not an error (rule 8).
    const all = await list.fetch({ limit: 4 });
    const last = await list.fetch({ limit: 1, startingAfter: all.pagination.nextCursor ?? '' });
    expect(ids(last.data)).toEqual(ids(list.records.slice(4)));
    const past = await list.fetch({ limit: 1, startingAfter: last.pagination.prevCursor ?? '' });
    expect(past).toEqual({
      data: [],
      pagination: { hasNext: false, hasPrev: true, nextCursor: null, prevCursor: expect.any(String) },
    });
    list.expireCursors();
    await expect(list.fetch({ limit: 1, startingAfter: first.pagination.nextCursor ?? '' })).rejects.toBeInstanceOf(
      CursorRejectedError,
    );
    await expect(list.fetch({ limit: 101 })).rejects.toThrow(/out of range/);
  });
});

describe('PageWalker', () => {
  it('exports its defaults and a typed error', () => {
    expect(PAGE_WALKER_DEFAULTS).toEqual({
      totals: 'bounded',
      snapshotTtlMs: 600_000,
      refreshAfterMs: 60_000,
      maxCallsPerRequest: 1_000,
      maxRecentCursors: 64,
    });
    expect(PAGE_TOTALS_MODES).toEqual(['bounded', 'exact']);
    expect(new PageWalkError('x')).toMatchObject({ code: 'FXGATE_PAGE_WALK_FAILED', name: 'PageWalkError' });
  });

  it('resolves its totals mode once, at construction, bounded unless told', async () => {
    const store = new MemoryStore();
    expect(new PageWalker({ store }).totals).toBe('bounded');
    expect(new PageWalker({ store, totals: 'exact' }).totals).toBe('exact');
    expect(() => new PageWalker({ store, totals: 'approximate' as PageTotalsMode })).toThrow(RangeError);
    await store.close();
  });

  it('refuses a page request outside the legacy range without calling v3', async () => {
    const store = new MemoryStore();
    const walker = new PageWalker({ store });
    const list = new V3List(10);
    for (const request of [
      { page: 0, limit: 10 },
      { page: 1, limit: 0 },
      { page: 1, limit: 51 },
      { page: 1.5, limit: 10 },
      { page: 1, limit: Number.NaN },
    ]) {
      await expect(walker.page(newKey(), request, list.fetch)).rejects.toBeInstanceOf(RangeError);
    }
    expect(list.calls).toBe(0);
    await store.close();
  });
});

describe.each(STORE_MODES)('PageWalker on $name with $mode totals', (storeMode) => {
  const { mode } = storeMode;
  const { store, snapshotOf } = useStore(storeMode);

  const walkerWith = (options: Partial<PageWalkerOptions> = {}): PageWalker =>
    new PageWalker({ store: store(), totals: mode, ...options });
  const cold = (total: number, page: number, limit: number): number => coldCostIn(mode, total, page, limit);

  /** A walker whose clock the test moves. */
  function clocked(options: Partial<PageWalkerOptions> = {}): { walker: PageWalker; advance: (ms: number) => void } {
    let now = 1_700_000_000_000;
    return { walker: walkerWith({ ...options, now: () => now }), advance: (ms) => (now += ms) };
  }

  describe('pages equal the slice of the list, with its total', () => {
    it.each(SIZES)('a sequential walk of %i records costs one call per page after page 1', async (size) => {
      for (const limit of [1, 7, 10, 30, 50]) {
        const list = new V3List(size);
        const walker = walkerWith();
        const listKey = newKey();
        await expectPage(walker, listKey, list, 1, limit, cold(size, 1, limit));
        for (let page = 2; page <= lastPage(size, limit); page += 1)
          await expectPage(walker, listKey, list, page, limit, 1);
        // Beyond the end: the snapshot knows the total, v3 is not asked.
        await expectPage(walker, listKey, list, lastPage(size, limit) + 1, limit, 0, size);
        await expectPage(walker, listKey, list, lastPage(size, limit) + 100, limit, 0, size);
        // Page 1 warm: one read of the head.
        await expectPage(walker, listKey, list, 1, limit, 1, size);
      }
    });

    it.each(SIZES)('any page of %i records asked cold costs what the mode says', async (size) => {
      for (const limit of [1, 10, 50]) {
        const list = new V3List(size);
        const walker = walkerWith();
        for (let page = 1; page <= lastPage(size, limit) + 1; page += 1) {
          await expectPage(walker, newKey(), list, page, limit, cold(size, page, limit));
        }
      }
    });

    it('holds for any size, limit and order of pages (property)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 320 }),
          fc.integer({ min: 1, max: 50 }),
          fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 8 }),
          async (size, limit, wanted) => {
            const list = new V3List(size);
            const walker = walkerWith();
            const listKey = newKey();
            const pages = wanted.map((page) => ((page - 1) % (lastPage(size, limit) + 2)) + 1);
            const [first, ...rest] = pages;
            await expectPage(walker, listKey, list, first ?? 1, limit, cold(size, first ?? 1, limit));
            for (const page of rest) {
              // Warm, a page is at most two calls: from the nearest cursor, at most 100 records before it.
              // Past what a bounded snapshot knows: reads of 100 from its frontier to the page's end.
              const before = await snapshotOf(listKey);
              const result = await expectPage(walker, listKey, list, page, limit);
              const fromFrontier = before.ended ? 0 : Math.ceil((page * limit - before.known) / 100);
              expect(result.upstreamCalls).toBeLessThanOrEqual(Math.max(2, fromFrontier));
            }
          },
        ),
        { numRuns: 60 },
      );
    });
  });

  describe('a list that grows at the head', () => {
    it('page 1 shows new records and the new total with one call', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      // Bounded: 100 records known after the cold read, and the new ones on top of them.
      let known = mode === 'exact' ? 250 : 100;
      await expectPage(walker, listKey, list, 1, 10, cold(250, 1, 10), mode === 'exact' ? 250 : known + 1);
      for (const added of [1, 7, 99]) {
        list.prepend(added);
        known += added;
        await expectPage(walker, listKey, list, 1, 10, 1, mode === 'exact' ? known : known + 1);
      }
      expect(await snapshotOf(listKey)).toMatchObject({
        known: mode === 'exact' ? 250 + 1 + 7 + 99 : 100 + 1 + 7 + 99,
        ended: mode === 'exact',
      });
      // The shifted cursors still name their records: deep pages stay right and cheap.
      await expectPage(walker, listKey, list, 30, 10);
      await expectPage(walker, listKey, list, 31, 10, 1);
    });

    it('pages > 1 serve the snapshot view within refreshAfterMs and the new view after it', async () => {
      const list = new V3List(250);
      const { walker, advance } = clocked();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, cold(250, 1, 10));
      await expectPage(walker, listKey, list, 11, 10, 1);
      const before = list.records;
      list.prepend(5);
      advance(PAGE_WALKER_DEFAULTS.refreshAfterMs);
      const snapshotView = await ask(walker, listKey, list, 12, 10);
      expect(ids(snapshotView.records)).toEqual(ids(before.slice(110, 120)));
      // Bounded: the snapshot's view knows the records up to this page's end, 120.
      expect(snapshotView).toMatchObject({ total: mode === 'exact' ? 250 : 121, upstreamCalls: 1 });
      advance(1);
      // Stale: one read of the head, one from the shifted cursor.
      await expectPage(walker, listKey, list, 13, 10, 2);
      await expectPage(walker, listKey, list, 14, 10, 1);
    });

    it('a page whose only start is the head reads the head and applies what is new', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, cold(250, 1, 10));
      list.prepend(5);
      await expectPage(walker, listKey, list, 2, 10, 1);
      // More new records than the short read (limit PL) holds: one more read of 100 places them.
      list.prepend(40);
      await expectPage(walker, listKey, list, 2, 10, 2);
      await expectPage(walker, listKey, list, 3, 10, 1);
      await expectPage(walker, listKey, list, 4, 10, 1);
      // A page with a cursor below it keeps the snapshot's view until refreshAfterMs.
      const before = list.records;
      list.prepend(3);
      const view = await ask(walker, listKey, list, 5, 10);
      expect(ids(view.records)).toEqual(ids(before.slice(40, 50)));
      expect(view).toMatchObject({ total: mode === 'exact' ? before.length : 100 + 5 + 40 + 1, upstreamCalls: 1 });
    });

    it('100 or more new records rebuild the snapshot cold, reusing the head page', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, cold(250, 1, 10));
      list.prepend(150);
      await expectPage(walker, listKey, list, 1, 10, cold(400, 1, 10));
      await expectPage(walker, listKey, list, 2, 10, 1);
      // Exactly 100 new: the old head is just outside the newest page.
      list.prepend(100);
      await expectPage(walker, listKey, list, 1, 10, cold(500, 1, 10));
    });

    it('a list that was empty fills up', async () => {
      const list = new V3List(0);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, 1, 0);
      list.prepend(30);
      await expectPage(walker, listKey, list, 1, 10, 1, 30);
      await expectPage(walker, listKey, list, 3, 10, 1, 30);
      list.prepend(130);
      await expectPage(walker, listKey, list, 1, 10, cold(160, 1, 10));
    });
  });

  describe('the snapshot is a cache', () => {
    it('a refused cursor rebuilds once', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, cold(250, 1, 10));
      await expectPage(walker, listKey, list, 2, 10, 1);
      await expectPage(walker, listKey, list, 3, 10, 1);
      list.expireCursors();
      // The refused call, then a cold walk.
      await expectPage(walker, listKey, list, 4, 10, 1 + cold(250, 4, 10));
      await expectPage(walker, listKey, list, 5, 10, 1);
      await expectPage(walker, listKey, list, 6, 10, 1);
    });

    it('a second refusal propagates', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, cold(250, 1, 10));
      await expectPage(walker, listKey, list, 2, 10, 1);
      list.rejectEveryCursor = true;
      const before = list.calls;
      // Page 12 lies past the first 100 records: even a bounded cold walk needs a cursor for it.
      await expect(walker.page(listKey, { page: 12, limit: 10 }, list.fetch)).rejects.toBeInstanceOf(
        CursorRejectedError,
      );
      // Refused, then the cold walk's head read and its refused second read.
      expect(list.calls - before).toBe(3);
      // A cold walk refused has no snapshot to blame: no retry.
      const coldFrom = list.calls;
      await expect(walker.page(newKey(), { page: 12, limit: 10 }, list.fetch)).rejects.toBeInstanceOf(
        CursorRejectedError,
      );
      expect(list.calls - coldFrom).toBe(2);
    });

    it('an end of list past what the snapshot knows is checked against it', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 50, cold(250, 1, 50));
      // Breaks the growth-only premise (records vanish at the tail). 'exact' knew the end at 250
      // and must notice, not lie; 'bounded' knew only 100 records and now learns the end is 240.
      list.records = list.records.slice(0, 240);
      await expectPage(walker, listKey, list, 5, 50, mode === 'exact' ? 1 + coldCost(240) : 2, 240);
      await expectPage(walker, listKey, list, 6, 50, 0, 240);
    });

    it('an end of list before what the snapshot knows rebuilds it', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 50, cold(250, 1, 50));
      await expectPage(walker, listKey, list, 3, 50, 1);
      // Both modes now know at least 150 records; the list ends at 120.
      list.records = list.records.slice(0, 120);
      await expectPage(walker, listKey, list, 3, 50, 1 + cold(120, 3, 50), 120);
      await expectPage(walker, listKey, list, 4, 50, 0, 120);
    });

    it('a head page with more records below the old head than the snapshot ended with rebuilds it', async () => {
      const list = new V3List(30);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, 1, 30);
      // Breaks the growth-only premise the other way: records appear at the tail.
      list.append(170);
      await expectPage(walker, listKey, list, 1, 10, cold(200, 1, 10));
      await expectPage(walker, listKey, list, 2, 10, 1);
    });

    it('ignores a snapshot that does not parse or has the wrong shape', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const good = newKey();
      await expectPage(walker, good, list, 1, 10, cold(250, 1, 10));
      const valid = await snapshotOf(good);
      const { known, ended, ...rest } = valid;
      const corrupt = [
        '{not json',
        'null',
        // The format before totals modes: { v: 1, total, ... }.
        JSON.stringify({ ...rest, v: 1, total: known }),
        JSON.stringify({ ...valid, v: 3 }),
        JSON.stringify({ ...valid, known: -1 }),
        JSON.stringify({ ...valid, ended: ended ? 'yes' : 0 }),
        JSON.stringify({ ...valid, headId: null }),
        JSON.stringify({ ...valid, cursors: { ...valid.cursors, [String(known + 1)]: 'x' } }),
        JSON.stringify({ ...valid, cursors: { ...valid.cursors, '0': 'x' } }),
        // An open end without the cursor at its frontier.
        JSON.stringify({ ...valid, ended: false, cursors: {}, recent: [] }),
        JSON.stringify({ ...valid, recent: [7] }),
      ];
      for (const text of corrupt) {
        const listKey = newKey();
        await store().cacheSet(listKey, text, 60_000);
        await expectPage(walker, listKey, list, 3, 10, cold(250, 3, 10));
        // Rewritten: the next page is warm.
        await expectPage(walker, listKey, list, 4, 10, 1);
      }
    });

    it('keeps the number of cursors bounded', async () => {
      const list = new V3List(250);
      const { walker, advance } = clocked();
      const listKey = newKey();
      for (let page = 1; page <= 250; page += 1)
        await expectPage(walker, listKey, list, page, 1, page === 1 ? cold(250, 1, 1) : 1);
      const walked = await snapshotOf(listKey);
      expect(walked).toMatchObject({ known: 250, ended: true });
      expect(walked.recent.length).toBe(PAGE_WALKER_DEFAULTS.maxRecentCursors);
      expect(Object.keys(walked.cursors).length).toBeLessThanOrEqual(PAGE_WALKER_DEFAULTS.maxRecentCursors + 2);
      // Refreshes add a boundary at the head each time; they must not pile up.
      for (let round = 0; round < 40; round += 1) {
        list.prepend(3);
        advance(PAGE_WALKER_DEFAULTS.refreshAfterMs + 1);
        await expectPage(walker, listKey, list, 1, 10, 1);
      }
      const refreshed = await snapshotOf(listKey);
      const boundaries = Object.keys(refreshed.cursors).length - refreshed.recent.length;
      expect(boundaries).toBeLessThanOrEqual(2 * Math.ceil(refreshed.known / 100));
      for (const page of [5, 20, 30, 37]) await expectPage(walker, listKey, list, page, 10);
    });

    it('forgets a snapshot after snapshotTtlMs', async () => {
      const list = new V3List(150);
      const walker = walkerWith({ snapshotTtlMs: 50 });
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, cold(150, 1, 10));
      await expectPage(walker, listKey, list, 2, 10, 1);
      await new Promise((resolve) => setTimeout(resolve, 80));
      await expectPage(walker, listKey, list, 3, 10, cold(150, 3, 10));
    });
  });

  describe('a misbehaving upstream', () => {
    const page = (data: ListRecord[], hasNext: boolean, nextCursor: string | null): CursorListPage => ({
      data,
      pagination: { hasNext, hasPrev: false, nextCursor, prevCursor: null },
    });

    it('hasNext without a nextCursor is a PageWalkError', async () => {
      const fetch: FetchCursorPage = async () => page([{ id: 'a' }], true, null);
      await expect(walkerWith().page(newKey(), { page: 1, limit: 10 }, fetch)).rejects.toMatchObject({
        name: 'PageWalkError',
        code: 'FXGATE_PAGE_WALK_FAILED',
      });
    });

    it('ids repeated across pages are a PageWalkError', async () => {
      let calls = 0;
      // Ignores startingAfter: the same page forever.
      const fetch: FetchCursorPage = async () => {
        calls += 1;
        return page([{ id: 'a' }, { id: 'b' }], true, 'again');
      };
      await expect(walkerWith().page(newKey(), { page: 1, limit: 10 }, fetch)).rejects.toBeInstanceOf(PageWalkError);
      expect(calls).toBe(2);
    });

    it('an empty page pointing back at its own cursor is a PageWalkError', async () => {
      const fetch: FetchCursorPage = async ({ startingAfter }) => page([], true, startingAfter ?? 'start');
      await expect(walkerWith().page(newKey(), { page: 1, limit: 10 }, fetch)).rejects.toBeInstanceOf(PageWalkError);
    });

    it('a list with no end stops at maxCallsPerRequest', async () => {
      let calls = 0;
      const fetch: FetchCursorPage = async ({ limit }) => {
        calls += 1;
        const data = Array.from({ length: limit }, (_, i) => ({ id: `r-${calls}-${i}` }));
        return page(data, true, `c-${calls}`);
      };
      const listKey = newKey();
      // Page 50 of 50 ends at 2,500: more than 20 reads of 100 even when the walk may stop there.
      await expect(
        walkerWith({ maxCallsPerRequest: 20 }).page(listKey, { page: 50, limit: 50 }, fetch),
      ).rejects.toBeInstanceOf(PageWalkError);
      expect(calls).toBe(20);
      await expect(store().cacheGet(listKey)).resolves.toBeNull();
    });

    it('any other error from fetch propagates unchanged', async () => {
      const boom = new Error('v3 answered 500');
      const fetch: FetchCursorPage = async () => {
        throw boom;
      };
      await expect(walkerWith().page(newKey(), { page: 1, limit: 10 }, fetch)).rejects.toBe(boom);
      const list = new V3List(250);
      const listKey = newKey();
      await expectPage(walkerWith(), listKey, list, 1, 10, cold(250, 1, 10));
      await expect(walkerWith().page(listKey, { page: 5, limit: 10 }, fetch)).rejects.toBe(boom);
    });
  });
});

describe.each(STORES)('PageWalker on $name with bounded totals', (storeCase) => {
  const { store, snapshotOf } = useStore(storeCase);
  const walkerWith = (options: Partial<PageWalkerOptions> = {}): PageWalker =>
    new PageWalker({ store: store(), totals: 'bounded', ...options });

  it('a cold page N costs at most ceil(N*limit/100)+1 calls, whatever the list length', async () => {
    const walker = walkerWith();
    const seen = { shorter: 0, equal: 0, longer: 0, atHundreds: 0, exact: 0, lowerBound: 0 };
    for (const length of [0, 1, 49, 50, 51, 99, 100, 101, 199, 200, 201, 250, 999, 1000, 1001, 2345]) {
      const list = new V3List(length);
      for (const limit of [1, 7, 10, 25, 33, 50]) {
        // Pages whose end falls just around the list's end and around multiples of 100.
        const pages = new Set([1, 2, 3]);
        for (const target of [99, 100, 101, 199, 200, 201, 1000, 1001, length - 1, length, length + 1]) {
          if (target < 1) continue;
          pages.add(Math.ceil(target / limit));
          pages.add(Math.ceil(target / limit) + 1);
        }
        for (const page of pages) {
          const end = page * limit;
          const result = await ask(walker, newKey(), list, page, limit);
          expect(result.upstreamCalls).toBeLessThanOrEqual(Math.ceil(end / 100) + 1);
          // Reads of 100 from the head, until the page's end is covered or the list ends.
          expect(result.upstreamCalls).toBe(Math.min(coldCost(length), Math.ceil(end / 100)));
          expect(ids(result.records)).toEqual(ids(list.slice(page, limit)));
          const walked = Math.min(length, 100 * Math.ceil(end / 100));
          const exact = walked === length;
          expect(result).toMatchObject({ total: exact ? length : walked + 1, totalExact: exact });
          // A client counting pages by the total sees one more while the end is not known.
          if (!exact) expect(Math.ceil(result.total / limit)).toBeGreaterThan(page);
          seen[length < end ? 'shorter' : length === end ? 'equal' : 'longer'] += 1;
          if (end % 100 === 0) seen.atHundreds += 1;
          seen[exact ? 'exact' : 'lowerBound'] += 1;
        }
      }
    }
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(10);
  });

  it('the total is a lower bound until the end is seen, then exact for every request', async () => {
    const list = new V3List(250);
    const walker = walkerWith();
    const listKey = newKey();
    const first = await expectPage(walker, listKey, list, 1, 10, 1, 101);
    expect(first.totalExact).toBe(false);
    expect(await snapshotOf(listKey)).toMatchObject({ known: 100, ended: false });
    await expectPage(walker, listKey, list, 10, 10, 1, 101);
    // Each page past what is known extends it; a page inside changes nothing.
    await expectPage(walker, listKey, list, 11, 10, 1, 111);
    await expectPage(walker, listKey, list, 5, 10, 1, 111);
    // From the frontier at 110 to 240: a read of 100, then one of 30.
    await expectPage(walker, listKey, list, 24, 10, 2, 241);
    const last = await expectPage(walker, listKey, list, 25, 10, 1, 250);
    expect(last.totalExact).toBe(true);
    expect(await snapshotOf(listKey)).toMatchObject({ known: 250, ended: true });
    for (const [page, calls] of [
      [3, 1],
      [26, 0],
      [1, 1],
    ] as const) {
      expect(await expectPage(walker, listKey, list, page, 10, calls, 250)).toMatchObject({ totalExact: true });
    }
    // New records on an exact total: still exact, shifted.
    list.prepend(5);
    expect(await expectPage(walker, listKey, list, 1, 10, 1, 255)).toMatchObject({ totalExact: true });
  });

  it('a page past the known records walks forward from the furthest cursor', async () => {
    const list = new V3List(1000);
    let now = 1_700_000_000_000;
    const walker = walkerWith({ now: () => now });
    const listKey = newKey();
    await expectPage(walker, listKey, list, 1, 10, 1, 101);
    // Page 50 ends at 500: from the frontier at 100, ceil(400/100) reads (bound: ceil(500/100)+1).
    await expectPage(walker, listKey, list, 50, 10, 4, 501);
    await expectPage(walker, listKey, list, 51, 10, 1, 511);
    // Inside what is known, the cursors that walk left keep a page one read away.
    await expectPage(walker, listKey, list, 30, 10, 1, 511);
    // Stale: the head first (3 new records shift the frontier to 513), then from the frontier.
    list.prepend(3);
    now += PAGE_WALKER_DEFAULTS.refreshAfterMs + 1;
    await expectPage(walker, listKey, list, 60, 10, 2, 601);
    // To the end: from the frontier at 600, 4 reads of 100, then the 3 records left.
    const end = await expectPage(walker, listKey, list, 101, 10, 5, 1003);
    expect(end.records).toHaveLength(3);
    await expectPage(walker, listKey, list, 102, 10, 0, 1003);
  });

  it('page-1 refreshes shift the known records like an exact total', async () => {
    const list = new V3List(500);
    const walker = walkerWith();
    const listKey = newKey();
    await expectPage(walker, listKey, list, 1, 10, 1, 101);
    list.prepend(7);
    await expectPage(walker, listKey, list, 1, 10, 1, 108);
    expect(await snapshotOf(listKey)).toMatchObject({ known: 107, ended: false });
    expect(Object.keys((await snapshotOf(listKey)).cursors)).toContain('107');
    // From the head page's cursor at 100, past the frontier at 107.
    await expectPage(walker, listKey, list, 11, 10, 1, 111);
    // A short read of the head that finds new records applies them too.
    list.prepend(5);
    await expectPage(walker, listKey, list, 2, 10, 1, 116);
    // 100 or more new records: what is known starts again from the new head page, one call.
    list.prepend(200);
    await expectPage(walker, listKey, list, 1, 10, 1, 101);
    await expectPage(walker, listKey, list, 2, 10, 1, 101);
  });

  it.each([7, 50])(
    'a sequential walk of 1,234 records with limit %i costs one call per page and ends exact',
    async (limit) => {
      const length = 1234;
      const list = new V3List(length);
      const walker = walkerWith();
      const listKey = newKey();
      const last = lastPage(length, limit);
      for (let page = 1; page <= last; page += 1) {
        const exact = page * limit >= length;
        const known = Math.max(100, page * limit);
        const result = await expectPage(walker, listKey, list, page, limit, 1, exact ? length : known + 1);
        expect(result.totalExact).toBe(exact);
      }
      const snapshot = await snapshotOf(listKey);
      expect(snapshot).toMatchObject({ known: length, ended: true });
      expect(Object.keys(snapshot.cursors).length).toBeLessThanOrEqual(
        2 * Math.ceil(length / 100) + PAGE_WALKER_DEFAULTS.maxRecentCursors,
      );
      await expectPage(walker, listKey, list, last + 1, limit, 0, length);
      await expectPage(walker, listKey, list, 1, limit, 1, length);
      // The cursors the walk left are boundaries, not just the most recent: any page stays close.
      for (const page of [Math.ceil(last / 5), Math.ceil(last / 3), Math.ceil(last / 2)]) {
        expect(
          (await expectPage(walker, listKey, list, page, limit, undefined, length)).upstreamCalls,
        ).toBeLessThanOrEqual(2);
      }
    },
  );

  it('a v3 that serves fewer records than asked costs more reads, and what it shows is known', async () => {
    const list = new V3List(500);
    list.servesAtMost = 30;
    const walker = walkerWith();
    const listKey = newKey();
    // Page 5 ends at 50: reads of 30 (the walker cannot know better) until 60.
    await expectPage(walker, listKey, list, 5, 10, 2, 61);
    await expectPage(walker, listKey, list, 7, 10, 1, 71);
    // A fuller head page reveals more than was known: 100 records, the frontier at its cursor.
    list.servesAtMost = 100;
    await expectPage(walker, listKey, list, 1, 10, 1, 101);
    expect(Object.keys((await snapshotOf(listKey)).cursors)).toContain('100');
    await expectPage(walker, listKey, list, 11, 10, 1, 111);
  });

  it('an exact walker walks again rather than serve a bounded lower bound, and its snapshot serves both', async () => {
    const list = new V3List(250);
    const listKey = newKey();
    const bounded = walkerWith();
    const exact = walkerWith({ totals: 'exact' });
    await expectPage(bounded, listKey, list, 1, 10, 1, 101);
    await expectPage(exact, listKey, list, 2, 10, coldCost(250), 250);
    expect(await expectPage(bounded, listKey, list, 3, 10, 1, 250)).toMatchObject({ totalExact: true });
  });
});

describe.each(PAGE_TOTALS_MODES)('PageWalker with its store down, %s totals', (mode) => {
  const stores: EphemeralStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  it.each([
    ['reads and writes fail', () => new DownCacheStore(true)],
    ['writes fail', () => new DownCacheStore(false)],
    [
      'Redis is unreachable',
      () => new RedisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 200, connectTimeoutMs: 200 }),
    ],
  ])('still answers every page right when %s, walking cold', async (_name, open) => {
    const store = open();
    stores.push(store);
    const walker = new PageWalker({ store, totals: mode });
    const list = new V3List(250);
    const listKey = newKey();
    for (const page of [1, 2, 3, 12, 25, 26])
      await expectPage(walker, listKey, list, page, 10, coldCostIn(mode, 250, page, 10));
  });

  it('an error from the store that is not StoreUnavailableError propagates', async () => {
    const store = new MemoryStore();
    stores.push(store);
    const bug = new TypeError('bug');
    store.cacheGet = async () => {
      throw bug;
    };
    await expect(
      new PageWalker({ store, totals: mode }).page(newKey(), { page: 1, limit: 10 }, new V3List(5).fetch),
    ).rejects.toBe(bug);
  });
});
