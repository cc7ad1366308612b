/**
 * The endpoint mapping format: how one legacy operation lands on v3, declared as data in
 * `mappings/endpoints.v1.ts` and `mappings/endpoints.v2.ts` (DESIGN 4), in the manner of Stripe's
 * version change modules: each legacy difference is a small, named, declarative change.
 *
 * A mapping declares the static part of an operation: the legacy route, the v3 calls it makes,
 * the scope the legacy key needs, the idempotency and pagination it follows, the legacy query
 * filters, the amount fields whose numbers are read and written losslessly, and the NAMES of the
 * request and response transforms that reshape bodies. The transforms are code, registered
 * under those names; this module checks only that each name is registered.
 *
 * validateEndpointTable runs when the gateway loads the tables and refuses to start on an
 * unknown field, a missing or unknown operation, a v3 target the contract does not have, a
 * scope, idempotency or pagination rule that does not fit, or an unregistered transform.
 */
import { z } from 'zod';
import { ID_PREFIXES, type IdKind } from '../../lib/ids.js';
import { isJsonPath } from './json-paths.js';
import { LegacyMappingError, describeIssues } from './mapping-error.js';
import { LEGACY_OPERATIONS, type LegacyGeneration, type LegacyOperation, legacyRoutePath } from './operations.js';
import { V3_OPERATIONS, findV3Operation, pathParams } from './v3-operations.js';

export type LegacyMethod = 'GET' | 'POST';
/** The legacy key scopes (DESIGN 3.1); webhooks have no legacy operation. */
export type LegacyScope = 'view' | 'trade' | 'withdraw';

/** Where a v3 path parameter comes from: a legacy path parameter or a body field, holding a legacy UUID of this kind. */
export interface ParamSource {
  readonly from: 'path' | 'body';
  readonly field: string;
  /** The v3 id kind the legacy UUID maps to (DESIGN 3.3, src/lib/ids.ts). */
  readonly idKind: IdKind;
}

export interface V3Call {
  readonly method: 'GET' | 'POST';
  /** A v3 path of the contract (src/gateway/legacy/v3-operations.ts), `:param` placeholders. */
  readonly path: string;
  /** A source for each `:param` of the path. */
  readonly params?: Readonly<Record<string, ParamSource>>;
  /** Fixed query parameters, e.g. `{ assetType: 'FIAT' }`. */
  readonly query?: Readonly<Record<string, string>>;
}

/**
 * - `none`: v1, GET: no key at all.
 * - `fresh-v3-key`: v1 writes: each request gets a new v3 key (DESIGN 4).
 * - `required`: v2 writes: Idempotency-Key required, the legacy answer kept for `lifetimeSeconds`
 *   (spec 8: 24 h trade, 7 d withdrawals, 30 min quotes); the v3 key is derived from it.
 * - `honoured-if-sent`: v2 GET: a key is optional and honoured when sent (spec 9).
 */
export type IdempotencyRule =
  | { readonly kind: 'none' }
  | { readonly kind: 'fresh-v3-key' }
  | { readonly kind: 'required'; readonly lifetimeSeconds: number }
  | { readonly kind: 'honoured-if-sent'; readonly lifetimeSeconds: number };

/**
 * - `none`: not a list, or a list without legacy pagination.
 * - `page-limit/cursor`: legacy `page`/`limit` over a v3 cursor list (spec 4.3).
 * - `page-limit/bounded`: legacy `page`/`limit` sliced from a v3 list returned whole.
 */
export type PaginationKind = 'none' | 'page-limit/cursor' | 'page-limit/bounded';

export interface EndpointMapping {
  /** One line: what the legacy operation does. */
  readonly summary: string;
  readonly legacy: { readonly method: LegacyMethod; readonly path: string };
  /** The v3 calls, in order. The first is the operation itself; later ones are GETs whose
   * answers the response transform composes (v2 trade = trade + balances + exposure). */
  readonly v3: readonly [V3Call, ...V3Call[]];
  readonly scope: LegacyScope;
  readonly idempotency: IdempotencyRule;
  readonly pagination: PaginationKind;
  /** Legacy query filters, legacy name -> v3 query name on the first call (deposits' `currency`). */
  readonly filters: Readonly<Record<string, string>>;
  /** JSON paths (src/gateway/legacy/json-paths.ts) of amounts: in the legacy request body, read
   * losslessly into decimal strings; in the legacy response body, written from decimal strings
   * as JSON numbers with exactly their digits. */
  readonly amounts: { readonly request: readonly string[]; readonly response: readonly string[] };
  /** Names of registered transforms: legacy request -> v3 request (null: nothing to send but
   * the path and query), and v3 answer(s) -> legacy response body. */
  readonly transforms: { readonly request: string | null; readonly response: string };
}

