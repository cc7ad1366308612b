/**
 * A legacy mapping table that must not be served: the gateway refuses to start with it
 * (LegacyMappingError, in src/lib/errors/internal-errors.ts). The message lists every problem
 * found, one per line, so one start-up attempt shows them all.
 */
export { LegacyMappingError } from '../../../lib/errors/internal-errors.js';

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
