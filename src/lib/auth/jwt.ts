/**
 * API JWTs (spec 5.2, DESIGN 3.1): ES256, `kid` = `sub` = the key name, a single-use `nonce` in
 * the header, `aud` ['developer-api'], a configured issuer, and a short lifetime (60 s in v3,
 * 120 s in v1/v2). Verification is shared by the core and the gateway; each maps the typed
 * failure to its own generation's error. Single use (the nonce store) is the caller's step.
 */
import { randomBytes, sign, type KeyObject } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import type { ErrorCode } from '../errors/catalog.js';

export const JWT_AUDIENCE = 'developer-api';
/** Clock skew tolerated on iat, nbf and exp, in seconds. */
export const JWT_CLOCK_SKEW_SECONDS = 5;
const NONCE_PATTERN = /^[0-9a-f]{32}$/;

export type TokenFailure =
  | 'TOKEN_MALFORMED' // not a compact JWS, wrong alg or typ, bad nonce, bad claims
  | 'KEY_MISSING' // no kid
  | 'KEY_UNKNOWN' // kid names no usable key
  | 'SIGNATURE_INVALID'
  | 'EXPIRED'
  | 'LIFETIME_TOO_LONG';

/**
 * The v3 code each failure is reported as: by the core directly, and by the gateway as the
 * code its legacy error tables downgrade.
 */
export const TOKEN_FAILURE_ERROR_CODES: Readonly<Record<TokenFailure, ErrorCode>> = {
  TOKEN_MALFORMED: 'AUTH_TOKEN_INVALID',
  KEY_MISSING: 'AUTH_API_KEY_MISSING',
  KEY_UNKNOWN: 'AUTH_API_KEY_INVALID',
  SIGNATURE_INVALID: 'AUTH_TOKEN_INVALID',
  EXPIRED: 'AUTH_TOKEN_EXPIRED',
  LIFETIME_TOO_LONG: 'AUTH_TOKEN_INVALID',
};

export class TokenVerificationError extends Error {
  readonly code = 'FXGATE_TOKEN_INVALID';
  constructor(readonly failure: TokenFailure, message: string) {
    super(message);
    this.name = 'TokenVerificationError';
  }
}

export interface VerifiedToken {
  readonly keyName: string;
  readonly nonce: string;
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

export interface VerifyOptions {
  readonly issuer: string;
  readonly maxLifetimeSeconds: number;
  readonly resolveKey: (keyName: string) => Promise<KeyObject | null>;
  readonly nowSeconds?: number;
}

export async function verifyApiToken(token: string, options: VerifyOptions): Promise<VerifiedToken> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new TokenVerificationError('TOKEN_MALFORMED', 'not a JWT');
  }
  // Checked before any key lookup: `none`, HS256 and friends never reach a verifier.
  if (header.alg !== 'ES256') throw new TokenVerificationError('TOKEN_MALFORMED', 'alg must be ES256');
  if (header.typ !== undefined && header.typ !== 'JWT') throw new TokenVerificationError('TOKEN_MALFORMED', 'typ must be JWT');
  if (typeof header.kid !== 'string' || header.kid.length === 0) throw new TokenVerificationError('KEY_MISSING', 'kid missing');
  const nonce = header.nonce;
  if (typeof nonce !== 'string' || !NONCE_PATTERN.test(nonce)) throw new TokenVerificationError('TOKEN_MALFORMED', 'nonce must be 32 lower-case hex');
  const keyName = header.kid;
  const key = await options.resolveKey(keyName);
  if (!key) throw new TokenVerificationError('KEY_UNKNOWN', 'unknown or revoked key');

  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload } = await jwtVerify(token, key, {
      algorithms: ['ES256'],
      audience: JWT_AUDIENCE,
      issuer: options.issuer,
      subject: keyName,
      clockTolerance: JWT_CLOCK_SKEW_SECONDS,
      currentDate: new Date(now * 1000),
      requiredClaims: ['iat', 'nbf', 'exp', 'sub', 'aud', 'iss'],
    }));
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw new TokenVerificationError('EXPIRED', 'token expired');
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) throw new TokenVerificationError('SIGNATURE_INVALID', 'token signature invalid');
    throw new TokenVerificationError('TOKEN_MALFORMED', error instanceof Error ? error.message : 'invalid token');
  }
  const { iat, exp, aud } = payload as { iat: number; exp: number; aud: unknown };
  if (!Array.isArray(aud) || aud.length !== 1) throw new TokenVerificationError('TOKEN_MALFORMED', 'aud must be a one-element array');
  if (iat > now + JWT_CLOCK_SKEW_SECONDS) throw new TokenVerificationError('TOKEN_MALFORMED', 'iat is in the future');
  if (exp - iat > options.maxLifetimeSeconds) throw new TokenVerificationError('LIFETIME_TOO_LONG', `lifetime over ${options.maxLifetimeSeconds} s`);
  return { keyName, nonce, expiresAt: exp };
}

export interface SignOptions {
  readonly privateKey: KeyObject;
  readonly keyName: string;
  readonly issuer: string;
  readonly lifetimeSeconds: number;
  readonly nowSeconds?: number;
  readonly nonce?: string;
}

export function newNonce(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Makes a fresh API token; what a client does per request. Signed with node:crypto directly
 * rather than jose's SignJWT: jose signs through WebCrypto, whose per-call job costs about twice
 * the CPU of a one-shot ECDSA sign, and the gateway signs a token for every upstream call. The
 * encoding is the compact JWS of RFC 7515 (verified by jose in the core and in the tests).
 */
export async function signApiToken(options: SignOptions): Promise<{ token: string; nonce: string }> {
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const nonce = options.nonce ?? newNonce();
  const header = { alg: 'ES256', typ: 'JWT', kid: options.keyName, nonce };
  const claims = { iss: options.issuer, sub: options.keyName, aud: [JWT_AUDIENCE], iat: now, nbf: now, exp: now + options.lifetimeSeconds };
  const signingInput = `${base64UrlJson(header)}.${base64UrlJson(claims)}`;
  const signature = sign('sha256', Buffer.from(signingInput), { key: options.privateKey, dsaEncoding: 'ieee-p1363' });
  return { token: `${signingInput}.${signature.toString('base64url')}`, nonce };
}

function base64UrlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
