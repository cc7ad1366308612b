/**
 * The second line of defence against a duplicate write: money-moving rows store their
 * Idempotency-Key and request fingerprint under a unique constraint, so a retry that the
 * idempotency store no longer remembers finds the row an earlier attempt wrote. Part of the core;
 * the domain (trading, money movement) reads it, the HTTP layer does not.
 */
import { isUniqueViolation } from '../lib/db/constraint-errors.js';
import { ApiError } from '../lib/errors/api-error.js';

/**
 * The row an earlier attempt with this Idempotency-Key wrote answers only the same request; any
 * other request under that key is a key reuse.
 */
export function replayOrMismatch<Row extends { readonly request_fingerprint: string }>(
  existing: Row,
  fingerprint: string,
): Row {
  if (existing.request_fingerprint !== fingerprint) {
    throw new ApiError('IDEMPOTENCY_MISMATCH', { originalRequestHash: existing.request_fingerprint });
  }
  return existing;
}

/**
 * When `error` is this attempt's insert losing the race on the Idempotency-Key's unique constraint
 * to a concurrent (or earlier) attempt whose store record was lost: that attempt's row, through
 * replayOrMismatch. Null for any other error, or when the row is not found.
 */
export async function raceWinner<Row extends { readonly request_fingerprint: string }>(
  error: unknown,
  idempotency: { readonly key: string; readonly fingerprint: string },
  findByKey: (key: string) => Promise<Row | null>,
): Promise<Row | null> {
  if (!isUniqueViolation(error, 'idempotency_key')) return null;
  const winner = await findByKey(idempotency.key);
  return winner && replayOrMismatch(winner, idempotency.fingerprint);
}
