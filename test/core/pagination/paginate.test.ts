/**
 * paginate against docs/contract.md#pagination-cursor, rule by rule, on both database drivers, over
 * a table with many ties in created_at and a second org whose records interleave with the first.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Page, paginate } from '../../../src/core/pagination/paginate.js';
import { ApiError } from '../../../src/lib/errors/api-error.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';
import {
  BASE_MS,
  codec,
  CREATE_ITEMS,
  cursorAt,
  insertItems,
  type Item,
  itemId,
  listItems,
  newestFirst,
  replaceItems,
  scopeFor,
} from './items.js';

const ORG = 'org-a';
const OTHER = 'org-b';

/** 30 records of ORG in groups of 4 sharing a millisecond, and 30 of OTHER on the same instants. */
function fixture(count = 30): Item[] {
  const items: Item[] = [];
  for (let i = 0; i < count; i += 1) {
    items.push({ id: itemId(2 * i), org: ORG, createdAtMs: BASE_MS + Math.floor(i / 4) });
    items.push({ id: itemId(2 * i + 1), org: OTHER, createdAtMs: BASE_MS + Math.floor(i / 4) });
  }
  return items;
}

const ids = (items: readonly Item[]): string[] => items.map((item) => item.id);

async function expectQueryError(promise: Promise<unknown>, path: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe('VALIDATION_QUERY_FAILED');
  expect(((error as ApiError).details.issues as { path: string }[]).map((issue) => issue.path)).toContain(path);
}

function expectCursorsMatchFlags(page: Page<string>): void {
  expect(page.pagination.nextCursor === null).toBe(!page.pagination.hasNext);
  expect(page.pagination.prevCursor === null).toBe(!page.pagination.hasPrev);
}

