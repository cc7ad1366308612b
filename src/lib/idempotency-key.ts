import { createHash } from 'node:crypto';

/**
 * Idempotency keys, shared by the core (v3 keys) and the gateway (v2 keys), so a v2 key the
 * gateway accepts is always one v3 would accept, and both fingerprint a request the same way.
 */

/** The syntax (docs/contract.md#idempotency-v3): 1 to 255 characters of `A-Z a-z 0-9 - _ . :`. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9\-_.:]{1,255}$/;

/** SHA-256 of method, path and query, and raw body, as `sha256:<hex>`. */
export function requestFingerprint(method: string, pathAndQuery: string, body: Buffer): string {
  return `sha256:${createHash('sha256').update(`${method}\n${pathAndQuery}\n`).update(body).digest('hex')}`;
}
