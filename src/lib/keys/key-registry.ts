/**
 * The key registry: organisations and their API keys, in the system of record. Both the core
 * and the gateway authenticate against it. Lookups are cached per process for a short TTL with
 * the public key imported once, so the hot path does no SQL and no PEM parsing; a revocation
 * therefore takes effect within that TTL (docs/contract.md#auth-keys).
 *
 * A busy key does not fall out of the cache under its callers: once most of its TTL has passed,
 * one caller starts a look-up in the background and every caller goes on with the cached key,
 * still inside its TTL. Callers that miss together share one look-up, so the requests of a busy
 * key that arrive during a look-up never each run their own query and PEM import.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { BlockList, isIPv4, isIPv6 } from 'node:net';

import type { Mode, Scope } from '../auth/credential-vocabulary.js';
import { parseKeyName } from '../auth/credential-vocabulary.js';
import { DEFAULT_KEY_CACHE_TTL_MS } from '../config.js';
import type { Database, Queryable } from '../db/database.js';
import { InvalidCidrError, InvalidKeyRegistrationError } from '../errors/internal-errors.js';
import { newUuid } from '../ids.js';
import { generateKeyFile, type KeyFile } from './key-file.js';

export interface ApiKeyRecord {
  readonly name: string;
  readonly orgId: string;
  readonly scopes: readonly Scope[];
  readonly mode: Mode;
  readonly ipAllowlist: readonly string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly label: string | null;
}

/** A key ready for the hot path: public key imported, allowlist compiled. */
export interface ActiveKey {
  readonly record: ApiKeyRecord;
  readonly publicKey: KeyObject;
  /** True when the client address may use the key (always, for an empty allowlist). */
  allowsAddress(address: string): boolean;
}

/** A new sandbox book can trade at once; a live book has no credit until an operator sets it. */
export const SANDBOX_CREDIT_LINE_USD = '1000000';

/** The cache is bounded: unknown names are cached too (as misses), and anyone can send those. */
export const KEY_REGISTRY_DEFAULTS = { cacheTtlMs: DEFAULT_KEY_CACHE_TTL_MS, cacheMaxEntries: 10_000 } as const;

/** Share of the TTL after which a cached entry is looked up again in the background. */
const REFRESH_AFTER_SHARE = 0.8;

interface KeyRow {
  name: string;
  org_id: string;
  public_key_pem: string;
  scopes: Scope[];
  mode: Mode;
  ip_allowlist: string[];
  created_at: Date;
  revoked_at: Date | null;
  label: string | null;
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    name: row.name,
    orgId: row.org_id,
    scopes: row.scopes,
    mode: row.mode,
    ipAllowlist: row.ip_allowlist,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    label: row.label,
  };
}

/** Splits `a.b.c.d/n` or `x::y/n` (or a bare address) and checks it. */
function parseCidr(cidr: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } {
  const [address = '', prefixText] = cidr.split('/');
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
  if (!family) throw new InvalidCidrError(cidr);
  const max = family === 'ipv4' ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText ?? String(max)) || prefix > max) throw new InvalidCidrError(cidr);
  return { address, prefix, family };
}

export function normaliseCidrs(cidrs: readonly string[]): string[] {
  return cidrs.map((cidr) => {
    const { address, prefix } = parseCidr(cidr.trim());
    return `${address}/${prefix}`;
  });
}

function compileAllowlist(cidrs: readonly string[]): (address: string) => boolean {
  if (cidrs.length === 0) return () => true;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const { address, prefix, family } = parseCidr(cidr);
    list.addSubnet(address, prefix, family);
  }
  return (address) => {
    // Dual-stack sockets report IPv4 clients as ::ffff:a.b.c.d; match them as IPv4.
    const plain = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
    const family = isIPv4(plain) ? 'ipv4' : isIPv6(plain) ? 'ipv6' : null;
    return family !== null && list.check(plain, family);
  };
}

/**
 * Creates the org with both books, if it is new, inside the caller's transaction: for work that
 * registers an org and its keys together (the key import). Idempotent.
 */
