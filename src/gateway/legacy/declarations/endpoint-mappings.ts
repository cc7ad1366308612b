/**
 * The endpoint mapping format: how one legacy operation lands on v3, declared as data in
 * `mappings/endpoints.v2.ts` (and, as changes from v2, `mappings/endpoints.v1.ts`), and the
 * validator the gateway runs when it loads them. Part of the legacy layer's declarations; it
 * knows v3 only through the contract list of v3-contract/operations.ts.
 *
 * A mapping declares, in the manner of Stripe's version change modules and Cadwyn: the v3 calls
 * (by name), the scope the legacy key needs, the idempotency and pagination it follows, the
 * query filters and how each is served, the request body field by field (legacy name, type,
 * v3 name), and the response layout: where each legacy record (mappings/records.ts) or value
 * goes in the legacy body, and the success message. Code keeps only what must be computed:
 * derived fields, converters and cross-field request checks, registered by name.
 *
 * validateEndpointTable refuses to start the gateway on an unknown field, a missing or unknown
 * operation, a v3 target the contract does not have, a rule that does not fit the operation, or
 * a name (record, call, map, check) that nothing defines, and lists every problem at once.
 */
import { z } from 'zod';

import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';
import { ID_PREFIXES, type IdKind } from '../../../lib/ids.js';
import { findV3Operation, pathParams, V3_OPERATIONS } from '../v3-contract/operations.js';
import { V3_RECORD_KINDS, v3FieldsOf, type V3RecordKind } from '../v3-contract/v3-records.js';
import { LEGACY_OPERATIONS, type LegacyGeneration, type LegacyOperation } from './legacy-operations.js';
import { describeIssues, parseDeclaration } from './mapping-error.js';
import {
  FIELD_TYPES,
  letterName as name,
  nonEmptyText as text,
  provenanceShape,
  type RecordTable,
  type ValueMapTable,
} from './record-shapes.js';

export type LegacyMethod = 'GET' | 'POST';
/** The legacy key scopes; webhooks have no legacy operation. */
export type LegacyScope = 'view' | 'trade' | 'withdraw';

/**
 * How a filter's text is read: `currency` (a currency code, any case), `boolean` (`true` or
 * `false`, any case), `word` (text matched without regard to case, through `map` when given).
 */
export const FILTER_VALUES = ['currency', 'boolean', 'word'] as const;
export type FilterValue = (typeof FILTER_VALUES)[number];

/** Request body field types; amounts are read from the JSON text, never as JS numbers. */
export const BODY_FIELD_TYPES = ['amount', 'currency', 'id', 'string', 'integer'] as const;
export type BodyFieldType = (typeof BODY_FIELD_TYPES)[number];

/** The legacy list query parameters, reserved for pagination. */
export const PAGINATION_QUERY = ['page', 'limit'] as const;

/** What the declarations refer to and other modules define. */
export interface EndpointContext {
  readonly records: RecordTable;
  readonly maps: ValueMapTable;
  /** Names of the registered cross-field request checks. */
  readonly checks: Iterable<string>;
}

const lifetime = z.number().int().positive();
const dottedPath = z.string().regex(/^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$/, 'a dotted path of names');
const provenance = provenanceShape;
const idKind = z.enum(Object.keys(ID_PREFIXES) as [IdKind, ...IdKind[]]);

/** Where a v3 path parameter comes from: a legacy path parameter or a body field, holding a legacy UUID of this kind (src/lib/ids.ts). */
const paramSourceSchema = z.strictObject({ from: z.enum(['path', 'body']), field: name, idKind });
export type ParamSource = Readonly<z.infer<typeof paramSourceSchema>>;

/** A v3 call: a path of the contract (v3-contract/operations.ts) with a source for each `:param`, and fixed query parameters (`{ assetType: 'FIAT' }`). */
const v3CallSchema = z.strictObject({
  method: z.enum(['GET', 'POST']),
  path: z.string().startsWith('/v3/fx/'),
  params: z.record(z.string(), paramSourceSchema).optional(),
  query: z.record(name, text).optional(),
});
export type V3Call = Readonly<z.infer<typeof v3CallSchema>>;

/**
 * - `none`: no key at all (v1 reads).
 * - `required`: writes must send Idempotency-Key; the legacy answer is kept `lifetimeSeconds`
 *   and the v3 key is derived from it.
 * - `honoured-if-sent`: a key is optional; when sent it works as `required`; a write sent
 *   without one is new each time (a fresh v3 key).
 */
