/** `fxgate keys list` output: one aligned row per key, for people; ISO times so it also sorts. */
import type { ApiKeyRecord } from '../lib/keys/key-registry.js';
import { textTable } from './text-table.js';

const HEADER = ['NAME', 'MODE', 'SCOPES', 'IP ALLOWLIST', 'CREATED', 'REVOKED'];
const NONE = '-';

function row(key: ApiKeyRecord): string[] {
  return [
    key.name,
    key.mode,
    key.scopes.join(','),
    key.ipAllowlist.length > 0 ? key.ipAllowlist.join(',') : 'any',
    key.createdAt.toISOString(),
    key.revokedAt ? key.revokedAt.toISOString() : NONE,
  ];
}

export function formatKeyTable(keys: readonly ApiKeyRecord[]): string {
  return textTable(HEADER, keys.map(row)).join('\n');
}
