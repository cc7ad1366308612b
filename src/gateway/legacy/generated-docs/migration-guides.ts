/**
 * The migration guides, v1 → v2 and v2 → v3, generated per operation from what the gateway
 * serves: the endpoint, record, value-map and error declarations of `mappings/` (as
 * mappings-loader.ts validated them) and v3's published OpenAPI document (its paths, request
 * bodies, error answers and limits). Each operation is one section whose anchor is its id in the
 * endpoint tables (`#trade/{id}`), so a doc, an answer or an integrator can link to it. The
 * Markdown is written into docs/migrate-v1-to-v2.md and docs/migrate-v2-to-v3.md by
 * `npm run docs` (and checked fresh by a test), and rendered to HTML by the gateway
 * (openapi/migration-guide-pages.ts): one source, never written twice.
 *
 * Pure: takes the declarations and the v3 document, returns text. Declared prose is escaped
 * here (`&`, `<`, `>`), so the only raw HTML in a guide is its own anchors.
 */
import { ERROR_CATALOG, type ErrorCode, isErrorCode } from '../../../lib/errors/v3-error-catalog.js';
import { ID_PREFIXES } from '../../../lib/ids.js';
import { type OpenApiDocument, openApiPath, type OpenApiSchema } from '../../../lib/openapi/document.js';
import type {
  BodyField,
  EndpointMapping,
  IdempotencyRule,
  LayoutNode,
  V3Call,
} from '../declarations/endpoint-mappings.js';
import type { LegacyErrorAnswer, LegacyErrorTables } from '../declarations/error-tables.js';
import { LEGACY_OPERATIONS, type LegacyGeneration, type LegacyOperation } from '../declarations/legacy-operations.js';
import type { LegacyMappings } from '../declarations/mappings-loader.js';
import type { LegacyField } from '../declarations/record-shapes.js';

/** The two guides, by the name of their page (`/docs/migrate/<name>`, docs/migrate-<name>.md). */
export const MIGRATION_GUIDES = ['v1-to-v2', 'v2-to-v3'] as const;
export type MigrationGuide = (typeof MIGRATION_GUIDES)[number];

/** The generated section's marker name in the guide's Markdown file. */
export const guideSection = (guide: MigrationGuide) => `migrate-${guide}`;
/** The guide's Markdown file, from the repository root. */
export const guideFile = (guide: MigrationGuide) => `docs/migrate-${guide}.md`;