const idempotencyRules = {
  none: z.strictObject({ kind: z.literal('none') }),
  required: z.strictObject({ kind: z.literal('required'), lifetimeSeconds: lifetime }),
  'honoured-if-sent': z.strictObject({ kind: z.literal('honoured-if-sent'), lifetimeSeconds: lifetime }),
} as const;
const idempotencySchema = z.discriminatedUnion('kind', [
  idempotencyRules.none,
  idempotencyRules.required,
  idempotencyRules['honoured-if-sent'],
]);
export type IdempotencyRule = Readonly<z.infer<typeof idempotencySchema>>;

/** `page-limit`: legacy `page`/`limit` over the first call's v3 list (walked by cursor, or sliced when v3 returns it whole). */
export type PaginationKind = 'none' | 'page-limit';

/**
 * A query filter: sent to v3 as a query parameter of the first call (`v3Query`), or matched
 * against a field of the legacy records (`field`, lists v3 returns whole). `map`: a value map
 * (mappings/value-maps.ts) through which a v3 word is read as its legacy word; `closed`, with
 * `map`: a word that is neither a v3 nor a legacy word of the map is refused.
 */
const filterCommon = {
  ...provenance,
  value: z.enum(FILTER_VALUES),
  map: name.optional(),
  closed: z.literal(true).optional(),
};
const filterSchema = z.union([
  z.strictObject({ ...filterCommon, v3Query: name }),
  z.strictObject({ ...filterCommon, field: name }),
]);
export type Filter = Readonly<z.infer<typeof filterSchema>>;

/**
 * A request body field, by its type: an `id` names its v3 id kind, an `integer` may list the
 * values allowed (`oneOf`), a `string` its longest text (`maxLength`). `to` is the v3 body field
 * it is sent as; absent: checked, not sent (an id the v3 path carries).
 */
const bodyCommon = { ...provenance, required: z.boolean(), to: name.optional() };
const bodyFieldSchema = z.discriminatedUnion('type', [
  z.strictObject({ ...bodyCommon, type: z.enum(['amount', 'currency']) }),
  z.strictObject({
    ...bodyCommon,
    type: z.literal('id'),
    idKind: z.enum(Object.keys(ID_PREFIXES) as [IdKind, ...IdKind[]], {
      error: (issue) => (issue.input === undefined ? 'an id field names its idKind' : undefined),
    }),
  }),
  z.strictObject({ ...bodyCommon, type: z.literal('string'), maxLength: z.number().int().positive().optional() }),
  z.strictObject({
    ...bodyCommon,
    type: z.literal('integer'),
    oneOf: z.array(z.number().int()).min(1).readonly().optional(),
  }),
]);
export type BodyField = Readonly<z.infer<typeof bodyFieldSchema>>;

/** Legacy body fields (others are ignored, as the legacy APIs ignored them) and named cross-field checks (REQUEST_CHECKS of transforms/request-body.ts). */
const requestSchema = z.strictObject({
  fields: z.record(name, bodyFieldSchema),
  checks: z.array(name).readonly().optional(),
});
export type RequestShape = Readonly<z.infer<typeof requestSchema>>;

/** Why a node's values can be had only from the answer itself (the generation diff reports them as such). */
const answerOnlySchema = z.strictObject(provenance);
export type AnswerOnly = Readonly<z.infer<typeof answerOnlySchema>>;
const answerOnly = answerOnlySchema.optional();

/**
 * Where a value of the legacy body comes from. `from` names one of the mapping's v3 calls; `at`
 * is a dotted path in that call's answer (default `data`).
 * - `record`: one legacy record (mappings/records.ts) built from the v3 record at `at`;
 * - `list`: one per v3 record of the list at `at`; with `keyedBy` (and its provenance), each
 *   element is `{<v3 field value>: record}` instead;
 * - `entries`: an object `{<key field>: <value field>}` over the v3 records of the list at `at`;
 * - `field`: one value at a path of the answer;
 * - `object`: an object of nodes.
 * Every node but `object` may say `answerOnly`: its values come from a write's answer that no v3
 * read serves again, so a comparison of the legacy answer with v3 read back can only report them.
 */
