/**
 * Recognising PostgreSQL constraint violations (both drivers report the SQLSTATE as `code` and
 * the constraint's name as `constraint`). The money tables rely on unique constraints as the
 * last line against duplicates, and their callers turn a violation into a replay.
 */
const UNIQUE_VIOLATION = '23505';

/** True when `error` is a unique violation of a constraint whose name contains `constraint`. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  return e?.code === UNIQUE_VIOLATION && typeof e.constraint === 'string' && e.constraint.includes(constraint);
}