/** Prose from the declarations, safe as Markdown text and as HTML once rendered. */
export function prose(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** A Markdown table cell: prose, pipes escaped, on one line. */
const cell = (text: string) => prose(text).replaceAll('|', '\\|').replaceAll('\n', ' ');

/** An operation's anchor: its id in the endpoint tables, as written in the `id` attribute. */
export const operationAnchor = (operation: string) => `<a id="${prose(operation).replaceAll('"', '&quot;')}"></a>`;

const legacyRoute = (generation: LegacyGeneration, operation: string) =>
  `/${generation}/brokerage/{orgId}/${operation}`;

function lifetime(seconds: number): string {
  if (seconds % 86_400 === 0 && seconds > 86_400) return `${seconds / 86_400} days`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  return `${seconds / 60} min`;
}

function idempotencyText(rule: IdempotencyRule): string {
  switch (rule.kind) {
    case 'none':
      return 'no `Idempotency-Key`: a key sent is ignored';
    case 'required':
      return `\`Idempotency-Key\` required; the answer is kept ${lifetime(rule.lifetimeSeconds)} and replayed to a retry with the same key`;
    case 'honoured-if-sent':
      return `\`Idempotency-Key\` optional; when sent, the answer is kept ${lifetime(rule.lifetimeSeconds)} and replayed to a retry with the same key`;
  }
}

/** The v3 document's operation for a call of the contract. */
function v3Operation(document: OpenApiDocument, call: V3Call) {
  const path = document.paths?.[openApiPath(call.path)];
  const operation = path?.[call.method.toLowerCase() as 'get' | 'post'];
  if (operation === undefined)
    throw new Error(
      `the v3 document has no ${call.method} ${call.path}: regenerate it (\`npm run openapi\`) or fix the mapping`,
    );
  return operation;
}

function resolve(document: OpenApiDocument, schema: unknown): OpenApiSchema | undefined {
  if (schema === undefined || schema === null || typeof schema !== 'object') return undefined;
  const ref = (schema as { $ref?: string }).$ref;
  if (ref === undefined) return schema as OpenApiSchema;
  return resolve(document, document.components?.schemas?.[ref.replace('#/components/schemas/', '')]);
}

/** `string (decimal)`, `integer 1..100`, `string ≤ 128`: a v3 schema in a few words. */
function schemaText(schema: OpenApiSchema | undefined): string {
  if (schema === undefined) return '—';
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'value');
  const parts = [type];
  // A decimal string: digits, an optional fraction (v3's amounts).
  if (schema.pattern !== undefined && /^\^-?\[0-9\]\+\(\\\.\[0-9\]/.test(schema.pattern)) parts.push('(decimal)');
  if (schema.enum !== undefined) parts.push(`one of ${schema.enum.map((value) => `\`${String(value)}\``).join(', ')}`);
  if (schema.minimum !== undefined && schema.maximum !== undefined)
    parts.push(`${schema.minimum} to ${schema.maximum}`);
  if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  return parts.join(' ');
}

/** The v3 error codes an operation's answers name, each with its status. */
function v3ErrorCodes(document: OpenApiDocument, call: V3Call): Map<ErrorCode, number> {
  const codes = new Map<ErrorCode, number>();
  const visit = (value: unknown, status: number): void => {
    if (value === null || typeof value !== 'object') return;
    const ref = (value as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      const code = /^#\/components\/schemas\/Error_([A-Z0-9_]+)$/.exec(ref)?.[1];
      if (code !== undefined && isErrorCode(code)) codes.set(code, status);
      return;
    }
    for (const child of Object.values(value)) visit(child, status);
  };
  for (const [status, response] of Object.entries(v3Operation(document, call).responses ?? {})) {
    if (/^[45][0-9][0-9]$/.test(status)) visit(response, Number(status));
  }
  return codes;
}

/** Every error code an operation's v3 calls may answer, in the catalog's order. */
function operationErrorCodes(document: OpenApiDocument, mapping: EndpointMapping): ErrorCode[] {
  const found = new Set<ErrorCode>();
  for (const call of Object.values(mapping.v3)) for (const code of v3ErrorCodes(document, call).keys()) found.add(code);
  return (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((code) => found.has(code));
}

function legacyAnswer<G extends LegacyGeneration>(
  tables: LegacyErrorTables<G>,
  code: ErrorCode,
  operation: LegacyOperation<G>,
): LegacyErrorAnswer<G> {
  const row = tables.byCode[code];
  return (row.byOperation?.[operation] as LegacyErrorAnswer<G> | undefined) ?? row;
}

function answerText(answer: { status: number; message: string; error?: { code: string } }): string {
  return `${answer.status} ${cell(answer.message)}${answer.error === undefined ? '' : ` (\`${answer.error.code}\`)`}`;
}

const sameAnswer = (a: LegacyErrorAnswer<'v1'>, b: LegacyErrorAnswer<'v2'>) =>
  a.status === b.status && a.message === b.message && a.error?.code === b.error?.code;

/** An example value of a legacy body field, as the JSON text a legacy client sends. */
function legacyExample(name: string, field: BodyField): string {
  switch (field.type) {
    case 'amount':
      return '250.5';
    case 'currency':
      return name === 'buy' ? '"EUR"' : '"USD"';
    case 'id':
      return '"0190f3a8-7b2c-7d4e-8f00-0123456789ab"';
    case 'integer':
      return String(field.oneOf?.[0] ?? 1);
    case 'string':
      return '"order-1042"';
  }
}

/** The same value as v3 takes it: amounts as decimal strings, ids with their kind's prefix. */
function v3Example(name: string, field: BodyField): string {
  switch (field.type) {
    case 'amount':
      return '"250.5"';
    case 'id':
      return `"${ID_PREFIXES[field.idKind ?? 'trade']}_0190f3a87b2c7d4e8f000123456789ab"`;
    default:
      return legacyExample(name, field);
  }
}

function jsonBody(entries: readonly [string, string][]): string {
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([name, value]) => `  "${name}": ${value}`).join(',\n')}\n}`;
}

