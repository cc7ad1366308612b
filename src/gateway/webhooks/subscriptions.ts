/**
 * Legacy webhook subscriptions: an org and mode's legacy events, POSTed to one URL and signed
 * with the subscription's own secret. The secret is made here, shown once (to whoever added the
 * subscription) and stored sealed; only the delivery worker opens it, to sign.
 */
import { randomBytes } from 'node:crypto';

import { type Mode, MODES } from '../../lib/auth/credential-vocabulary.js';
import type { Database, Queryable } from '../../lib/db/database.js';
import { SubscriptionInputError } from '../../lib/errors/internal-errors.js';
import { isUuid, newUuid } from '../../lib/ids.js';
import type { DestinationPolicy } from '../../lib/net/destination-policy.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import { webhookUrlCheck } from '../../lib/webhooks/webhook-url.js';

export interface SubscriptionRow {
  readonly id: string;
  readonly org_id: string;
  readonly mode: Mode;
  readonly url: string;
  readonly events: string[];
  readonly status: 'ACTIVE' | 'REMOVED';
  readonly created_at: Date;
  readonly removed_at: Date | null;
}

export interface Subscription {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly url: string;
  readonly events: readonly string[];
  readonly status: 'ACTIVE' | 'REMOVED';
  readonly createdAt: string;
  readonly removedAt: string | null;
}

const COLUMNS = 'id, org_id, mode, url, events, status, created_at, removed_at';

export function toSubscription(row: SubscriptionRow): Subscription {
  return {
    id: row.id,
    orgId: row.org_id,
    mode: row.mode,
    url: row.url,
    events: row.events,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    removedAt: row.removed_at?.toISOString() ?? null,
  };
}

/** The sealed secret is bound to its subscription: a value copied to another row does not open. */
export function subscriptionSecretBinding(id: string): string {
  return `legacy-webhook-subscription:${id}`;
}

/** `whsec_` and 32 random bytes in base64url, as v3's endpoint secrets: 256 bits for HMAC-SHA256. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * The receiver's URL, normalised. Its host must be one the mode's destination policy allows
 * (src/lib/net/destination-policy.ts), as for v3's endpoints. Live events carry real money
 * movements, so they travel only over https (a receiver on this machine excepted); the sandbox
 * also allows http, as v3's endpoints do.
 */
export function checkSubscriptionUrl(url: string, mode: Mode, destinations: DestinationPolicy): string {
  const checked = webhookUrlCheck(url, mode, destinations, 'subscriptions');
  if ('refusal' in checked)
    throw new SubscriptionInputError(`--url ${JSON.stringify(url.slice(0, 200))}: ${checked.refusal}`);
  return checked.href;
}

/** The event names, checked against the declared ones; the default ones when none are given. */
export function checkEvents(
  events: readonly string[] | undefined,
  declared: readonly string[],
  defaults: readonly string[],
): string[] {
  if (events === undefined) return [...defaults];
  const chosen = [...new Set(events.map((event) => event.trim()).filter((event) => event !== ''))];
  if (chosen.length === 0) throw new SubscriptionInputError(`--events: name at least one of ${declared.join(', ')}`);
  const unknown = chosen.filter((event) => !declared.includes(event));
  if (unknown.length > 0)
    throw new SubscriptionInputError(
      `--events: ${unknown.join(', ')} ${unknown.length === 1 ? 'is not an event' : 'are not events'}; the events are ${declared.join(', ')}`,
    );
  // The declared order, so that a listing reads the same whatever order they were typed in.
  return declared.filter((event) => chosen.includes(event));
}

export interface AddSubscriptionInput {
  readonly orgId: string;
  readonly mode: Mode;
  readonly url: string;
  /** Checked names (checkEvents). */
  readonly events: readonly string[];
  readonly at: Date;
}

/**
 * Stores a new subscription at a URL its mode's destination policy allows; returns it and its
 * secret, which is never read back out in clear again.
 */
export async function addSubscription(
  db: Queryable,
  keyring: SealingKeyring,
  input: AddSubscriptionInput,
  destinations: Readonly<Record<Mode, DestinationPolicy>>,
): Promise<{ subscription: Subscription; secret: string }> {
  const orgId = input.orgId.toLowerCase();
  if (!isUuid(orgId)) throw new SubscriptionInputError(`--org ${JSON.stringify(input.orgId)}: an org id is a UUID`);
  if (!(MODES as readonly string[]).includes(input.mode))
    throw new SubscriptionInputError(`--mode ${JSON.stringify(input.mode)}: sandbox or live`);
  const url = checkSubscriptionUrl(input.url, input.mode, destinations[input.mode]);
  if (input.events.length === 0) throw new SubscriptionInputError('--events: name at least one event');
  const id = newUuid(input.at.getTime());
  const secret = newSigningSecret();
  const { rows } = await db.query<SubscriptionRow>(
    `INSERT INTO legacy_webhook_subscriptions (id, org_id, mode, url, events, secret, status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'ACTIVE', $7) RETURNING ${COLUMNS}`,
    [id, orgId, input.mode, url, [...input.events], keyring.seal(secret, subscriptionSecretBinding(id)), input.at],
  );
  return { subscription: toSubscription(rows[0]!), secret };
}

/** Active subscriptions, oldest first; of one org when given. */
export async function listSubscriptions(db: Queryable, orgId?: string): Promise<Subscription[]> {
  const { rows } =
    orgId === undefined
      ? await db.query<SubscriptionRow>(
          `SELECT ${COLUMNS} FROM legacy_webhook_subscriptions WHERE status = 'ACTIVE' ORDER BY created_at, id`,
        )
      : await db.query<SubscriptionRow>(
          `SELECT ${COLUMNS} FROM legacy_webhook_subscriptions WHERE status = 'ACTIVE' AND org_id = $1 ORDER BY created_at, id`,
          [orgId.toLowerCase()],
        );
  return rows.map(toSubscription);
}

/**
 * Marks the subscription REMOVED and gives up its pending deliveries (a delivery a worker holds
 * right now is skipped; the worker gives it up when it next finds the subscription removed).
 * Null when there is no such active subscription.
 */
export async function removeSubscription(db: Database, id: string, at: Date): Promise<Subscription | null> {
  const lower = id.toLowerCase();
  if (!isUuid(lower)) return null;
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<SubscriptionRow>(
      `UPDATE legacy_webhook_subscriptions SET status = 'REMOVED', removed_at = $2 WHERE id = $1 AND status = 'ACTIVE' RETURNING ${COLUMNS}`,
      [lower, at],
    );
    if (rows.length === 0) return null;
    await tx.query(
      `UPDATE legacy_webhook_deliveries SET status = 'GAVE_UP'
        WHERE id IN (SELECT id FROM legacy_webhook_deliveries WHERE subscription_id = $1 AND status = 'PENDING' FOR UPDATE SKIP LOCKED)`,
      [lower],
    );
    return toSubscription(rows[0]!);
  });
}

/** The org and mode pairs that have an active subscription. */
export async function subscribedBooks(db: Queryable): Promise<{ orgId: string; mode: Mode }[]> {
  const { rows } = await db.query<{ org_id: string; mode: Mode }>(
    `SELECT DISTINCT org_id, mode FROM legacy_webhook_subscriptions WHERE status = 'ACTIVE' ORDER BY org_id, mode`,
  );
  return rows.map((row) => ({ orgId: row.org_id, mode: row.mode }));
}
