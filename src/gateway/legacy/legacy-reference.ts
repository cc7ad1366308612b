/**
 * The per-generation reference of the legacy surface, generated from the mapping tables (as
 * Stripe and Cadwyn generate their version docs from their version changes): one row per
 * operation saying which v3 calls serve it and under which rules, and one row per v3 error code
 * saying what each generation answers. `npm run docs` writes them into the README, and a test
 * fails when the README is stale, so the docs cannot drift from what the gateway serves.
 */
import { ERROR_CODES } from '../../lib/errors/catalog.js';
import type { EndpointMapping, IdempotencyRule } from './endpoint-mappings.js';
import type { LegacyErrorAnswer, LegacyErrorRow } from './error-tables.js';
import type { LegacyMappings } from './mappings-loader.js';
import { LEGACY_GENERATIONS, LEGACY_OPERATIONS, type LegacyGeneration } from './operations.js';

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function idempotencyText(rule: IdempotencyRule): string {
  switch (rule.kind) {
    case 'none':
      return 'none';
    case 'fresh-v3-key':
      return 'none (a fresh v3 key per request)';
    case 'required':
      return `required, kept ${duration(rule.lifetimeSeconds)}`;
    case 'honoured-if-sent':
      return `honoured if sent, kept ${duration(rule.lifetimeSeconds)}`;
  }
}

/** As the spec states lifetimes: 24 h, 7 d, 30 min. */
function duration(seconds: number): string {
  if (seconds % 86_400 === 0 && seconds > 86_400) return `${seconds / 86_400} d`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  return `${seconds / 60} min`;
}

function callsText(mapping: EndpointMapping): string {
  return mapping.v3
    .map((call) => {
      const query = Object.entries(call.query ?? {}).map(([name, value]) => `${name}=${value}`);
      return `\`${call.method} ${call.path}${query.length > 0 ? `?${query.join('&')}` : ''}\``;
    })
    .join(' + ');
}

/** One table per generation: operation, v3 calls, scope, idempotency, pagination. */
export function renderLegacyOperations(mappings: LegacyMappings): string {
  const lines: string[] = [];
  for (const generation of LEGACY_GENERATIONS) {
    const table: Readonly<Record<string, EndpointMapping>> = mappings.endpoints[generation];
    lines.push(`**${generation}** (${LEGACY_OPERATIONS[generation].length} operations)`, '');
    lines.push('| legacy route | v3 calls | scope | idempotency | pagination | what it does |', '|---|---|---|---|---|---|');
    for (const operation of LEGACY_OPERATIONS[generation]) {
      const mapping = table[operation]!;
      const route = `\`${mapping.legacy.method} ${mapping.legacy.path.replace(`/${generation}/brokerage/:orgId/`, '…/')}\``;
      const pagination = mapping.pagination === 'none' ? '' : mapping.pagination === 'page-limit/cursor' ? 'page/limit over cursors' : 'page/limit, sliced';
      lines.push(`| ${route} | ${callsText(mapping)} | ${mapping.scope} | ${idempotencyText(mapping.idempotency)} | ${pagination} | ${cell(mapping.summary)} |`);
    }
    lines.push('');
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

/** Every v3 code: the v1 answer, the v2 answer, per-operation exceptions, and whether the spec or we chose it. */
export function renderLegacyErrors(mappings: LegacyMappings): string {
  const lines = ['| v3 code | v1 | v2 | v2 per operation | basis (v1 / v2) |', '|---|---|---|---|---|'];
  for (const code of [...ERROR_CODES].sort()) {
    const v1 = mappings.errors.v1.byCode[code];
    const v2 = mappings.errors.v2.byCode[code];
    lines.push(`| \`${code}\` | ${answerText(v1)} | ${answerText(v2)} | ${overridesText(v2)} | ${v1.basis} / ${v2.basis} |`);
  }
  return lines.join('\n');
}