/** The HTTP request a legacy client sends for an operation, as an example. */
function legacyRequest(generation: LegacyGeneration, operation: string, mapping: EndpointMapping): string[] {
  const path = legacyRoute(generation, operation)
    .replace('{orgId}', '8c1e5f2a-3b4d-4e6f-9a0b-1c2d3e4f5a6b')
    .replace('{id}', '0190f3a8-7b2c-7d4e-8f00-0123456789ab');
  const query = mapping.pagination === 'page-limit' ? '?page=2&limit=20' : '';
  const lines = [`${mapping.method} ${path}${query} HTTP/1.1`, 'Authorization: Bearer <legacy JWT>'];
  // Sent where the key is required; a v1 write takes one as well but needs none.
  if (mapping.idempotency.kind === 'required')
    lines.push(`Idempotency-Key: ${operation.replaceAll(/[^a-z]/g, '-')}-7f3a`);
  if (mapping.request === null) return lines;
  const body = Object.entries(mapping.request.fields).map(
    ([name, field]) => [name, legacyExample(name, field)] as [string, string],
  );
  return [...lines, 'Content-Type: application/json', '', jsonBody(body)];
}

/** The first v3 call of a v2 operation, with its path parameters, query and body, as an example. */
function v3Request(operation: string, mapping: EndpointMapping, document: OpenApiDocument): string[] {
  const call = Object.values(mapping.v3)[0]!;
  let path = call.path;
  for (const [param, source] of Object.entries(call.params ?? {}))
    path = path.replace(`:${param}`, `${ID_PREFIXES[source.idKind]}_0190f3a87b2c7d4e8f000123456789ab`);
  const query = Object.entries(call.query ?? {}).map(([name, value]) => `${name}=${value}`);
  if (mapping.pagination === 'page-limit' && cursorLimit(document, call) !== undefined) query.push('limit=20');
  const lines = [
    `${call.method} ${path}${query.length > 0 ? `?${query.join('&')}` : ''} HTTP/1.1`,
    'Authorization: Bearer <v3 JWT, one per request>',
    'X-Request-Signature: <signature over this request>',
  ];
  if (call.method === 'POST') lines.push(`Idempotency-Key: ${operation.replaceAll(/[^a-z]/g, '-')}-7f3a`);
  if (mapping.request === null) return lines;
  const body = Object.entries(mapping.request.fields)
    .filter(([, field]) => field.to !== undefined)
    .map(([name, field]) => [field.to!, v3Example(name, field)] as [string, string]);
  return [...lines, 'Content-Type: application/json', '', jsonBody(body)];
}

function cursorLimit(document: OpenApiDocument, call: V3Call): OpenApiSchema | undefined {
  const parameter = (v3Operation(document, call).parameters ?? []).find(
    (candidate) => 'name' in candidate && candidate.name === 'limit' && candidate.in === 'query',
  );
  return parameter !== undefined && 'schema' in parameter ? resolve(document, parameter.schema) : undefined;
}

function fence(lines: readonly string[]): string[] {
  return ['```http', ...lines, '```'];
}

function callText(call: V3Call): string {
  const query = Object.entries(call.query ?? {}).map(([name, value]) => `${name}=${value}`);
  return `\`${call.method} ${call.path}${query.length > 0 ? `?${query.join('&')}` : ''}\``;
}

