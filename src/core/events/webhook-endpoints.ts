/**
 * Webhook endpoints: where an org's events go. The URL rule (with the book's destination policy,
 * src/lib/net/destination-policy.ts), the secret, and the rows. An endpoint belongs to one book
 * (org + environment) and hears only that book's events. The signing secret is stored sealed
 * under the service's keyring (src/lib/secrets/), bound to its endpoint; only the delivery worker
 * opens it, to sign.
 */
import { randomBytes } from 'node:crypto';

import { z } from 'zod';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Database, Queryable } from '../../lib/db/database.js';
import { ApiError } from '../../lib/errors/api-error.js';
import { isId, newId } from '../../lib/ids.js';
import type { DestinationPolicy } from '../../lib/net/destination-policy.js';
import type { SealedColumn } from '../../lib/secrets/sealed-rows.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import { webhookUrlCheck } from '../../lib/webhooks/webhook-url.js';
import { timestamp, v3Id } from '../wire-types.js';

/** Every event type the core emits: docs/contract.md#webhooks-v3-events. */
export const WEBHOOK_EVENT_TYPES = [
  'deposit.pending',
  'deposit.completed',
  'deposit.failed',
  'withdrawal.pending',
  'withdrawal.processing',
  'withdrawal.completed',
  'withdrawal.failed',
  'withdrawal.cancelled',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Active endpoints per book. The list is a bounded list (complete `data`, no cursor, like
 * pairs), which only holds if the number it can return is bounded; every event also fans out
 * to each of them inside the transaction that records it.
 */
export const MAX_ACTIVE_ENDPOINTS = 20;

export interface WebhookEndpointRow {
  readonly id: string;
  readonly org_id: string;
  readonly environment: Mode;
  readonly url: string;
  readonly event_types: string[];
  readonly status: 'ACTIVE' | 'DELETED';
  readonly created_at: Date;
  readonly deleted_at: Date | null;
}

/** The webhook endpoint record (docs/contract.md#resources-webhook-endpoint), as toWebhookEndpointRecord writes it. */
export const webhookEndpointRecordSchema = z
  .object({
    object: z.literal('webhook_endpoint'),
    id: v3Id('webhookEndpoint'),
    url: z.string().meta({ description: 'Normalised.' }),
    eventTypes: z.array(z.string()).meta({ description: 'Empty: every event type.' }),
    status: z.enum(['ACTIVE', 'DELETED']),
    createdAt: timestamp,
    deletedAt: timestamp.nullable(),
  })
  .meta({ id: 'WebhookEndpoint', description: "Where the book's events are delivered." });

export type WebhookEndpointRecord = Readonly<z.output<typeof webhookEndpointRecordSchema>>;

/** The create answer: the record and its signing secret, which no other answer shows. */
export const createdWebhookEndpointSchema = webhookEndpointRecordSchema
  .extend({
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9_-]{43}$/)
      .meta({ description: 'whsec_ and 32 random bytes in base64url; shown in this answer only.' }),
  })
  .meta({ id: 'CreatedWebhookEndpoint', description: 'A new webhook endpoint with its signing secret.' });

const COLUMNS = 'id, org_id, environment, url, event_types, status, created_at, deleted_at';

export function toWebhookEndpointRecord(row: WebhookEndpointRow): WebhookEndpointRecord {
  return {
    object: 'webhook_endpoint',
    id: row.id,
    url: row.url,
    eventTypes: row.event_types,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    deletedAt: row.deleted_at?.toISOString() ?? null,
  };
}

const SECRET_PREFIX = 'whsec_';

/** What a sealed secret is bound to: a value copied onto another endpoint's row does not open. */
export function endpointSecretBinding(endpointId: string): string {
  return `webhook_endpoint:${endpointId}`;
}

/**
 * Where the endpoints' secrets are sealed, for the start-up check, the upgrade and `fxgate secrets`;
 * earlier versions sealed them under a key of their own in service_secrets.
 */
export const ENDPOINT_SECRET_COLUMN: SealedColumn = {
  table: 'webhook_endpoints',
  column: 'secret',
  binding: endpointSecretBinding,
  formerKeyName: 'webhook-endpoint-secrets',
};

/**
 * The signing secret of a stored row. A row a version before sealing wrote holds the secret
 * itself (it starts with `whsec_`, which sealed text never does): a process of that version may
 * still be writing during a rolling upgrade. Throws SealedSecretError when the sealed text does
 * not open with the keyring.
 */
export function openEndpointSecret(keyring: SealingKeyring, endpointId: string, stored: string): string {
  return stored.startsWith(SECRET_PREFIX) ? stored : keyring.open(stored, endpointSecretBinding(endpointId));
}

/** `whsec_` and 32 random bytes in base64url: 256 bits, the HMAC-SHA256 block's worth. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * The URL deliveries are POSTed to, normalised (WHATWG URL), or 422 WEBHOOK_URL_INVALID naming
 * the reason. Its host must be one the book's destination policy allows
 * (src/lib/net/destination-policy.ts): the URL parser has already turned every way of writing
 * an address (2130706433, 0x7f.1, [::ffff:7f00:1] ...) into the address itself. Live events carry
 * real money movements, so they travel only over https, except to the sender's own machine or
 * the service's own listener, where TLS protects nothing; the sandbox also allows http so
 * integrators can start with a plain local server.
 */
