/**
 * A legacy mapping table that must not be served: the gateway refuses to start with it. The
 * message lists every problem found, one per line, so one start-up attempt shows them all.
 */
export class LegacyMappingError extends Error {
  readonly code = 'FXGATE_LEGACY_MAPPING_INVALID';
  constructor(
    readonly table: string,
    readonly problems: readonly string[],
  ) {
    super(
      `${table} is not a valid legacy mapping table (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n- ${problems.join('\n- ')}`,
    );
    this.name = 'LegacyMappingError';
  }
}

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
