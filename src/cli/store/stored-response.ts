/**
 * The one wire form of a StoredResponse. Both stores keep it as this JSON text, so that a replay
 * is byte-identical whichever store holds it and a record written by an older process still reads.
 */
import { CorruptStoreRecordError } from '../../lib/errors/internal-errors.js';
import type { StoredResponse } from '../../lib/store/ephemeral-store.js';

export function encodeStoredResponse(response: StoredResponse): string {
  // Named fields only: extra properties on the caller's object must not leak into the record.
  return JSON.stringify({
    statusCode: response.statusCode,
    headers: response.headers,
    bodyBase64: response.bodyBase64,
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function decodeStoredResponse(text: string): StoredResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CorruptStoreRecordError('Stored response is not JSON', { cause: error });
  }
  if (
    !isRecord(parsed) ||
    !Number.isInteger(parsed.statusCode) ||
    typeof parsed.bodyBase64 !== 'string' ||
    !isRecord(parsed.headers)
  ) {
    throw new CorruptStoreRecordError('Stored response does not have the expected shape');
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed.headers)) {
    if (typeof value !== 'string') throw new CorruptStoreRecordError(`Stored response header ${name} is not a string`);
    headers[name] = value;
  }
  return { statusCode: parsed.statusCode as number, headers, bodyBase64: parsed.bodyBase64 };
}
