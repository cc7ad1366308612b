/**
 * Assertions on v3 responses, checked against the contract (docs/contract.md#errors-envelope,
 * docs/contract.md#v3-responses) and the error catalog (status, type, retry strategy and
 * details schema per code).
 */
import { expect } from 'vitest';
import { z } from 'zod';

import { ERROR_CATALOG, ERROR_TYPES, type ErrorCode, RETRY_STRATEGIES } from '../../src/lib/errors/v3-error-catalog.js';
import type { TestResponse } from './v3-harness.js';

/** `{ error: { code, type, message, retryStrategy, details } }` and nothing else. */
export const v3ErrorEnvelopeSchema = z
  .object({
    error: z
      .object({
        code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
        type: z.enum(ERROR_TYPES),
        message: z.string().min(1),
        retryStrategy: z.enum(RETRY_STRATEGIES),
        details: z.record(z.string(), z.unknown()),
      })
      .strict(),
  })
  .strict();
export type V3ErrorBody = z.infer<typeof v3ErrorEnvelopeSchema>['error'];

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const GENERATED_REQUEST_ID = /^req_[0-9a-f]{32}$/;
const TRACE_ID = /^[0-9a-f]{32}$/;
const NON_NEGATIVE_INTEGER = /^(0|[1-9][0-9]*)$/;
const POSITIVE_INTEGER = /^[1-9][0-9]*$/;

/** True when `value` holds a property named `name` at any depth. */
export function hasKeyDeep(value: unknown, name: string): boolean {
  if (Array.isArray(value)) return value.some((item) => hasKeyDeep(item, name));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([key, inner]) => key === name || hasKeyDeep(inner, name));
  }
  return false;
}

/**
 * The headers every v3 response carries (docs/contract.md#v3-responses): X-Request-Id, X-Trace-Id,
 * X-Request-Timestamp (ISO 8601 UTC with milliseconds), RateLimit-Limit, RateLimit-Reset.
 */
export function expectPipelineHeaders(response: TestResponse): void {
  const { headers } = response;
  expect(headers['x-request-id'], 'X-Request-Id').toMatch(REQUEST_ID);
  expect(headers['x-trace-id'], 'X-Trace-Id').toMatch(TRACE_ID);
  const timestamp = headers['x-request-timestamp'];
  expect(timestamp, 'X-Request-Timestamp').toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  expect(new Date(timestamp!).toISOString(), 'X-Request-Timestamp is a real instant').toBe(timestamp);
  expect(headers['ratelimit-limit'], 'RateLimit-Limit').toMatch(POSITIVE_INTEGER);
  expect(headers['ratelimit-reset'], 'RateLimit-Reset').toMatch(NON_NEGATIVE_INTEGER);
}

export function expectGeneratedRequestId(response: TestResponse): void {
  expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
}

export interface ExpectV3ErrorOptions {
  /**
   * Whether the request was a write (not GET/HEAD). Required for codes whose retry strategy
   * depends on it (INTERNAL_ERROR); checked against nothing otherwise.
   */
  readonly write?: boolean;
  /** When given, details must equal this exactly. */
  readonly details?: Record<string, unknown>;
}

/**
 * Asserts that `response` is the v3 error `code` exactly as the catalog defines it: status,
 * `application/json`, the strict envelope, type and retry strategy from the catalog, details
 * valid against the code's schema, no metadata anywhere, and the required headers (pipeline
 * headers; `Allow` on 405 naming details.allowed; `Retry-After` on 409 and 429; never
 * `Idempotency-Replayed`). Returns the parsed error for further checks.
 */
export function expectV3Error(
  response: TestResponse,
  code: ErrorCode,
  options: ExpectV3ErrorOptions = {},
): V3ErrorBody {
  const row = ERROR_CATALOG[code];
  expect(response.status, `HTTP status of ${code} (body: ${response.text.slice(0, 300)})`).toBe(row.status);
  expect(response.headers['content-type'], 'Content-Type of an error').toMatch(/^application\/json(;|$)/);

  let raw: unknown;
  expect(() => {
    raw = JSON.parse(response.text);
  }, 'error body is JSON').not.toThrow();
  const parsed = v3ErrorEnvelopeSchema.safeParse(raw);
  expect(parsed.success ? [] : parsed.error.issues, 'error envelope shape').toEqual([]);
  const error = parsed.data!.error;

  expect(error.code).toBe(code);
  expect(error.type).toBe(row.type);
  if (typeof row.retryStrategy === 'string') {
    expect(error.retryStrategy).toBe(row.retryStrategy);
  } else {
    expect(options.write, `${code} needs options.write: its retry strategy depends on the method`).toBeTypeOf(
      'boolean',
    );
    expect(error.retryStrategy).toBe(options.write ? row.retryStrategy.write : row.retryStrategy.read);
  }
  const details = row.details.safeParse(error.details);
  expect(details.success ? [] : details.error.issues, `details of ${code} against the catalog schema`).toEqual([]);
  if (options.details !== undefined) expect(error.details).toEqual(options.details);

  expect(hasKeyDeep(raw, 'metadata'), 'an error never carries metadata').toBe(false);
  expect(hasKeyDeep(raw, 'stack'), 'an error never carries a stack').toBe(false);

  expectPipelineHeaders(response);
  expect(response.headers['idempotency-replayed'], 'Idempotency-Replayed is never on an error').toBeUndefined();
  if (row.status === 405) {
    const allowed = error.details.allowed as string[];
    expect(response.headers.allow, 'Allow on 405').toBe(allowed.join(', '));
  }
  if (row.status === 409 || row.status === 429) {
    expect(response.headers['retry-after'], `Retry-After on ${row.status}`).toMatch(POSITIVE_INTEGER);
  }
  return error;
}
