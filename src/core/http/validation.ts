/**
 * Step 7: input validation with zod. Failures become VALIDATION_BODY_FAILED or
 * VALIDATION_QUERY_FAILED with `details.issues[{path, code, message}]`; malformed JSON is a body
 * failure with code `invalid_json`. Money arrives as strings in v3, so JSON.parse is safe here.
 */
import type { z } from 'zod';
import { ApiError } from '../../lib/errors/api-error.js';

export interface ValidationIssue {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

/** `['metadata', 'a']` -> `metadata.a`; `['items', 0]` -> `items[0]`. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, part) => {
    if (typeof part === 'number') return `${out}[${part}]`;
    const name = String(part);
    return out === '' ? name : `${out}.${name}`;
  }, '');
}

/**
 * zod issues as the API reports them. An unknown field is reported at its own path (one issue
 * per field), as for operations without a schema; a custom rule names its issue code in
 * `params.code` (e.g. `mutually_exclusive`) instead of zod's generic `custom`.
 */
export function toIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.flatMap((issue): ValidationIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: issuePath([...issue.path, key]), code: issue.code, message: `Unrecognized key: "${key}"` }));
    }
    const named = issue.code === 'custom' ? issue.params?.code : undefined;
    return [{ path: issuePath(issue.path), code: typeof named === 'string' ? named : issue.code, message: issue.message }];
  });
}

export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch (error) {
    throw new ApiError('VALIDATION_BODY_FAILED', {
      issues: [{ path: '', code: 'invalid_json', message: error instanceof Error ? error.message : 'malformed JSON' }],
    });
  }
}

export function validateBody<T>(schema: z.ZodType<T>, raw: Buffer): T {
  const parsed = schema.safeParse(parseJsonBody(raw));
  if (!parsed.success) throw new ApiError('VALIDATION_BODY_FAILED', { issues: toIssues(parsed.error) });
  return parsed.data;
}

export function validateQuery<T>(schema: z.ZodType<T>, query: unknown): T {
  const parsed = schema.safeParse(query ?? {});
  if (!parsed.success) throw new ApiError('VALIDATION_QUERY_FAILED', { issues: toIssues(parsed.error) });
  return parsed.data;
}
