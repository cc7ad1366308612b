import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CursorRejectedError,
  type CursorListPage,
  type FetchCursorPage,
  PAGE_WALKER_DEFAULTS,
  PageWalkError,
  PageWalker,
  type PageWalkerOptions,
  type PageResult,
} from '../../../src/gateway/legacy/page-walker.js';
import { type EphemeralStore, StoreUnavailableError } from '../../../src/lib/store/ephemeral-store.js';
import { MemoryStore } from '../../../src/lib/store/memory-store.js';
import { RedisStore } from '../../../src/lib/store/redis-store.js';
import { testServices } from '../../support/services.js';

const { redisUrl } = testServices();

interface ListRecord {
  readonly id: string;
}

/**
 * A v3 cursor list as spec 4.3 describes it: newest first, `limit` at most 100, `startingAfter`
 * excludes the cursor's record, both flags and cursors on every page, null cursors exactly when
 * the flag is false, an empty page with hasNext false when positioned at the oldest record.
 * Cursors are opaque to the walker (base64url JSON) and carry a generation, so that a test can
 * make every cursor issued so far "expire".
 */
class V3List {
  records: ListRecord[];
  calls = 0;
  /** Every cursor is refused, old or new: v3 that will not take any cursor. */
  rejectEveryCursor = false;
  private generation = 0;
  private counter = 0;

  constructor(size: number) {
    this.records = this.make(size);
  }

