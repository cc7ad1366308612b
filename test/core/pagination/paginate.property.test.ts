/**
 * paginate against an in-memory model, on random data sets full of ties and random walks. The
 * model knows nothing of cursors: it tracks the current page as a slice [start, end) of the
 * sorted set, and says which slice each move must give.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Page } from '../../../src/core/pagination/paginate.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';
import {
  BASE_MS,
  compareNewestFirst,
  CREATE_ITEMS,
  cursorAt,
  type Item,
  listItems,
  newestFirst,
  replaceItems,
} from './items.js';

const ORG = 'a';

const itemsArb = fc.uniqueArray(
  fc.record({
    id: fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16).padStart(4, '0')),
    org: fc.constantFrom(ORG, ORG, 'b'),
    createdAtMs: fc.integer({ min: 0, max: 5 }).map((offset) => BASE_MS + offset),
  }),
  { selector: (item) => item.id, maxLength: 40 },
);

const limitArb = fc.integer({ min: 1, max: 8 });

/** Follow a cursor of the current page, or jump to a position near any record (of either org). */
type Move =
  | { readonly kind: 'next'; readonly limit: number }
  | { readonly kind: 'prev'; readonly limit: number }
  | {
      readonly kind: 'after' | 'before';
      readonly limit: number;
      readonly target: number;
      readonly shiftMs: number;
      readonly inclusive: boolean;
    };

const moveArb: fc.Arbitrary<Move> = fc.oneof(
  fc.record({ kind: fc.constant('next' as const), limit: limitArb }),
  fc.record({ kind: fc.constant('prev' as const), limit: limitArb }),
  fc.record({
    kind: fc.constantFrom('after' as const, 'before' as const),
    limit: limitArb,
    target: fc.nat(),
    shiftMs: fc.constantFrom(-1, 0, 0, 1),
    inclusive: fc.boolean(),
  }),
);

interface Slice {
  readonly start: number;
  readonly end: number;
}

/** How many records of sorted lie strictly before the boundary in newest-first order. */
function boundaryIndex(
  sorted: readonly Item[],
  position: Pick<Item, 'createdAtMs' | 'id'>,
  countEqual: boolean,
): number {
  return sorted.filter((item) => {
    const order = compareNewestFirst(item, position);
    return order < 0 || (countEqual && order === 0);
  }).length;
}

function olderSlice(sorted: readonly Item[], from: number, limit: number): Slice {
  return { start: from, end: Math.min(sorted.length, from + limit) };
}

function newerSlice(to: number, limit: number): Slice {
  return { start: Math.max(0, to - limit), end: to };
}

function expectPage(page: Page<string>, sorted: readonly Item[], slice: Slice): void {
  expect(page.data).toEqual(sorted.slice(slice.start, slice.end).map((item) => item.id));
  expect(page.pagination.hasNext).toBe(slice.end < sorted.length);
  expect(page.pagination.hasPrev).toBe(slice.start > 0);
  expect(page.pagination.nextCursor === null).toBe(!page.pagination.hasNext);
  expect(page.pagination.prevCursor === null).toBe(!page.pagination.hasPrev);
}

describe.each(DATABASE_DRIVERS)('paginate matches the model on $driver', ({ create }) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await create();
    await database.db.exec(CREATE_ITEMS);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('gives the slice the model expects on every move of random walks', async () => {
    await fc.assert(
      fc.asyncProperty(itemsArb, limitArb, fc.array(moveArb, { maxLength: 10 }), async (items, firstLimit, moves) => {
        const db = database.db;
        await replaceItems(db, items);
        const sorted = newestFirst(items.filter((item) => item.org === ORG));
        const list = (query: Record<string, string>) => listItems(db, ORG, query);

        let slice = olderSlice(sorted, 0, firstLimit);
        let page = await list({ limit: String(firstLimit) });
        expectPage(page, sorted, slice);

        for (const move of moves) {
          const limit = String(move.limit);
          if (move.kind === 'next') {
            if (!page.pagination.nextCursor) continue;
            slice = olderSlice(sorted, slice.end, move.limit);
            page = await list({ limit, startingAfter: page.pagination.nextCursor });
          } else if (move.kind === 'prev') {
            if (!page.pagination.prevCursor) continue;
            slice = newerSlice(slice.start, move.limit);
            page = await list({ limit, endingBefore: page.pagination.prevCursor });
          } else {
            const target = items[move.target % Math.max(1, items.length)];
            if (!target) continue;
            const position = { id: target.id, createdAtMs: target.createdAtMs + move.shiftMs };
            const cursor = cursorAt(position, ORG, move.inclusive);
            if (move.kind === 'after') {
              // startingAfter selects records older than the position, and the position too when inclusive.
              slice = olderSlice(sorted, boundaryIndex(sorted, position, !move.inclusive), move.limit);
              page = await list({ limit, startingAfter: cursor });
            } else {
              slice = newerSlice(boundaryIndex(sorted, position, move.inclusive), move.limit);
              page = await list({ limit, endingBefore: cursor });
            }
          }
          expectPage(page, sorted, slice);
        }
      }),
      { numRuns: 100 },
    );
  });
});
