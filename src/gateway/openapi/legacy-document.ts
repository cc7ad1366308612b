/**
 * The v1 and v2 OpenAPI 3.1 documents, generated from the legacy declarations the gateway
 * serves (`mappings/`, validated by mappings-loader.ts): every operation with its method, path,
 * query filters and pagination, body fields (amounts as JSON numbers), the success envelope with
 * the records of mappings/records.ts placed as the endpoint tables say (v1's copies at the root
 * included), the error answers of the generation's error table, and the legacy bearer JWT.
 * Part of the gateway; imports lib and the legacy layer's declarations, never the core.
 */
import { ERROR_CODES, type ErrorCode } from '../../lib/errors/v3-error-catalog.js';
import {
  anyCasePattern,
  documentPath,
  headerComponents,
  headerRefs,
  idempotencyKeyParameter,
  OPENAPI_VERSION,
  type OpenApiDocument,
  type OpenApiOperation,
  openApiPath,
  type OpenApiSchema,
  operationIdOf,
  REQUEST_ID_PARAMETER,
  type ResponseHeaderName,
} from '../../lib/openapi/document.js';
import type {
  BodyField,
  EndpointMapping,
  Filter,
  IdempotencyRule,
  LayoutNode,
} from '../legacy/declarations/endpoint-mappings.js';
import type { LegacyErrorAnswer, LegacyErrorRow, LegacyErrorTables } from '../legacy/declarations/error-tables.js';
import { LEGACY_OPERATIONS, type LegacyGeneration, legacyRoutePath } from '../legacy/declarations/legacy-operations.js';
import type { LegacyMappings } from '../legacy/declarations/mappings-loader.js';
import type { FieldType, LegacyField, RecordShape } from '../legacy/declarations/record-shapes.js';

type Schema = OpenApiSchema | { readonly $ref: string };

/** The reference's groups, by operation. */
const TAG_OF: Readonly<Record<string, string>> = {
  available_markets: 'Markets',
  balances: 'Balances',
  generate_quote: 'Quotes',
  trade: 'Trades',
  trades: 'Trades',
  'trade/{id}': 'Trades',
  'trade/reverse-quote': 'Trades',
  'trade/reverse': 'Trades',
  'trade/settle': 'Trades',
  deposits: 'Deposits',
  withdrawal_addresses: 'Withdrawal addresses',
  fiat_withdrawal_addresses: 'Withdrawal addresses',
  withdrawals: 'Withdrawals',
  withdrawal: 'Withdrawals',
  fiat_withdrawal: 'Withdrawals',
};

const TAGS = [
  { name: 'Markets', description: 'The tradable pairs and their trade limits.' },
  { name: 'Balances', description: 'Balances with their USD values.' },
  { name: 'Quotes', description: 'Quotes, answered under data.quote.' },
  { name: 'Trades', description: 'Executing quotes and reading trades.' },
  { name: 'Deposits', description: 'Money arriving in the book.' },
  { name: 'Withdrawal addresses', description: 'Stablecoin addresses and approved fiat accounts.' },
  { name: 'Withdrawals', description: 'Money leaving the book.' },
  { name: 'Reference', description: 'This document.' },
] as const;

const UUID_ANY_CASE = '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$';
const CURRENCY = '^[A-Z]{3,5}$';

/** The JSON schema of a legacy field type (docs/contract.md#resources-legacy). */
function fieldTypeSchema(type: FieldType): OpenApiSchema {
  switch (type) {
    case 'amount':
      return { type: 'number', description: 'A JSON number written with exactly the v3 digits.' };
    case 'id':
      return { type: 'string', format: 'uuid' };
    case 'timestamp':
      return { type: 'string', format: 'date-time' };
    case 'currency':
      return { type: 'string', pattern: CURRENCY };
    case 'string':
      return { type: 'string' };
    case 'boolean':
      return { type: 'boolean' };
    case 'integer':
      return { type: 'integer' };
  }
}

function fieldSchema(field: LegacyField): OpenApiSchema {
  const schema = fieldTypeSchema(field.type);
  const described = { ...schema, description: [schema.description, field.reason].filter(Boolean).join(' ') };
  if ('constant' in field) return { ...described, const: field.constant };
  return field.nullable ? { ...described, type: [schema.type as 'string', 'null'] } : described;
}

function componentName(record: string): string {
  return record.charAt(0).toUpperCase() + record.slice(1);
}

