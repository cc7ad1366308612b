/**
 * The API token codec (src/lib/auth/jwt.ts) on its own: what it accepts and how it names each
 * refusal, and a differential test against jose, the reference JWS implementation, which signs
 * and verifies the same tokens independently.
 */
import { createHmac, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

import fc from 'fast-check';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';

import {
  JWT_AUDIENCE,
  JWT_CLOCK_SKEW_SECONDS,
  newNonce,
  signApiToken,
  verifyApiToken,
} from '../../../src/lib/auth/jwt.js';
import { type TokenFailure } from '../../../src/lib/errors/internal-errors.js';

const ISSUER = 'fxgate-test';
/** The verifier's list: fxgate's own issuer first, then a second one it also accepts (as it does the legacy service's). */
const ISSUERS = [ISSUER, 'legacy-test'] as const;
const KEY_NAME = 'org/00000000-0000-4000-8000-000000000001/apiKey/00000000-0000-4000-8000-000000000002';
const MAX_LIFETIME = 60;
const NOW = 1_800_000_000;
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A token of any header and claims, ES256-signed by `key` (so only what the test changes is wrong). */
function craft(header: unknown, claims: unknown, key: KeyObject = privateKey): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

function goodHeader(overrides: Record<string, unknown> = {}) {
  return { alg: 'ES256', typ: 'JWT', kid: KEY_NAME, nonce: newNonce(), ...overrides };
}

function goodClaims(overrides: Record<string, unknown> = {}) {
  return { iss: ISSUER, sub: KEY_NAME, aud: [JWT_AUDIENCE], iat: NOW, nbf: NOW, exp: NOW + MAX_LIFETIME, ...overrides };
}

const options = (nowSeconds = NOW) => ({
  issuers: ISSUERS,
  maxLifetimeSeconds: MAX_LIFETIME,
  nowSeconds,
  resolveKey: async (name: string) => (name === KEY_NAME ? publicKey : null),
});

async function failureOf(token: string, nowSeconds = NOW): Promise<TokenFailure | 'accepted'> {
  try {
    await verifyApiToken(token, options(nowSeconds));
    return 'accepted';
  } catch (error) {
    return (error as { failure: TokenFailure }).failure;
  }
}

describe('verifyApiToken', () => {
  it("accepts the project's own tokens and jose's, and jose accepts the project's", async () => {
    const own = await signApiToken({
      privateKey,
      keyName: KEY_NAME,
      issuer: ISSUER,
      lifetimeSeconds: MAX_LIFETIME,
      nowSeconds: NOW,
    });
    expect(await verifyApiToken(own.token, options())).toEqual({
      keyName: KEY_NAME,
      nonce: own.nonce,
      issuedAt: NOW,
      expiresAt: NOW + MAX_LIFETIME,
    });
    const { payload, protectedHeader } = await jwtVerify(own.token, publicKey, {
      algorithms: ['ES256'],
      issuer: ISSUER,
      audience: JWT_AUDIENCE,
      subject: KEY_NAME,
      currentDate: new Date(NOW * 1000),
    });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: KEY_NAME, nonce: own.nonce });
    expect(payload).toEqual(goodClaims());

    const nonce = newNonce();
    const byJose = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: KEY_NAME, nonce })
      .setIssuer(ISSUER)
      .setSubject(KEY_NAME)
      .setAudience([JWT_AUDIENCE])
      .setIssuedAt(NOW)
      .setNotBefore(NOW)
      .setExpirationTime(NOW + 30)
      .sign(privateKey);
    expect(await verifyApiToken(byJose, options())).toEqual({
      keyName: KEY_NAME,
      nonce,
      issuedAt: NOW,
      expiresAt: NOW + 30,
    });
  });

  const good = () => craft(goodHeader(), goodClaims());
  it.each<[string, () => string, TokenFailure]>([
    ['two segments', () => good().split('.').slice(0, 2).join('.'), 'TOKEN_MALFORMED'],
    ['four segments', () => `${good()}.e30`, 'TOKEN_MALFORMED'],
    ['an empty segment', () => good().replace(/\.[^.]+$/, '.'), 'TOKEN_MALFORMED'],
    ['base64 padding', () => `${good()}=`, 'TOKEN_MALFORMED'],
    ['a character outside base64url', () => good().replace('.', '+.'), 'TOKEN_MALFORMED'],
    [
      'a header that is not JSON',
      () => `${b64('{"alg":')}.${good().split('.')[1]}.${good().split('.')[2]}`,
      'TOKEN_MALFORMED',
    ],
    ['a header that is an array', () => craft(['ES256'], goodClaims()), 'TOKEN_MALFORMED'],
    ['alg none, unsigned', () => `${b64({ ...goodHeader(), alg: 'none' })}.${b64(goodClaims())}.`, 'TOKEN_MALFORMED'],
    ['alg ES384', () => craft(goodHeader({ alg: 'ES384' }), goodClaims()), 'TOKEN_MALFORMED'],
    ['a crit extension', () => craft(goodHeader({ crit: ['b64'], b64: false }), goodClaims()), 'TOKEN_MALFORMED'],
    ['typ other than JWT', () => craft(goodHeader({ typ: 'at+jwt' }), goodClaims()), 'TOKEN_MALFORMED'],
    ['no typ', () => craft(goodHeader({ typ: undefined }), goodClaims()), 'TOKEN_MALFORMED'],
    ['typ null', () => craft(goodHeader({ typ: null }), goodClaims()), 'TOKEN_MALFORMED'],
    ['typ as a list', () => craft(goodHeader({ typ: ['JWT'] }), goodClaims()), 'TOKEN_MALFORMED'],
    ['typ as a media type', () => craft(goodHeader({ typ: 'application/jwt' }), goodClaims()), 'TOKEN_MALFORMED'],
    ['typ with a space', () => craft(goodHeader({ typ: 'JWT ' }), goodClaims()), 'TOKEN_MALFORMED'],
    // Only ASCII letters are compared without case: a fullwidth letter is another letter.
    ['typ JWT in look-alike letters', () => craft(goodHeader({ typ: 'ＪWT' }), goodClaims()), 'TOKEN_MALFORMED'],
    [
      'a repeated header parameter',
      () =>
        craft(
          `{"alg":"ES256","typ":"JWT","kid":"${KEY_NAME}","kid":"${KEY_NAME}","nonce":"${newNonce()}"}`,
          goodClaims(),
        ),
      'TOKEN_MALFORMED',
    ],
    ['no kid', () => craft(goodHeader({ kid: undefined }), goodClaims()), 'KEY_MISSING'],
    [
      'an unknown kid',
      () => craft(goodHeader({ kid: 'org/x/apiKey/y' }), goodClaims({ sub: 'org/x/apiKey/y' })),
      'KEY_UNKNOWN',
    ],
    [
      'a nonce in upper case',
      () => craft(goodHeader({ nonce: newNonce().toUpperCase() }), goodClaims()),
      'TOKEN_MALFORMED',
    ],
    ['a signature by another key', () => craft(goodHeader(), goodClaims(), other.privateKey), 'SIGNATURE_INVALID'],
    [
      'a DER signature',
      () => {
        const input = `${b64(goodHeader())}.${b64(goodClaims())}`;
        return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
      },
      'SIGNATURE_INVALID',
    ],
    [
      'claims changed after signing',
      () => {
        const [header, , signature] = good().split('.');
        return `${header}.${b64(goodClaims({ exp: NOW + 3600 }))}.${signature}`;
      },
      'SIGNATURE_INVALID',
    ],
    [
      'HS256 keyed with the public key',
      () => {
        const input = `${b64(goodHeader({ alg: 'HS256' }))}.${b64(goodClaims())}`;
        const pem = publicKey.export({ type: 'spki', format: 'pem' });
        return `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
      },
      'TOKEN_MALFORMED',
    ],
    ['claims that are an array', () => craft(goodHeader(), [goodClaims()]), 'TOKEN_MALFORMED'],
    ['no exp', () => craft(goodHeader(), goodClaims({ exp: undefined })), 'TOKEN_MALFORMED'],
    ['exp as a string', () => craft(goodHeader(), goodClaims({ exp: String(NOW + 30) })), 'TOKEN_MALFORMED'],
    ['no nbf', () => craft(goodHeader(), goodClaims({ nbf: undefined })), 'TOKEN_MALFORMED'],
    ['no iat', () => craft(goodHeader(), goodClaims({ iat: undefined })), 'TOKEN_MALFORMED'],
    ['another issuer', () => craft(goodHeader(), goodClaims({ iss: 'someone' })), 'TOKEN_MALFORMED'],
    [
      'an issuer in another case',
      () => craft(goodHeader(), goodClaims({ iss: ISSUERS[1].toUpperCase() })),
      'TOKEN_MALFORMED',
    ],
    [
      'the issuer list as one value',
      () => craft(goodHeader(), goodClaims({ iss: ISSUERS.join(',') })),
      'TOKEN_MALFORMED',
    ],
    ['iss as an array of the issuers', () => craft(goodHeader(), goodClaims({ iss: [...ISSUERS] })), 'TOKEN_MALFORMED'],
    ['no iss', () => craft(goodHeader(), goodClaims({ iss: undefined })), 'TOKEN_MALFORMED'],
    ['sub other than kid', () => craft(goodHeader(), goodClaims({ sub: 'org/x/apiKey/y' })), 'TOKEN_MALFORMED'],
    ['aud as a string', () => craft(goodHeader(), goodClaims({ aud: JWT_AUDIENCE })), 'TOKEN_MALFORMED'],
    ['aud of two', () => craft(goodHeader(), goodClaims({ aud: [JWT_AUDIENCE, 'other'] })), 'TOKEN_MALFORMED'],
    ['another aud', () => craft(goodHeader(), goodClaims({ aud: ['other'] })), 'TOKEN_MALFORMED'],
    [
      'exp at now minus the skew',
      () => craft(goodHeader(), goodClaims({ iat: NOW - 30, nbf: NOW - 30, exp: NOW - JWT_CLOCK_SKEW_SECONDS })),
      'EXPIRED',
    ],
    [
      'nbf beyond the skew',
      () => craft(goodHeader(), goodClaims({ nbf: NOW + JWT_CLOCK_SKEW_SECONDS + 1 })),
      'TOKEN_MALFORMED',
    ],
    [
      'iat beyond the skew',
      () => craft(goodHeader(), goodClaims({ iat: NOW + JWT_CLOCK_SKEW_SECONDS + 1 })),
      'TOKEN_MALFORMED',
    ],
    [
      'a lifetime over the maximum',
      () => craft(goodHeader(), goodClaims({ exp: NOW + MAX_LIFETIME + 1 })),
      'LIFETIME_TOO_LONG',
    ],
  ])('refuses %s as %s', async (_name, make, failure) => {
    expect(await failureOf(make())).toBe(failure);
  });

  it('accepts the second issuer of the list as it does the first, signed by the project and by jose', async () => {
    expect(await failureOf(craft(goodHeader(), goodClaims({ iss: ISSUERS[1] })))).toBe('accepted');
    const own = await signApiToken({
      privateKey,
      keyName: KEY_NAME,
      issuer: ISSUERS[1],
      lifetimeSeconds: MAX_LIFETIME,
      nowSeconds: NOW,
    });
    expect(await verifyApiToken(own.token, options())).toEqual({
      keyName: KEY_NAME,
      nonce: own.nonce,
      issuedAt: NOW,
      expiresAt: NOW + MAX_LIFETIME,
    });
    const nonce = newNonce();
    const byJose = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: KEY_NAME, nonce })
      .setIssuer(ISSUERS[1])
      .setSubject(KEY_NAME)
      .setAudience([JWT_AUDIENCE])
      .setIssuedAt(NOW)
      .setNotBefore(NOW)
      .setExpirationTime(NOW + 30)
      .sign(privateKey);
    expect(await verifyApiToken(byJose, options())).toEqual({
      keyName: KEY_NAME,
      nonce,
      issuedAt: NOW,
      expiresAt: NOW + 30,
    });
    // A verifier given only the first issuer refuses the same token.
    await expect(verifyApiToken(byJose, { ...options(), issuers: [ISSUER] })).rejects.toMatchObject({
      failure: 'TOKEN_MALFORMED',
      message: 'unexpected iss',
    });
  });

  it.each(['JWT', 'jwt', 'Jwt', 'jWt'])(
    'accepts typ %s: a media type name, compared without case (RFC 7515 4.1.9)',
    async (typ) => {
      expect(await failureOf(craft(goodHeader({ typ }), goodClaims()))).toBe('accepted');
    },
  );

  it('accepts exp one second inside the skew, and nbf and iat at the edge of it', async () => {
    expect(
      await failureOf(
        craft(goodHeader(), goodClaims({ iat: NOW - 30, nbf: NOW - 30, exp: NOW - JWT_CLOCK_SKEW_SECONDS + 1 })),
      ),
    ).toBe('accepted');
    const edge = NOW + JWT_CLOCK_SKEW_SECONDS;
    expect(await failureOf(craft(goodHeader(), goodClaims({ iat: edge, nbf: edge, exp: edge + MAX_LIFETIME })))).toBe(
      'accepted',
    );
  });

  it('agrees with jose on random claims, signed right: accepted, expired or refused', async () => {
    // Each claim mostly right, so that about a third of the tokens pass and the rest fail one or two ways.
    const mostly = <T>(right: T, ...wrong: T[]) =>
      fc.oneof({ arbitrary: fc.constant(right), weight: 6 }, fc.constantFrom(...wrong));
    const numeric = (right: number) =>
      fc.oneof(
        { arbitrary: fc.constant(right), weight: 3 },
        fc.integer({ min: NOW - 200, max: NOW + 200 }),
        fc.constantFrom<unknown>(undefined, '1800000000', null, 1.5e9 + 0.5),
      );
    const claimSets = fc.record({
      iss: mostly<unknown>(ISSUER, ISSUERS[1], 'other', undefined),
      sub: mostly<unknown>(KEY_NAME, 'other', undefined),
      aud: mostly<unknown>([JWT_AUDIENCE], JWT_AUDIENCE, ['other'], [JWT_AUDIENCE, 'other'], undefined),
      iat: numeric(NOW),
      nbf: numeric(NOW),
      exp: numeric(NOW + 30),
    });
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(claimSets, async (claims) => {
        const token = craft(goodHeader(), claims);
        const ours = await failureOf(token);
        let jose: 'accepted' | 'EXPIRED' | 'refused';
        try {
          await jwtVerify(token, publicKey, {
            algorithms: ['ES256'],
            issuer: [...ISSUERS],
            audience: JWT_AUDIENCE,
            subject: KEY_NAME,
            clockTolerance: JWT_CLOCK_SKEW_SECONDS,
            currentDate: new Date(NOW * 1000),
            requiredClaims: ['iat', 'nbf', 'exp', 'sub', 'aud', 'iss'],
          });
          jose = 'accepted';
        } catch (error) {
          jose = error instanceof joseErrors.JWTExpired ? 'EXPIRED' : 'refused';
        }
        // Rules of ours that jose does not have: aud exactly one element, iat not in the future, the lifetime bound.
        const extraRefusal =
          !Array.isArray(claims.aud) ||
          claims.aud.length !== 1 ||
          (typeof claims.iat === 'number' && claims.iat > NOW + JWT_CLOCK_SKEW_SECONDS) ||
          (typeof claims.iat === 'number' && typeof claims.exp === 'number' && claims.exp - claims.iat > MAX_LIFETIME);
        if (ours === 'accepted') accepted += 1;
        expect(ours === 'accepted' ? 'accepted' : 'refused').toBe(
          jose === 'accepted' && !extraRefusal ? 'accepted' : 'refused',
        );
        // Expiry is named alike, unless our stricter aud refused the token first.
        if (jose === 'EXPIRED' && Array.isArray(claims.aud) && claims.aud.length === 1) expect(ours).toBe('EXPIRED');
      }),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(30);
  });
});
