/**
 * The legacy tokens this gateway process has already caught being replayed, until they expire.
 *
 * Why: a read's replay check may finish after its v3 read went out (auth.ts), so every
 * replay of a captured token would cost the org one v3 read against its rate limit. Remembering
 * the tokens found replayed lets the next replays of the same token be refused here, before the
 * store and before v3: a flood of one captured token costs one v3 read per gateway process.
 *
 * Only replays are kept (normal traffic adds nothing), at most `maxEntries`, oldest dropped
 * first: the store's claim stays the authority, this is only a shortcut in front of it.
 */
export const KNOWN_REPLAYS_DEFAULTS = {
  maxEntries: 10_000,
} as const;

export class KnownReplays {
  /** Nonce key -> when the token expires (ms since the epoch); Maps iterate oldest first. */
  private readonly entries = new Map<string, number>();

  constructor(
    private readonly maxEntries: number = KNOWN_REPLAYS_DEFAULTS.maxEntries,
    private readonly now: () => number = Date.now,
  ) {}

  /** True while a token with this nonce key is known replayed and not yet expired. */
  has(nonceKey: string): boolean {
    const expiresAt = this.entries.get(nonceKey);
    if (expiresAt === undefined) return false;
    if (expiresAt > this.now()) return true;
    this.entries.delete(nonceKey);
    return false;
  }

  add(nonceKey: string, expiresAtMs: number): void {
    this.entries.delete(nonceKey);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(nonceKey, expiresAtMs);
  }

  get size(): number {
    return this.entries.size;
  }
}