/** Where each record or value of a legacy answer comes from in v3: `data.quote`: the `quote` record from `data` of … */
function layoutRows(mapping: EndpointMapping, node: LayoutNode, path: string): string[] {
  if ('object' in node)
    return Object.entries(node.object).flatMap(([key, child]) => layoutRows(mapping, child, `${path}.${key}`));
  const call = mapping.v3[node.from];
  const source = `\`${('at' in node ? node.at : undefined) ?? 'data'}\` of ${call === undefined ? node.from : callText(call)}`;
  if ('record' in node) return [`| \`${path}\` | [${node.record}](#record-${node.record}) | ${source} | one record |`];
  if ('list' in node) {
    const keyed = 'keyedBy' in node ? `, each as \`{${node.keyedBy}: record}\`` : '';
    return [`| \`${path}[]\` | [${node.list}](#record-${node.list}) | ${source} | one per v3 record${keyed} |`];
  }
  if ('entries' in node)
    return [
      `| \`${path}\` | \`{${node.key}: ${node.value}}\` | ${source} | an object over the v3 ${node.entries} records |`,
    ];
  return [
    `| \`${path}\` | ${node.type} | \`${node.field}\` of ${call === undefined ? node.from : callText(call)} | ${cell(node.reason)} |`,
  ];
}

function generalLimits(mappings: LegacyMappings): string[] {
  const { page, limit } = mappings.conventions.pagination;
  return [
    `- Pages: \`page\` from ${page.min} (default ${page.default}), \`limit\` ${limit.min} to ${limit.max} (default ${limit.default}).`,
    '- Rate limits: a budget per legacy API key per 10 s, reads and writes apart (`FXGATE_LEGACY_RATE_LIMIT_READS`, `FXGATE_LEGACY_RATE_LIMIT_WRITES`); an answer carries `RateLimit-Limit` and `RateLimit-Reset`, and 429 when the budget is spent.',
  ];
}