function recordSchema(shape: RecordShape): OpenApiSchema {
  return {
    type: 'object',
    description: shape.summary,
    properties: Object.fromEntries(Object.entries(shape.fields).map(([name, field]) => [name, fieldSchema(field)])),
    required: Object.keys(shape.fields),
    additionalProperties: false,
  };
}

const ref = (record: string): Schema => ({ $ref: `#/components/schemas/${componentName(record)}` });

/** Where the endpoint table puts the records and values of the answer, as a schema. */
function layoutSchema(node: LayoutNode): Schema {
  if ('object' in node) {
    return {
      type: 'object',
      properties: Object.fromEntries(Object.entries(node.object).map(([key, child]) => [key, layoutSchema(child)])),
      required: Object.keys(node.object),
      additionalProperties: false,
    };
  }
  if ('record' in node) return ref(node.record);
  if ('list' in node) {
    if ('keyedBy' in node) {
      return {
        type: 'array',
        description: node.reason,
        items: { type: 'object', additionalProperties: ref(node.list), minProperties: 1, maxProperties: 1 },
      };
    }
    return { type: 'array', items: ref(node.list) };
  }
  if ('entries' in node)
    return { type: 'object', description: node.reason, additionalProperties: fieldTypeSchema(node.type) };
  return { ...fieldTypeSchema(node.type), description: node.reason };
}

function paginationSchema(mappings: LegacyMappings): OpenApiSchema {
  const count = (description: string): OpenApiSchema => ({ type: 'integer', minimum: 0, description });
  return {
    type: 'object',
    properties: {
      pagination: {
        type: 'object',
        properties: {
          total: count('Exact once the list has been walked to its end; until then a lower bound above end.'),
          start: count("The 0-based offset of the page's first record."),
          end: count('The offset after its last record.'),
          page: {
            type: 'integer',
            minimum: mappings.conventions.pagination.page.min,
            description: 'As requested, or its default.',
          },
          limit: {
            type: 'integer',
            minimum: mappings.conventions.pagination.limit.min,
            maximum: mappings.conventions.pagination.limit.max,
            description: 'As requested, or its default.',
          },
        },
        required: ['total', 'start', 'end', 'page', 'limit'],
        additionalProperties: false,
      },
    },
    required: ['pagination'],
    additionalProperties: false,
  };
}

