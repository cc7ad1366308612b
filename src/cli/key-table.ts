/**
 * `fxgate keys list` output: one aligned row per key, for people; ISO times so it also sorts.
 * The gateway's own v3 credentials (the keys `fxgate all` provisions for the gateway, told apart
 * by their label) carry a marker, and a footnote under the table says what they are. Pure.
 */
import { PROVISIONED_LABEL } from '../gateway/upstream/signing-credentials.js';
import type { ApiKeyRecord } from '../lib/keys/key-registry.js';
import { textTable } from './text-table.js';

const HEADER = ['NAME', 'MODE', 'SCOPES', 'IP ALLOWLIST', 'CREATED', 'REVOKED', 'LABEL'];
const NONE = '-';
/** After the label of a gateway credential, and before its footnote. */
export const GATEWAY_CREDENTIAL_MARK = '*';
export const GATEWAY_CREDENTIAL_NOTE = `${GATEWAY_CREDENTIAL_MARK} the gateway's own v3 credential for its org and mode: used by the gateway to call the core; do not revoke (the gateway would make another at its next call)`;

export function isGatewayCredential(key: ApiKeyRecord): boolean {
  return key.label === PROVISIONED_LABEL;
}

function labelCell(key: ApiKeyRecord): string {
  if (isGatewayCredential(key)) return `${key.label} ${GATEWAY_CREDENTIAL_MARK}`;
  return key.label ?? NONE;
}

function row(key: ApiKeyRecord): string[] {
  return [
    key.name,
    key.mode,
    key.scopes.join(','),
    key.ipAllowlist.length > 0 ? key.ipAllowlist.join(',') : 'any',
    key.createdAt.toISOString(),
    key.revokedAt ? key.revokedAt.toISOString() : NONE,
    labelCell(key),
  ];
}

export function formatKeyTable(keys: readonly ApiKeyRecord[]): string {
  const lines = textTable(HEADER, keys.map(row));
  if (keys.some(isGatewayCredential)) lines.push('', GATEWAY_CREDENTIAL_NOTE);
  return lines.join('\n');
}