export type EndpointTable<G extends LegacyGeneration> = Readonly<Record<LegacyOperation<G>, EndpointMapping>>;

/** The names of the transforms that exist; the next layer registers functions under them. */
export interface TransformRegistry {
  readonly request: Iterable<string>;
  readonly response: Iterable<string>;
}

/** The legacy list query parameters (DESIGN 4), reserved for pagination. */
export const PAGINATION_QUERY = ['page', 'limit'] as const;

const name = z.string().regex(/^[A-Za-z][A-Za-z0-9]*$/, 'a name of letters and digits');
const nonEmpty = z.string().refine((value) => value.trim().length > 0, 'must not be empty');
const jsonPath = z.string().refine(isJsonPath, 'not a JSON path (key.key[].*)');
const lifetime = z.number().int().positive();

const paramSourceSchema = z.strictObject({
  from: z.enum(['path', 'body']),
  field: name,
  idKind: z.enum(Object.keys(ID_PREFIXES) as [IdKind, ...IdKind[]]),
});

const v3CallSchema = z.strictObject({
  method: z.enum(['GET', 'POST']),
  path: z.string().startsWith('/v3/fx/'),
  params: z.record(z.string(), paramSourceSchema).optional(),
  query: z.record(name, nonEmpty).optional(),
});

const mappingSchema = z.strictObject({
  summary: nonEmpty,
  legacy: z.strictObject({ method: z.enum(['GET', 'POST']), path: z.string() }),
  v3: z.tuple([v3CallSchema], v3CallSchema),
  scope: z.enum(['view', 'trade', 'withdraw']),
  idempotency: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('none') }),
    z.strictObject({ kind: z.literal('fresh-v3-key') }),
    z.strictObject({ kind: z.literal('required'), lifetimeSeconds: lifetime }),
    z.strictObject({ kind: z.literal('honoured-if-sent'), lifetimeSeconds: lifetime }),
  ]),
  pagination: z.enum(['none', 'page-limit/cursor', 'page-limit/bounded']),
  filters: z.record(name, name),
  amounts: z.strictObject({ request: z.array(jsonPath), response: z.array(jsonPath) }),
  transforms: z.strictObject({ request: name.nullable(), response: name }),
});

