/**
 * The vocabulary of API credentials shared by every generation: key names, scopes and modes.
 */
export const SCOPES = ['view', 'trade', 'withdraw', 'webhooks'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The `iss` values tokens may carry: real legacy clients send the legacy service's own name, so
 * fxgate accepts it beside its own. The first entry is the one fxgate signs with itself, and
 * the one the v3 client (lib/client/) signs with unless told otherwise.
 */
export const DEFAULT_JWT_ISSUERS: readonly [string, ...string[]] = Object.freeze(['fx-service', 'openfx'] as const);

export const MODES = ['sandbox', 'live'] as const;
export type Mode = (typeof MODES)[number];

const KEY_NAME =
  /^org\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/apiKey\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function keyName(orgId: string, keyId: string): string {
  return `org/${orgId}/apiKey/${keyId}`;
}

/** `org/{orgId}/apiKey/{keyId}` -> its parts; null for anything else. */
export function parseKeyName(name: string): { orgId: string; keyId: string } | null {
  const match = KEY_NAME.exec(name);
  return match ? { orgId: match[1]!, keyId: match[2]! } : null;
}
