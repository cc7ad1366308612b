/**
 * The last step of a legacy list (applyListQuery): a list v3 returned whole is filtered by the
 * query's predicate, then sliced to the requested page; a cursor list arrives as its page with
 * the walker's total. Either way the body gets `meta.pagination {total, start, end, page,
 * limit}`, start being the 0-based offset of the page's first record and end the offset after
 * its last, both within the total.
 */
import { describe, expect, it } from 'vitest';

import { applyListQuery } from '../../../../src/gateway/legacy/pipeline/pagination.js';
import type { ReadQuery } from '../../../../src/gateway/legacy/pipeline/query.js';
import type { LegacyBody } from '../../../../src/gateway/legacy/transforms/response-body.js';

const records = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ id: `r${index}`, even: index % 2 === 0 }));
const body = (data: unknown): LegacyBody => ({ status: 'success', message: 'Data fetched successfully', data });
const query = (page: number, limit: number, keep: ReadQuery['keep'] = null): ReadQuery => ({
  paging: { page, limit },
  v3Query: {},
  keep,
});
const ids = (legacy: LegacyBody) => (legacy.data as { id: string }[]).map((record) => record.id);

describe('a list v3 returned whole', () => {
  it('is sliced to the page, and meta tells where the page lies', () => {
    const legacy = body(records(5));
    applyListQuery(legacy, query(2, 2), null);
    expect(ids(legacy)).toEqual(['r2', 'r3']);
    expect(legacy.meta).toStrictEqual({ pagination: { total: 5, start: 2, end: 4, page: 2, limit: 2 } });
  });

  it('the first page and a last, partial page', () => {
    const first = body(records(5));
    applyListQuery(first, query(1, 10), null);
    expect(ids(first)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(first.meta).toStrictEqual({ pagination: { total: 5, start: 0, end: 5, page: 1, limit: 10 } });
    const last = body(records(5));
    applyListQuery(last, query(3, 2), null);
    expect(ids(last)).toEqual(['r4']);
    expect(last.meta).toStrictEqual({ pagination: { total: 5, start: 4, end: 5, page: 3, limit: 2 } });
  });

  it('a page past the end is empty, with start and end at the total', () => {
    const legacy = body(records(5));
    applyListQuery(legacy, query(9, 2), null);
    expect(legacy.data).toEqual([]);
    expect(legacy.meta).toStrictEqual({ pagination: { total: 5, start: 5, end: 5, page: 9, limit: 2 } });
  });

  it('an empty list', () => {
    const legacy = body([]);
    applyListQuery(legacy, query(1, 10), null);
    expect(legacy.data).toEqual([]);
    expect(legacy.meta).toStrictEqual({ pagination: { total: 0, start: 0, end: 0, page: 1, limit: 10 } });
  });

  it('is filtered before it is sliced: the total counts the records kept', () => {
    const legacy = body(records(7));
    applyListQuery(
      legacy,
      query(2, 2, (record) => record.even === true),
      null,
    );
    // Kept: r0, r2, r4, r6; page 2 of 2 holds r4 and r6.
    expect(ids(legacy)).toEqual(['r4', 'r6']);
    expect(legacy.meta).toStrictEqual({ pagination: { total: 4, start: 2, end: 4, page: 2, limit: 2 } });
  });

  it('a filter that keeps nothing gives an empty page of total 0', () => {
    const legacy = body(records(3));
    applyListQuery(
      legacy,
      query(1, 10, () => false),
      null,
    );
    expect(legacy.data).toEqual([]);
    expect(legacy.meta).toStrictEqual({ pagination: { total: 0, start: 0, end: 0, page: 1, limit: 10 } });
  });
});

describe('a cursor list', () => {
  it("is the walker's page as it is, with the walker's total", () => {
    const legacy = body(records(2));
    applyListQuery(legacy, query(3, 2), 41);
    expect(ids(legacy)).toEqual(['r0', 'r1']);
    expect(legacy.meta).toStrictEqual({ pagination: { total: 41, start: 4, end: 6, page: 3, limit: 2 } });
  });

  it("a page past the walker's total is empty, start and end at the total", () => {
    const legacy = body([]);
    applyListQuery(legacy, query(5, 10), 12);
    expect(legacy.meta).toStrictEqual({ pagination: { total: 12, start: 12, end: 12, page: 5, limit: 10 } });
  });
});

describe('the body', () => {
  it('keeps every other field, and gets meta after them', () => {
    const legacy: LegacyBody = { status: 'success', message: 'Data fetched successfully', data: records(1), extra: 1 };
    applyListQuery(legacy, query(1, 10), null);
    expect(Object.keys(legacy)).toEqual(['status', 'message', 'data', 'extra', 'meta']);
    expect(legacy.extra).toBe(1);
  });

  it('is left alone when the operation does not paginate', () => {
    const legacy = body(records(3));
    applyListQuery(legacy, { paging: null, v3Query: {}, keep: null }, null);
    expect(legacy).toStrictEqual(body(records(3)));
  });

  it('data that is not a list is read as an empty one', () => {
    const legacy = body({ not: 'a list' });
    applyListQuery(legacy, query(1, 10), null);
    expect(legacy.data).toEqual([]);
    expect(legacy.meta).toStrictEqual({ pagination: { total: 0, start: 0, end: 0, page: 1, limit: 10 } });
  });
});
