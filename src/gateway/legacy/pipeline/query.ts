/**
 * Step 3a of a legacy request: its query. Page and limit (with the conventions' defaults and
 * bounds) on paginated lists, and the declared filters, each either sent on to v3 or matched
 * against the legacy records of a list v3 returns whole. Anything else is refused with the
 * legacy 400: a filter the gateway cannot serve must never become a silent full list.
 * Compiled once per operation.
 */
import { ApiError } from '../../../lib/errors/api-error.js';
import type { ValidationIssue } from '../../../lib/errors/validation-issues.js';
import type { LegacyConventions } from '../declarations/conventions.js';
import type { EndpointMapping, Filter } from '../declarations/endpoint-mappings.js';
import type { ValueMapTable } from '../declarations/record-shapes.js';

export interface PageQuery {
  readonly page: number;
  readonly limit: number;
}

export interface ReadQuery {
  /** Null when the operation does not paginate. */
  readonly paging: PageQuery | null;
  /** Filters sent to v3 as query parameters of the first call. */
  readonly v3Query: Readonly<Record<string, string>>;
  /** Null when no filter applies to the legacy records; else whether a record is kept. */
  readonly keep: ((record: Readonly<Record<string, unknown>>) => boolean) | null;
}

/** The longest filter value taken: names and codes are short, and the value is logged. */
const MAX_FILTER_LENGTH = 64;

type Parsed = { ok: true; value: string | boolean } | { ok: false; message: string };

/** A filter's value: as v3 words it for a filter sent to v3, as legacy records word it for one matched against them. */
function parseFilterValue(filter: Filter, text: string, maps: ValueMapTable): Parsed {
  switch (filter.value) {
    case 'currency':
      return /^[A-Za-z]{3,5}$/.test(text)
        ? { ok: true, value: text.toUpperCase() }
        : { ok: false, message: 'must be a currency code such as USD' };
    case 'boolean': {
      const lower = text.toLowerCase();
      return lower === 'true' || lower === 'false'
        ? { ok: true, value: lower === 'true' }
        : { ok: false, message: 'must be true or false' };
    }
    case 'word': {
      if (filter.map === undefined) return { ok: true, value: text };
      const values = maps[filter.map]!.values;
      const upper = text.toUpperCase();
      // The client may give either word of the map, in any case.
      const entry = Object.entries(values).find(
        ([v3Word, legacyWord]) => v3Word.toUpperCase() === upper || legacyWord.toUpperCase() === upper,
      );
      if (entry !== undefined) return { ok: true, value: 'v3Query' in filter ? entry[0] : entry[1] };
      if (!filter.closed) return { ok: true, value: text };
      return { ok: false, message: `must be one of ${Object.values(values).join(', ')}` };
    }
  }
}

function sameValue(recordValue: unknown, wanted: string | boolean): boolean {
  if (typeof wanted === 'boolean') return recordValue === wanted;
  return typeof recordValue === 'string' && recordValue.toUpperCase() === wanted.toUpperCase();
}

function refuse(issues: ValidationIssue[]): never {
  throw new ApiError('VALIDATION_QUERY_FAILED', { issues });
}

/** The query reader of one operation. */
export function compileQuery(
  mapping: EndpointMapping,
  conventions: LegacyConventions,
  maps: ValueMapTable,
): (query: unknown) => ReadQuery {
  const { page: pageRule, limit: limitRule } = conventions.pagination;
  const paginated = mapping.pagination === 'page-limit';
  const filters = Object.entries(mapping.filters);
  const known = new Set([...(paginated ? ['page', 'limit'] : []), ...filters.map(([name]) => name)]);
  const limitMessage = `must be a whole number from ${limitRule.min} to ${limitRule.max}`;
  const pageMessage = `must be a whole number of at least ${pageRule.min}`;

  const wholeNumber = (
    name: string,
    text: unknown,
    min: number,
    max: number,
    message: string,
    issues: ValidationIssue[],
  ): number => {
    const value = typeof text === 'string' && /^[0-9]{1,9}$/.test(text) ? Number(text) : Number.NaN;
    if (!(value >= min && value <= max)) issues.push({ path: name, code: 'invalid_value', message });
    return value;
  };

  return (raw) => {
    const query = (raw ?? {}) as Record<string, unknown>;
    const issues: ValidationIssue[] = [];
    for (const name of Object.keys(query)) {
      if (!known.has(name))
        issues.push({
          path: name,
          code: 'unrecognized_keys',
          message: `not a query parameter of this operation${known.size > 0 ? ` (it takes ${[...known].join(', ')})` : ''}`,
        });
    }
    let paging: PageQuery | null = null;
    if (paginated) {
      const page =
        query.page === undefined
          ? pageRule.default
          : wholeNumber('page', query.page, pageRule.min, Number.MAX_SAFE_INTEGER, pageMessage, issues);
      const limit =
        query.limit === undefined
          ? limitRule.default
          : wholeNumber('limit', query.limit, limitRule.min, limitRule.max, limitMessage, issues);
      paging = { page, limit };
    }
    const v3Query: Record<string, string> = {};
    const matches: [string, string | boolean][] = [];
    for (const [name, filter] of filters) {
      const text = query[name];
      if (text === undefined) continue;
      if (typeof text !== 'string' || text === '' || text.length > MAX_FILTER_LENGTH) {
        issues.push({
          path: name,
          code: 'invalid_type',
          message: `must be given once, as 1 to ${MAX_FILTER_LENGTH} characters`,
        });
        continue;
      }
      const parsed = parseFilterValue(filter, text, maps);
      if (!parsed.ok) {
        issues.push({ path: name, code: 'invalid_value', message: parsed.message });
        continue;
      }
      if ('v3Query' in filter) v3Query[filter.v3Query] = String(parsed.value);
      else matches.push([filter.field, parsed.value]);
    }
    if (issues.length > 0) refuse(issues);
    const keep =
      matches.length === 0
        ? null
        : (record: Readonly<Record<string, unknown>>) =>
            matches.every(([field, wanted]) => sameValue(record[field], wanted));
    return { paging, v3Query, keep };
  };
}
