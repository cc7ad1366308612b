/**
 * The query parameters of the cursor-paginated v3 lists (docs/contract.md#pagination-cursor):
 * limit, startingAfter and endingBefore. Routes add their own filters with
 * cursorQuerySchema({ status: ... }) and parse with validateQuery (src/core/http/validation.ts), so
 * every list rejects bad input the same way: 400 VALIDATION_QUERY_FAILED, one issue per fault, each
 * issue's path the parameter's name.
 */
import { z } from 'zod';

import { ApiError } from '../../lib/errors/api-error.js';
import { MAX_CURSOR_LENGTH } from './cursor-codec.js';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

/** What paginate needs from a parsed query; a route's parsed query satisfies it as it is. */
export interface CursorQuery {
  readonly limit: number;
  readonly startingAfter?: string | undefined;
  readonly endingBefore?: string | undefined;
}

export type CursorParam = 'startingAfter' | 'endingBefore';

/** Both parameters are at fault, so each gets an issue under its own name. */
const EXCLUSION_ISSUES = (['startingAfter', 'endingBefore'] as const).map((path) => ({
  path,
  code: 'mutually_exclusive',
  message: 'startingAfter and endingBefore are mutually exclusive: pass at most one of them.',
}));

const limit = z
  .string()
  .regex(/^[0-9]+$/, 'limit must be a whole number')
  .transform(Number)
  // Over 100 is an error, not clamped to 100: the strict choice, so that a client asking for more
  // than it can get learns so at once instead of mistaking a short page for the page size.
  .pipe(z.number().min(1, 'limit must be at least 1').max(MAX_LIMIT, `limit must be at most ${MAX_LIMIT}`))
  .default(DEFAULT_LIMIT)
  .meta({
    description: `The most records on the page, 1 to ${MAX_LIMIT}; more is refused, never clamped.`,
    // The document says what the client sends: an integer (the string pattern above is how a query string is read).
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      delete jsonSchema.pattern;
      Object.assign(jsonSchema, { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT });
    },
  });

const cursor = z
  .string()
  .min(1, 'a cursor must not be empty')
  .max(MAX_CURSOR_LENGTH, 'this is not a cursor this API issued')
  .optional()
  .meta({ description: 'A cursor from pagination, passed back verbatim.' });

/** The pagination parameters, for a route that builds its schema by hand. */
export const cursorQueryFields = { limit, startingAfter: cursor, endingBefore: cursor };

/**
 * The schema of a paginated list's query: the pagination parameters plus the route's filters.
 * Unknown parameters are rejected: a misspelt filter must not quietly return the unfiltered list.
 */
export function cursorQuerySchema<Extra extends z.core.$ZodLooseShape = Record<never, never>>(extra?: Extra) {
  return z.strictObject({ ...cursorQueryFields, ...(extra ?? ({} as Extra)) }).superRefine((value, ctx) => {
    if (bothCursors(value)) {
      // params.code names the issue for clients (see toIssues in validation.ts).
      for (const { path, code, message } of EXCLUSION_ISSUES)
        ctx.addIssue({ code: 'custom', path: [path], message, params: { code } });
    }
  });
}

/** The one cursor a query carries, if any. Throws like the parser for a query built by hand. */
export function requestedCursor(query: CursorQuery): { readonly param: CursorParam; readonly value: string } | null {
  if (bothCursors(query)) {
    throw new ApiError('VALIDATION_QUERY_FAILED', { issues: [...EXCLUSION_ISSUES] });
  }
  if (query.startingAfter !== undefined) return { param: 'startingAfter', value: query.startingAfter };
  if (query.endingBefore !== undefined) return { param: 'endingBefore', value: query.endingBefore };
  return null;
}

function bothCursors(query: { readonly [P in CursorParam]?: unknown }): boolean {
  return query.startingAfter !== undefined && query.endingBefore !== undefined;
}
