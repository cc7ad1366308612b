/**
 * Builds a legacy webhook body from a v3 delivery, as mappings/webhooks.ts declares it: the v3
 * envelope `{id, type, eventType, createdAt, data}` is read through its schema, `data` through
 * the v3 record schema of its kind (readV3), and the legacy record by the declared shape
 * (compileRecord, as the legacy answers are built). Amounts are LegacyAmount, written as JSON
 * numbers with exactly the v3 digits. Compiled once when the gateway starts.
 */
import { z } from 'zod';

import { V3ContractError } from '../../lib/errors/internal-errors.js';
import { idToLegacyUuid, isId } from '../../lib/ids.js';
import type { ValueMapTable } from '../legacy/declarations/record-shapes.js';
import {
  defaultWebhookEvents,
  type EnvelopeValue,
  type LegacyWebhookTable,
  V3_WEBHOOK_EVENTS,
} from '../legacy/declarations/webhook-shapes.js';
import { stringifyLegacyJson } from '../legacy/runtime/lossless-json.js';
import { compileRecord } from '../legacy/transforms/response-body.js';
import { readV3, V3_RECORDS } from '../legacy/v3-contract/v3-records.js';

/** The v3 delivery envelope, as much of it as the gateway reads. */
const v3EnvelopeSchema = z.object({
  id: z.string().refine((id) => isId('event', id), 'must be an evt_ id'),
  type: z.string().min(1),
  eventType: z.string().min(1),
  createdAt: z.iso.datetime({ error: 'must be an ISO 8601 UTC timestamp' }),
  data: z.record(z.string(), z.unknown()),
});
export type V3WebhookEnvelope = z.output<typeof v3EnvelopeSchema>;

/** Reads a v3 delivery's raw body; a V3ContractError names what is wrong. */
export function parseV3WebhookEnvelope(rawBody: Buffer): V3WebhookEnvelope {
  let parsed: unknown;
  try {
    // v3 writes amounts as strings, so plain JSON parsing loses nothing.
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new V3ContractError('webhook delivery', ['(body): not JSON']);
  }
  return readV3(v3EnvelopeSchema, parsed, 'webhook delivery', '');
}

export interface LegacyWebhookBody {
  /** The subscription name of the legacy event (`deposits`, `failed-withdrawals`, ...). */
  readonly event: string;
  /** The envelope's eventId: the v3 event id as a UUID. */
  readonly eventId: string;
  /** The exact bytes every delivery sends and signs. */
  readonly body: string;
}

export interface LegacyWebhookBuilder {
  /** Every declared event name, and those a subscription gets when it names none. */
  readonly eventNames: readonly string[];
  readonly defaultEvents: readonly string[];
  /** The v3 event types the gateway's v3 endpoints subscribe to. */
  readonly v3EventTypes: readonly string[];
  /** The legacy body, or null when no legacy event is made from this v3 event; a V3ContractError when its data breaks the contract. */
  build(envelope: V3WebhookEnvelope, orgId: string): LegacyWebhookBody | null;
}

type EnvelopeBuild = (input: {
  readonly envelope: V3WebhookEnvelope;
  readonly eventId: string;
  readonly resource: string;
  readonly message: string;
  readonly record: Record<string, unknown>;
}) => unknown;

const ENVELOPE_BUILDS: Readonly<Record<EnvelopeValue, EnvelopeBuild>> = {
  eventUuid: ({ eventId }) => eventId,
  resource: ({ resource }) => resource,
  message: ({ message }) => message,
  eventCreatedAt: ({ envelope }) => envelope.createdAt,
  records: ({ record }) => [record],
};

export function compileLegacyWebhooks(table: LegacyWebhookTable, maps: ValueMapTable): LegacyWebhookBuilder {
  const envelopeFields = Object.entries(table.envelope).map(
    ([name, field]) => [name, ENVELOPE_BUILDS[field.value]] as const,
  );
  const byV3 = new Map<
    string,
    {
      name: string;
      event: LegacyWebhookTable['events'][string];
      schema: z.ZodType<Record<string, unknown>>;
      record: ReturnType<typeof compileRecord>;
    }
  >(
    Object.entries(table.events).map(([name, event]) => {
      const shape = table.records[event.record]!;
      const schema = V3_RECORDS[V3_WEBHOOK_EVENTS[event.v3]] as unknown as z.ZodType<Record<string, unknown>>;
      return [event.v3, { name, event, schema, record: compileRecord(shape, maps) }] as const;
    }),
  );
  return {
    eventNames: Object.keys(table.events),
    defaultEvents: defaultWebhookEvents(table),
    v3EventTypes: [...byV3.keys()].sort(),
    build(envelope, orgId) {
      const compiled = byV3.get(envelope.eventType);
      if (compiled === undefined) return null;
      const operation = `webhook ${envelope.eventType}`;
      const v3 = readV3(compiled.schema, envelope.data, operation, 'data');
      const record = compiled.record(v3, { orgId, keyId: '' }, operation, 'data');
      const eventId = idToLegacyUuid('event', envelope.id);
      if (eventId === null) throw new V3ContractError(operation, ['id: must be an evt_ id']);
      const input = { envelope, eventId, resource: compiled.event.type, message: compiled.event.message, record };
      const body = Object.fromEntries(envelopeFields.map(([name, build]) => [name, build(input)]));
      return { event: compiled.name, eventId, body: stringifyLegacyJson(body) };
    },
  };
}
