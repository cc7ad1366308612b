/**
 * The generated part of CHANGELOG.md: what each legacy generation differs in, declared in
 * `mappings/` (as Stripe and Cadwyn write their version changes from the version declarations):
 * v2 against v3 (the operations and the v3 calls serving them, paging and the mode header, the
 * request fields and record fields v3 names or computes otherwise, the value maps, the error
 * statuses, the webhooks), then v1 against v2 (its declared endpoint and error changes). Each
 * entry carries the source and reason its declaration gives. Reads the validated declarations;
 * writes nothing. docs/legacy-api.md has the full reference, field by field.
 */
import { ERROR_CATALOG, ERROR_CODES } from '../../../lib/errors/v3-error-catalog.js';
import type { EndpointMapping } from '../declarations/endpoint-mappings.js';
import type { LegacyErrorAnswer } from '../declarations/error-tables.js';
import { LEGACY_OPERATIONS } from '../declarations/legacy-operations.js';
import type { LegacyMappings } from '../declarations/mappings-loader.js';
import type { LegacyField, Provenance } from '../declarations/record-shapes.js';
import { changeText } from './legacy-reference.js';

const oneLine = (text: string) => text.replaceAll('\n', ' ');
const why = (declared: Provenance) => `— ${declared.source}: ${oneLine(declared.reason)}`;

function callText(mapping: EndpointMapping): string {
  return Object.values(mapping.v3)
    .map((call) => `\`${call.method} ${call.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}\``)
    .join(', then ');
}

/** A legacy field that is not the v3 field of the same name, as it is: renamed, mapped, computed or fixed. */
function fieldChange(name: string, field: LegacyField): string | undefined {
  if ('from' in field) {
    if (field.from === name && !field.map && !field.convert) return undefined;
    const through = [field.map && `through ${field.map}`, field.convert && `through ${field.convert}`]
      .filter(Boolean)
      .join(' ');
    return `v3 \`${field.from}\`${through ? ` ${through}` : ''}`;
  }
  if ('derived' in field) return `computed (${field.derived}${field.map ? `, through ${field.map}` : ''})`;
  if ('constant' in field) return `always \`${field.constant}\``;
  return `the caller's ${field.context}`;
}

function answerText(answer: LegacyErrorAnswer<'v2'>): string {
  return `${answer.status} "${answer.message}"`;
}

