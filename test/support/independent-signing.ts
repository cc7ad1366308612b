/**
 * JWTs and request signatures made with node:crypto alone, straight from
 * docs/contract.md#auth-tokens and docs/contract.md#auth-v3-signature, without the project's
 * signer: the tests use them to prove interoperability and to forge every kind of bad token (alg
 * none, HS256, wrong claims) the project's signer would never make.
 */
import { createHash, createHmac, type KeyObject, randomBytes, sign } from 'node:crypto';

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

export type TokenSigner = { kind: 'es256'; key: KeyObject } | { kind: 'none' } | { kind: 'hs256'; secret: Buffer };

export function makeJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  signer: TokenSigner,
): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  switch (signer.kind) {
    case 'none':
      return `${input}.`;
    case 'hs256':
      return `${input}.${createHmac('sha256', signer.secret).update(input).digest('base64url')}`;
    case 'es256':
      return `${input}.${sign('sha256', Buffer.from(input), { key: signer.key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  }
}

export interface ClaimsInput {
  readonly keyName: string;
  readonly issuer?: string;
  readonly nowSeconds?: number;
  readonly lifetimeSeconds?: number;
}

/** A well-formed header and claim set (docs/contract.md#auth-tokens); tests override single fields. */
export function standardToken(input: ClaimsInput): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  return {
    header: { alg: 'ES256', typ: 'JWT', kid: input.keyName, nonce: randomBytes(16).toString('hex') },
    payload: {
      iss: input.issuer ?? 'fx-service',
      sub: input.keyName,
      aud: ['developer-api'],
      iat: now,
      nbf: now,
      exp: now + (input.lifetimeSeconds ?? 30),
    },
  };
}

/** X-Request-Signature over the canonical string (docs/contract.md#auth-v3-signature), computed here from scratch. */
export function signCanonical(
  key: KeyObject,
  parts: { method: string; pathAndQuery: string; nonce: string; idempotencyKey?: string; body?: Buffer },
): string {
  const bodyHash = createHash('sha256')
    .update(parts.body ?? Buffer.alloc(0))
    .digest('hex');
  const canonical = [
    parts.method.toUpperCase(),
    parts.pathAndQuery,
    parts.nonce,
    parts.idempotencyKey ?? '',
    bodyHash,
  ].join('\n');
  return sign('sha256', Buffer.from(canonical), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
}

/** A v1/v2 token for a key file, signed here with node:crypto: what a legacy client sends. */
export function legacyToken(
  key: { readonly file: { readonly name: string }; readonly privateKey: KeyObject },
  lifetimeSeconds = 60,
  issuer = 'fx-service',
): string {
  const { header, payload } = standardToken({ keyName: key.file.name, issuer, lifetimeSeconds });
  return makeJwt(header, payload, { kind: 'es256', key: key.privateKey });
}
