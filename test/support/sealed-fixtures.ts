/**
 * Rows with sealed secrets, one of each sealed column, made through the functions the parts
 * store them with (a v3 webhook endpoint, a legacy subscription) and, for the gateway's v3
 * registration, as the registrar writes it; and the same rows as the version before the keyring
 * left them (former-sealing.ts). Each comes with its secret, to check what opens and what signs.
 */
import { randomBytes } from 'node:crypto';

import { createWebhookEndpoint, endpointSecretBinding } from '../../src/core/events/webhook-endpoints.js';
import { registrationSecretBinding, registrationUrl } from '../../src/gateway/webhooks/registrations.js';
import {
  addSubscription,
  newSigningSecret,
  subscriptionSecretBinding,
} from '../../src/gateway/webhooks/subscriptions.js';
import type { Database } from '../../src/lib/db/database.js';
import { newUuid } from '../../src/lib/ids.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import { webhookPolicies, webhookPolicy } from '../../src/lib/net/destination-policy.js';
import { SealingKeyring } from '../../src/lib/secrets/sealing-keyring.js';
import { FORMER_KEY_NAMES, formerKey, sealFormer } from './former-sealing.js';
import { testRedisEnv } from './test-run.js';

/**
 * Where the registrations are made to point: a gateway started with FXGATE_GATEWAY_WEBHOOK_URL set
 * to it finds them in place and asks v3 nothing. Nothing listens there; nothing is sent.
 */
export const FIXTURE_WEBHOOK_BASE = 'http://127.0.0.1:9/_fxgate/webhooks/v3';

/**
 * The environment of a CLI run on PostgreSQL at `databaseUrl` whose sealed rows a test looks at:
 * servers on loopback port 0, the fixture's webhook base, no delivery worker, and the sealing
 * keys when given (FXGATE_SECRETS_KEY, comma-separated, the first sealing).
 */
export function sealingCliEnv(databaseUrl: string, dataDir: string, keys?: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    ...testRedisEnv(),
    FXGATE_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    FXGATE_GATEWAY_WEBHOOK_URL: FIXTURE_WEBHOOK_BASE,
    FXGATE_WEBHOOK_WORKER: 'off',
    ...(keys === undefined ? {} : { FXGATE_SECRETS_KEY: keys }),
  };
}

export interface SealedRow {
  readonly table: 'webhook_endpoints' | 'legacy_webhook_subscriptions' | 'legacy_webhook_registrations';
  readonly id: string;
  readonly binding: string;
  readonly secret: string;
}

/** A webhook endpoint, a legacy subscription and a gateway registration of a new org, sealed under the keyring. */
export async function sealedRows(db: Database, keyring: SealingKeyring, orgId = newUuid()): Promise<SealedRow[]> {
  await new KeyRegistry(db).ensureOrg(orgId);
  const endpoint = await createWebhookEndpoint(
    db,
    keyring,
    { orgId, environment: 'sandbox', url: 'https://receiver.example/v3', eventTypes: [], at: new Date() },
    webhookPolicy('sandbox'),
  );
  const subscription = await addSubscription(
    db,
    keyring,
    { orgId, mode: 'sandbox', url: 'https://receiver.example/legacy', events: ['deposits'], at: new Date() },
    webhookPolicies(),
  );
  const registrationId = newUuid();
  const registrationSecret = newSigningSecret();
  await db.query(
    `INSERT INTO legacy_webhook_registrations (id, org_id, mode, url, status, idempotency_key, endpoint_id, secret, created_at, updated_at)
     VALUES ($1, $2, 'sandbox', $3, 'ACTIVE', $4, $5, $6, now(), now())`,
    [
      registrationId,
      orgId,
      registrationUrl(FIXTURE_WEBHOOK_BASE, orgId, 'sandbox'),
      `reg-${registrationId}`,
      `whe_${registrationId.replaceAll('-', '')}`,
      keyring.seal(registrationSecret, registrationSecretBinding(registrationId)),
    ],
  );
  return [
    {
      table: 'webhook_endpoints',
      id: endpoint.row.id,
      binding: endpointSecretBinding(endpoint.row.id),
      secret: endpoint.secret,
    },
    {
      table: 'legacy_webhook_subscriptions',
      id: subscription.subscription.id,
      binding: subscriptionSecretBinding(subscription.subscription.id),
      secret: subscription.secret,
    },
    {
      table: 'legacy_webhook_registrations',
      id: registrationId,
      binding: registrationSecretBinding(registrationId),
      secret: registrationSecret,
    },
  ];
}

/** What a row holds now. */
export async function storedSecret(db: Database, row: Pick<SealedRow, 'table' | 'id'>): Promise<string> {
  const { rows } = await db.query<{ secret: string }>(`SELECT secret FROM ${row.table} WHERE id = $1`, [row.id]);
  return rows[0]!.secret;
}

/** Every sealed value of the three columns, with its binding. */
export async function everySealedValue(db: Database): Promise<{ binding: string; stored: string }[]> {
  const found: { binding: string; stored: string }[] = [];
  const columns = [
    ['webhook_endpoints', endpointSecretBinding],
    ['legacy_webhook_subscriptions', subscriptionSecretBinding],
    ['legacy_webhook_registrations', registrationSecretBinding],
  ] as const;
  for (const [table, binding] of columns) {
    const { rows } = await db.query<{ id: string; secret: string }>(
      `SELECT id::text AS id, secret FROM ${table} WHERE secret IS NOT NULL`,
    );
    for (const row of rows) found.push({ binding: binding(row.id), stored: row.secret });
  }
  return found;
}

/**
 * The rows as the version before the keyring left them: the same three sealed `v1.` under the
 * service_secrets keys it made, and an endpoint it stored as it is (a version before sealing).
 */
export async function formerRows(db: Database, orgId = newUuid()): Promise<SealedRow[]> {
  // Made through today's functions, then rewritten to what the former version stored.
  const rows = await sealedRows(db, SealingKeyring.of([randomBytes(32)]), orgId);
  const plaintext = await createWebhookEndpoint(
    db,
    SealingKeyring.of([randomBytes(32)]),
    { orgId, environment: 'sandbox', url: 'https://receiver.example/plain', eventTypes: [], at: new Date() },
    webhookPolicy('sandbox'),
  );
  await db.query('UPDATE webhook_endpoints SET secret = $2 WHERE id = $1', [plaintext.row.id, plaintext.secret]);
  for (const row of rows) {
    const key = await formerKey(
      db,
      row.table === 'webhook_endpoints' ? FORMER_KEY_NAMES.endpoints : FORMER_KEY_NAMES.legacy,
    );
    await db.query(`UPDATE ${row.table} SET secret = $2 WHERE id = $1`, [
      row.id,
      sealFormer(key, row.secret, row.binding),
    ]);
  }
  return [
    ...rows,
    {
      table: 'webhook_endpoints',
      id: plaintext.row.id,
      binding: endpointSecretBinding(plaintext.row.id),
      secret: plaintext.secret,
    },
  ];
}