/** The success body: `{status, message, data}`, meta for pages, fields beside data, v1's copies of data at the root. */
function successSchema(mapping: EndpointMapping, mappings: LegacyMappings): OpenApiSchema {
  const properties: Record<string, Schema> = {
    status: { type: 'string', const: 'success' },
    message: { type: 'string', const: mapping.response.message.text },
    data: layoutSchema(mapping.response.data),
  };
  if (mapping.pagination === 'page-limit') properties.meta = paginationSchema(mappings);
  for (const [key, node] of Object.entries(mapping.response.root ?? {})) properties[key] = layoutSchema(node);
  if (mapping.response.dataAlsoAtRoot && 'object' in mapping.response.data) {
    for (const [key, node] of Object.entries(mapping.response.data.object)) properties[key] = layoutSchema(node);
  }
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

function bodyFieldSchema(field: BodyField): OpenApiSchema {
  const base = ((): OpenApiSchema => {
    switch (field.type) {
      case 'amount':
        return {
          type: 'number',
          exclusiveMinimum: 0,
          description: 'A JSON number greater than 0 with at most 8 decimals, read from its text; a string is refused.',
        };
      case 'currency':
        return { type: 'string', pattern: CURRENCY };
      case 'id':
        return { type: 'string', pattern: UUID_ANY_CASE, description: 'A UUID, any case.' };
      case 'string':
        return { type: 'string', minLength: 1, maxLength: field.maxLength ?? 255 };
      case 'integer':
        return field.oneOf ? { type: 'integer', enum: [...field.oneOf] } : { type: 'integer' };
    }
  })();
  return { ...base, description: [base.description, field.reason].filter(Boolean).join(' ') };
}

function filterParameter(name: string, filter: Filter, mappings: LegacyMappings) {
  const map = filter.map === undefined ? undefined : mappings.maps[filter.map];
  let schema: OpenApiSchema = { type: 'string', minLength: 1, maxLength: 64 };
  if (filter.value === 'boolean') schema = { type: 'string', pattern: anyCasePattern(['true', 'false']) };
  if (filter.value === 'currency') schema = { type: 'string', pattern: '^[A-Za-z]{3,5}$' };
  if (map && filter.closed)
    schema = {
      type: 'string',
      pattern: anyCasePattern([...new Set([...Object.values(map.values), ...Object.keys(map.values)])]),
    };
  return { name, in: 'query' as const, required: false, description: `${filter.reason} Any case.`, schema };
}

function idempotencyParameters(rule: IdempotencyRule) {
  switch (rule.kind) {
    case 'none':
      return [];
    case 'required':
      return [
        idempotencyKeyParameter(
          true,
          `Required; the first final answer is kept ${rule.lifetimeSeconds} s and replayed to the same request. A UUID fits.`,
        ),
      ];
    case 'honoured-if-sent':
      return [
        idempotencyKeyParameter(
          false,
          `Honoured when sent: the first final answer is kept ${rule.lifetimeSeconds} s and replayed to the same request.`,
        ),
      ];
  }
}

/** The answers the generation gives for these v3 codes, by status, each once (the operation's own wording where it has one). */
function errorAnswers<G extends LegacyGeneration>(
  tables: LegacyErrorTables<G>,
  operation: string,
  codes: readonly ErrorCode[],
): Map<number, LegacyErrorAnswer<G>[]> {
  const byStatus = new Map<number, LegacyErrorAnswer<G>[]>();
  const rows: LegacyErrorRow<G>[] = codes.map((code) => tables.byCode[code]);
  for (const row of rows) {
    const answer = ((row.byOperation as Readonly<Record<string, LegacyErrorAnswer<G>>> | undefined)?.[operation] ??
      row) as LegacyErrorAnswer<G>;
    const list = byStatus.get(answer.status) ?? [];
    const key = (candidate: LegacyErrorAnswer<G>) => `${candidate.message}\n${candidate.error?.code ?? ''}`;
    if (!list.some((seen) => key(seen) === key(answer))) list.push(answer);
    byStatus.set(answer.status, list);
  }
  return byStatus;
}

function errorSchema<G extends LegacyGeneration>(answers: readonly LegacyErrorAnswer<G>[]): OpenApiSchema {
  const codes = [...new Set(answers.flatMap((answer) => (answer.error ? [answer.error.code] : [])))];
  const properties: Record<string, OpenApiSchema> = {
    status: { type: 'string', const: 'error' },
    message: {
      type: 'string',
      enum: [...new Set(answers.map((answer) => answer.message))],
      description: 'Not stable: switch on the status, or on error.code.',
    },
  };
  if (codes.length > 0) {
    properties.error = {
      type: 'object',
      properties: { code: { type: 'string', enum: codes }, details: { type: 'string' } },
      required: ['code', 'details'],
      additionalProperties: false,
    };
  }
  return { type: 'object', properties, required: ['status', 'message'], additionalProperties: false };
}

const RETIRED_SCHEMA: OpenApiSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', const: 'error' },
    message: { type: 'string', description: 'Names the sunset or the brownout window, and the migration guide.' },
  },
  required: ['status', 'message'],
  additionalProperties: false,
};

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad request, a refused business rule, or not found',
  401: 'Not authenticated, or not allowed',
  404: 'Not found',
  409: 'Conflict',
  410: 'Retired',
  422: 'Idempotency key reused with different parameters',
  429: 'Rate limited',
  500: 'Internal error',
  503: 'Unavailable',
};

/** Deprecation, Sunset and Link: on every v1 answer, on v2's once it has dates (docs/contract.md#versioning-v1-sunset). */
function headersOf(extra: readonly ResponseHeaderName[]): readonly ResponseHeaderName[] {
  return ['RequestId', 'TraceId', ...extra, 'Deprecation', 'Sunset', 'Link'];
}