export async function ensureOrgIn(tx: Queryable, orgId: string, name = `org ${orgId.slice(0, 8)}`): Promise<void> {
  await tx.query('INSERT INTO orgs (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [orgId, name]);
  await tx.query(
    `INSERT INTO org_environments (org_id, environment, credit_line_usd)
     VALUES ($1, 'sandbox', $2), ($1, 'live', 0)
     ON CONFLICT (org_id, environment) DO NOTHING`,
    [orgId, SANDBOX_CREDIT_LINE_USD],
  );
}

export interface CreateKeyInput {
  readonly orgId: string;
  readonly scopes: readonly Scope[];
  readonly mode: Mode;
  readonly ipAllowlist?: readonly string[];
  readonly label?: string;
}

export interface RegisterKeyInput extends CreateKeyInput {
  /** `org/{orgId}/apiKey/{keyId}` of orgId. */
  readonly name: string;
  /** SPKI PEM of an EC P-256 key (every token is ES256). */
  readonly publicKey: string;
}

interface CachedKey {
  readonly key: ActiveKey | null;
  /** When the look-up that read it began: what the database said is at least this fresh. */
  readonly readAt: number;
}

export class KeyRegistry {
  private readonly cache = new Map<string, CachedKey>();
  /** The look-up in flight per name, shared by every caller that needs it. */
  private readonly lookUps = new Map<string, Promise<ActiveKey | null>>();

  constructor(
    private readonly db: Database,
    private readonly options: { cacheTtlMs?: number; now?: () => number } = {},
  ) {}

  /** Creates the org (with both books) if it is new. Idempotent. */
  async ensureOrg(orgId: string, name?: string): Promise<void> {
    await this.db.transaction((tx) => ensureOrgIn(tx, orgId, name));
  }

  /** Makes a key pair, registers the public half, and returns the key file (private half). */
  async createKey(input: CreateKeyInput): Promise<KeyFile> {
    const file = generateKeyFile({ orgId: input.orgId, keyId: newUuid(), scopes: [...input.scopes], mode: input.mode });
    await this.registerKey({ ...input, name: file.name, publicKey: file.publicKey, scopes: file.scopes });
    return file;
  }

  /**
   * Registers the public half of a key pair made elsewhere, creating the org if it is new:
   * `fxgate keys create` makes the pair itself, so the private half never leaves it.
   */
  async registerKey(input: RegisterKeyInput): Promise<void> {
    const keyId = parseKeyName(input.name)?.orgId === input.orgId ? parseKeyName(input.name)!.keyId : null;
    if (keyId === null)
      throw new InvalidKeyRegistrationError(
        `${input.name} is not a key name of org ${input.orgId} (org/{orgId}/apiKey/{keyId})`,
      );
    let curve: string | undefined;
    try {
      curve = createPublicKey(input.publicKey).asymmetricKeyDetails?.namedCurve;
    } catch {
      curve = undefined;
    }
    if (curve !== 'prime256v1')
      throw new InvalidKeyRegistrationError(`the public key of ${input.name} is not an EC P-256 key in SPKI PEM`);
    const ipAllowlist = normaliseCidrs(input.ipAllowlist ?? []);
    await this.ensureOrg(input.orgId);
    await this.db.query(
      `INSERT INTO api_keys (name, id, org_id, public_key_pem, scopes, mode, ip_allowlist, label)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        input.name,
        keyId,
        input.orgId,
        input.publicKey,
        [...input.scopes],
        input.mode,
        ipAllowlist,
        input.label ?? null,
      ],
    );
  }

  async list(orgId?: string): Promise<ApiKeyRecord[]> {
    const { rows } = orgId
      ? await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE org_id = $1 ORDER BY created_at, name', [orgId])
      : await this.db.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, name');
    return rows.map(toRecord);
  }

  /** Revokes a key; false when no such key was active. */
  async revoke(name: string): Promise<boolean> {
    const { rowCount } = await this.db.query(
      'UPDATE api_keys SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL',
      [name],
    );
    this.cache.delete(name);
    // A look-up that began before the revocation must not put the key back when it lands.
    this.lookUps.delete(name);
    return rowCount > 0;
  }

  /** The active (not revoked) key of this name, from the cache while it is inside its TTL. */
  async findActive(name: string): Promise<ActiveKey | null> {
    const ttlMs = this.options.cacheTtlMs ?? KEY_REGISTRY_DEFAULTS.cacheTtlMs;
    const cached = this.cache.get(name);
    if (cached !== undefined) {
      const age = this.now() - cached.readAt;
      if (age < ttlMs) {
        // A failed background look-up leaves the entry to expire; the next miss will fail loudly.
        if (age >= ttlMs * REFRESH_AFTER_SHARE) this.lookUp(name).catch(() => {});
        return cached.key;
      }
    }
    return this.lookUp(name);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The name read from the database, then cached; one look-up per name at a time. */
  private lookUp(name: string): Promise<ActiveKey | null> {
    const pending = this.lookUps.get(name);
    if (pending !== undefined) return pending;
    const readAt = this.now();
    const lookUp: Promise<ActiveKey | null> = (parseKeyName(name) ? this.load(name) : Promise.resolve(null)).then(
      (key) => {
        if (this.lookUps.get(name) === lookUp) {
          this.lookUps.delete(name);
          this.remember(name, { key, readAt });
        }
        return key;
      },
      (error: unknown) => {
        if (this.lookUps.get(name) === lookUp) this.lookUps.delete(name);
        throw error;
      },
    );
    this.lookUps.set(name, lookUp);
    return lookUp;
  }

  private remember(name: string, entry: CachedKey): void {
    this.cache.delete(name);
    if (this.cache.size >= KEY_REGISTRY_DEFAULTS.cacheMaxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(name, entry);
  }

  private async load(name: string): Promise<ActiveKey | null> {
    const { rows } = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE name = $1 AND revoked_at IS NULL', [
      name,
    ]);
    const row = rows[0];
    if (!row) return null;
    const record = toRecord(row);
    return {
      record,
      publicKey: createPublicKey(row.public_key_pem),
      allowsAddress: compileAllowlist(record.ipAllowlist),
    };
  }
}
