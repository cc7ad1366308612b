/**
 * The single-use rule both authenticators share (docs/contract.md#auth-tokens-single-use): the
 * nonce's record, and the verdict on a claim of it, with the epoch marker's whole-second boundary.
 */
import { describe, expect, it } from 'vitest';

import type { VerifiedToken } from '../../../src/lib/auth/jwt.js';
import { signedBeforeStoreReset, singleUseVerdict, tokenNonce } from '../../../src/lib/auth/single-use.js';

const KEY_NAME = 'org/5f0c3b1e-8d2a-4c3e-9b1a-2f4e6d8c0a1b/apiKey/7a9b1c3d-5e7f-4a1b-8c2d-4e6f8a0b2c4d';
const NONCE = '0123456789abcdef0123456789abcdef';
/** A second boundary: 1,700,000,000 s since the epoch. */
const SECOND = 1_700_000_000;

function token(issuedAt: number, expiresAt = issuedAt + 60): VerifiedToken {
  return { keyName: KEY_NAME, nonce: NONCE, issuedAt, expiresAt };
}

describe('tokenNonce', () => {
  it("keys the nonce by key name, in the core's format every generation shares", () => {
    expect(tokenNonce(token(SECOND), SECOND).key).toBe(`nonce:{${KEY_NAME}}:${NONCE}`);
  });

  it('keeps the nonce until the expiry plus the 5 s skew, and at least a second', () => {
    expect(tokenNonce(token(SECOND, SECOND + 60), SECOND).ttlMs).toBe(65_000);
    expect(tokenNonce(token(SECOND, SECOND + 60), SECOND + 30).ttlMs).toBe(35_000);
    // Accepted inside the skew after its expiry: still kept a second.
    expect(tokenNonce(token(SECOND, SECOND + 60), SECOND + 66).ttlMs).toBe(1_000);
  });
});

describe('signedBeforeStoreReset', () => {
  it('is true for a token signed in any second before the epoch’s', () => {
    expect(signedBeforeStoreReset(SECOND - 1, SECOND * 1000)).toBe(true);
    expect(signedBeforeStoreReset(SECOND - 1, SECOND * 1000 + 999)).toBe(true);
    expect(signedBeforeStoreReset(SECOND - 120, SECOND * 1000 + 500)).toBe(true);
  });

  it('is false from the epoch’s own second on: the residual window of up to a second', () => {
    // Reset at the last millisecond of the second: a token of that second, which may have been
    // used in the 999 ms before, is not refused by this rule.
    expect(signedBeforeStoreReset(SECOND, SECOND * 1000 + 999)).toBe(false);
    expect(signedBeforeStoreReset(SECOND, SECOND * 1000)).toBe(false);
    expect(signedBeforeStoreReset(SECOND + 1, SECOND * 1000)).toBe(false);
  });

  it('compares a fractional iat (a NumericDate may carry one) with the same boundary', () => {
    expect(signedBeforeStoreReset(SECOND - 0.5, SECOND * 1000 + 200)).toBe(true);
    expect(signedBeforeStoreReset(SECOND + 0.1, SECOND * 1000 + 900)).toBe(false);
  });
});

describe('singleUseVerdict', () => {
  const epochMs = SECOND * 1000 + 400;

  it('FRESH for a fresh nonce of a token signed since the epoch', () => {
    expect(singleUseVerdict(token(SECOND), { fresh: true, epochMs })).toBe('FRESH');
    expect(singleUseVerdict(token(SECOND + 30), { fresh: true, epochMs })).toBe('FRESH');
  });

  it('SIGNED_BEFORE_STORE_RESET for a fresh nonce of a token signed before it', () => {
    expect(singleUseVerdict(token(SECOND - 1), { fresh: true, epochMs })).toBe('SIGNED_BEFORE_STORE_RESET');
  });

  it('REPLAYED for a nonce claimed before, whenever the token was signed', () => {
    expect(singleUseVerdict(token(SECOND + 30), { fresh: false, epochMs })).toBe('REPLAYED');
    expect(singleUseVerdict(token(SECOND - 1), { fresh: false, epochMs })).toBe('REPLAYED');
  });
});
