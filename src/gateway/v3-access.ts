/**
 * The gateway's way to v3 for a caller outside its server (the CLI's webhooks commands), built
 * from the configuration in one place: the upstream pool, the gateway's credentials read from its
 * key directory, the V3Client over both, and the legacy webhooks' registrar on that client. It
 * opens the pool and nothing else; the caller closes it.
 */
import type { Pool } from 'undici';

import { type Config, signingIssuer } from '../lib/config.js';
import type { Database } from '../lib/db/database.js';
import type { SealingKeyring } from '../lib/secrets/sealing-keyring.js';
import { createUpstreamPool, upstreamOrigin } from './upstream/pool.js';
import { KeyDirectoryCredentials, type UpstreamCredentials } from './upstream/signing-credentials.js';
import { V3Client } from './upstream/v3-client.js';
import { WebhookRegistrar } from './webhooks/registrations.js';

/** The settings the way to v3 is built from. */
export type V3AccessConfig = Pick<
  Config,
  | 'FXGATE_UPSTREAM_URL'
  | 'FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS'
  | 'FXGATE_UPSTREAM_TIMEOUT_MS'
  | 'FXGATE_UPSTREAM_DEADLINE_MS'
  | 'FXGATE_JWT_ISSUER'
>;

/** The gateway's own v3 credentials: the key files in `keysDir`, its tokens issued as the configured issuer. */
export function gatewayCredentials(config: Pick<Config, 'FXGATE_JWT_ISSUER'>, keysDir: string): UpstreamCredentials {
  return new KeyDirectoryCredentials(keysDir, signingIssuer(config));
}

export interface V3Access {
  readonly pool: Pool;
  readonly client: V3Client;
  /** The registrar of the legacy webhooks' v3 endpoints, calling v3 through this client. */
  webhookRegistrar(deps: {
    readonly db: Database;
    readonly keyring: SealingKeyring;
    readonly v3EventTypes: readonly string[];
  }): WebhookRegistrar;
  /** Closes the pool. */
  close(): Promise<void>;
}

/** The way to v3 as configured; null without FXGATE_UPSTREAM_URL. An invalid URL throws InvalidUpstreamError. */
export function openV3Access(config: V3AccessConfig, keysDir: string): V3Access | null {
  if (config.FXGATE_UPSTREAM_URL === undefined) return null;
  const pool = createUpstreamPool({
    origin: upstreamOrigin(config.FXGATE_UPSTREAM_URL),
    connectTimeoutMs: config.FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS,
    timeoutMs: config.FXGATE_UPSTREAM_TIMEOUT_MS,
  });
  const client = new V3Client({
    dispatcher: pool,
    credentials: gatewayCredentials(config, keysDir),
    deadlineMs: config.FXGATE_UPSTREAM_DEADLINE_MS,
  });
  return {
    pool,
    client,
    webhookRegistrar: (deps) => new WebhookRegistrar({ ...deps, client }),
    close: () => pool.close(),
  };
}
