/**
 * The per-generation reference of the legacy surface, generated from the declarations (as Stripe
 * and Cadwyn generate their version docs from their version changes): one row per operation
 * saying which v3 calls serve it, under which rules and what it answers; v1's changes from v2;
 * every legacy record field by field; and one row per v3 error code saying what each generation
 * answers. `npm run docs` writes them into docs/legacy-api.md, and a test fails when that page
 * is stale, so the docs cannot drift from what the gateway serves.
 */
import { ERROR_CODES } from '../../../lib/errors/v3-error-catalog.js';
import type { AnswerOnly, EndpointMapping, IdempotencyRule, LayoutNode } from '../declarations/endpoint-mappings.js';
import type { LegacyErrorAnswer, LegacyErrorRow } from '../declarations/error-tables.js';
import type { GenerationChange } from '../declarations/generation-changes.js';
import { LEGACY_GENERATIONS, LEGACY_OPERATIONS, type LegacyGeneration } from '../declarations/legacy-operations.js';
import type { LegacyMappings } from '../declarations/mappings-loader.js';
import type { LegacyField, RecordShape } from '../declarations/record-shapes.js';

/** A Markdown table cell: pipes escaped, on one line. */
export const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function idempotencyText(rule: IdempotencyRule): string {
  switch (rule.kind) {
    case 'none':
      return 'none';
    case 'required':
      return `required, kept ${duration(rule.lifetimeSeconds)}`;
    case 'honoured-if-sent':
      return `honoured if sent, kept ${duration(rule.lifetimeSeconds)}`;
  }
}

/** As lifetimes are usually said: 24 h, 7 d, 30 min. */
function duration(seconds: number): string {
  if (seconds % 86_400 === 0 && seconds > 86_400) return `${seconds / 86_400} d`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  return `${seconds / 60} min`;
}

function callsText(mapping: EndpointMapping): string {
  return Object.values(mapping.v3)
    .map((call) => {
      const query = Object.entries(call.query ?? {}).map(([name, value]) => `${name}=${value}`);
      return `\`${call.method} ${call.path}${query.length > 0 ? `?${query.join('&')}` : ''}\``;
    })
    .join(' + ');
}

function queryText(mapping: EndpointMapping): string {
  const names = [...(mapping.pagination === 'page-limit' ? ['page', 'limit'] : []), ...Object.keys(mapping.filters)];
  return names.map((name) => `\`${name}\``).join(', ');
}

function bodyText(mapping: EndpointMapping): string {
  return Object.entries(mapping.request?.fields ?? {})
    .map(([name, field]) => `\`${name}\`${field.required ? '' : '?'}`)
    .join(', ');
}

/** Where the records go in the body: `data.quote: quote`, `data[]: trade`; `(answer only)` where no v3 read serves them again. */
function layoutText(node: LayoutNode, path: string): string[] {
  if ('object' in node)
    return Object.entries(node.object).flatMap(([key, child]) => layoutText(child, `${path}.${key}`));
  const answerOnly = node.answerOnly ? ' (answer only)' : '';
  if ('record' in node) return [`\`${path}\`: ${node.record}${answerOnly}`];
  if ('list' in node)
    return [`\`${path}[]\`: ${'keyedBy' in node ? `{${node.keyedBy}: ${node.list}}` : node.list}${answerOnly}`];
  return [`\`${path}\`${answerOnly}`];
}

function answerLayout(mapping: EndpointMapping): string {
  const parts = layoutText(mapping.response.data, 'data');
  for (const key of Object.keys(mapping.response.root ?? {})) parts.push(`\`${key}\``);
  if (mapping.response.dataAlsoAtRoot) parts.push('the fields of `data` at the top too');
  return parts.join(', ');
}

/** One table per generation: operation, v3 calls, scope, idempotency, query, body, answer. */
export function renderLegacyOperations(mappings: LegacyMappings): string {
  const lines: string[] = [];
  for (const generation of LEGACY_GENERATIONS) {
    const table: Readonly<Record<string, EndpointMapping>> = mappings.endpoints[generation];
    lines.push(`**${generation}** (${LEGACY_OPERATIONS[generation].length} operations)`, '');
    lines.push(
      '| legacy route | v3 calls | scope | idempotency | query | body | answer | what it does |',
      '|---|---|---|---|---|---|---|---|',
    );
    for (const operation of LEGACY_OPERATIONS[generation]) {
      const mapping = table[operation]!;
      const route = `\`${mapping.method} …/${operation}\``;
      lines.push(
        `| ${route} | ${callsText(mapping)} | ${mapping.scope} | ${idempotencyText(mapping.idempotency)} | ${queryText(mapping)} | ${bodyText(mapping)} | ${answerLayout(mapping)} | ${cell(mapping.summary)} |`,
      );
    }
    lines.push('');
  }
  if (mappings.v2RecordChanges.length > 0) {
    lines.push(
      "**v2's record changes**, applied to the records below",
      '',
      '| change | source | reason |',
      '|---|---|---|',
    );
    for (const change of mappings.v2RecordChanges)
      lines.push(`| ${changeText(change)} | ${change.source} | ${cell(change.reason)} |`);
    lines.push('');
  }
  lines.push('**v1 as declared: its changes from v2**', '', '| change | source | reason |', '|---|---|---|');
  for (const change of mappings.v1Changes)
    lines.push(`| ${changeText(change)} | ${change.source} | ${cell(change.reason)} |`);
  lines.push(
    '',
    '**Answer only**: values no v3 read serves again, which `fxgate diff generations` reports instead of comparing',
    '',
  );
  lines.push('| generation | operation | answer | source | reason |', '|---|---|---|---|---|');
  for (const generation of LEGACY_GENERATIONS) {
    const table: Readonly<Record<string, EndpointMapping>> = mappings.endpoints[generation];
    for (const operation of LEGACY_OPERATIONS[generation]) {
      for (const [path, declared] of answerOnlyNodes(table[operation]!)) {
        lines.push(
          `| ${generation} | \`${operation}\` | \`${path}\` | ${declared.source} | ${cell(declared.reason)} |`,
        );
      }
    }
  }
  return lines.join('\n').trimEnd();
}

