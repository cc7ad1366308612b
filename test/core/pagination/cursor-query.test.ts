import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { validateQuery } from '../../../src/core/http/validation.js';
import { cursorQuerySchema, DEFAULT_LIMIT, requestedCursor } from '../../../src/core/pagination/cursor-query.js';
import { ApiError } from '../../../src/lib/errors/api-error.js';

const schema = cursorQuerySchema();

/** The issues of the VALIDATION_QUERY_FAILED that fn throws; fails the test for anything else. */
function issuesOf(fn: () => unknown): { path: string; code: string; message: string }[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.code).toBe('VALIDATION_QUERY_FAILED');
    expect(apiError.statusCode).toBe(400);
    return apiError.details.issues as { path: string; code: string; message: string }[];
  }
  throw new Error('expected VALIDATION_QUERY_FAILED, nothing was thrown');
}

describe('cursor query parameters', () => {
  it('defaults limit to 25 and leaves the cursors unset', () => {
    expect(validateQuery(schema, {})).toEqual({ limit: DEFAULT_LIMIT });
    expect(DEFAULT_LIMIT).toBe(25);
  });

  it('accepts limits 1 to 100 given as integer strings', () => {
    expect(validateQuery(schema, { limit: '1' }).limit).toBe(1);
    expect(validateQuery(schema, { limit: '100' }).limit).toBe(100);
    expect(validateQuery(schema, { limit: '7', startingAfter: 'abc.def' })).toEqual({
      limit: 7,
      startingAfter: 'abc.def',
    });
    expect(validateQuery(schema, { endingBefore: 'abc.def' })).toEqual({ limit: 25, endingBefore: 'abc.def' });
  });

  it.each([
    ['0', 'too_small'],
    ['101', 'too_big'],
    ['1000000000000000000000000', 'too_big'],
    ['abc', 'invalid_format'],
    ['1.5', 'invalid_format'],
    ['-1', 'invalid_format'],
    ['', 'invalid_format'],
    [' 5', 'invalid_format'],
    ['1e2', 'invalid_format'],
  ])('rejects limit %j rather than clamping or rounding it', (limit, code) => {
    expect(issuesOf(() => validateQuery(schema, { limit }))).toEqual([
      { path: 'limit', code, message: expect.any(String) },
    ]);
  });

  it('rejects a repeated parameter, which arrives as an array', () => {
    expect(issuesOf(() => validateQuery(schema, { limit: ['5', '6'] }))).toEqual([
      { path: 'limit', code: 'invalid_type', message: expect.any(String) },
    ]);
  });

  it('rejects startingAfter and endingBefore together, naming both', () => {
    const issues = issuesOf(() => validateQuery(schema, { startingAfter: 'a.b', endingBefore: 'c.d' }));
    expect(issues.map((issue) => [issue.path, issue.code])).toEqual([
      ['startingAfter', 'mutually_exclusive'],
      ['endingBefore', 'mutually_exclusive'],
    ]);
    expect(issues[0]?.message).toMatch(/mutually exclusive/);
  });

  it('rejects empty and oversized cursors by parameter name', () => {
    expect(issuesOf(() => validateQuery(schema, { startingAfter: '' })).map((issue) => issue.path)).toEqual([
      'startingAfter',
    ]);
    expect(
      issuesOf(() => validateQuery(schema, { endingBefore: 'x'.repeat(10_000) })).map((issue) => issue.path),
    ).toEqual(['endingBefore']);
  });

  it('rejects unknown parameters, so that a misspelt one is not silently ignored', () => {
    expect(issuesOf(() => validateQuery(schema, { startingafter: 'a.b', limit: '5' }))).toEqual([
      { path: 'startingafter', code: 'unrecognized_keys', message: 'Unrecognized key: "startingafter"' },
    ]);
  });

  it('reports every fault at once', () => {
    expect(
      issuesOf(() => validateQuery(schema, { limit: '0', startingAfter: '' }))
        .map((issue) => issue.path)
        .sort(),
    ).toEqual(['limit', 'startingAfter']);
  });

  it("merges a route's own filters with the pagination parameters", () => {
    const trades = cursorQuerySchema({
      status: z.enum(['pending', 'completed']).optional(),
      currency: z
        .string()
        .regex(/^[A-Z]{3,4}$/)
        .optional(),
    });
    const parsed = validateQuery(trades, { status: 'pending', limit: '10', startingAfter: 'a.b' });
    expect(parsed).toEqual({ status: 'pending', limit: 10, startingAfter: 'a.b' });
    const typed: { limit: number; status?: 'pending' | 'completed' | undefined } = parsed;
    expect(typed.limit).toBe(10);
    expect(
      issuesOf(() => validateQuery(trades, { status: 'nope', currency: 'usd' }))
        .map((issue) => issue.path)
        .sort(),
    ).toEqual(['currency', 'status']);
    expect(
      issuesOf(() => validateQuery(trades, { status: 'pending', startingAfter: 'a.b', endingBefore: 'c.d' })).map(
        (issue) => issue.code,
      ),
    ).toEqual(['mutually_exclusive', 'mutually_exclusive']);
  });

  it('names the cursor a hand-built query carries, and refuses two', () => {
    expect(requestedCursor({ limit: 5 })).toBeNull();
    expect(requestedCursor({ limit: 5, startingAfter: 'a.b' })).toEqual({ param: 'startingAfter', value: 'a.b' });
    expect(requestedCursor({ limit: 5, endingBefore: 'c.d' })).toEqual({ param: 'endingBefore', value: 'c.d' });
    expect(
      issuesOf(() => requestedCursor({ limit: 5, startingAfter: 'a.b', endingBefore: 'c.d' })).map(
        (issue) => issue.path,
      ),
    ).toEqual(['startingAfter', 'endingBefore']);
  });
});
