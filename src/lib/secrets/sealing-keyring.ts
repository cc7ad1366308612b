/**
 * Secrets the service keeps for others (webhook signing secrets), sealed with AES-256-GCM before
 * they are stored and opened only to sign or verify. The keys come from outside the database
 * (FXGATE_SECRETS_KEY, FXGATE_SECRETS_KEY_FILE, or the embedded default's key file), so a copy of
 * the database, a dump or a backup opens nothing. Shared library code: no I/O.
 *
 * Sealed text: `v2.<key id>.<iv>.<ciphertext>.<tag>` (base64url), the key id being a fingerprint
 * of the key that sealed it (keyIdOf), so that a keyring of several keys (while rotating) knows
 * which one opens a row without trying each. The caller names what the secret belongs to (its
 * row), bound in as associated data, so a sealed value copied to another row does not open there.
 *
 * `v1.<iv>.<ciphertext>.<tag>` is what earlier versions wrote under keys kept in the database;
 * openFormerSealed reads it, for the upgrade (sealed-rows.ts) only.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';

import { SealedSecretError } from '../errors/internal-errors.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SEALING_KEY_BYTES = 32;
const VERSION = 'v2';
const FORMER_VERSION = 'v1';
/** Domain separation: the key id is a digest of the key that no other use of it computes. */
const KEY_ID_CONTEXT = 'fxgate sealing key id\0';
const KEY_ID_BYTES = 8;

/** The first 8 bytes of SHA-256 over a domain-separated key, in hex: names a key without giving it away. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(KEY_ID_CONTEXT).update(key).digest().subarray(0, KEY_ID_BYTES).toString('hex');
}

/** The key id a sealed text names, or null when it is not in the current format. */
export function sealedKeyId(sealed: string): string | null {
  const parts = sealed.split('.');
  return parts.length === 5 && parts[0] === VERSION ? parts[1]! : null;
}

function encrypt(key: Buffer, secret: string, boundTo: string): string[] {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(boundTo, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')];
}

function decrypt(key: Buffer, iv: string, ciphertext: string, tag: string, boundTo: string): string {
  try {
    const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SealedSecretError(`the sealed secret does not open for ${boundTo}`);
  }
}

/**
 * The keys a process seals and opens with: the first seals, every one opens what it sealed. The
 * keys stay in private fields: neither a log, an inspection nor JSON of a keyring shows them.
 */
export class SealingKeyring {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #sealing: { readonly id: string; readonly key: Buffer };

  private constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new RangeError('a keyring holds at least one key');
    const byId = new Map<string, Buffer>();
    for (const key of keys) {
      if (key.length !== SEALING_KEY_BYTES) throw new RangeError(`a sealing key is ${SEALING_KEY_BYTES} bytes`);
      const id = keyIdOf(key);
      if (byId.has(id)) throw new RangeError(`key ${id} is given twice`);
      byId.set(id, Buffer.from(key));
    }
    this.#keys = byId;
    const [id, key] = [...byId][0]!;
    this.#sealing = { id, key };
  }

  /** The keyring of these keys, the first sealing; RangeError for none, a wrong length or a repeat. */
  static of(keys: readonly Buffer[]): SealingKeyring {
    return new SealingKeyring(keys);
  }

  /** The id of the key that seals. */
  get sealingKeyId(): string {
    return this.#sealing.id;
  }

  /** Every key id, the sealing one first. */
  get keyIds(): readonly string[] {
    return [...this.#keys.keys()];
  }

  holds(keyId: string): boolean {
    return this.#keys.has(keyId);
  }

  seal(secret: string, boundTo: string): string {
    return [VERSION, this.#sealing.id, ...encrypt(this.#sealing.key, secret, boundTo)].join('.');
  }

  /** The secret, or a SealedSecretError: not sealed text, sealed by a key not held here, or not for `boundTo`. */
  open(sealed: string, boundTo: string): string {
    const [version, keyId, iv, ciphertext, tag, ...rest] = sealed.split('.');
    if (
      version !== VERSION ||
      keyId === undefined ||
      iv === undefined ||
      ciphertext === undefined ||
      tag === undefined ||
      rest.length > 0
    )
      throw new SealedSecretError('not a sealed secret');
    const key = this.#keys.get(keyId);
    if (key === undefined)
      throw new SealedSecretError(
        `the secret for ${boundTo} is sealed under key ${keyId}, which this process was not given`,
      );
    return decrypt(key, iv, ciphertext, tag, boundTo);
  }

  toJSON(): { keyIds: readonly string[] } {
    return { keyIds: this.keyIds };
  }

  [inspect.custom](): string {
    return `SealingKeyring { keyIds: [${this.keyIds.join(', ')}] }`;
  }
}

/** What an earlier version sealed (`v1.`) under `key`, a key it kept in the database: for the upgrade only. */
export function openFormerSealed(sealed: string, boundTo: string, key: Buffer): string {
  const [version, iv, ciphertext, tag, ...rest] = sealed.split('.');
  if (
    version !== FORMER_VERSION ||
    iv === undefined ||
    ciphertext === undefined ||
    tag === undefined ||
    rest.length > 0
  )
    throw new SealedSecretError('not a sealed secret of the former format');
  return decrypt(key, iv, ciphertext, tag, boundTo);
}
