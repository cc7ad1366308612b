/**
 * What a v1/v2 client sends (docs/contract.md#auth-legacy): a fresh ES256 JWT per request, signed
 * with the key file's private key (kid = sub = the key name, aud ['developer-api'], the service's
 * issuer, a 32-hex nonce in the header, the longest lifetime legacy accepts). No
 * X-Request-Signature (v3 only), and no X-App-Mode for a live key (absent means live).
 */
import { randomUUID } from 'node:crypto';

import { LEGACY_MAX_TOKEN_LIFETIME_SECONDS } from '../../src/gateway/legacy/runtime/auth.js';
import { signApiToken } from '../../src/lib/auth/jwt.js';
import { type IdKind, idToLegacyUuid } from '../../src/lib/ids.js';
import { type KeyFile, type LoadedKey, loadKey } from '../../src/lib/keys/key-file.js';
import type { HttpMethod, PreparedRequest } from './requests.js';

export { LEGACY_MAX_TOKEN_LIFETIME_SECONDS };

export class LegacySigner {
  private readonly key: LoadedKey;

  constructor(
    keyFile: KeyFile,
    private readonly issuer: string,
  ) {
    this.key = loadKey(keyFile);
  }

  /** The org in the legacy paths: the key's own. */
  get orgId(): string {
    return this.key.file.orgId;
  }

  async headers(): Promise<Record<string, string>> {
    const { token } = await signApiToken({
      privateKey: this.key.privateKey,
      keyName: this.key.file.name,
      issuer: this.issuer,
      lifetimeSeconds: LEGACY_MAX_TOKEN_LIFETIME_SECONDS,
    });
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (this.key.file.mode === 'sandbox') headers['x-app-mode'] = 'SANDBOX';
    return headers;
  }

  /** `/{generation}/brokerage/{orgId}/{operation}` with the key's org. */
  path(generation: 'v1' | 'v2', operation: string): string {
    return `/${generation}/brokerage/${this.orgId}/${operation}`;
  }

  /** A GET with its own token. */
  async get(path: string): Promise<PreparedRequest> {
    return { method: 'GET', path, headers: await this.headers() };
  }

  /** A v2 write: its own token and its own Idempotency-Key (v1 writes have none). */
  async post(path: string, body: string, method: HttpMethod = 'POST'): Promise<PreparedRequest> {
    const headers = { ...(await this.headers()), 'content-type': 'application/json', 'idempotency-key': randomUUID() };
    return { method, path, headers, body };
  }
}

/** The legacy UUID of a v3 id (`trd_<32 hex>` -> 8-4-4-4-12); throws when the id is not of that kind. */
export function legacyUuidOf(kind: IdKind, id: string): string {
  const uuid = idToLegacyUuid(kind, id);
  if (uuid === null) throw new Error(`${JSON.stringify(id)} is not a v3 ${kind} id`);
  return uuid;
}
