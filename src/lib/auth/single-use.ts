/**
 * Single use of an API token (docs/contract.md#auth-tokens-single-use), the one rule the core's
 * v3 authenticator and the gateway's legacy authenticator share: the nonce's record in the
 * ephemeral store (its key and lifetime), and what a claim of it says about the token.
 *
 * A fresh claim proves single use only for a token signed since the store's epoch marker: a
 * store that was emptied (a Redis restarted or flushed, a process restarted on the in-process
 * store) has forgotten the nonces claimed before, so a token signed before its epoch is refused
 * even when its nonce is fresh. `iat` is in whole seconds, so the rule refuses a token signed in
 * an earlier second than the epoch's: one signed within the epoch's own second, or by a client
 * whose clock runs ahead, is not refused by it (the residual window the docs describe).
 *
 * It may touch: the token's verified claims and a NonceClaim; it makes no call itself.
 */
import type { NonceClaim } from '../store/ephemeral-store.js';
import { JWT_CLOCK_SKEW_SECONDS, type VerifiedToken } from './jwt.js';

/** What a nonce claim says about its token. */
export type SingleUseVerdict =
  /** The nonce is spent by this request, and the store knew every nonce since before the token was signed. */
  | 'FRESH'
  /** The nonce was claimed before: a replay. */
  | 'REPLAYED'
  /** The nonce is fresh, but the store was reset after the token was signed: it may have been used before. */
  | 'SIGNED_BEFORE_STORE_RESET';

/**
 * The v3 message of each refusal (401 AUTH_TOKEN_INVALID), as docs/contract.md#auth-tokens-single-use
 * writes it. A client that signs its own tokens (the gateway) reads the second to sign again.
 */
export const SINGLE_USE_REFUSAL_MESSAGES = {
  REPLAYED: 'The bearer token was already used; sign a new one per request.',
  SIGNED_BEFORE_STORE_RESET: 'The bearer token was signed before the replay store was reset; sign a new one.',
} as const satisfies Record<Exclude<SingleUseVerdict, 'FRESH'>, string>;

/** A token's nonce record: where it goes in the ephemeral store and for how long. */
export interface TokenNonce {
  /** `nonce:{<key name>}:<nonce>`: one nonce space for every generation, keyed by key name. */
  readonly key: string;
  /** Until the token's expiry plus the skew, so that the record outlives every moment the token is accepted. */
  readonly ttlMs: number;
}

export function tokenNonce(token: VerifiedToken, nowSeconds: number): TokenNonce {
  return {
    key: `nonce:{${token.keyName}}:${token.nonce}`,
    ttlMs: Math.max(1, token.expiresAt + JWT_CLOCK_SKEW_SECONDS - nowSeconds) * 1000,
  };
}

/** True when the token was signed in an earlier second than the store's epoch (see the header). */
export function signedBeforeStoreReset(issuedAtSeconds: number, epochMs: number): boolean {
  return issuedAtSeconds < Math.floor(epochMs / 1000);
}

/** The verdict on a token from its nonce's claim; a replay is a replay whatever the token's age. */
export function singleUseVerdict(token: VerifiedToken, claim: NonceClaim): SingleUseVerdict {
  if (!claim.fresh) return 'REPLAYED';
  return signedBeforeStoreReset(token.issuedAt, claim.epochMs) ? 'SIGNED_BEFORE_STORE_RESET' : 'FRESH';
}