  /** n new records at the head, as new trades arrive. */
  prepend(n: number): void {
    this.records = [...this.make(n), ...this.records];
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
    const data = this.records.slice(from, from + limit);
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
const lastPage = (total: number, limit: number): number => Math.max(1, Math.ceil(total / limit));
const ids = (records: readonly ListRecord[]): string[] => records.map((record) => record.id);
const newKey = (): string => `lpages:{org-${randomUUID()}:sandbox}:/v3/fx/trades`;

/** Asks for a page and checks the walker's own call count against the simulator's. */
async function ask(walker: PageWalker, listKey: string, list: V3List, page: number, limit: number): Promise<PageResult> {
  const before = list.calls;
  const result = await walker.page(listKey, { page, limit }, list.fetch);
  expect(result.upstreamCalls).toBe(list.calls - before);
  return result;
}

/** Asks and checks the page against the array: the records, the exact total, the cost. */
async function expectPage(walker: PageWalker, listKey: string, list: V3List, page: number, limit: number, calls?: number): Promise<PageResult> {
  const result = await ask(walker, listKey, list, page, limit);
  expect(ids(result.records)).toEqual(ids(list.slice(page, limit)));
  expect(result.total).toBe(list.records.length);
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
      const keyPrefix = `fxgate-test:${randomUUID()}:`;
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

const SIZES = [0, 1, 49, 50, 51, 100, 101, 250];

describe('the V3List simulator', () => {
  it('follows spec 4.3: cursors exclude their record, flags and cursors agree, an empty last page', async () => {
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
    expect(past).toEqual({ data: [], pagination: { hasNext: false, hasPrev: true, nextCursor: null, prevCursor: expect.any(String) } });
    list.expireCursors();
    await expect(list.fetch({ limit: 1, startingAfter: first.pagination.nextCursor ?? '' })).rejects.toBeInstanceOf(CursorRejectedError);
    await expect(list.fetch({ limit: 101 })).rejects.toThrow(/out of range/);
  });
});

describe('PageWalker', () => {
  it('exports its defaults and a typed error', () => {
    expect(PAGE_WALKER_DEFAULTS).toEqual({ snapshotTtlMs: 600_000, refreshAfterMs: 60_000, maxCallsPerRequest: 1_000, maxRecentCursors: 64 });
    expect(new PageWalkError('x')).toMatchObject({ code: 'FXGATE_PAGE_WALK_FAILED', name: 'PageWalkError' });
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

describe.each(STORES)('PageWalker on $name', (storeCase) => {
  let store: EphemeralStore;
  let cleanup: () => Promise<void>;

  beforeAll(() => {
    ({ store, cleanup } = storeCase.open());
  });

  afterAll(async () => {
    await cleanup();
  });

  const walkerWith = (options: Partial<PageWalkerOptions> = {}): PageWalker => new PageWalker({ store, ...options });

  /** A walker whose clock the test moves. */
  function clocked(options: Partial<PageWalkerOptions> = {}): { walker: PageWalker; advance: (ms: number) => void } {
    let now = 1_700_000_000_000;
    return { walker: walkerWith({ ...options, now: () => now }), advance: (ms) => (now += ms) };
  }

  async function snapshotOf(listKey: string): Promise<{ total: number; cursors: Record<string, string>; recent: number[] }> {
    const text = await store.cacheGet(listKey);
    if (text === null) throw new Error('no snapshot');
    return JSON.parse(text) as { total: number; cursors: Record<string, string>; recent: number[] };
  }

  describe('pages equal the slice of the list, with the exact total', () => {
    it.each(SIZES)('a sequential walk of %i records costs one call per page after page 1', async (size) => {
      for (const limit of [1, 7, 10, 30, 50]) {
        const list = new V3List(size);
        const walker = walkerWith();
        const listKey = newKey();
        await expectPage(walker, listKey, list, 1, limit, coldCost(size));
        for (let page = 2; page <= lastPage(size, limit); page += 1) await expectPage(walker, listKey, list, page, limit, 1);
        // Beyond the end: the snapshot knows the total, v3 is not asked.
        await expectPage(walker, listKey, list, lastPage(size, limit) + 1, limit, 0);
        await expectPage(walker, listKey, list, lastPage(size, limit) + 100, limit, 0);
        // Page 1 warm: one read of the head.
        await expectPage(walker, listKey, list, 1, limit, 1);
      }
    });

    it.each(SIZES)('any page of %i records asked cold costs max(1, ceil(total/100))', async (size) => {
      for (const limit of [1, 10, 50]) {
        const list = new V3List(size);
        const walker = walkerWith();
        for (let page = 1; page <= lastPage(size, limit) + 1; page += 1) {
          await expectPage(walker, newKey(), list, page, limit, coldCost(size));
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
            await expectPage(walker, listKey, list, first ?? 1, limit, coldCost(size));
            for (const page of rest) {
              // Warm, a page is at most two calls: from the nearest cursor, at most 100 records before it.
              const result = await expectPage(walker, listKey, list, page, limit);
              expect(result.upstreamCalls).toBeLessThanOrEqual(2);
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
      await expectPage(walker, listKey, list, 1, 10, 3);
      for (const added of [1, 7, 99]) {
        list.prepend(added);
        await expectPage(walker, listKey, list, 1, 10, 1);
      }
      expect((await snapshotOf(listKey)).total).toBe(250 + 1 + 7 + 99);
      // The shifted cursors still name their records: deep pages stay right and cheap.
      await expectPage(walker, listKey, list, 30, 10);
      await expectPage(walker, listKey, list, 31, 10, 1);
    });

    it('pages > 1 serve the snapshot view within refreshAfterMs and the new view after it', async () => {
      const list = new V3List(250);
      const { walker, advance } = clocked();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, 3);
      await expectPage(walker, listKey, list, 11, 10, 1);
      const before = list.records;
      list.prepend(5);
      advance(PAGE_WALKER_DEFAULTS.refreshAfterMs);
      const snapshotView = await ask(walker, listKey, list, 12, 10);
      expect(ids(snapshotView.records)).toEqual(ids(before.slice(110, 120)));
      expect(snapshotView).toMatchObject({ total: 250, upstreamCalls: 1 });
      advance(1);
      // Stale: one read of the head, one from the shifted cursor.
      await expectPage(walker, listKey, list, 13, 10, 2);
      await expectPage(walker, listKey, list, 14, 10, 1);
    });

    it('a page whose only start is the head reads the head and applies what is new', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, 3);
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
      expect(view).toMatchObject({ total: before.length, upstreamCalls: 1 });
    });

    it('100 or more new records rebuild the snapshot cold, reusing the head page', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, 3);
      list.prepend(150);
      await expectPage(walker, listKey, list, 1, 10, coldCost(400));
      await expectPage(walker, listKey, list, 2, 10, 1);
      // Exactly 100 new: the old head is just outside the newest page.
      list.prepend(100);
      await expectPage(walker, listKey, list, 1, 10, coldCost(500));
    });

    it('a list that was empty fills up', async () => {
      const list = new V3List(0);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, 1);
      list.prepend(30);
      await expectPage(walker, listKey, list, 1, 10, 1);
      await expectPage(walker, listKey, list, 3, 10, 1);
      list.prepend(130);
      await expectPage(walker, listKey, list, 1, 10, 2);
    });
  });

  describe('the snapshot is a cache', () => {
    it('a refused cursor rebuilds once', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, 3);
      await expectPage(walker, listKey, list, 2, 10, 1);
      await expectPage(walker, listKey, list, 3, 10, 1);
      list.expireCursors();
      // The refused call, then a cold walk.
      await expectPage(walker, listKey, list, 4, 10, 1 + coldCost(250));
      await expectPage(walker, listKey, list, 5, 10, 1);
      await expectPage(walker, listKey, list, 6, 10, 1);
    });

    it('a second refusal propagates', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, 3);
      await expectPage(walker, listKey, list, 2, 10, 1);
      list.rejectEveryCursor = true;
      const before = list.calls;
      await expect(walker.page(listKey, { page: 3, limit: 10 }, list.fetch)).rejects.toBeInstanceOf(CursorRejectedError);
      // Refused, then the cold walk's head read and its refused second read.
      expect(list.calls - before).toBe(3);
      // A cold walk refused has no snapshot to blame: no retry.
      const cold = list.calls;
      await expect(walker.page(newKey(), { page: 1, limit: 10 }, list.fetch)).rejects.toBeInstanceOf(CursorRejectedError);
      expect(list.calls - cold).toBe(2);
    });

    it('an end of list that disagrees with the snapshot rebuilds it', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 50, 3);
      // Breaks the growth-only premise (records vanish at the tail): the walker must notice, not lie.
      list.records = list.records.slice(0, 240);
      await expectPage(walker, listKey, list, 5, 50, 1 + coldCost(240));
      await expectPage(walker, listKey, list, 6, 50, 0);
    });

    it('ignores a snapshot that does not parse or has the wrong shape', async () => {
      const list = new V3List(250);
      const walker = walkerWith();
      const good = newKey();
      await expectPage(walker, good, list, 1, 10, 3);
      const valid = await snapshotOf(good);
      const corrupt = [
        '{not json',
        'null',
        JSON.stringify({ ...valid, v: 2 }),
        JSON.stringify({ ...valid, total: -1 }),
        JSON.stringify({ ...valid, headId: null }),
        JSON.stringify({ ...valid, cursors: { '251': 'x' } }),
        JSON.stringify({ ...valid, cursors: { '0': 'x' } }),
        JSON.stringify({ ...valid, recent: [7] }),
      ];
      for (const text of corrupt) {
        const listKey = newKey();
        await store.cacheSet(listKey, text, 60_000);
        await expectPage(walker, listKey, list, 3, 10, coldCost(250));
        // Rewritten: the next page is warm.
        await expectPage(walker, listKey, list, 4, 10, 1);
      }
    });

    it('keeps the number of cursors bounded', async () => {
      const list = new V3List(250);
      const { walker, advance } = clocked();
      const listKey = newKey();
      for (let page = 1; page <= 250; page += 1) await expectPage(walker, listKey, list, page, 1, page === 1 ? 3 : 1);
      const walked = await snapshotOf(listKey);
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
      expect(boundaries).toBeLessThanOrEqual(2 * Math.ceil(refreshed.total / 100));
      for (const page of [5, 20, 30, 37]) await expectPage(walker, listKey, list, page, 10);
    });

    it('forgets a snapshot after snapshotTtlMs', async () => {
      const list = new V3List(150);
      const walker = walkerWith({ snapshotTtlMs: 50 });
      const listKey = newKey();
      await expectPage(walker, listKey, list, 1, 10, 2);
      await expectPage(walker, listKey, list, 2, 10, 1);
      await new Promise((resolve) => setTimeout(resolve, 80));
      await expectPage(walker, listKey, list, 3, 10, 2);
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
      await expect(walkerWith({ maxCallsPerRequest: 20 }).page(listKey, { page: 1, limit: 10 }, fetch)).rejects.toBeInstanceOf(PageWalkError);
      expect(calls).toBe(20);
      await expect(store.cacheGet(listKey)).resolves.toBeNull();
    });

    it('any other error from fetch propagates unchanged', async () => {
      const boom = new Error('v3 answered 500');
      const fetch: FetchCursorPage = async () => {
        throw boom;
      };
      await expect(walkerWith().page(newKey(), { page: 1, limit: 10 }, fetch)).rejects.toBe(boom);
      const list = new V3List(250);
      const listKey = newKey();
      await expectPage(walkerWith(), listKey, list, 1, 10, 3);
      await expect(walkerWith().page(listKey, { page: 5, limit: 10 }, fetch)).rejects.toBe(boom);
    });
  });
});

describe('PageWalker with its store down', () => {
  const stores: EphemeralStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  it.each([
    ['reads and writes fail', () => new DownCacheStore(true)],
    ['writes fail', () => new DownCacheStore(false)],
    ['Redis is unreachable', () => new RedisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 200, connectTimeoutMs: 200 })],
  ])('still answers every page right when %s, walking cold', async (_name, open) => {
    const store = open();
    stores.push(store);
    const walker = new PageWalker({ store });
    const list = new V3List(250);
    const listKey = newKey();
    for (const page of [1, 2, 3, 12, 25, 26]) await expectPage(walker, listKey, list, page, 10, coldCost(250));
  });

  it('an error from the store that is not StoreUnavailableError propagates', async () => {
    const store = new MemoryStore();
    stores.push(store);
    const bug = new TypeError('bug');
    store.cacheGet = async () => {
      throw bug;
    };
    await expect(new PageWalker({ store }).page(newKey(), { page: 1, limit: 10 }, new V3List(5).fetch)).rejects.toBe(bug);
  });
});