/** The rules between fields that a schema cannot say. */
function ruleProblems(generation: LegacyGeneration, operation: string, mapping: EndpointMapping, registry: { request: Set<string>; response: Set<string> }): string[] {
  const problems: string[] = [];
  const at = (field: string, message: string) => problems.push(`${operation}.${field}: ${message}`);
  const { legacy } = mapping;

  const expectedPath = legacyRoutePath(generation, operation);
  if (legacy.path !== expectedPath) at('legacy.path', `must be ${expectedPath} (the operation's own route)`);
  const legacyParams = pathParams(legacy.path);

  mapping.v3.forEach((call, index) => {
    const where = `v3[${index}]`;
    const target = findV3Operation(call.method, call.path);
    if (!target) {
      const known = V3_OPERATIONS.filter((operation) => operation.path === call.path).map((operation) => operation.method);
      at(where, known.length === 0 ? `${call.path} is not a v3 path` : `${call.method} ${call.path} is not a v3 operation (it takes ${known.join(', ')})`);
      return;
    }
    if (target.sandboxOnly) at(where, `${call.method} ${call.path} is a sandbox-only simulation`);
    if (index === 0 && target.scope !== mapping.scope) at('scope', `must be ${target.scope}, the scope of ${call.method} ${call.path}`);
    if (index > 0 && call.method !== 'GET') at(where, 'calls after the first must be reads (GET)');
    const declared = Object.keys(call.params ?? {});
    for (const param of pathParams(call.path)) if (!declared.includes(param)) at(`${where}.params`, `no source for :${param}`);
    for (const [param, source] of Object.entries(call.params ?? {})) {
      if (!pathParams(call.path).includes(param)) at(`${where}.params.${param}`, `${call.path} has no :${param}`);
      if (source.from === 'path' && !legacyParams.includes(source.field)) at(`${where}.params.${param}`, `the legacy path has no :${source.field}`);
      if (source.from === 'body' && legacy.method !== 'POST') at(`${where}.params.${param}`, 'a GET has no body to read it from');
    }
    for (const key of Object.keys(call.query ?? {})) {
      if (!target.query.includes(key)) at(`${where}.query.${key}`, `${call.method} ${call.path} takes no query parameter ${key}`);
    }
  });

  const first = findV3Operation(mapping.v3[0].method, mapping.v3[0].path);
  for (const [legacyName, v3Name] of Object.entries(mapping.filters)) {
    if ((PAGINATION_QUERY as readonly string[]).includes(legacyName)) at(`filters.${legacyName}`, 'page and limit belong to pagination');
    if (legacy.method !== 'GET') at(`filters.${legacyName}`, 'only GET takes query filters');
    if (first && !first.query.includes(v3Name)) at(`filters.${legacyName}`, `${first.method} ${first.path} takes no query parameter ${v3Name}`);
    if (mapping.v3[0].query && Object.hasOwn(mapping.v3[0].query, v3Name)) at(`filters.${legacyName}`, `${v3Name} is already fixed by v3[0].query`);
  }

  if (mapping.pagination !== 'none') {
    const wanted = mapping.pagination === 'page-limit/cursor' ? 'cursor' : 'bounded';
    if (legacy.method !== 'GET') at('pagination', 'only GET lists paginate');
    if (first && first.list !== wanted) at('pagination', `${mapping.pagination} needs a ${wanted} v3 list, and ${first.method} ${first.path} is ${first.list ?? 'not a list'}`);
  }

  const rule = mapping.idempotency.kind;
  if (generation === 'v1' && legacy.method === 'GET' && rule !== 'none') at('idempotency', 'v1 reads have none (spec 9)');
  if (generation === 'v1' && legacy.method === 'POST' && rule !== 'fresh-v3-key') at('idempotency', 'v1 writes get a fresh v3 key per request (DESIGN 4)');
  if (generation === 'v2' && legacy.method === 'POST' && rule !== 'required') at('idempotency', 'v2 writes require Idempotency-Key (spec 9)');
  if (generation === 'v2' && legacy.method === 'GET' && rule !== 'honoured-if-sent') at('idempotency', 'v2 reads honour a key if sent (spec 9)');

  if (legacy.method === 'GET' && mapping.amounts.request.length > 0) at('amounts.request', 'a GET has no body');
  if (mapping.transforms.request !== null && !registry.request.has(mapping.transforms.request)) {
    at('transforms.request', `no request transform is registered as ${mapping.transforms.request}`);
  }
  if (!registry.response.has(mapping.transforms.response)) at('transforms.response', `no response transform is registered as ${mapping.transforms.response}`);
  return problems;
}

/**
 * Validates a generation's endpoint table, as loaded (unknown input), against the v3 contract
 * and the registered transform names; returns it typed or throws LegacyMappingError listing
 * every problem.
 */
export function validateEndpointTable<G extends LegacyGeneration>(
  generation: G,
  table: unknown,
  registry: TransformRegistry,
  tableName = `mappings/endpoints.${generation}`,
): EndpointTable<G> {
  const outer = z.record(z.string(), z.unknown()).safeParse(table);
  if (!outer.success) throw new LegacyMappingError(tableName, describeIssues('', outer.error.issues));
  const names = { request: new Set(registry.request), response: new Set(registry.response) };
  const operations: readonly string[] = LEGACY_OPERATIONS[generation];
  const problems: string[] = [];
  for (const operation of operations) if (!Object.hasOwn(outer.data, operation)) problems.push(`${operation}: no mapping for this ${generation} operation (DESIGN 4)`);
  const routes = new Map<string, string>();
  for (const [operation, entry] of Object.entries(outer.data)) {
    if (!operations.includes(operation)) {
      problems.push(`${operation}: not a ${generation} operation (unknown key)`);
      continue;
    }
    const parsed = mappingSchema.safeParse(entry);
    if (!parsed.success) {
      problems.push(...describeIssues(operation, parsed.error.issues));
      continue;
    }
    const mapping: EndpointMapping = parsed.data;
    const route = `${mapping.legacy.method} ${mapping.legacy.path}`;
    const clash = routes.get(route);
    if (clash !== undefined) problems.push(`${operation}.legacy: ${route} is already ${clash}`);
    routes.set(route, operation);
    problems.push(...ruleProblems(generation, operation, mapping, names));
  }
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
  return table as EndpointTable<G>;
}

/** Every transform name a table refers to, by direction: what the registry must provide. */
export function transformNames(table: Readonly<Record<string, EndpointMapping>>): { request: string[]; response: string[] } {
  const request = new Set<string>();
  const response = new Set<string>();
  for (const mapping of Object.values(table)) {
    if (mapping.transforms.request !== null) request.add(mapping.transforms.request);
    response.add(mapping.transforms.response);
  }
  return { request: [...request].sort(), response: [...response].sort() };
}
