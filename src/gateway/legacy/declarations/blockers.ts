/**
 * What would break if a legacy client moved to the next generation unchanged (v1 -> v2, v2 -> v3),
 * as declarations (`mappings/blockers.ts`): the format, its validator, and the detectors the
 * pipeline runs per request, compiled once per operation. Part of the legacy layer's
 * declarations; it reads the endpoint tables and the v3 contract, and touches nothing else.
 *
 * A blocker names a stable `kind`, its severity, the generation it applies to, the operations
 * it watches, one detection rule and its provenance. The rule kinds are few on purpose, each
 * read from what the request carried and what the gateway knew of its key:
 *
 * | rule | fires when |
 * |---|---|
 * | `header-missing` | the request has no such header (or an empty one) |
 * | `header-present` | the request carries the header |
 * | `header-value` | the header's value is one of `values` (any case) |
 * | `query-present` | the query names one of `parameters` |
 * | `success` | the gateway answered the request with a success |
 * | `scope-missing` | the key's scopes miss the scope of one of the operation's v3 calls (the v3 contract's) |
 * | `error-answer` | the request failed, and the next (legacy) generation's error table answers its v3 error otherwise |
 *
 * An example of each detection is built from the declarations alone (method, path template,
 * the header or parameter names, the key's scopes): never a value the client sent, a token, an
 * amount or an org id.
 */
import { z } from 'zod';

import type { Scope } from '../../../lib/auth/credential-vocabulary.js';
import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';
import { findV3Operation } from '../v3-contract/operations.js';
import type { EndpointMapping, LegacyMethod } from './endpoint-mappings.js';
import { type LegacyErrorTables, resolveLegacyError } from './error-tables.js';
import { type LegacyGeneration, type LegacyOperation, legacyRoutePath } from './legacy-operations.js';
import { parseDeclaration } from './mapping-error.js';
import { type Provenance, provenanceShape } from './record-shapes.js';

/** Where each legacy generation's clients go next. */
export const NEXT_GENERATION = { v1: 'v2', v2: 'v3' } as const;
export type TargetGeneration = (typeof NEXT_GENERATION)[LegacyGeneration];

export const BLOCKER_SEVERITIES = ['blocker', 'warning'] as const;
export type BlockerSeverity = (typeof BLOCKER_SEVERITIES)[number];

export type BlockerRule =
  | { readonly rule: 'header-missing'; readonly header: string }
  | { readonly rule: 'header-present'; readonly header: string }
  | { readonly rule: 'header-value'; readonly header: string; readonly values: readonly string[] }
  | { readonly rule: 'query-present'; readonly parameters: readonly string[] }
  | { readonly rule: 'success' }
  | { readonly rule: 'scope-missing' }
  | { readonly rule: 'error-answer' };

/** The operations a blocker watches: every one of its generation, those of one method, or by name. */
export type BlockerOperations = 'all' | { readonly method: LegacyMethod } | readonly string[];

export interface BlockerDeclaration extends Provenance {
  readonly severity: BlockerSeverity;
  /** The generation whose requests are checked; the target is the next one (NEXT_GENERATION). */
  readonly from: LegacyGeneration;
  readonly to: TargetGeneration;
  readonly operations: BlockerOperations;
  readonly detect: BlockerRule;
}

/** Keyed by kind: a stable word (`idempotency-key-missing`) that reports and integrators' tooling may rely on. */
export type BlockerTable = Readonly<Record<string, BlockerDeclaration>>;

const KIND = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const HEADER = /^[A-Za-z][A-Za-z0-9-]*$/;

const ruleSchema = z.discriminatedUnion('rule', [
  z.strictObject({ rule: z.literal('header-missing'), header: z.string().regex(HEADER) }),
  z.strictObject({ rule: z.literal('header-present'), header: z.string().regex(HEADER) }),
  z.strictObject({
    rule: z.literal('header-value'),
    header: z.string().regex(HEADER),
    values: z.array(z.string().min(1).max(64)).min(1),
  }),
  z.strictObject({ rule: z.literal('query-present'), parameters: z.array(z.string().min(1)).min(1) }),
  z.strictObject({ rule: z.literal('success') }),
  z.strictObject({ rule: z.literal('scope-missing') }),
  z.strictObject({ rule: z.literal('error-answer') }),
]);

const declarationSchema = z.strictObject({
  ...provenanceShape,
  severity: z.enum(BLOCKER_SEVERITIES),
  from: z.enum(['v1', 'v2']),
  to: z.enum(['v2', 'v3']),
  operations: z.union([
    z.literal('all'),
    z.strictObject({ method: z.enum(['GET', 'POST']) }),
    z.array(z.string()).min(1),
  ]),
  detect: ruleSchema,
});

