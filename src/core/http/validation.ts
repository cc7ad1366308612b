/**
 * Step 7: input validation with zod. Failures become VALIDATION_BODY_FAILED or
 * VALIDATION_QUERY_FAILED with `details.issues[{path, code, message}]`; malformed JSON is a body
 * failure with code `invalid_json`. Money arrives as strings in v3, so JSON.parse is safe here;
 * it is the strict parse of lib/json/strict-json.ts, so a key repeated in one object is refused
 * with code `duplicate_key` and a `__proto__` key with `forbidden_key`, each at the key's path.
 * Before any schema, every key and string value is checked for text the database cannot store
 * (U+0000, unpaired surrogates: src/lib/text.ts), refused with code `invalid_text` at its path.
 */
import { z } from 'zod';

import { ApiError } from '../../lib/errors/api-error.js';
import { StrictJsonError } from '../../lib/errors/internal-errors.js';
import { toIssues } from '../../lib/errors/validation-issues.js';
import { parseStrictJson } from '../../lib/json/strict-json.js';
import { decodeUtf8, INVALID_UTF8_MESSAGE, UNSTORABLE_TEXT_CODE, unstorableTextIssues } from '../../lib/text.js';

export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  const text = decodeUtf8(raw);
  if (text === null)
    throw new ApiError('VALIDATION_BODY_FAILED', {
      issues: [{ path: '', code: UNSTORABLE_TEXT_CODE, message: INVALID_UTF8_MESSAGE }],
    });
  try {
    return parseStrictJson(text);
  } catch (error) {
    if (error instanceof StrictJsonError)
      throw new ApiError('VALIDATION_BODY_FAILED', { issues: [error.toIssue()] }, { cause: error });
    throw error;
  }
}

export function validateBody<T>(schema: z.ZodType<T>, raw: Buffer): T {
  const body = parseJsonBody(raw);
  // Such text would fail in the database as a 500 with a new resourceId on every retry.
  const textIssues = unstorableTextIssues(body);
  if (textIssues.length > 0) throw new ApiError('VALIDATION_BODY_FAILED', { issues: textIssues });
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiError('VALIDATION_BODY_FAILED', { issues: toIssues(parsed.error) });
  return parsed.data;
}

/** No body schema means no parameters: an empty body or `{}`, which most HTTP clients send for an empty POST. */
const NO_PARAMETERS = z.strictObject({}).optional();

/** Any other body fails as a body does: an unknown field at its own path, a non-object, malformed JSON. */
export function validateNoParameters(raw: Buffer): undefined {
  validateBody(NO_PARAMETERS, raw);
  return undefined;
}

export function validateQuery<T>(schema: z.ZodType<T>, query: unknown): T {
  // `%00` decodes to U+0000, which a filter would carry into SQL.
  const textIssues = unstorableTextIssues(query ?? {});
  if (textIssues.length > 0) throw new ApiError('VALIDATION_QUERY_FAILED', { issues: textIssues });
  const parsed = schema.safeParse(query ?? {});
  if (!parsed.success) throw new ApiError('VALIDATION_QUERY_FAILED', { issues: toIssues(parsed.error) });
  return parsed.data;
}