const leafSchemas = [
  z.strictObject({ record: name, from: name, at: dottedPath.optional(), answerOnly }),
  z.strictObject({ list: name, from: name, at: dottedPath.optional(), answerOnly }),
  z.strictObject({ ...provenance, list: name, from: name, at: dottedPath.optional(), keyedBy: name, answerOnly }),
  z.strictObject({
    ...provenance,
    entries: z.enum(V3_RECORD_KINDS as [V3RecordKind, ...V3RecordKind[]]),
    from: name,
    at: dottedPath.optional(),
    key: name,
    value: name,
    type: z.enum(FIELD_TYPES),
    answerOnly,
  }),
  z.strictObject({ ...provenance, field: dottedPath, from: name, type: z.enum(FIELD_TYPES), answerOnly }),
] as const;
export type LayoutNode =
  Readonly<z.infer<(typeof leafSchemas)[number]>> | { readonly object: Readonly<Record<string, LayoutNode>> };

const layoutSchema: z.ZodType<LayoutNode> = z.lazy(() =>
  z.union([...leafSchemas, z.strictObject({ object: z.record(name, layoutSchema) })]),
);

/** The success body's `message`, the `data` layout, the fields beside `data` at the top of the body (`root`), and whether `data`'s fields are written at the top as well. */
const responseSchema = z.strictObject({
  message: z.strictObject({ ...provenance, text }),
  data: layoutSchema,
  root: z.record(name, layoutSchema).optional(),
  dataAlsoAtRoot: z.strictObject(provenance).optional(),
});
export type ResponseShape = Readonly<z.infer<typeof responseSchema>>;
export type Message = ResponseShape['message'];

/**
 * A mapping, by its method: a GET has no body (`request: null`) and may paginate; a POST
 * declares its body (an empty field list for none) and answers one page. `idempotency` is the
 * rule the generation gives the method (`rules`); the shape states the pairing.
 */
function mappingSchema(rules: Readonly<Record<LegacyMethod, z.ZodType<IdempotencyRule>>>) {
  const common = {
    /** One line: what the legacy operation does. */
    summary: text,
    /** The v3 calls by name, in order: the first is the operation itself, the later ones reads whose answers the response composes. */
    v3: z.record(name, v3CallSchema).refine((calls) => Object.keys(calls).length > 0, 'must name at least one v3 call'),
    scope: z.enum(['view', 'trade', 'withdraw']),
    filters: z.record(name, filterSchema),
    response: responseSchema,
  };
  return z.discriminatedUnion('method', [
    z.strictObject({
      ...common,
      method: z.literal('GET'),
      idempotency: rules.GET,
      pagination: z.enum(['none', 'page-limit']),
      request: z.null({ error: 'a GET has no body' }),
    }),
    z.strictObject({
      ...common,
      method: z.literal('POST'),
      idempotency: rules.POST,
      pagination: z.literal('none', { error: 'only GET lists paginate' }),
      request: requestSchema
        .nullable()
        .refine((request) => request !== null, 'a POST declares its body (an empty field list for none)'),
    }),
  ]);
}

/** Any generation's mapping, the type every reader uses. */
export type EndpointMapping = Readonly<z.infer<ReturnType<typeof mappingSchema>>>;
export type EndpointTable<G extends LegacyGeneration> = Readonly<Record<LegacyOperation<G>, EndpointMapping>>;

function only(kind: IdempotencyRule['kind'], error: string): z.ZodType<IdempotencyRule> {
  return idempotencySchema.refine((rule) => rule.kind === kind, error);
}

/** Each generation's idempotency by method: the rule the shape of its mappings states. */
const GENERATION_MAPPINGS = {
  v1: mappingSchema({
    GET: only('none', 'v1 reads take no key'),
    POST: only('honoured-if-sent', 'v1 writes honour a key if sent'),
  }),
  v2: mappingSchema({
    GET: only('honoured-if-sent', 'v2 reads honour a key if sent'),
    POST: only('required', 'v2 writes require Idempotency-Key'),
  }),
} as const;

/** The v3 record kind and field names of a record shape or list node, for the rules below. */
function recordOf(
  context: EndpointContext,
  recordName: string,
): { v3: V3RecordKind; fields: readonly string[] } | undefined {
  const shape = context.records[recordName];
  return shape && { v3: shape.v3, fields: Object.keys(shape.fields) };
}

