/**
 * The v3 request signature (docs/contract.md#auth-v3-signature): ECDSA P-256/SHA-256 in IEEE
 * P-1363 form (64 bytes, r then s), base64url without padding, over this canonical string, lines
 * joined by `\n`:
 *
 *   METHOD
 *   path and query exactly as sent
 *   the JWT header's nonce
 *   Idempotency-Key value, or empty
 *   lower-case hex SHA-256 of the raw body bytes (of the empty string when there is none)
 *
 * The verifier hashes the bytes it received, before any parsing, so a re-serialised body fails.
 */
import { createHash, type KeyObject, sign, verify } from 'node:crypto';

export interface SignedRequestParts {
  readonly method: string;
  readonly pathAndQuery: string;
  readonly nonce: string;
  readonly idempotencyKey: string | undefined;
  readonly body: Uint8Array | undefined;
}

const EMPTY_SHA256 = createHash('sha256').digest('hex');
const SIGNATURE_PATTERN = /^[A-Za-z0-9_-]{86}$/; // 64 bytes in unpadded base64url

export function sha256Hex(body: Uint8Array | undefined): string {
  return body && body.length > 0 ? createHash('sha256').update(body).digest('hex') : EMPTY_SHA256;
}

export function canonicalRequestString(parts: SignedRequestParts): string {
  return [
    parts.method.toUpperCase(),
    parts.pathAndQuery,
    parts.nonce,
    parts.idempotencyKey ?? '',
    sha256Hex(parts.body),
  ].join('\n');
}

export function signRequest(privateKey: KeyObject, parts: SignedRequestParts): string {
  const signature = sign('sha256', Buffer.from(canonicalRequestString(parts)), {
    key: privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  return signature.toString('base64url');
}

export type SignatureCheck = 'VALID' | 'SIGNATURE_MALFORMED' | 'SIGNATURE_INVALID';

/**
 * Verifies on libuv's thread pool (the callback form of crypto.verify): an ECDSA check is the
 * most expensive step of a request, and off the event loop it overlaps with other requests' I/O.
 */
export async function verifyRequestSignature(
  publicKey: KeyObject,
  parts: SignedRequestParts,
  signature: string,
): Promise<SignatureCheck> {
  if (!SIGNATURE_PATTERN.test(signature)) return 'SIGNATURE_MALFORMED';
  const data = Buffer.from(canonicalRequestString(parts));
  const ok = await new Promise<boolean>((resolve, reject) => {
    verify(
      'sha256',
      data,
      { key: publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature, 'base64url'),
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
  return ok ? 'VALID' : 'SIGNATURE_INVALID';
}