/** The v1 → v2 guide: one section per v1 operation, saying what changes and what does not. */
export function renderV1ToV2Guide(mappings: LegacyMappings, document: OpenApiDocument): string {
  const removed = mappings.v1Changes.filter((change) => change.kind === 'operation-removed');
  const lines = [
    '# Migrating from v1 to v2',
    '',
    'v1 is deprecated and retired on its sunset date (the `Sunset` header of every v1 answer). v2 serves the same operations under `/v2/brokerage/{orgId}/` with the same bodies and records; what changes is idempotency, the error statuses, and one answer layout. Each operation below says exactly what changes, and each heading is a link target: `#<operation>`.',
    '',
    '## Everywhere',
    '',
    '- Base path: `/v1/brokerage/{orgId}/` becomes `/v2/brokerage/{orgId}/`; the legacy JWT, the `x-app-mode` header and the body envelope `{status, message, data}` stay.',
    `- Writes: every v2 POST requires \`Idempotency-Key\`; a retry with the same key gets the first answer again.`,
    `- Errors: v2 answers with more statuses (${[404, 409, 422, 503].join(', ')}) where v1 had only 400, 401, 429 and 500; the message text stays, and idempotency errors carry \`error.code\`.`,
    ...removed.map(
      (change) =>
        `- v2 adds \`${change.operation}\`, which v1 never had (${prose(change.reason)}): see the v2 → v3 guide.`,
    ),
    ...generalLimits(mappings),
    '',
    '## Operations',
    '',
  ];
  for (const operation of LEGACY_OPERATIONS.v1) {
    const v1 = mappings.endpoints.v1[operation]!;
    const v2 = mappings.endpoints.v2[operation]!;
    lines.push(operationAnchor(operation), '', `### \`${operation}\``, '', prose(v2.summary), '');
    lines.push(
      `- Route: \`${v1.method} ${legacyRoute('v1', operation)}\` → \`${v2.method} ${legacyRoute('v2', operation)}\``,
    );
    lines.push(
      `- Request: ${
        v2.request === null
          ? 'no body'
          : `the same body fields (${Object.keys(v2.request.fields)
              .map((name) => `\`${name}\``)
              .join(', ')}), amounts still JSON numbers`
      }${
        v2.pagination === 'page-limit' || Object.keys(v2.filters).length > 0
          ? `; the same query (${[...(v2.pagination === 'page-limit' ? ['page', 'limit'] : []), ...Object.keys(v2.filters)].map((name) => `\`${name}\``).join(', ')})`
          : ''
      }.`,
    );
    const rootCopy = v1.response.dataAlsoAtRoot;
    lines.push(
      rootCopy === undefined
        ? '- Answer: the same fields in the same places.'
        : `- Answer: v1 also wrote the fields of \`data\` at the top of the body; v2 writes them under \`data\` only: read \`data.<field>\`. (${prose(rootCopy.reason)})`,
    );
    lines.push(`- Idempotency: v1: ${idempotencyText(v1.idempotency)}. v2: ${idempotencyText(v2.idempotency)}.`);
    const codes = operationErrorCodes(document, v2);
    const changed = codes.filter(
      (code) =>
        !sameAnswer(
          legacyAnswer(mappings.errors.v1, code, operation),
          legacyAnswer(mappings.errors.v2, code, operation),
        ),
    );
    lines.push(
      `- Errors: ${changed.length === 0 ? `all ${codes.length}` : `${codes.length - changed.length} of the ${codes.length}`} error answers of this operation stay as they were${changed.length === 0 ? '.' : '; these change:'}`,
      '',
    );
    if (changed.length > 0) {
      lines.push('| v3 code | v1 answer | v2 answer |', '|---|---|---|');
      for (const code of changed)
        lines.push(
          `| \`${code}\` | ${answerText(legacyAnswer(mappings.errors.v1, code, operation))} | ${answerText(legacyAnswer(mappings.errors.v2, code, operation))} |`,
        );
      lines.push('');
    }
    lines.push('Before (v1):', '', ...fence(legacyRequest('v1', operation, v1)), '', 'After (v2):', '');
    lines.push(...fence(legacyRequest('v2', operation, v2)), '');
  }
  return lines.join('\n').trimEnd();
}

function fieldOrigin(field: LegacyField, mappings: LegacyMappings): string {
  const mapped = (name: string | undefined) => {
    if (name === undefined) return '';
    const map = mappings.maps[name];
    const words = Object.entries(map?.values ?? {})
      .map(([v3, legacy]) => `\`${v3}\` was \`${legacy}\``)
      .join(', ');
    return words === '' ? '' : `; words: ${words}`;
  };
  if ('from' in field)
    return `\`${field.from}\`${field.convert ? ` (converted: ${cell(field.reason)})` : ''}${mapped(field.map)}`;
  if ('derived' in field) return `none: the gateway computed it (${cell(field.reason)})${mapped(field.map)}`;
  if ('constant' in field) return `none: it was always \`${String(field.constant)}\``;
  return `none: the caller's ${field.context}`;
}

/** The fields of v3's error object, as its document declares them. */
function errorFields(document: OpenApiDocument): string[] {
  const schema = resolve(document, { $ref: '#/components/schemas/Error_INTERNAL_ERROR_RETRY_WITH_BACKOFF' });
  const error = resolve(document, schema?.properties?.error);
  return Object.keys(error?.properties ?? {});
}

const pascal = (name: string) => `${name[0]!.toUpperCase()}${name.slice(1)}`;

