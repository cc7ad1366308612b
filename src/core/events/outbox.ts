/**
 * The event outbox. A state change that clients hear about (a deposit or withdrawal moving to a
 * new status) records its event in the same SQL transaction, and fans it out there to one
 * delivery row per subscribed webhook endpoint. If the transaction rolls back, no event exists;
 * if it commits, the delivery worker will find it, whatever happens to the process afterwards.
 */
import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Queryable } from '../../lib/db/database.js';
import { newId } from '../../lib/ids.js';

/** The v3 delivery envelope's resource noun (docs/contract.md#webhooks-v3-envelope). */
export type EventResource = 'deposits' | 'withdrawals';

export interface EventInput {
  readonly orgId: string;
  readonly environment: Mode;
  readonly type: EventResource;
  /** `<resource>.<status in lower case>`, e.g. `withdrawal.completed`: docs/contract.md#webhooks-v3-events. */
  readonly eventType: string;
  /** The resource as the v3 API shows it: camelCase keys, amounts as strings. */
  readonly data: Record<string, unknown>;
  readonly at: Date;
}

/** Records the event and its deliveries (fx_record_event, migration 0013); returns the event id. */
export async function recordEvent(tx: Queryable, event: EventInput): Promise<string> {
  const id = newId('event', event.at.getTime());
  await tx.query('SELECT fx_record_event($1, $2, $3, $4, $5, $6::jsonb, $7)', [
    id,
    event.orgId,
    event.environment,
    event.type,
    event.eventType,
    JSON.stringify(event.data),
    event.at,
  ]);
  return id;
}

/** The type of the event a resource's status is announced by: `withdrawal.pending`, `deposit.completed`. */
export function statusEventType(type: EventResource, status: string): string {
  return `${type.slice(0, -1)}.${status.toLowerCase()}`;
}

/**
 * The event of a deposit or withdrawal (`row`) that has just reached its status: `deposit.completed`,
 * `withdrawal.failed`, carrying the record as v3 shows it.
 */
export async function recordStatusEvent(
  tx: Queryable,
  type: EventResource,
  row: { readonly org_id: string; readonly environment: Mode; readonly status: string },
  record: object,
  at: Date,
): Promise<void> {
  await recordEvent(tx, {
    orgId: row.org_id,
    environment: row.environment,
    type,
    eventType: statusEventType(type, row.status),
    data: { ...record },
    at,
  });
}
