/**
 * API JWTs (docs/contract.md#auth-tokens): ES256, `kid` = `sub` = the key name, a single-use
 * `nonce` in the header, `aud` ['developer-api'], one of the configured issuers, and a short
 * lifetime (60 s in v3, 120 s in v1/v2). Verification is shared by the core and the gateway;
 * each maps the typed failure to its own generation's error. Single use (the nonce store) is
 * the caller's step.
 */
import { type KeyObject, sign, verify } from 'node:crypto';

import { type TokenFailure, TokenVerificationError } from '../errors/internal-errors.js';
import type { ErrorCode } from '../errors/v3-error-catalog.js';
import { parseStrictJson } from '../json/strict-json.js';
import { randomHex } from '../random.js';

export const JWT_AUDIENCE = 'developer-api';
/** Clock skew tolerated on iat, nbf and exp, in seconds. */
export const JWT_CLOCK_SKEW_SECONDS = 5;
const NONCE_PATTERN = /^[0-9a-f]{32}$/;
/** `JWT` in any case (a media type name); without the `u` flag, `i` folds no non-ASCII letter into these. */
const TYP_PATTERN = /^JWT$/i;

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

export interface VerifiedToken {
  readonly keyName: string;
  readonly nonce: string;
  /** `iat`, seconds since the epoch: the single-use rule compares it with the nonce store's epoch. */
  readonly issuedAt: number;
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

export interface VerifyOptions {
  /** The `iss` values accepted (FXGATE_JWT_ISSUER); a token must carry one of them. */
  readonly issuers: readonly string[];
  readonly maxLifetimeSeconds: number;
  readonly resolveKey: (keyName: string) => Promise<KeyObject | null>;
  readonly nowSeconds?: number;
}

/** A compact JWS segment: unpadded base64url, nothing else (Buffer's decoder would skip stray characters). */
const SEGMENT_PATTERN = /^[A-Za-z0-9_-]+$/;
/** An ES256 signature: r and s of 32 bytes each (IEEE P-1363), 86 base64url characters. */
const ES256_SIGNATURE_BYTES = 64;

function malformed(message: string): TokenVerificationError {
  return new TokenVerificationError('TOKEN_MALFORMED', message);
}

/** A segment's JSON object, or null when it is not one; one with a repeated name is not (RFC 7515 4 and RFC 7519 4 let a verifier refuse it). */
function jsonObjectOf(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = parseStrictJson(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/**
 * ECDSA P-256 / SHA-256 over the signing input, on libuv's thread pool (node:crypto's callback
 * form): measured end to end, a request costs less CPU this way than verifying on the event loop
 * (docs/benchmarks.md#verifying-on-the-thread-pool), and the loop serves other requests meanwhile.
 */
function verifyEs256(signingInput: string, key: KeyObject, signature: Buffer): Promise<boolean> {
  const data = Buffer.from(signingInput, 'ascii');
  return new Promise((resolve) => {
    verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature, (error, valid) => resolve(!error && valid));
  });
}

function numericDate(claims: Record<string, unknown>, name: 'iat' | 'nbf' | 'exp'): number {
  const value = claims[name];
  if (typeof value !== 'number' || !Number.isFinite(value)) throw malformed(`${name} must be a NumericDate`);
  return value;
}

/** A token whose header passed (parseApiToken): what a verifier needs before and after it knows the key. */
export interface ParsedApiToken {
  readonly keyName: string;
  readonly nonce: string;
  readonly signingInput: string;
  readonly encodedClaims: string;
  readonly signature: Buffer;
}

/**
 * Reads a compact JWS API token's header, before any key lookup: alg exactly ES256 (`none`,
 * HS256 and the rest never reach a verifier), no `crit` extension (none is understood), typ JWT
 * (required, in any case: RFC 7515 4.1.9), a kid and a 32-hex nonce. Throws a
 * TokenVerificationError.
 */
export function parseApiToken(token: string): ParsedApiToken {
  const segments = token.split('.');
  if (segments.length !== 3 || !segments.every((segment) => SEGMENT_PATTERN.test(segment)))
    throw malformed('not a JWT');
  const [encodedHeader, encodedClaims, encodedSignature] = segments as [string, string, string];
  const header = jsonObjectOf(encodedHeader);
  if (!header) throw malformed('not a JWT');
  if (header.alg !== 'ES256') throw malformed('alg must be ES256');
  if (header.crit !== undefined) throw malformed('no crit extension is supported');
  // Required: every documented recipe and every fxgate signer sends it, and it tells an API token from another JWS the same key signed.
  if (typeof header.typ !== 'string' || !TYP_PATTERN.test(header.typ)) throw malformed('typ must be JWT');
  if (typeof header.kid !== 'string' || header.kid.length === 0)
    throw new TokenVerificationError('KEY_MISSING', 'kid missing');
  const nonce = header.nonce;
  if (typeof nonce !== 'string' || !NONCE_PATTERN.test(nonce)) throw malformed('nonce must be 32 lower-case hex');
  return {
    keyName: header.kid,
    nonce,
    signingInput: `${encodedHeader}.${encodedClaims}`,
    encodedClaims,
    signature: Buffer.from(encodedSignature, 'base64url'),
  };
}

export type CheckOptions = Omit<VerifyOptions, 'resolveKey'>;

/**
 * Checks a parsed token against its key: the signature before any claim, then the claims as
 * jose's rules for iss, sub, aud, exp and nbf would, with the skew tolerance. Throws a
 * TokenVerificationError.
 */
export async function checkApiToken(
  parsed: ParsedApiToken,
  key: KeyObject,
  options: CheckOptions,
): Promise<VerifiedToken> {
  const { keyName, nonce, signature } = parsed;
  if (signature.length !== ES256_SIGNATURE_BYTES || !(await verifyEs256(parsed.signingInput, key, signature))) {
    throw new TokenVerificationError('SIGNATURE_INVALID', 'token signature invalid');
  }
  const claims = jsonObjectOf(parsed.encodedClaims);
  if (!claims) throw malformed('the claims are not a JSON object');
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const iat = numericDate(claims, 'iat');
  const nbf = numericDate(claims, 'nbf');
  const exp = numericDate(claims, 'exp');
  if (typeof claims.iss !== 'string' || !options.issuers.includes(claims.iss)) throw malformed('unexpected iss');
  if (claims.sub !== keyName) throw malformed('sub must be the kid');
  const aud = claims.aud;
  if (!Array.isArray(aud) || aud.length !== 1 || aud[0] !== JWT_AUDIENCE)
    throw malformed(`aud must be ["${JWT_AUDIENCE}"]`);
  if (exp <= now - JWT_CLOCK_SKEW_SECONDS) throw new TokenVerificationError('EXPIRED', 'token expired');
  if (nbf > now + JWT_CLOCK_SKEW_SECONDS) throw malformed('not valid yet (nbf)');
  if (iat > now + JWT_CLOCK_SKEW_SECONDS) throw malformed('iat is in the future');
  if (exp - iat > options.maxLifetimeSeconds)
    throw new TokenVerificationError('LIFETIME_TOO_LONG', `lifetime over ${options.maxLifetimeSeconds} s`);
  return { keyName, nonce, issuedAt: iat, expiresAt: exp };
}

/**
 * Verifies a compact JWS API token by the rules above: parseApiToken, the key, checkApiToken.
 * Parsed and checked here, with the signature checked by node:crypto rather than jose's
 * jwtVerify: jose verifies through WebCrypto, which costs more CPU per token, and every request
 * of every generation verifies one.
 */
export async function verifyApiToken(token: string, options: VerifyOptions): Promise<VerifiedToken> {
  const parsed = parseApiToken(token);
  const key = await options.resolveKey(parsed.keyName);
  if (!key) throw new TokenVerificationError('KEY_UNKNOWN', 'unknown or revoked key');
  return checkApiToken(parsed, key, options);
}

export interface SignOptions {
  readonly privateKey: KeyObject;
  readonly keyName: string;
  /** The one `iss` the token carries; fxgate signs with the first configured issuer. */
  readonly issuer: string;
  readonly lifetimeSeconds: number;
  readonly nowSeconds?: number;
  readonly nonce?: string;
}

export function newNonce(): string {
  return randomHex(16);
}

/**
 * Makes a fresh API token; what a client does per request. Signed with node:crypto directly
 * rather than jose's SignJWT: jose signs through WebCrypto, whose per-call job costs more CPU
 * than a one-shot ECDSA sign, and the gateway signs a token for every upstream call. The
 * encoding is the compact JWS of RFC 7515 (verified by jose in the core and in the tests).
 */
export async function signApiToken(options: SignOptions): Promise<{ token: string; nonce: string }> {
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const nonce = options.nonce ?? newNonce();
  const header = { alg: 'ES256', typ: 'JWT', kid: options.keyName, nonce };
  const claims = {
    iss: options.issuer,
    sub: options.keyName,
    aud: [JWT_AUDIENCE],
    iat: now,
    nbf: now,
    exp: now + options.lifetimeSeconds,
  };
  const signingInput = `${base64UrlJson(header)}.${base64UrlJson(claims)}`;
  const signature = sign('sha256', Buffer.from(signingInput), { key: options.privateKey, dsaEncoding: 'ieee-p1363' });
  return { token: `${signingInput}.${signature.toString('base64url')}`, nonce };
}

function base64UrlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
