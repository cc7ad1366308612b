/**
 * Step 5b of a legacy list: the declared filters applied to a list v3 returned whole, and the
 * legacy `meta.pagination` `{total, start, end, page, limit}`. start is the 0-based offset of the
 * page's first record and end the offset after its last. A cursor list arrives as the requested
 * page with the walker's total (page-walker.ts); a list v3 returned whole is filtered, then
 * sliced here.
 */
import type { LegacyBody } from '../transforms/response-body.js';
import type { ReadQuery } from './query.js';

export function applyListQuery(legacy: LegacyBody, query: ReadQuery, cursorTotal: number | null): void {
  if (!query.paging) return;
  const { page, limit } = query.paging;
  let data = Array.isArray(legacy.data) ? (legacy.data as Record<string, unknown>[]) : [];
  if (query.keep) data = data.filter(query.keep);
  const start = (page - 1) * limit;
  let total = cursorTotal;
  if (total === null) {
    total = data.length;
    data = data.slice(start, start + limit);
  }
  legacy.data = data;
  legacy.meta = {
    pagination: { total, start: Math.min(start, total), end: Math.min(start, total) + data.length, page, limit },
  };
}