const tableSchema = z.record(z.string(), declarationSchema);

/** The endpoint tables the blockers are checked against. */
export type BlockerEndpoints = Readonly<Record<LegacyGeneration, Readonly<Record<string, EndpointMapping>>>>;

/** The operation names a blocker watches in its generation's table. */
export function watchedOperations(
  declaration: Pick<BlockerDeclaration, 'operations'>,
  table: Readonly<Record<string, EndpointMapping>>,
): string[] {
  const { operations } = declaration;
  if (operations === 'all') return Object.keys(table);
  if (Array.isArray(operations)) return [...(operations as readonly string[])];
  const { method } = operations as { readonly method: LegacyMethod };
  return Object.keys(table).filter((name) => table[name]!.method === method);
}

/** The query parameters an operation takes: page and limit when it pages, and its filters. */
function queryParameters(mapping: EndpointMapping): string[] {
  return [...(mapping.pagination === 'page-limit' ? ['page', 'limit'] : []), ...Object.keys(mapping.filters)];
}

/**
 * Validates the blockers as loaded (unknown input) against the endpoint tables: the target is
 * the next generation, every operation named exists and has the method its rule needs, a query
 * rule names parameters each watched operation takes, and a scope rule's operations all call v3
 * operations of the contract. Throws LegacyMappingError listing every problem.
 */
export function validateBlockers(
  table: unknown,
  endpoints: BlockerEndpoints,
  tableName = 'mappings/blockers',
): BlockerTable {
  const parsed = parseDeclaration(tableSchema, table, tableName);
  const problems: string[] = [];
  for (const [kind, declaration] of Object.entries(parsed)) {
    const at = (where: string, problem: string) => problems.push(`${kind}.${where}: ${problem}`);
    if (!KIND.test(kind))
      problems.push(`${kind}: a kind is lower-case words joined by hyphens, such as idempotency-key-missing`);
    if (declaration.to !== NEXT_GENERATION[declaration.from])
      at('to', `${declaration.from} clients move to ${NEXT_GENERATION[declaration.from]}, not ${declaration.to}`);
    if (declaration.detect.rule === 'error-answer' && !(declaration.to in endpoints))
      at('detect.rule', `error-answer compares legacy error tables, and ${declaration.to} has none`);
    const operations = endpoints[declaration.from];
    const watched = watchedOperations(declaration, operations);
    if (watched.length === 0) at('operations', `no ${declaration.from} operation has that method`);
    for (const name of watched) {
      const mapping = operations[name];
      if (mapping === undefined) {
        at('operations', `${declaration.from} has no operation ${name}`);
        continue;
      }
      const { detect } = declaration;
      if (detect.rule === 'query-present') {
        const taken = queryParameters(mapping);
        for (const parameter of detect.parameters)
          if (!taken.includes(parameter))
            at(
              'detect.parameters',
              `${name} takes no query parameter ${parameter} (it takes ${taken.join(', ') || 'none'}): a request naming it is refused already`,
            );
      }
      if (detect.rule === 'scope-missing')
        for (const call of Object.values(mapping.v3))
          if (findV3Operation(call.method, call.path) === undefined)
            at('operations', `${name} calls ${call.method} ${call.path}, which the v3 contract lacks`);
    }
  }
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
  return parsed as BlockerTable;
}

/** What a detector reads of one answered request. */
export interface BlockerRequest {
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly query: unknown;
  /** The key's scopes, when its token was verified and the key admitted; null otherwise. */
  readonly scopes: readonly Scope[] | null;
  /** Whether the gateway answered with a success. */
  readonly success: boolean;
  /** The v3 error a failure stood for; null for a success, a replayed answer or the gateway's 410. */
  readonly error?: { readonly code: string; readonly type?: string } | null;
}

/** One blocker met by a request: its kind and severity, and the masked example of what was sent. */
export interface BlockerHit {
  readonly kind: string;
  readonly severity: BlockerSeverity;
  readonly example: string;
}

/** The blockers one operation watches, run per request; no lookups by name at run time. */
export type BlockerDetector = (request: BlockerRequest) => BlockerHit[];

function headerText(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}

/** The request line as the example shows it: the path template, the org as `{orgId}`. */
function requestLine(generation: LegacyGeneration, name: string, mapping: EndpointMapping): string {
  return `${mapping.method} ${legacyRoutePath(generation, name).replaceAll(/:([A-Za-z]+)/g, '{$1}')}`;
}

type Check = (request: BlockerRequest) => string | null;

/** The error tables of the generation checked and of its target, for `error-answer`. */
interface ErrorTablePair {
  readonly from: LegacyErrorTables<LegacyGeneration>;
  readonly to: LegacyErrorTables<LegacyGeneration> | undefined;
}

