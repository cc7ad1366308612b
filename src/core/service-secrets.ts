/**
 * Secrets the service makes for itself (the cursor HMAC key): created once, on first use, in the
 * system of record, so that every process of a deployment and every restart agree on them
 * without an operator having to supply one. Concurrent first uses converge on one value.
 */
import { randomBytes } from 'node:crypto';

import type { Queryable } from '../lib/db/database.js';

export const SERVICE_SECRET_BYTES = 32;

export async function loadOrCreateServiceSecret(db: Queryable, name: string): Promise<Buffer> {
  await db.query('INSERT INTO service_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    name,
    randomBytes(SERVICE_SECRET_BYTES).toString('base64'),
  ]);
  const { rows } = await db.query<{ value: string }>('SELECT value FROM service_secrets WHERE name = $1', [name]);
  return Buffer.from(rows[0]!.value, 'base64');
}