function v2Lines(mappings: LegacyMappings): string[] {
  const table: Readonly<Record<string, EndpointMapping>> = mappings.endpoints.v2;
  const operations = LEGACY_OPERATIONS.v2;
  const lines = [
    '### v2, against v3',
    '',
    `v2 serves ${operations.length} operations at \`/v2/brokerage/{orgId}/...\`, each on the v3 calls its mapping names (\`mappings/endpoints.v2.ts\`).`,
    '',
    '**Operations**',
    '',
  ];
  for (const operation of operations) {
    const mapping = table[operation]!;
    lines.push(`- \`${mapping.method} ${operation}\`: ${oneLine(mapping.summary)} On ${callText(mapping)}.`);
  }

  const { pagination, appModes } = mappings.conventions;
  const modes = Object.entries(appModes.values).map(([value, mode]) => `\`${value}\` ${mode}`);
  lines.push(
    '',
    '**Paging and the mode header** (`mappings/conventions.ts`)',
    '',
    `- \`page\` (at least ${pagination.page.min}, default ${pagination.page.default}) and \`limit\` (${pagination.limit.min} to ${pagination.limit.max}, default ${pagination.limit.default}) instead of v3's cursors ${why(pagination)}`,
    `- \`x-app-mode\` in any case: ${modes.join(', ')}; absent: ${appModes.absent} ${why(appModes)}`,
  );

  lines.push('', '**Request fields named otherwise than in v3** (`mappings/endpoints.v2.ts`)', '');
  const requestChanges = new Map<string, string[]>();
  for (const operation of operations) {
    for (const [name, field] of Object.entries(table[operation]!.request?.fields ?? {})) {
      if (field.to === name) continue;
      const change =
        field.to === undefined
          ? `\`${name}\`: checked, not sent (v3 takes it in the path) ${why(field)}`
          : `\`${name}\`: sent as \`${field.to}\` ${why(field)}`;
      requestChanges.set(change, [...(requestChanges.get(change) ?? []), operation]);
    }
  }
  for (const [change, on] of requestChanges)
    lines.push(`- ${on.map((operation) => `\`${operation}\``).join(', ')}: ${change}`);

  lines.push(
    '',
    '**Record fields v3 names or computes otherwise** (`mappings/records.ts`; a field with its v3 name and value is not listed)',
    '',
  );
  for (const [record, shape] of Object.entries(mappings.records)) {
    for (const [name, field] of Object.entries(shape.fields)) {
      const change = fieldChange(name, field);
      if (change) lines.push(`- \`${record}.${name}\`: ${change} ${why(field)}`);
    }
  }

  if (mappings.v2RecordChanges.length > 0) {
    lines.push(
      '',
      '**Record changes** (`V2_RECORD_CHANGES` of `mappings/records.ts`, applied to the fields above)',
      '',
    );
    for (const change of mappings.v2RecordChanges) lines.push(`- ${changeText(change)} ${why(change)}`);
  }

  lines.push('', '**Words** (`mappings/value-maps.ts`; a v3 word a map does not list passes through)', '');
  for (const [name, map] of Object.entries(mappings.maps)) {
    const changed = Object.entries(map.values).filter(([v3, legacy]) => v3 !== legacy);
    if (changed.length === 0) continue;
    lines.push(`- ${name}: ${changed.map(([v3, legacy]) => `\`${v3}\` is \`${legacy}\``).join(', ')} ${why(map)}`);
  }

  lines.push(
    '',
    "**Error statuses other than v3's** (`mappings/errors.v2.ts`; every answer is `{status: 'error', message}`)",
    '',
  );
  for (const code of [...ERROR_CODES].sort()) {
    const row = mappings.errors.v2.byCode[code];
    const v3Status = ERROR_CATALOG[code].status;
    const own = row.status === v3Status ? [] : [`v3 ${v3Status}, v2 ${answerText(row)}`];
    const byOperation = Object.entries(row.byOperation ?? {})
      .filter(([, answer]) => answer !== undefined && answer.status !== v3Status)
      .map(([operation, answer]) => `on \`${operation}\` ${answerText(answer as LegacyErrorAnswer<'v2'>)}`);
    if (own.length === 0 && byOperation.length === 0) continue;
    const says = own.length > 0 ? [...own, ...byOperation] : [`v3 ${v3Status}`, ...byOperation];
    lines.push(`- \`${code}\`: ${says.join('; ')} — ${row.basis}: ${oneLine(row.note)}`);
  }

  lines.push(
    '',
    '**Webhooks** (`mappings/webhooks.ts`; the envelope is `{eventId, type, message, timestamp, data}`, signed with `X-Webhook-Signature`)',
    '',
  );
  for (const [name, event] of Object.entries(mappings.webhooks.events)) {
    lines.push(
      `- \`${name}\`, from v3 \`${event.v3}\`${event.byDefault ? '' : ', only when named'}: ${oneLine(event.summary)} ${why(event)}`,
    );
  }
  for (const [name, field] of Object.entries(mappings.webhooks.envelope))
    lines.push(`- envelope \`${name}\`: ${why(field)}`);
  return lines;
}

function v1Lines(mappings: LegacyMappings): string[] {
  const lines = [
    '### v1, against v2',
    '',
    `v1 serves ${LEGACY_OPERATIONS.v1.length} operations at \`/v1/brokerage/{orgId}/...\`: v2's mappings with these changes (\`mappings/endpoints.v1.ts\`, \`mappings/errors.v1.ts\`).`,
    '',
    '**Operations and idempotency**',
    '',
  ];
  for (const change of mappings.v1Changes) lines.push(`- ${changeText(change)} ${why(change)}`);
  lines.push('', '**Error answers**', '');
  for (const change of mappings.v1ErrorChanges) {
    const where =
      change.operation === undefined ? `\`${change.code}\`` : `\`${change.code}\` on \`${change.operation}\``;
    const answers =
      change.v1 === change.v2 ? `v1 answers as v2, \`${change.v1}\`` : `v2 \`${change.v2}\`, v1 \`${change.v1}\``;
    lines.push(`- ${where}: ${answers} — ${oneLine(change.reason)}`);
  }
  return lines;
}

/** Both generations' changes, newest generation first. */
export function renderGenerationChangelog(mappings: LegacyMappings): string {
  return [...v2Lines(mappings), '', ...v1Lines(mappings)].join('\n');
}
