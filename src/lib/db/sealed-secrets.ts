/**
 * Secrets the service keeps for others (webhook signing secrets): sealed with AES-256-GCM under a
 * service secret (service-secrets.ts) before they are stored, and opened only to sign or verify.
 * A leaked row, a log of it or a copy of one table holds no usable secret; the key lives in the
 * same database, so this is not a defence against a copy of the whole database.
 *
 * Sealed text: `v1.<iv base64url>.<ciphertext base64url>.<tag base64url>`. The caller names what
 * the secret belongs to (its row), bound in as associated data, so a sealed value copied to
 * another row does not open there.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

import type { Queryable } from './database.js';
import { loadOrCreateServiceSecret } from './service-secrets.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';

export class SealedSecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealedSecretError';
  }
}

export class SecretSealer {
  private constructor(private readonly key: Buffer) {}

  /** The sealer of a named service secret, created on first use (every process agrees on it). */
  static async open(db: Queryable, name: string): Promise<SecretSealer> {
    return new SecretSealer(await loadOrCreateServiceSecret(db, name));
  }

  /** For tests and tools that hold a key already. */
  static withKey(key: Buffer): SecretSealer {
    if (key.length !== 32) throw new RangeError('the sealing key must be 32 bytes');
    return new SecretSealer(key);
  }

  seal(secret: string, boundTo: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [
      VERSION,
      iv.toString('base64url'),
      ciphertext.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  }

  /** The secret, or a SealedSecretError when the text was not sealed by this key for `boundTo`. */
  open(sealed: string, boundTo: string): string {
    const [version, iv, ciphertext, tag, ...rest] = sealed.split('.');
    if (version !== VERSION || iv === undefined || ciphertext === undefined || tag === undefined || rest.length > 0)
      throw new SealedSecretError('not a sealed secret');
    try {
      const decipher = createDecipheriv(ALGORITHM, this.key, Buffer.from(iv, 'base64url'), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(boundTo, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedSecretError(`the sealed secret does not open for ${boundTo}`);
    }
  }
}
