/**
 * What the version before the keyring left in a database, written here independently of
 * src/lib/secrets (as that version's sealed-secrets.ts and service-secrets.ts wrote it), so the
 * upgrade is tested against the former format rather than against its own reader: a random
 * 32-byte key per name in service_secrets (base64), and secrets sealed under it as
 * `v1.<iv>.<ciphertext>.<tag>` (AES-256-GCM, base64url, the row's binding as associated data).
 */
import { createCipheriv, randomBytes } from 'node:crypto';

import type { Queryable } from '../../src/lib/db/database.js';

/** The service_secrets names the former version sealed under. */
export const FORMER_KEY_NAMES = {
  endpoints: 'webhook-endpoint-secrets',
  legacy: 'legacy-webhook-sealing-key',
} as const;

/** The former version's key of `name`, made on first use as it made it. */
export async function formerKey(db: Queryable, name: string): Promise<Buffer> {
  await db.query('INSERT INTO service_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    name,
    randomBytes(32).toString('base64'),
  ]);
  const { rows } = await db.query<{ value: string }>('SELECT value FROM service_secrets WHERE name = $1', [name]);
  return Buffer.from(rows[0]!.value, 'base64');
}

/** `secret` sealed as the former version sealed it. */
export function sealFormer(key: Buffer, secret: string, boundTo: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(boundTo, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [
    'v1',
    iv.toString('base64url'),
    ciphertext.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
  ].join('.');
}
