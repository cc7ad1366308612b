/**
 * Random bytes for ids, nonces and trace ids, handed out from a buffer that
 * crypto.randomFillSync refills POOL_BYTES at a time. Shared library code: no state but the pool.
 *
 * Why: each crypto.randomBytes call is a trip through OpenSSL's generator, and the gateway makes
 * three per legacy request (request id, trace id, its v3 token's nonce). node:crypto's
 * randomUUID pools its entropy the same way.
 * Every byte is handed out once: the offset only moves forward until the next refill.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
/** The most one call may take, so that a refill always serves the call that caused it. */
export const MAX_POOLED_RANDOM_BYTES = 256;

const pool = Buffer.allocUnsafe(POOL_BYTES);
let offset = POOL_BYTES;

function reserve(size: number): number {
  if (!Number.isInteger(size) || size < 1 || size > MAX_POOLED_RANDOM_BYTES) {
    throw new RangeError(`random byte count must be a whole number from 1 to ${MAX_POOLED_RANDOM_BYTES}, got ${size}`);
  }
  if (offset + size > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const start = offset;
  offset += size;
  return start;
}

/** `size` fresh random bytes, in a buffer of their own. */
export function randomBytesPooled(size: number): Buffer {
  const start = reserve(size);
  return Buffer.from(pool.subarray(start, start + size));
}

/** `size` fresh random bytes as lower-case hex (2 * size characters). */
export function randomHex(size: number): string {
  const start = reserve(size);
  return pool.toString('hex', start, start + size);
}
