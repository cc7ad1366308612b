/**
 * The reference of the legacy webhooks in docs/legacy-api.md, generated from mappings/webhooks.ts
 * (`npm run docs`): the events a subscription can name, the envelope, and each record field by
 * field. A test fails when the page is stale.
 */
import type { LegacyMappings } from '../legacy/declarations/mappings-loader.js';
import { ENVELOPE_VALUES } from '../legacy/declarations/webhook-shapes.js';
import { cell, recordTableLines } from '../legacy/generated-docs/legacy-reference.js';

export function renderLegacyWebhooks(mappings: Pick<LegacyMappings, 'webhooks'>): string {
  const { envelope, events, records } = mappings.webhooks;
  const lines: string[] = ['**Events** (`--events`; the default ones are what the legacy service sent)', ''];
  lines.push(
    '| event | from v3 | `type` | `message` | record | default | source | reason |',
    '|---|---|---|---|---|---|---|---|',
  );
  for (const [name, event] of Object.entries(events)) {
    lines.push(
      `| \`${name}\` | \`${event.v3}\` | ${event.type} | ${event.message} | ${event.record} | ${event.byDefault ? 'yes' : 'no'} | ${event.source} | ${cell(`${event.summary} ${event.reason}`)} |`,
    );
  }
  lines.push('', '**Envelope**', '', '| field | value | source | reason |', '|---|---|---|---|');
  for (const [name, field] of Object.entries(envelope))
    lines.push(`| \`${name}\` | ${ENVELOPE_VALUES[field.value]} | ${field.source} | ${cell(field.reason)} |`);
  lines.push('');
  for (const [name, shape] of Object.entries(records)) {
    lines.push(
      ...recordTableLines(
        `**${name}** (from the v3 ${shape.v3} in the event's data): ${cell(shape.summary)}`,
        shape,
        "the subscription's",
      ),
    );
  }
  return lines.join('\n').trimEnd();
}