/** The layout rules a schema cannot say: names that must exist, fields a node reads. */
function layoutProblems(
  node: LayoutNode,
  where: string,
  calls: Readonly<Record<string, V3Call>>,
  context: EndpointContext,
): string[] {
  const problems: string[] = [];
  if ('object' in node) {
    for (const [key, child] of Object.entries(node.object))
      problems.push(...layoutProblems(child, `${where}.object.${key}`, calls, context));
    return problems;
  }
  const call = Object.hasOwn(calls, node.from) ? calls[node.from] : undefined;
  if (!call)
    problems.push(`${where}.from: no v3 call named ${node.from} (the mapping calls ${Object.keys(calls).join(', ')})`);
  // A read can be sent again and compared; only a write's answer is had once.
  if (node.answerOnly && call?.method === 'GET')
    problems.push(`${where}.answerOnly: ${node.from} is a read (GET ${call.path}), which can be read again`);
  if ('record' in node || 'list' in node) {
    const recordName = 'record' in node ? node.record : node.list;
    const record = recordOf(context, recordName);
    if (!record) problems.push(`${where}: no record shape named ${recordName} in mappings/records`);
    if ('keyedBy' in node && record && !v3FieldsOf(record.v3).includes(node.keyedBy)) {
      problems.push(`${where}.keyedBy: the v3 ${record.v3} record has no field ${node.keyedBy}`);
    }
  }
  if ('entries' in node) {
    const fields = v3FieldsOf(node.entries);
    for (const field of [node.key, node.value])
      if (!fields.includes(field)) problems.push(`${where}: the v3 ${node.entries} record has no field ${field}`);
  }
  return problems;
}

/** The rules between fields that a schema cannot say. */
function ruleProblems(
  operation: string,
  mapping: EndpointMapping,
  context: EndpointContext,
  checks: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  const at = (field: string, message: string) => problems.push(`${operation}.${field}: ${message}`);
  const legacyParams = pathParams(operation.replaceAll(/\{([A-Za-z]+)\}/g, ':$1'));
  const calls = Object.entries(mapping.v3);
  const bodyFields = mapping.request?.fields ?? {};

  calls.forEach(([callName, call], index) => {
    const where = `v3.${callName}`;
    const target = findV3Operation(call.method, call.path);
    if (!target) {
      const known = V3_OPERATIONS.filter((candidate) => candidate.path === call.path).map(
        (candidate) => candidate.method,
      );
      at(
        where,
        known.length === 0
          ? `${call.path} is not a v3 path`
          : `${call.method} ${call.path} is not a v3 operation (it takes ${known.join(', ')})`,
      );
      return;
    }
    if (target.sandboxOnly) at(where, `${call.method} ${call.path} is a sandbox-only simulation`);
    if (index === 0 && target.scope !== mapping.scope)
      at('scope', `must be ${target.scope}, the scope of ${call.method} ${call.path}`);
    // The legacy rate limit charges the operation's method's class: it must be the v3 call's.
    if (index === 0 && call.method !== mapping.method)
      at(where, `a legacy ${mapping.method} must call v3 with ${mapping.method} first, in the same rate-limit class`);
    if (index > 0 && call.method !== 'GET') at(where, 'calls after the first must be reads (GET)');
    const declared = Object.keys(call.params ?? {});
    for (const param of pathParams(call.path))
      if (!declared.includes(param)) at(`${where}.params`, `no source for :${param}`);
    for (const [param, source] of Object.entries(call.params ?? {})) {
      if (!pathParams(call.path).includes(param)) at(`${where}.params.${param}`, `${call.path} has no :${param}`);
      if (source.from === 'path' && !legacyParams.includes(source.field))
        at(`${where}.params.${param}`, `the legacy path has no :${source.field}`);
      if (source.from === 'body') {
        const field = bodyFields[source.field];
        // Required: an absent id would leave the v3 path without its parameter.
        if (field?.type !== 'id' || field.idKind !== source.idKind || !field.required)
          at(
            `${where}.params.${param}`,
            `the request must declare ${source.field} as a required id of kind ${source.idKind}`,
          );
      }
    }
    for (const key of Object.keys(call.query ?? {})) {
      if (!target.query.includes(key))
        at(`${where}.query.${key}`, `${call.method} ${call.path} takes no query parameter ${key}`);
    }
  });

  const [firstName, firstCall] = calls[0]!;
  const first = findV3Operation(firstCall.method, firstCall.path);
  const data = mapping.response.data;
  const listRecord =
    'list' in data && data.from === firstName && (data.at ?? 'data') === 'data'
      ? recordOf(context, data.list)
      : undefined;

  if (mapping.pagination === 'page-limit') {
    if (first && first.list === null) at('pagination', `${first.method} ${first.path} is not a list`);
    if (!listRecord) at('response.data', `a paginated list answers a list node over ${firstName}'s data`);
  }
  // Unpaginated, a cursor list would answer v3's first page only, as if it were the whole list.
  if (mapping.pagination === 'none' && first?.list === 'cursor')
    at('pagination', `${first.method} ${first.path} is a cursor list: it must be page-limit`);

  for (const [legacyName, filter] of Object.entries(mapping.filters)) {
    const where = `filters.${legacyName}`;
    if ((PAGINATION_QUERY as readonly string[]).includes(legacyName)) at(where, 'page and limit belong to pagination');
    if (mapping.method !== 'GET') at(where, 'only GET takes query filters');
    if (filter.map !== undefined && !Object.hasOwn(context.maps, filter.map))
      at(`${where}.map`, `no value map named ${filter.map}`);
    if (filter.closed && filter.map === undefined)
      at(`${where}.closed`, 'only a filter read through a map can be closed');
    if (filter.map !== undefined && filter.value !== 'word')
      at(`${where}.map`, 'only word filters are read through a map');
    if ('v3Query' in filter) {
      if (first && !first.query.includes(filter.v3Query))
        at(where, `${first.method} ${first.path} takes no query parameter ${filter.v3Query}`);
      if (firstCall.query && Object.hasOwn(firstCall.query, filter.v3Query))
        at(where, `${filter.v3Query} is already fixed by v3.${firstName}.query`);
    } else {
      if (first?.list !== 'bounded')
        at(
          where,
          'a filter on the legacy records needs a list v3 returns whole (a cursor list would page before filtering)',
        );
      // The legacy records are filtered where a list is paged (pipeline/pagination.ts): elsewhere the filter would be ignored.
      if (!listRecord || mapping.pagination !== 'page-limit')
        at(where, 'a filter on the legacy records needs a paginated list of them as data');
      else if (!listRecord.fields.includes(filter.field)) at(where, `the listed record has no field ${filter.field}`);
    }
  }

  const targets = new Set<string>();
  for (const [fieldName, field] of Object.entries(bodyFields)) {
    const where = `request.fields.${fieldName}`;
    if (field.to !== undefined) {
      if (targets.has(field.to)) at(`${where}.to`, `${field.to} is already sent by another field`);
      targets.add(field.to);
    }
  }
  for (const check of mapping.request?.checks ?? [])
    if (!checks.has(check)) at('request.checks', `no request check is registered as ${check}`);

  problems.push(...layoutProblems(data, `${operation}.response.data`, mapping.v3, context));
  for (const [key, node] of Object.entries(mapping.response.root ?? {}))
    problems.push(...layoutProblems(node, `${operation}.response.root.${key}`, mapping.v3, context));
  const rootKeys = ['status', 'message', 'data', 'meta', ...Object.keys(mapping.response.root ?? {})];
  for (const key of Object.keys(mapping.response.root ?? {}))
    if (['status', 'message', 'data', 'meta'].includes(key)) at(`response.root.${key}`, 'is a key of the envelope');
  if (mapping.response.dataAlsoAtRoot) {
    if (!('object' in data)) at('response.dataAlsoAtRoot', 'only an object data can also be written at the root');
    else
      for (const key of Object.keys(data.object))
        if (rootKeys.includes(key)) at('response.dataAlsoAtRoot', `data.${key} would overwrite the body's ${key}`);
  }
  return problems;
}

