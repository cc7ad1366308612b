/**
 * The format of `mappings/webhooks.ts`, the legacy webhooks the gateway delivers, and the
 * validator the gateway runs when it loads it: which v3 event each legacy event is made from, its
 * envelope (`{eventId, type, message, timestamp, data}`), and its records, field by field in the
 * format of record-shapes.ts. Part of the legacy layer's declarations.
 */
import { z } from 'zod';

import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';
import { parseDeclaration } from './mapping-error.js';
import {
  letterName as fieldName,
  nonEmptyText as text,
  provenanceShape,
  type RecordCodeRegistry,
  type RecordShape,
  type RecordTable,
  validateRecords,
  type ValueMapTable,
} from './record-shapes.js';

/**
 * The v3 event types the legacy webhooks may be made from (the v3 contract's), and the v3 record
 * kind each one's `data` is.
 */
export const V3_WEBHOOK_EVENTS = {
  'deposit.pending': 'deposit',
  'deposit.completed': 'deposit',
  'deposit.failed': 'deposit',
  'withdrawal.pending': 'withdrawal',
  'withdrawal.processing': 'withdrawal',
  'withdrawal.completed': 'withdrawal',
  'withdrawal.failed': 'withdrawal',
  'withdrawal.cancelled': 'withdrawal',
} as const;
export type V3WebhookEventType = keyof typeof V3_WEBHOOK_EVENTS;
const V3_WEBHOOK_EVENT_TYPES = Object.keys(V3_WEBHOOK_EVENTS) as [V3WebhookEventType, ...V3WebhookEventType[]];

/** The legacy envelope's `type`, by the v3 record kind of the event. */
const LEGACY_RESOURCES = { deposit: 'deposits', withdrawal: 'withdrawals' } as const;
export type LegacyWebhookResource = (typeof LEGACY_RESOURCES)[keyof typeof LEGACY_RESOURCES];

/** What an envelope field holds; the builder computes each (webhooks/legacy-payload.ts). */
export const ENVELOPE_VALUES = {
  eventUuid: 'the v3 event id as a UUID (the same 128 bits)',
  resource: "the event's `type`",
  message: "the event's `message`",
  eventCreatedAt: 'when the v3 event happened (ISO 8601 UTC)',
  records: "the event's record, in a list",
} as const;
export type EnvelopeValue = keyof typeof ENVELOPE_VALUES;

/** Subscription names are typed on a command line, comma-separated. */
export const EVENT_NAME = /^[a-z]+(-[a-z]+)*$/;

/** An envelope field: the value it holds, with its provenance. */
const envelopeFieldSchema = z.strictObject({
  ...provenanceShape,
  value: z.enum(Object.keys(ENVELOPE_VALUES) as [EnvelopeValue, ...EnvelopeValue[]]),
});
export type EnvelopeField = Readonly<z.infer<typeof envelopeFieldSchema>>;

/** One legacy event a subscription can ask for, by name. */
const eventSchema = z.strictObject({
  ...provenanceShape,
  summary: text,
  /** The v3 event it is made from. */
  v3: z.enum(V3_WEBHOOK_EVENT_TYPES),
  type: z.enum(Object.values(LEGACY_RESOURCES) as [LegacyWebhookResource, ...LegacyWebhookResource[]]),
  message: text,
  /** The record shape (of `records`) of each element of `data`. */
  record: fieldName,
  /** Whether a subscription that names no events gets it. */
  byDefault: z.boolean(),
});
export type LegacyWebhookEvent = Readonly<z.infer<typeof eventSchema>>;

const tableSchema = z.strictObject({
  /** The envelope's fields, in the order the receiver sees them. */
  envelope: z.record(fieldName, envelopeFieldSchema),
  /** Keyed by the name subscriptions use (`fxgate webhooks add --events`). */
  events: z.record(z.string().regex(EVENT_NAME, 'lower-case words joined by hyphens'), eventSchema),
  records: z.unknown(),
});

export type LegacyWebhookTable = Readonly<
  Omit<z.infer<typeof tableSchema>, 'records' | 'envelope' | 'events'> & {
    readonly envelope: Readonly<Record<string, EnvelopeField>>;
    readonly events: Readonly<Record<string, LegacyWebhookEvent>>;
    readonly records: RecordTable;
  }
>;

/**
 * Validates the webhook declarations as loaded (unknown input) against the value maps and the
 * registered code; returns them typed or throws LegacyMappingError listing every problem.
 */
export function validateWebhookTable(
  table: unknown,
  maps: ValueMapTable,
  registry: RecordCodeRegistry,
  tableName = 'mappings/webhooks',
): LegacyWebhookTable {
  const parsed = parseDeclaration(tableSchema, table, tableName);
  const records = validateRecords(parsed.records, maps, registry, `${tableName} (records)`);
  const problems: string[] = [];

  const values = Object.values(parsed.envelope).map((field) => field.value);
  for (const value of Object.keys(ENVELOPE_VALUES) as EnvelopeValue[]) {
    const count = values.filter((declared) => declared === value).length;
    if (count !== 1)
      problems.push(`envelope: ${value} (${ENVELOPE_VALUES[value]}) must be declared exactly once, not ${count} times`);
  }

  const seenV3 = new Map<string, string>();
  for (const [name, event] of Object.entries(parsed.events)) {
    const where = `events.${name}`;
    const kind = V3_WEBHOOK_EVENTS[event.v3];
    const shape: RecordShape | undefined = records[event.record];
    if (shape === undefined) problems.push(`${where}.record: no record named ${event.record}`);
    else if (shape.v3 !== kind)
      problems.push(
        `${where}.record: ${event.record} is built from the v3 ${shape.v3}, but ${event.v3} carries a ${kind}`,
      );
    if (event.type !== LEGACY_RESOURCES[kind])
      problems.push(`${where}.type: ${event.v3} is about ${LEGACY_RESOURCES[kind]}, not ${event.type}`);
    // One v3 event makes one legacy event: a receiver must never get two bodies for one change.
    const earlier = seenV3.get(event.v3);
    if (earlier !== undefined) problems.push(`${where}.v3: ${event.v3} already makes ${earlier}`);
    seenV3.set(event.v3, name);
  }
  if (!Object.values(parsed.events).some((event) => event.byDefault))
    problems.push('events: at least one must be sent by default');

  for (const [name, shape] of Object.entries(records)) {
    for (const [field, declared] of Object.entries(shape.fields)) {
      // No API key stands behind a webhook: only the subscription's org is known.
      if ('context' in declared && declared.context !== 'orgId')
        problems.push(
          `records.${name}.fields.${field}.context: a webhook knows the org, not a caller's ${declared.context}`,
        );
    }
  }
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
  return { envelope: parsed.envelope, events: parsed.events, records };
}

/** The events a subscription gets when it names none. */
export function defaultWebhookEvents(table: LegacyWebhookTable): string[] {
  return Object.entries(table.events)
    .filter(([, event]) => event.byDefault)
    .map(([name]) => name);
}
