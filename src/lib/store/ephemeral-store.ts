/**
 * The ephemeral store: shared, short-lived state that is not the system of record.
 *
 * It holds idempotency records, single-use JWT nonces, rate-limit cells and the gateway's page
 * cursor cache. Two implementations pass the same contract suite (test/lib/store): Redis, with
 * one atomic Lua script per operation, for any deployment with more than one process; and an
 * in-process map for the embedded default. Losing this store must never create a duplicate
 * money movement: the ledger's unique constraints are the last line, this is the first. Nor may
 * it make a spent token good again: the epoch marker (NonceClaim) says from when the store
 * knows every nonce, and the callers refuse tokens signed before it.
 *
 * Every method may throw StoreUnavailableError; callers decide whether to fail open or closed.
 */

/**
 * A nonce claim's answer. `epochMs` is the store's epoch marker: the instant (ms since the epoch,
 * on the store's clock) from which the store knows every nonce it was given. A nonce claimed
 * before it may have been lost with the store, so a fresh claim proves single use only for a
 * token signed from that instant on.
 */
export interface NonceClaim {
  /** True when this call claimed the nonce; false when it was claimed before. */
  readonly fresh: boolean;
  readonly epochMs: number;
}

/** A response as it was first sent, kept so that a retry with the same key replays it exactly. */
export interface StoredResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The body bytes as sent, base64-encoded so that the record is plain JSON in every store. */
  readonly bodyBase64: string;
}

export type IdempotencyBeginResult =
  /** The caller owns the key now and must later call idempotencyComplete or idempotencyRelease. */
  | { readonly outcome: 'acquired' }
  /** Another request with this key and this fingerprint is running. */
  | { readonly outcome: 'in_flight'; readonly retryAfterMs: number }
  /** The key was first used with another request. */
  | { readonly outcome: 'mismatch'; readonly originalFingerprint: string }
  /** The key completed before: replay this. */
  | { readonly outcome: 'completed'; readonly response: StoredResponse };

export interface IdempotencyBeginInput {
  /** Fully scoped key, e.g. `idem:{org:env}:key`. The store does not interpret it. */
  readonly key: string;
  readonly fingerprint: string;
  /** Random token naming this attempt; only the owner may complete or release the lock. */
  readonly owner: string;
  /** How long the in-flight lock lives if its owner dies without completing or releasing it. */
  readonly lockTtlMs: number;
}

export interface RateLimitInput {
  readonly key: string;
  /** Requests allowed per period (the burst, too). */
  readonly limit: number;
  readonly periodMs: number;
}

export interface RateLimitResult {
  readonly allowed: boolean;
  /** Requests that could still be made right now. */
  readonly remaining: number;
  /** Milliseconds until the bucket is full again. */
  readonly resetMs: number;
  /** Milliseconds until the next request would be allowed; 0 when allowed. */
  readonly retryAfterMs: number;
}

export interface EphemeralStore {
  /** Begins an idempotent request: acquire the key, or learn why not (atomically). */
  idempotencyBegin(input: IdempotencyBeginInput): Promise<IdempotencyBeginResult>;
  /**
   * Stores the response of the owner's request for ttlMs and drops the lock.
   * Returns false when the caller no longer owns the key (its lock expired and another took it).
   */
  idempotencyComplete(key: string, owner: string, response: StoredResponse, ttlMs: number): Promise<boolean>;
  /** Drops the owner's lock without storing anything, so that a retry may run again. */
  idempotencyRelease(key: string, owner: string): Promise<void>;

  /**
   * Claims a single-use value (a JWT nonce) for ttlMs and reads the epoch marker, in one atomic
   * step; a store without a marker (new or emptied) makes one, now, and returns it.
   */
  claimNonce(key: string, ttlMs: number): Promise<NonceClaim>;
  /**
   * The epoch marker, made now when the store has none. A server asks for it when it starts
   * (RedisStore also on every connection, where it makes a new one when another server has
   * become its primary), so that the marker dates from when the store was found new or emptied
   * rather than from its first claim.
   */
  nonceEpoch(): Promise<number>;

  /** Counts one request against a GCRA cell and says whether it may go on. */
  rateLimit(input: RateLimitInput): Promise<RateLimitResult>;

  /** A small cache (the gateway's page cursors). */
  cacheGet(key: string): Promise<string | null>;
  cacheSet(key: string, value: string, ttlMs: number): Promise<void>;

  /** Resolves when the store answers; throws StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