/** The v2 → v3 guide: one section per v2 operation, then every legacy record field by field. */
export function renderV2ToV3Guide(mappings: LegacyMappings, document: OpenApiDocument): string {
  const auth = document.components?.securitySchemes ?? {};
  const describe = (name: string) => {
    const scheme = auth[name];
    return scheme !== undefined && 'description' in scheme && scheme.description !== undefined
      ? prose(scheme.description)
      : '';
  };
  const lines = [
    '# Migrating from v2 to v3',
    '',
    'v3 is the API the product goes on with. A v2 operation is served by one or more v3 calls (the first does the work; later ones are reads that completed the legacy answer). Each operation below names them, and says what happens to each request field, query parameter, answer field and error. Each heading is a link target: `#<operation>`; records are under [Records](#records).',
    '',
    '## Everywhere',
    '',
    `- Authentication: each request carries its own bearer JWT (${describe('bearerToken')}) and \`X-Request-Signature\` (${describe('requestSignature')}). v3 keys are created with \`fxgate keys create\`; the legacy key does not sign v3 requests.`,
    "- Paths: `/v2/brokerage/{orgId}/<operation>` becomes a path under `/v3/fx/`; the org is the key's, not a path segment.",
    '- Amounts: v2 sent and answered JSON numbers; v3 sends and answers decimal strings (`"250.5"`), which no JSON parser rounds.',
    "- Ids: v3 ids are the legacy UUID's 128 bits with a prefix of their kind, the dashes removed: the trade `0190f3a8-7b2c-7d4e-8f00-0123456789ab` is `trd_0190f3a87b2c7d4e8f000123456789ab`.",
    `- Answers: \`{data}\` (and \`pagination\` on lists) instead of \`{status, message, data}\`; errors are \`{error: {${errorFields(document).join(', ')}}}\` with the v3 code of the catalog (docs/v3-api.md), instead of \`{status: 'error', message}\`.`,
    '- Pages become cursors: a v3 list answers `pagination.nextCursor`; pass it back as `startingAfter` instead of counting `page`s.',
    '- Writes: every v3 POST requires `Idempotency-Key`, as v2 did.',
    '- Rate limits: the v3 budget per key is `FXGATE_RATE_LIMIT_READS` and `FXGATE_RATE_LIMIT_WRITES` per 10 s, apart from the legacy budget (`FXGATE_LEGACY_RATE_LIMIT_*`).',
    '',
    '## Operations',
    '',
  ];
  const records = new Set<string>();
  for (const operation of LEGACY_OPERATIONS.v2) {
    const mapping = mappings.endpoints.v2[operation]!;
    const calls = Object.values(mapping.v3);
    const first = calls[0]!;
    const body = resolve(
      document,
      (v3Operation(document, first).requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)
        ?.content?.['application/json']?.schema,
    );
    lines.push(operationAnchor(operation), '', `### \`${operation}\``, '', prose(mapping.summary), '');
    lines.push(
      `- Route: \`${mapping.method} ${legacyRoute('v2', operation)}\` → ${callText(first)}${
        calls.length > 1 ? `, then for the same answer ${calls.slice(1).map(callText).join(' and ')}` : ''
      }`,
    );
    for (const [param, source] of Object.entries(first.params ?? {}))
      lines.push(
        `- \`:${param}\` in the v3 path: the v2 ${source.from === 'path' ? 'path parameter' : 'body field'} \`${source.field}\`, as a \`${ID_PREFIXES[source.idKind]}_\` id.`,
      );
    const fields = Object.entries(mapping.request?.fields ?? {});
    if (fields.length > 0) {
      lines.push('', '| v2 body field | v2 type | v3 body field | v3 type | note |', '|---|---|---|---|---|');
      for (const [name, field] of fields) {
        const v3Field = field.to === undefined ? undefined : resolve(document, body?.properties?.[field.to]);
        const required = field.to !== undefined && (body?.required ?? []).includes(field.to) ? ', required' : '';
        lines.push(
          `| \`${name}\`${field.required ? '' : ' (optional)'} | ${field.type === 'amount' ? 'JSON number' : field.type} | ${field.to === undefined ? 'none: in the path' : `\`${field.to}\``} | ${field.to === undefined ? '—' : `${schemaText(v3Field)}${required}`} | ${cell(field.reason)} |`,
        );
      }
      lines.push('');
    }
    const query = Object.entries(mapping.filters);
    if (mapping.pagination === 'page-limit' || query.length > 0) {
      const limit = cursorLimit(document, first);
      lines.push('', '| v2 query | v3 | note |', '|---|---|---|');
      if (mapping.pagination === 'page-limit')
        lines.push(
          limit === undefined
            ? '| `page`, `limit` | none | v3 answers the whole list in one `data` array: no pages. |'
            : `| \`page\`, \`limit\` | \`limit\` (${schemaText(limit)}), \`startingAfter\`, \`endingBefore\` | Cursors: pass \`pagination.nextCursor\` back as \`startingAfter\`. |`,
        );
      for (const [name, filter] of query)
        lines.push(
          'v3Query' in filter
            ? `| \`${name}\` | \`${filter.v3Query}\` | ${cell(filter.reason)} |`
            : `| \`${name}\` | none | v3 has no such filter: keep the records whose \`${filter.field}\` matches. ${cell(filter.reason)} |`,
        );
      lines.push('');
    }
    lines.push('', '| v2 answer | record | v3 source | note |', '|---|---|---|---|');
    lines.push(...layoutRows(mapping, mapping.response.data, 'data'));
    for (const [key, node] of Object.entries(mapping.response.root ?? {}))
      lines.push(...layoutRows(mapping, node, key));
    lines.push('');
    collectRecords(mapping.response.data, records);
    for (const node of Object.values(mapping.response.root ?? {})) collectRecords(node, records);
    lines.push(
      `- Idempotency: v2: ${idempotencyText(mapping.idempotency)}. v3: ${first.method === 'POST' ? '`Idempotency-Key` required' : 'none on reads'}.`,
      '',
      '| v3 code | v3 status | v2 answer |',
      '|---|---|---|',
    );
    for (const code of operationErrorCodes(document, mapping))
      lines.push(
        `| \`${code}\` | ${ERROR_CATALOG[code].status} | ${answerText(legacyAnswer(mappings.errors.v2, code, operation))} |`,
      );
    lines.push('', 'Before (v2):', '', ...fence(legacyRequest('v2', operation, mapping)), '', 'After (v3):', '');
    lines.push(...fence(v3Request(operation, mapping, document)), '');
  }
  lines.push('<a id="records"></a>', '', '## Records', '');
  for (const name of Object.keys(mappings.records).filter((record) => records.has(record))) {
    const shape = mappings.records[name]!;
    const schema = resolve(document, { $ref: `#/components/schemas/${pascal(shape.v3)}` });
    lines.push(
      `<a id="record-${name}"></a>`,
      '',
      `### ${name}`,
      '',
      `${prose(shape.summary)} From the v3 ${shape.v3}.`,
      '',
    );
    lines.push('| v2 field | v2 type | v3 field | v3 type |', '|---|---|---|---|');
    for (const [field, declared] of Object.entries(shape.fields)) {
      const v3Type = 'from' in declared ? schemaText(resolve(document, schema?.properties?.[declared.from])) : '—';
      lines.push(
        `| \`${field}\` | ${declared.type === 'amount' ? 'JSON number' : declared.type}${declared.nullable ? ' or null' : ''} | ${fieldOrigin(declared, mappings)} | ${v3Type} |`,
      );
    }
    lines.push('');
  }
  return lines.join('\n').trimEnd();
}

function collectRecords(node: LayoutNode, into: Set<string>): void {
  if ('object' in node) for (const child of Object.values(node.object)) collectRecords(child, into);
  else if ('record' in node) into.add(node.record);
  else if ('list' in node) into.add(node.list);
}

/** A guide's Markdown by its name. */
export function renderMigrationGuide(
  guide: MigrationGuide,
  mappings: LegacyMappings,
  document: OpenApiDocument,
): string {
  return guide === 'v1-to-v2' ? renderV1ToV2Guide(mappings, document) : renderV2ToV3Guide(mappings, document);
}