/**
 * Validates a generation's endpoint table, as loaded (unknown input), against the v3 contract,
 * the record shapes, the value maps and the registered checks; returns it typed or throws
 * LegacyMappingError listing every problem.
 */
export function validateEndpointTable<G extends LegacyGeneration>(
  generation: G,
  table: unknown,
  context: EndpointContext,
  tableName = `mappings/endpoints.${generation}`,
): EndpointTable<G> {
  const outer = parseDeclaration(z.record(z.string(), z.unknown()), table, tableName);
  const checks = new Set(context.checks);
  const operations: readonly string[] = LEGACY_OPERATIONS[generation];
  const problems: string[] = [];
  for (const operation of operations)
    if (!Object.hasOwn(outer, operation)) problems.push(`${operation}: no mapping for this ${generation} operation`);
  for (const [operation, entry] of Object.entries(outer)) {
    if (!operations.includes(operation)) {
      problems.push(`${operation}: not a ${generation} operation (unknown key)`);
      continue;
    }
    const parsed = GENERATION_MAPPINGS[generation].safeParse(entry);
    if (!parsed.success) {
      problems.push(...describeIssues(operation, parsed.error.issues));
      continue;
    }
    problems.push(...ruleProblems(operation, parsed.data, context, checks));
  }
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
  return table as EndpointTable<G>;
}

/** The first v3 call of a mapping, the operation itself: its name and declaration. */
export function operationCall(mapping: EndpointMapping): readonly [string, V3Call] {
  return Object.entries(mapping.v3)[0]!;
}