export function checkWebhookUrl(url: string, environment: Mode, destinations: DestinationPolicy): string {
  const checked = webhookUrlCheck(url, environment, destinations, 'endpoints');
  if ('refusal' in checked) throw new ApiError('WEBHOOK_URL_INVALID', { url, reason: checked.refusal });
  return checked.href;
}

export interface CreateEndpointInput {
  readonly orgId: string;
  readonly environment: Mode;
  readonly url: string;
  readonly eventTypes: readonly string[];
  readonly at: Date;
}

/**
 * Creates an active endpoint at a URL the book's destination policy allows; returns it and its
 * secret, which is never read back out again (the row holds it sealed).
 * No idempotency column: nothing moves money here, and the pipeline's idempotency store
 * already replays the first response (secret included) for a retried key. A store that lost
 * its record would let a retry create a second endpoint, which the client can delete.
 */
export async function createWebhookEndpoint(
  db: Database,
  keyring: SealingKeyring,
  input: CreateEndpointInput,
  destinations: DestinationPolicy,
): Promise<{ row: WebhookEndpointRow; secret: string }> {
  const url = checkWebhookUrl(input.url, input.environment, destinations);
  const eventTypes = [...new Set(input.eventTypes)].sort();
  const secret = newWebhookSecret();
  const row = await db.transaction(async (tx) => {
    // The book row serialises creations in one book, so the cap holds under concurrency.
    await tx.query('SELECT 1 FROM org_environments WHERE org_id = $1 AND environment = $2 FOR UPDATE', [
      input.orgId,
      input.environment,
    ]);
    const { rows: counted } = await tx.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = $1 AND environment = $2 AND status = 'ACTIVE'",
      [input.orgId, input.environment],
    );
    if (counted[0]!.n >= MAX_ACTIVE_ENDPOINTS) {
      throw new ApiError('WEBHOOK_URL_INVALID', {
        url: input.url,
        reason: `at most ${MAX_ACTIVE_ENDPOINTS} active endpoints per book; delete one first`,
      });
    }
    const id = newId('webhookEndpoint', input.at.getTime());
    const { rows } = await tx.query<WebhookEndpointRow>(
      `INSERT INTO webhook_endpoints (id, org_id, environment, url, event_types, secret, status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'ACTIVE', $7) RETURNING ${COLUMNS}`,
      [id, input.orgId, input.environment, url, eventTypes, keyring.seal(secret, endpointSecretBinding(id)), input.at],
    );
    return rows[0]!;
  });
  return { row, secret };
}

export async function listWebhookEndpoints(
  db: Queryable,
  orgId: string,
  environment: Mode,
): Promise<WebhookEndpointRow[]> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE org_id = $1 AND environment = $2 AND status = 'ACTIVE'
      ORDER BY created_at DESC, id DESC LIMIT ${MAX_ACTIVE_ENDPOINTS}`,
    [orgId, environment],
  );
  return rows;
}

/** An active endpoint of this book, or null (unknown, another org's, or deleted). */
export async function findWebhookEndpoint(
  db: Queryable,
  orgId: string,
  environment: Mode,
  id: string,
): Promise<WebhookEndpointRow | null> {
  // A malformed id names no endpoint (404), and `%00` in the path must not reach PostgreSQL as U+0000.
  if (!isId('webhookEndpoint', id)) return null;
  const { rows } = await db.query<WebhookEndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 AND org_id = $2 AND environment = $3 AND status = 'ACTIVE'`,
    [id, orgId, environment],
  );
  return rows[0] ?? null;
}

/**
 * Marks the endpoint DELETED and gives up its pending deliveries. A delivery a worker holds
 * right now is skipped rather than waited for (its receiver may take the full timeout): the
 * worker finishes that attempt, and gives the row up when it next claims it and finds the
 * endpoint deleted. Returns null when there is no such active endpoint.
 */
export async function deleteWebhookEndpoint(
  db: Database,
  orgId: string,
  environment: Mode,
  id: string,
  at: Date,
): Promise<WebhookEndpointRow | null> {
  if (!isId('webhookEndpoint', id)) return null; // as in findWebhookEndpoint
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<WebhookEndpointRow>(
      `UPDATE webhook_endpoints SET status = 'DELETED', deleted_at = $4
        WHERE id = $1 AND org_id = $2 AND environment = $3 AND status = 'ACTIVE' RETURNING ${COLUMNS}`,
      [id, orgId, environment, at],
    );
    if (rows.length === 0) return null;
    await tx.query(
      `UPDATE webhook_deliveries SET status = 'GAVE_UP'
        WHERE id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'PENDING' FOR UPDATE SKIP LOCKED)`,
      [id],
    );
    return rows[0]!;
  });
}