function compileRule(
  line: string,
  detect: BlockerRule,
  mapping: EndpointMapping,
  operation: string,
  errors: ErrorTablePair,
): Check {
  switch (detect.rule) {
    case 'header-missing': {
      const name = detect.header.toLowerCase();
      const example = `${line} without ${detect.header}`;
      return (request) => {
        const value = headerText(request.headers[name]);
        return value === undefined || value === '' ? example : null;
      };
    }
    case 'header-present': {
      const name = detect.header.toLowerCase();
      const example = `${line} with ${detect.header}`;
      return (request) => (request.headers[name] === undefined ? null : example);
    }
    case 'header-value': {
      const name = detect.header.toLowerCase();
      const values = new Map(detect.values.map((value) => [value.toLowerCase(), value]));
      return (request) => {
        const declared = values.get(headerText(request.headers[name])?.trim().toLowerCase() ?? '');
        return declared === undefined ? null : `${line} with ${detect.header}: ${declared}`;
      };
    }
    case 'query-present':
      return (request) => {
        const query = (request.query ?? {}) as Record<string, unknown>;
        const named = detect.parameters.filter((parameter) => Object.hasOwn(query, parameter));
        return named.length === 0 ? null : `${line}?${named.map((parameter) => `${parameter}=…`).join('&')}`;
      };
    case 'success':
      return (request) => (request.success ? line : null);
    case 'scope-missing': {
      const needed = Object.values(mapping.v3).map((call) => ({
        call: `${call.method} ${call.path}`,
        scope: findV3Operation(call.method, call.path)!.scope as Scope,
      }));
      return (request) => {
        if (request.scopes === null) return null;
        const scopes = request.scopes;
        const missing = needed.filter((need) => !scopes.includes(need.scope));
        if (missing.length === 0) return null;
        const held = scopes.length === 0 ? 'none' : [...scopes].sort().join(', ');
        const wants = missing.map((need) => `${need.scope} for ${need.call}`).join(', ');
        return `${line}: key scopes ${held}; v3 needs ${wants}`;
      };
    }
    case 'error-answer': {
      const { from, to } = errors;
      if (to === undefined) return () => null;
      const answerOf = (tables: LegacyErrorTables<LegacyGeneration>, error: { code: string; type?: string }) =>
        resolveLegacyError(tables, error, operation as LegacyOperation<LegacyGeneration>);
      return (request) => {
        if (request.error === null || request.error === undefined) return null;
        const now = answerOf(from, request.error);
        const next = answerOf(to, request.error);
        if (now.status === next.status && now.message === next.message) return null;
        return `${line} answered ${now.status} "${now.message}"; the next generation answers ${next.status} "${next.message}"`;
      };
    }
  }
}

/** What the detectors are compiled from: the blockers, the endpoint tables and the error tables. */
export interface BlockerSources {
  readonly blockers: BlockerTable;
  readonly endpoints: BlockerEndpoints;
  readonly errors: Readonly<Record<LegacyGeneration, LegacyErrorTables<LegacyGeneration>>>;
}

/** The detector of one operation: every blocker of its generation that watches it. */
export function compileBlockerDetector(
  sources: BlockerSources,
  generation: LegacyGeneration,
  name: string,
): BlockerDetector {
  const { blockers } = sources;
  const table = sources.endpoints[generation];
  const mapping = table[name]!;
  const line = requestLine(generation, name, mapping);
  const checks = Object.entries(blockers)
    .filter(
      ([, declaration]) => declaration.from === generation && watchedOperations(declaration, table).includes(name),
    )
    .map(([kind, declaration]) => ({
      kind,
      severity: declaration.severity,
      check: compileRule(line, declaration.detect, mapping, name, {
        from: sources.errors[generation],
        to: sources.errors[declaration.to as LegacyGeneration] as LegacyErrorTables<LegacyGeneration> | undefined,
      }),
    }));
  return (request) => {
    const hits: BlockerHit[] = [];
    for (const { kind, severity, check } of checks) {
      const example = check(request);
      if (example !== null) hits.push({ kind, severity, example });
    }
    return hits;
  };
}

/** RFC 3986 fragment characters stay; others (the braces of `trade/{id}`) are percent-encoded. */
function fragment(operation: string): string {
  return operation.replaceAll(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/?]/g, (character) =>
    [...Buffer.from(character)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

/** The migration guide's section for an operation, served by the gateway: `/docs/migrate/v1-to-v2#trade`. */
export function migrationGuideLink(generation: LegacyGeneration, operation: string): string {
  return `/docs/migrate/${generation}-to-${NEXT_GENERATION[generation]}#${fragment(operation)}`;
}