/** The error responses of these codes, one per status. */
function errorResponses<G extends LegacyGeneration>(
  tables: LegacyErrorTables<G>,
  operation: string,
  codes: readonly ErrorCode[],
): OpenApiOperation['responses'] {
  const responses: OpenApiOperation['responses'] = {};
  for (const [status, answers] of [...errorAnswers(tables, operation, codes)].sort(([a], [b]) => a - b)) {
    const retryAfter: readonly ResponseHeaderName[] =
      status === 409 || status === 429 || status === 503 ? ['RetryAfter'] : [];
    responses[String(status)] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${answers.map((answer) => answer.message).join(' | ')}`,
      headers: headerRefs(headersOf([...retryAfter, 'RateLimitLimit', 'RateLimitReset'])),
      content: { 'application/json': { schema: errorSchema(answers) } },
    };
  }
  return responses;
}

/** What the HTTP server answers before any route runs, in the envelope of the generation the request line names (docs/contract.md#errors-before-routing). */
const BEFORE_ROUTING: readonly ErrorCode[] = ['REQUEST_MALFORMED', 'REQUEST_HEADERS_TOO_LARGE', 'REQUEST_TIMEOUT'];

function operationObject<G extends LegacyGeneration>(
  generation: G,
  operation: string,
  mapping: EndpointMapping,
  mappings: LegacyMappings,
): OpenApiOperation {
  const path = openApiPath(legacyRoutePath(generation, operation));
  const pagination = mappings.conventions.pagination;
  const parameters: NonNullable<OpenApiOperation['parameters']> = [{ $ref: '#/components/parameters/OrgId' }];
  if (path.includes('{id}'))
    parameters.push({
      name: 'id',
      in: 'path',
      required: true,
      description: 'The trade, by its UUID (any case); a malformed id is the legacy 400.',
      schema: { type: 'string' },
    });
  if (mapping.pagination === 'page-limit') {
    parameters.push(
      {
        name: 'page',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: pagination.page.min, default: pagination.page.default },
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        schema: {
          type: 'integer',
          minimum: pagination.limit.min,
          maximum: pagination.limit.max,
          default: pagination.limit.default,
        },
      },
    );
  }
  for (const [name, filter] of Object.entries(mapping.filters))
    parameters.push(filterParameter(name, filter, mappings));
  parameters.push(
    ...idempotencyParameters(mapping.idempotency),
    { $ref: '#/components/parameters/AppMode' },
    { $ref: '#/components/parameters/RequestId' },
  );

  const fields = mapping.request?.fields ?? {};
  const requestBody =
    mapping.request === null
      ? undefined
      : {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object' as const,
                description: 'Other fields are ignored, as the legacy service ignored them.',
                properties: Object.fromEntries(
                  Object.entries(fields).map(([name, field]) => [name, bodyFieldSchema(field)]),
                ),
                required: Object.entries(fields)
                  .filter(([, field]) => field.required)
                  .map(([name]) => name),
              },
            },
          },
        };

  const tables = mappings.errors[generation] as LegacyErrorTables<G>;
  const responses: OpenApiOperation['responses'] = {
    '200': {
      description: mapping.response.message.text,
      headers: headerRefs(headersOf(['RateLimitLimit', 'RateLimitReset', 'IdempotencyReplayed', 'ServerTiming'])),
      content: { 'application/json': { schema: successSchema(mapping, mappings) } },
    },
    // Every v3 code has a row: any of them may reach a legacy operation through its v3 calls or the gateway's own checks.
    ...errorResponses(tables, operation, ERROR_CODES),
  };
  if (generation === 'v1') {
    responses['410'] = {
      description: `${STATUS_TEXT[410]}: after v1's sunset, and during a scheduled brownout.`,
      headers: headerRefs(headersOf(['RateLimitLimit', 'RateLimitReset'])),
      content: { 'application/json': { schema: RETIRED_SCHEMA } },
    };
  }

  return {
    operationId: operationIdOf(mapping.method, path, 3),
    summary: mapping.summary.replace(/\.$/, ''),
    description: `Scope: \`${mapping.scope}\`. Calls v3: ${Object.values(mapping.v3)
      .map((call) => `\`${call.method} ${call.path}\``)
      .join(', ')}.`,
    tags: [TAG_OF[operation] ?? 'Other'],
    ...(generation === 'v1' ? { deprecated: true } : {}),
    security: [{ bearerToken: [mapping.scope] }],
    parameters,
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

function documentOperation<G extends LegacyGeneration>(generation: G, mappings: LegacyMappings): OpenApiOperation {
  return {
    operationId: 'getOpenapiJson',
    summary: 'Retrieve this OpenAPI document',
    description: `No authentication. Another method is the ${generation} "Route not found".`,
    tags: ['Reference'],
    security: [],
    responses: {
      '200': {
        description: `The ${generation} OpenAPI 3.1 document.`,
        headers: headerRefs(headersOf([])),
        content: { 'application/json': { schema: { type: 'object', description: 'An OpenAPI 3.1 document.' } } },
      },
      ...errorResponses(mappings.errors[generation] as LegacyErrorTables<G>, 'openapi.json', BEFORE_ROUTING),
    },
  };
}

const INTRODUCTIONS: Readonly<Record<LegacyGeneration, string>> = {
  v2: 'The v2 legacy API, served unchanged by the fxgate gateway on top of v3.',
  v1: 'The v1 legacy API, served unchanged by the fxgate gateway on top of v3. v1 is deprecated: every answer carries Deprecation, Sunset and Link; after its sunset, and during a brownout, every request is 410. v2 is the migration target.',
};

const COMMON_INTRODUCTION = [
  '',
  '- Every request carries `Authorization: Bearer <JWT>`: ES256, signed with the API key, at most 120 s, good for one request; no request signature.',
  '- `x-app-mode`: sandbox, live or production (live), any case; absent means live, or sandbox on a host the operator lists in `FXGATE_SANDBOX_HOSTS` (where live keys are refused).',
  '- Every success is `{"status": "success", "message", "data"}`; lists add `meta.pagination`. Every error is `{"status": "error", "message"}`, with `error: {code, details}` for the idempotency cases.',
  '- Amounts are JSON numbers written with exactly the v3 digits; ids are UUIDs.',
  '- Every authentication and authorisation refusal is the 401; an organisation other than the key\'s is "Route not found".',
  "- Each API key has its own rate limit per class (reads, writes) per 10 s; `RateLimit-Limit` and `RateLimit-Reset` are that budget's (a token that proves no key: the client address's). Over it: 429 with `Retry-After`.",
].join('\n');

/** The record shapes the paths refer to (v1 answers no reversal details, for one). */
function usedRecordSchemas(
  paths: NonNullable<OpenApiDocument['paths']>,
  mappings: LegacyMappings,
): Record<string, OpenApiSchema> {
  const text = JSON.stringify(paths);
  return Object.fromEntries(
    Object.entries(mappings.records)
      .filter(([name]) => text.includes(`"#/components/schemas/${componentName(name)}"`))
      .map(([name, shape]) => [componentName(name), recordSchema(shape)]),
  );
}

/** The document of one legacy generation, from the validated declarations. */
export function buildLegacyDocument(declared: LegacyMappings, generation: LegacyGeneration): OpenApiDocument {
  // Every record the document names is the generation's own, the result of its chain of changes.
  const mappings: LegacyMappings = { ...declared, records: declared.recordsOf[generation] };
  const table: Readonly<Record<string, EndpointMapping>> = mappings.endpoints[generation];
  const paths: NonNullable<OpenApiDocument['paths']> = {};
  for (const operation of LEGACY_OPERATIONS[generation]) {
    const mapping = table[operation]!;
    const path = openApiPath(legacyRoutePath(generation, operation));
    paths[path] = {
      ...paths[path],
      [mapping.method.toLowerCase()]: operationObject(generation, operation, mapping, mappings),
    };
  }
  paths[documentPath(generation)] = { get: documentOperation(generation, mappings) };
  const modes = Object.keys(mappings.conventions.appModes.values).map((mode) => mode.toLowerCase());
  const headerNames: readonly ResponseHeaderName[] = [
    'RequestId',
    'TraceId',
    'RateLimitLimit',
    'RateLimitReset',
    'RetryAfter',
    'IdempotencyReplayed',
    'ServerTiming',
    'Deprecation',
    'Sunset',
    'Link',
  ];
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: `fxgate ${generation}`,
      version: generation.slice(1),
      description: `${INTRODUCTIONS[generation]}\n${COMMON_INTRODUCTION}`,
      license: { name: 'UNLICENSED' },
    },
    servers: [{ url: '/', description: 'The gateway that serves this document.' }],
    tags: TAGS.filter(
      (tag) =>
        tag.name === 'Reference' ||
        Object.values(paths).some((item) =>
          Object.values(item).some((op) => (op as OpenApiOperation).tags?.includes(tag.name)),
        ),
    ).map((tag) => ({ ...tag })),
    paths,
    components: {
      schemas: usedRecordSchemas(paths, mappings),
      parameters: {
        OrgId: {
          name: 'orgId',
          in: 'path',
          required: true,
          description: 'The key\'s organisation (any case); another is "Route not found".',
          schema: { type: 'string', pattern: UUID_ANY_CASE },
        },
        AppMode: {
          name: 'x-app-mode',
          in: 'header',
          required: false,
          description:
            'The book: sandbox, or live (also production); any case; absent means live, or sandbox on a host the operator lists in FXGATE_SANDBOX_HOSTS (where live keys are refused).',
          schema: { type: 'string', pattern: anyCasePattern(modes) },
        },
        RequestId: REQUEST_ID_PARAMETER,
      },
      headers: headerComponents(headerNames),
      securitySchemes: {
        bearerToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'An ES256 JWT signed with the legacy API key: kid and sub the key name, a 16-byte hex nonce, aud ["developer-api"], exp - iat at most 120 s, good for one request. The scopes listed are the key scopes the operation needs.',
        },
      },
    },
  };
}
