/**
 * A legacy mapping table that must not be served: the gateway refuses to start with it
 * (LegacyMappingError, in src/lib/errors/internal-errors.ts). The message lists every problem
 * found, one per line, so one start-up attempt shows them all. `parseDeclaration` is the first
 * step of every validator: the declaration's shape, or that error.
 */
import type { z } from 'zod';

import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';

/** zod issues as `where: what` lines. */
export function describeIssues(
  prefix: string,
  issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[],
): string[] {
  return issues.map((issue) => {
    const where = [prefix, ...issue.path.map(String)].filter((part) => part !== '').join('.');
    return `${where}: ${issue.message}`;
  });
}

/** `value` as `schema` parses it, or LegacyMappingError for `tableName` listing every issue (each under `prefix`). */
export function parseDeclaration<S extends z.ZodType>(
  schema: S,
  value: unknown,
  tableName: string,
  prefix = '',
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new LegacyMappingError(tableName, describeIssues(prefix, parsed.error.issues));
  return parsed.data;
}