/** The answer-only nodes of an operation's body, by their path in it. */
function answerOnlyNodes(mapping: EndpointMapping): [string, AnswerOnly][] {
  const found: [string, AnswerOnly][] = [];
  const visit = (node: LayoutNode, path: string): void => {
    if ('object' in node) for (const [key, child] of Object.entries(node.object)) visit(child, `${path}.${key}`);
    else if (node.answerOnly) found.push([path, node.answerOnly]);
  };
  visit(mapping.response.data, 'data');
  for (const [key, node] of Object.entries(mapping.response.root ?? {})) visit(node, key);
  return found;
}

export function changeText(change: GenerationChange): string {
  switch (change.kind) {
    case 'operation-removed':
      return `no \`${change.operation}\``;
    case 'idempotency':
      return `${change.method}: idempotency ${change.becomes}`;
    case 'data-also-at-root':
      return `\`${change.operation}\`: data also at the top of the body`;
    case 'pagination':
      return `\`${change.operation}\`: pagination ${change.becomes}`;
    case 'field-renamed':
      return `\`${change.record}.${change.field}\` is \`${change.to}\``;
    case 'field-added':
      return `\`${change.record}.${change.field}\` added (${change.value.type})`;
    case 'field-removed':
      return `no \`${change.record}.${change.field}\``;
    case 'field-retyped':
      return `\`${change.record}.${change.field}\` is ${change.type}${change.nullable ? ' or null' : ''}`;
    case 'value-mapped':
      return `\`${change.record}.${change.field}\` through ${change.map}`;
    case 'status-downgraded':
      return `${change.from} is ${change.to}`;
    case 'error-code-kept':
      return `${change.code} as v2 answers it`;
    case 'error-answer-changed':
      return `${change.code} is ${change.status} ${change.message}`;
  }
}

/** Where a record field's value comes from; `whose` owns a context value (the caller's, the subscription's). */
function originText(field: LegacyField, whose: string): string {
  if ('from' in field)
    return `\`${field.from}\`${field.map ? ` via ${field.map}` : ''}${field.convert ? ` via ${field.convert}` : ''}`;
  if ('derived' in field) return `derived: ${field.derived}${field.map ? ` via ${field.map}` : ''}`;
  if ('constant' in field) return `always \`${field.constant}\``;
  return `${whose} ${field.context}`;
}

/** One record's reference: its heading line, then a row per field with its type, origin, source and reason. */
export function recordTableLines(heading: string, shape: RecordShape, whose: string): string[] {
  const lines = [heading, '', '| field | type | from v3 | source | reason |', '|---|---|---|---|---|'];
  for (const [field, declared] of Object.entries(shape.fields)) {
    lines.push(
      `| \`${field}\` | ${declared.type}${declared.nullable ? ' or null' : ''} | ${originText(declared, whose)} | ${declared.source} | ${cell(declared.reason)} |`,
    );
  }
  lines.push('');
  return lines;
}

/** Every legacy record, field by field: type, where it comes from in v3, source and reason. */
export function renderLegacyRecords(mappings: LegacyMappings): string {
  const lines: string[] = [];
  for (const [name, shape] of Object.entries(mappings.records)) {
    lines.push(
      ...recordTableLines(`**${name}** (from the v3 ${shape.v3}): ${cell(shape.summary)}`, shape, "the caller's"),
    );
  }
  for (const [name, map] of Object.entries(mappings.maps)) {
    const values = Object.entries(map.values)
      .map(([v3, legacy]) => `\`${v3}\` → \`${legacy}\``)
      .join(', ');
    lines.push(`- **${name}** (${map.source}): ${values}. ${cell(map.reason)}`);
  }
  return lines.join('\n').trimEnd();
}

function answerText<G extends LegacyGeneration>(answer: LegacyErrorAnswer<G>): string {
  const code = (answer as { error?: { code: string } }).error?.code;
  return `${answer.status} ${cell(answer.message)}${code === undefined ? '' : ` (\`${code}\`)`}`;
}

function overridesText<G extends LegacyGeneration>(row: LegacyErrorRow<G>): string {
  return Object.entries(row.byOperation ?? {})
    .map(([operation, answer]) => `${operation}: ${answerText(answer as LegacyErrorAnswer<G>)}`)
    .join('; ');
}

/** Every v3 code: the v1 answer, the v2 answer, per-operation exceptions, and the basis of each row. */
export function renderLegacyErrors(mappings: LegacyMappings): string {
  const lines = ['| v3 code | v1 | v2 | v2 per operation | basis (v1 / v2) |', '|---|---|---|---|---|'];
  for (const code of [...ERROR_CODES].sort()) {
    const v1 = mappings.errors.v1.byCode[code];
    const v2 = mappings.errors.v2.byCode[code];
    lines.push(
      `| \`${code}\` | ${answerText(v1)} | ${answerText(v2)} | ${overridesText(v2)} | ${v1.basis} / ${v2.basis} |`,
    );
  }
  return lines.join('\n');
}