describe.each(DATABASE_DRIVERS)('paginate on $driver', ({ create }) => {
  let database: TestDatabase;
  const db = () => database.db;
  const items = fixture();
  const sorted = newestFirst(items.filter((item) => item.org === ORG));
  const list = (query: Record<string, string>, org = ORG) => listItems(db(), org, query);

  beforeAll(async () => {
    database = await create();
    await database.db.exec(CREATE_ITEMS);
  });
  afterAll(async () => {
    await database?.drop();
  });
  beforeEach(async () => {
    await replaceItems(db(), items);
  });

  describe('rule 1: one cursor at most; none gives the newest page', () => {
    it('returns the newest page without a cursor', async () => {
      const page = await list({ limit: '5' });
      expect(page.data).toEqual(ids(sorted.slice(0, 5)));
      expect(page.pagination.hasNext).toBe(true);
      expect(page.pagination.hasPrev).toBe(false);
      expect(page.pagination.prevCursor).toBeNull();
    });

    it('uses the default limit of 25', async () => {
      expect((await list({})).data).toEqual(ids(sorted.slice(0, 25)));
    });

    it('rejects startingAfter with endingBefore', async () => {
      const cursor = cursorAt(sorted[3]!, ORG);
      await expectQueryError(list({ startingAfter: cursor, endingBefore: cursor }), 'startingAfter');
      await expectQueryError(
        paginate(db(), {
          from: 'items',
          scope: scopeFor(ORG),
          codec,
          toRecord: () => null,
          query: { limit: 5, startingAfter: cursor, endingBefore: cursor },
        }),
        'endingBefore',
      );
    });

    it.each(['0', '101', 'abc', '1.5'])('rejects limit %j', async (limit) => {
      await expectQueryError(list({ limit }), 'limit');
    });
  });

  describe('rule 2: newest first by createdAt, ties in a fixed order', () => {
    it('orders the whole list like the in-memory model, ties included', async () => {
      const page = await list({ limit: '100' });
      expect(page.data).toEqual(ids(sorted));
      expect(new Set(sorted.map((item) => item.createdAtMs)).size).toBeLessThan(sorted.length / 3);
    });

    it('keeps the order of a tie across a page boundary', async () => {
      // Pages of 3 cut every group of 4 equal timestamps.
      const first = await list({ limit: '3' });
      const second = await list({ limit: '3', startingAfter: first.pagination.nextCursor! });
      expect([...first.data, ...second.data]).toEqual(ids(sorted.slice(0, 6)));
    });
  });

  describe('rule 3: opaque cursors; the cursor record is excluded', () => {
    it('excludes the record a startingAfter cursor points at and returns the older ones', async () => {
      const page = await list({ limit: '4', startingAfter: cursorAt(sorted[9]!, ORG) });
      expect(page.data).toEqual(ids(sorted.slice(10, 14)));
    });

    it('excludes the record an endingBefore cursor points at and returns the nearest newer ones, newest first', async () => {
      const page = await list({ limit: '4', endingBefore: cursorAt(sorted[20]!, ORG) });
      expect(page.data).toEqual(ids(sorted.slice(16, 20)));
      expect(page.pagination.hasPrev).toBe(true);
      expect(page.pagination.hasNext).toBe(true);
    });

    it('returns fewer than limit when fewer newer records exist', async () => {
      const page = await list({ limit: '10', endingBefore: cursorAt(sorted[3]!, ORG) });
      expect(page.data).toEqual(ids(sorted.slice(0, 3)));
      expect(page.pagination.hasPrev).toBe(false);
      expect(page.pagination.hasNext).toBe(true);
    });

    it('rejects a cursor of another org, scope or secret, naming the parameter', async () => {
      await expectQueryError(list({ startingAfter: cursorAt(sorted[3]!, OTHER) }), 'startingAfter');
      await expectQueryError(list({ endingBefore: cursorAt(sorted[3]!, OTHER) }), 'endingBefore');
      const own = (await list({ limit: '3' })).pagination.nextCursor!;
      await expectQueryError(list({ startingAfter: own }, OTHER), 'startingAfter');
      await expectQueryError(list({ startingAfter: `${own.slice(0, -2)}AA` }), 'startingAfter');
      await expectQueryError(list({ startingAfter: 'not-a-cursor' }), 'startingAfter');
      await expectQueryError(list({ endingBefore: '' }), 'endingBefore');
    });

    it('pages from a position whose record left the filter set or the table', async () => {
      const first = await list({ limit: '5' });
      await db().query('UPDATE items SET org = $1 WHERE id = $2', [OTHER, sorted[4]!.id]);
      expect((await list({ limit: '5', startingAfter: first.pagination.nextCursor! })).data).toEqual(
        ids(sorted.slice(5, 10)),
      );
      await db().query('DELETE FROM items WHERE id = $1', [sorted[4]!.id]);
      expect((await list({ limit: '5', startingAfter: first.pagination.nextCursor! })).data).toEqual(
        ids(sorted.slice(5, 10)),
      );
      const back = await list({ limit: '5', endingBefore: first.pagination.nextCursor! });
      expect(back.data).toEqual(ids(sorted.slice(0, 4)));
      expect(back.pagination.hasPrev).toBe(false);
    });
  });

  describe('rules 4 and 5: data and pagination, no totals', () => {
    it('answers exactly { data, pagination: { hasNext, hasPrev, nextCursor, prevCursor } }', async () => {
      const page = await list({ limit: '5', startingAfter: cursorAt(sorted[5]!, ORG) });
      expect(Object.keys(page).sort()).toEqual(['data', 'pagination']);
      expect(Object.keys(page.pagination).sort()).toEqual(['hasNext', 'hasPrev', 'nextCursor', 'prevCursor']);
      expect(page.pagination).toEqual({
        hasNext: true,
        hasPrev: true,
        nextCursor: expect.any(String),
        prevCursor: expect.any(String),
      });
    });
  });

  describe('rule 6: cursors are null exactly when their flag is false; the end is the flag', () => {
    it('says hasNext false on a full last page', async () => {
      // 30 records, pages of 10: the third page is full and the last.
      const first = await list({ limit: '10' });
      const second = await list({ limit: '10', startingAfter: first.pagination.nextCursor! });
      const third = await list({ limit: '10', startingAfter: second.pagination.nextCursor! });
      expect(third.data).toHaveLength(10);
      expect(third.pagination.hasNext).toBe(false);
      expect(third.pagination.nextCursor).toBeNull();
      for (const page of [first, second, third]) expectCursorsMatchFlags(page);
    });

    it('says hasPrev false on a full first page reached backwards', async () => {
      const page = await list({ limit: '10', endingBefore: cursorAt(sorted[10]!, ORG) });
      expect(page.data).toEqual(ids(sorted.slice(0, 10)));
      expect(page.pagination.hasPrev).toBe(false);
      expect(page.pagination.prevCursor).toBeNull();
      expectCursorsMatchFlags(page);
    });
  });

  describe('rule 7: both flags false means the whole set is on the page', () => {
    it('returns everything with both flags false when limit covers the set', async () => {
      const page = await list({ limit: '30' });
      expect(page.data).toEqual(ids(sorted));
      expect(page.pagination).toEqual({ hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null });
    });

    it('returns an empty set as one empty page', async () => {
      expect(await list({}, 'org-empty')).toEqual({
        data: [],
        pagination: { hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null },
      });
    });
  });

  describe('rule 8: startingAfter at the oldest record is an empty page, not an error', () => {
    it('is empty with hasNext false, and its prevCursor leads back to the oldest records', async () => {
      const oldest = sorted.at(-1)!;
      const empty = await list({ limit: '4', startingAfter: cursorAt(oldest, ORG) });
      expect(empty.data).toEqual([]);
      expect(empty.pagination.hasNext).toBe(false);
      expect(empty.pagination.nextCursor).toBeNull();
      expect(empty.pagination.hasPrev).toBe(true);
      const back = await list({ limit: '4', endingBefore: empty.pagination.prevCursor! });
      expect(back.data).toEqual(ids(sorted.slice(-4)));
      expect(back.pagination.hasNext).toBe(false);
      expect(back.pagination.hasPrev).toBe(true);
    });

    it('reached by walking: the last page has no nextCursor, and a cursor past the end leads back', async () => {
      const last = await list({ limit: '30' });
      expect(last.pagination.hasNext).toBe(false);
      const empty = await list({ limit: '30', startingAfter: cursorAt(sorted.at(-1)!, ORG) });
      expect((await list({ limit: '30', endingBefore: empty.pagination.prevCursor! })).data).toEqual(ids(sorted));
    });

    it('has hasPrev false when no record is left at or above the position', async () => {
      const oldest = sorted.at(-1)!;
      await db().query('DELETE FROM items WHERE org = $1', [ORG]);
      const empty = await list({ startingAfter: cursorAt(oldest, ORG) });
      expect(empty).toEqual({
        data: [],
        pagination: { hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null },
      });
    });

    it('counts the cursor record itself as previous when it is still in the set', async () => {
      const oldest = sorted.at(-1)!;
      await db().query('DELETE FROM items WHERE org = $1 AND id <> $2', [ORG, oldest.id]);
      const empty = await list({ startingAfter: cursorAt(oldest, ORG) });
      expect(empty.pagination.hasPrev).toBe(true);
      expect((await list({ endingBefore: empty.pagination.prevCursor! })).data).toEqual([oldest.id]);
    });

    it('mirrors for endingBefore at the newest record', async () => {
      const empty = await list({ limit: '4', endingBefore: cursorAt(sorted[0]!, ORG) });
      expect(empty.data).toEqual([]);
      expect(empty.pagination.hasPrev).toBe(false);
      expect(empty.pagination.prevCursor).toBeNull();
      expect(empty.pagination.hasNext).toBe(true);
      const forward = await list({ limit: '4', startingAfter: empty.pagination.nextCursor! });
      expect(forward.data).toEqual(ids(sorted.slice(0, 4)));
      expect(forward.pagination.hasPrev).toBe(false);
    });
  });

  describe('rule 9: every page carries both cursors, whatever the direction', () => {
    it('gives a forward page both cursors, and its prevCursor returns the page before', async () => {
      const first = await list({ limit: '6' });
      const second = await list({ limit: '6', startingAfter: first.pagination.nextCursor! });
      expect(second.pagination.hasPrev).toBe(true);
      expect(second.pagination.hasNext).toBe(true);
      expect(await list({ limit: '6', endingBefore: second.pagination.prevCursor! })).toEqual(first);
    });

    it('gives a backward page both cursors, and its nextCursor returns the page after', async () => {
      const page = await list({ limit: '6', endingBefore: cursorAt(sorted[18]!, ORG) });
      expect(page.data).toEqual(ids(sorted.slice(12, 18)));
      const after = await list({ limit: '6', startingAfter: page.pagination.nextCursor! });
      expect(after.data).toEqual(ids(sorted.slice(18, 24)));
      const before = await list({ limit: '6', endingBefore: page.pagination.prevCursor! });
      expect(before.data).toEqual(ids(sorted.slice(6, 12)));
    });
  });

  describe('walks over 120 records in pages of 7', () => {
    const many = fixture(120);
    const manySorted = newestFirst(many.filter((item) => item.org === ORG));

    beforeEach(async () => {
      await replaceItems(db(), many);
    });

    it('visits every record once, in order, walking forward', async () => {
      const seen: string[] = [];
      let page = await list({ limit: '7' });
      seen.push(...page.data);
      while (page.pagination.hasNext) {
        expectCursorsMatchFlags(page);
        page = await list({ limit: '7', startingAfter: page.pagination.nextCursor! });
        expect(page.data.length).toBeGreaterThan(0);
        seen.push(...page.data);
      }
      expect(seen).toEqual(ids(manySorted));
    });

    it('visits every record once, in order, walking backward from past the end', async () => {
      const pages: string[][] = [];
      let page = await list({ limit: '7', startingAfter: cursorAt(manySorted.at(-1)!, ORG) });
      expect(page.data).toEqual([]);
      while (page.pagination.hasPrev) {
        page = await list({ limit: '7', endingBefore: page.pagination.prevCursor! });
        expect(page.data.length).toBeGreaterThan(0);
        pages.unshift(page.data);
      }
      expect(pages.flat()).toEqual(ids(manySorted));
      expect(pages.slice(1).every((p) => p.length === 7)).toBe(true);
    });

    it('stays consistent when records arrive between calls', async () => {
      // Before every call one record arrives behind the walk and one in the part still ahead of
      // it: a walk must meet exactly the records ahead, in order, each once.
      let arrivals = 0;
      const arrive = async (behindMs: number, aheadMs: number): Promise<Item> => {
        const [behind, ahead] = [behindMs, aheadMs].map((createdAtMs) => ({
          id: itemId(1000 + arrivals++),
          org: ORG,
          createdAtMs,
        }));
        await insertItems(db(), [behind!, ahead!]);
        return ahead!;
      };
      const current = async (): Promise<Item[]> =>
        newestFirst(
          (
            await db().query<{ id: string; created_at: Date }>('SELECT id, created_at FROM items WHERE org = $1', [ORG])
          ).rows.map((row) => ({ id: row.id, org: ORG, createdAtMs: row.created_at.getTime() })),
        );

      const forward: string[] = [];
      let page = await list({ limit: '7' });
      forward.push(...page.data);
      while (page.pagination.hasNext) {
        await arrive(BASE_MS + 10_000 + arrivals, BASE_MS - 1 - arrivals);
        page = await list({ limit: '7', startingAfter: page.pagination.nextCursor! });
        forward.push(...page.data);
      }
      const afterForward = await current();
      expect(afterForward.length).toBeGreaterThan(manySorted.length + 20);
      expect(forward).toEqual(ids(afterForward.filter((item) => item.createdAtMs < BASE_MS + 10_000)));

      const oldest = afterForward.at(-1)!;
      const backward: string[][] = [];
      page = await list({ limit: '7', startingAfter: cursorAt(oldest, ORG) });
      while (page.pagination.hasPrev) {
        await arrive(BASE_MS - 100_000 - arrivals, BASE_MS + 20_000 + arrivals);
        page = await list({ limit: '7', endingBefore: page.pagination.prevCursor! });
        backward.unshift(page.data);
      }
      expect(backward.flat()).toEqual(ids((await current()).filter((item) => item.createdAtMs >= oldest.createdAtMs)));
    });
  });

  describe('its SQL', () => {
    it('refuses created_at with sub-millisecond precision instead of skipping records', async () => {
      await db().exec('CREATE TABLE micro (id text PRIMARY KEY, created_at timestamptz NOT NULL)');
      await db().query(`INSERT INTO micro VALUES ('a', '2025-03-01T12:00:00.123456Z')`);
      await expect(
        paginate(db(), { from: 'micro', scope: 's', codec, query: { limit: 5 }, toRecord: (row) => row }),
      ).rejects.toThrow(/millisecond precision/);
      await db().exec('DROP TABLE micro');
    });

    it('hands toRecord the selected columns only, and numbers its placeholders after the filter', async () => {
      const page = await paginate<{ id: string; org: string }, { id: string; org: string }>(db(), {
        from: 'items i',
        select: 'i.id, i.org',
        keyColumns: { createdAt: 'i.created_at', id: 'i.id' },
        where: { sql: 'i.org = $1 AND i.id <> $2', params: [ORG, sorted[1]!.id] },
        scope: scopeFor(ORG),
        query: { limit: 3, startingAfter: cursorAt(sorted[0]!, ORG) },
        codec,
        toRecord: (row) => row,
      });
      expect(page.data).toEqual([sorted[2]!, sorted[3]!, sorted[4]!].map((item) => ({ id: item.id, org: ORG })));
      expect(page.pagination.hasPrev).toBe(true);
    });
  });
});
