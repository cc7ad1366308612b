/**
 * zod issues as every generation reports them: `details.issues[{path, code, message}]` in v3,
 * and the gateway's own legacy validation (which downgrades them to the legacy 400 but logs
 * them). Shared library code, so the gateway need not import the core to use it.
 */
import type { z } from 'zod';

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
      return issue.keys.map((key) => ({
        path: issuePath([...issue.path, key]),
        code: issue.code,
        message: `Unrecognized key: "${key}"`,
      }));
    }
    const named = issue.code === 'custom' ? issue.params?.code : undefined;
    return [
      { path: issuePath(issue.path), code: typeof named === 'string' ? named : issue.code, message: issue.message },
    ];
  });
}
