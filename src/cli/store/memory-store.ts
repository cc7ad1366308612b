/**
 * The in-process EphemeralStore: the embedded default for a single process. It keeps Redis
 * semantics (every operation is atomic because it never awaits between read and write, and every
 * entry has a TTL) so that code tested against it behaves the same against Redis.
 *
 * Memory is bounded by maxEntries times the largest value callers store (responses, cursors):
 * every entry carries a TTL, expired entries are dropped when touched and by a periodic sweep, and
 * a write that would exceed maxEntries of live entries fails with StoreUnavailableError, as Redis
 * does under `maxmemory-policy noeviction`. Evicting instead would silently forget a nonce or an
 * idempotency lock, which is the one thing this store must not do.
 *
 * Its epoch marker (NonceClaim) is its creation time: it knows every nonce claimed since then, and
 * none from before, such as the nonces of the process it replaced.
 */
import { StoreUnavailableError } from '../../lib/errors/internal-errors.js';
import {
  type EphemeralStore,
  type IdempotencyBeginInput,
  type IdempotencyBeginResult,
  type NonceClaim,
  type RateLimitInput,
  type RateLimitResult,
  type StoredResponse,
} from '../../lib/store/ephemeral-store.js';
import { gcraStep } from './gcra.js';
import { assertRateLimitInput, assertTtlMs } from './store-input.js';
import { decodeStoredResponse, encodeStoredResponse } from './stored-response.js';

export interface MemoryStoreOptions {
  /** The clock in milliseconds; tests inject one to move time without sleeping. */
  readonly now?: () => number;
  /**
   * The epoch marker (NonceClaim), by default the store's creation time. Only a test that sends
   * a token signed before the store was made sets an earlier one: this store never held the
   * nonces of that time, so in service the default is the only true value.
   */
  readonly epochMs?: number;
  /** How often expired entries that nobody touches are dropped. */
  readonly sweepIntervalMs?: number;
  /** Live entries the store holds at most; the bound on its memory. */
  readonly maxEntries?: number;
}

export const MEMORY_STORE_DEFAULTS = { sweepIntervalMs: 10_000, maxEntries: 100_000 } as const;

/** A full store sweeps at most this often, so that a flood of writes is not a flood of full scans. */
const FULL_SWEEP_MIN_INTERVAL_MS = 1_000;

type Value =
  | { readonly kind: 'in_flight'; readonly fingerprint: string; readonly owner: string }
  // The response is kept as its encoded JSON so that a replay is a copy, exactly as from Redis.
  | { readonly kind: 'completed'; readonly fingerprint: string; readonly response: string }
  | { readonly kind: 'claim' }
  | { readonly kind: 'rate'; readonly tatUs: number }
  | { readonly kind: 'cache'; readonly value: string };

interface Entry {
  readonly value: Value;
  readonly expiresAt: number;
}

export class MemoryStore implements EphemeralStore {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  /** The epoch marker: nothing claimed before the store was made is in it. */
  private readonly epochMs: number;
  private readonly maxEntries: number;
  private readonly sweepTimer: NodeJS.Timeout;
  private lastSweepAt = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.epochMs = options.epochMs ?? this.now();
    this.maxEntries = options.maxEntries ?? MEMORY_STORE_DEFAULTS.maxEntries;
    this.sweepTimer = setInterval(
      () => this.sweepExpired(),
      options.sweepIntervalMs ?? MEMORY_STORE_DEFAULTS.sweepIntervalMs,
    );
    // The sweep is housekeeping: it must never keep a process alive on its own.
    this.sweepTimer.unref();
  }

  /** Entries held, expired ones included until they are touched or swept. */
  get size(): number {
    return this.entries.size;
  }

  /** Drops every expired entry now. */
  sweepExpired(): void {
    const now = this.now();
    this.lastSweepAt = now;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) this.entries.delete(key);
    }
  }

  async idempotencyBegin(input: IdempotencyBeginInput): Promise<IdempotencyBeginResult> {
    this.assertOpen();
    assertTtlMs('lockTtlMs', input.lockTtlMs);
    const entry = this.live(input.key);
    const record = entry?.value;
    if (entry === undefined || record === undefined || (record.kind !== 'in_flight' && record.kind !== 'completed')) {
      this.put(input.key, { kind: 'in_flight', fingerprint: input.fingerprint, owner: input.owner }, input.lockTtlMs);
      return { outcome: 'acquired' };
    }
    if (record.fingerprint !== input.fingerprint)
      return { outcome: 'mismatch', originalFingerprint: record.fingerprint };
    if (record.kind === 'completed') return { outcome: 'completed', response: decodeStoredResponse(record.response) };
    return { outcome: 'in_flight', retryAfterMs: Math.max(1, Math.ceil(entry.expiresAt - this.now())) };
  }

  async idempotencyComplete(key: string, owner: string, response: StoredResponse, ttlMs: number): Promise<boolean> {
    this.assertOpen();
    assertTtlMs('ttlMs', ttlMs);
    const record = this.live(key)?.value;
    if (record?.kind !== 'in_flight' || record.owner !== owner) return false;
    this.put(
      key,
      { kind: 'completed', fingerprint: record.fingerprint, response: encodeStoredResponse(response) },
      ttlMs,
    );
    return true;
  }

  async idempotencyRelease(key: string, owner: string): Promise<void> {
    this.assertOpen();
    const record = this.live(key)?.value;
    if (record?.kind === 'in_flight' && record.owner === owner) this.entries.delete(key);
  }

  async claimNonce(key: string, ttlMs: number): Promise<NonceClaim> {
    this.assertOpen();
    assertTtlMs('ttlMs', ttlMs);
    if (this.live(key) !== undefined) return { fresh: false, epochMs: this.epochMs };
    this.put(key, { kind: 'claim' }, ttlMs);
    return { fresh: true, epochMs: this.epochMs };
  }

  async nonceEpoch(): Promise<number> {
    this.assertOpen();
    return this.epochMs;
  }

  async rateLimit(input: RateLimitInput): Promise<RateLimitResult> {
    this.assertOpen();
    assertRateLimitInput(input);
    const record = this.live(input.key)?.value;
    const step = gcraStep(
      record?.kind === 'rate' ? record.tatUs : undefined,
      this.now() * 1000,
      input.limit,
      input.periodMs,
    );
    if (step.store !== undefined) this.put(input.key, { kind: 'rate', tatUs: step.store.tatUs }, step.store.ttlMs);
    return step.result;
  }

  async cacheGet(key: string): Promise<string | null> {
    this.assertOpen();
    const record = this.live(key)?.value;
    return record?.kind === 'cache' ? record.value : null;
  }

  async cacheSet(key: string, value: string, ttlMs: number): Promise<void> {
    this.assertOpen();
    assertTtlMs('ttlMs', ttlMs);
    this.put(key, { kind: 'cache', value }, ttlMs);
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    this.entries.clear();
  }

  private assertOpen(): void {
    // Same as a closed Redis connection, so that callers see one failure mode.
    if (this.closed) throw new StoreUnavailableError('The memory store is closed');
  }

  /** The entry under key unless it has expired, in which case it is dropped (lazy expiry, as in Redis). */
  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private put(key: string, value: Value, ttlMs: number): void {
    if (!this.entries.has(key) && this.entries.size >= this.maxEntries) {
      if (this.now() - this.lastSweepAt >= FULL_SWEEP_MIN_INTERVAL_MS) this.sweepExpired();
      if (this.entries.size >= this.maxEntries) {
        throw new StoreUnavailableError(`The memory store holds its maximum of ${this.maxEntries} entries`);
      }
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }
}
