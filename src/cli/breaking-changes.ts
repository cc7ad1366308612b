/**
 * What a new OpenAPI document breaks for clients of an old one, offline: a removed operation or
 * success response, a removed or no longer required field of a success body, a response type
 * widened (a client's parser meets a type it never saw), an input type, enum or bound narrowed
 * (a request that was accepted is refused), and a new required input (parameter or body field).
 * Additions are not breaking: a new operation, an optional input, a new response field, a new
 * error status, or a new enumeration value in a response (the v3 contract tells clients to
 * expect those, docs/contract.md#versioning-v3). Error bodies are not compared: their codes are
 * never removed within a generation, and the catalog's own tests hold that.
 *
 * No maintained JavaScript library compares two OpenAPI 3.1 documents offline, so this module
 * does, over the subset of JSON Schema the generated documents use. Part of lib: imports no part.
 */
import type { oas31 } from 'zod-openapi';

import type { OpenApiDocument } from '../lib/openapi/document.js';

export type BreakingChangeKind =
  | 'operation-removed'
  | 'response-removed'
  | 'response-field-removed'
  | 'response-field-optional'
  | 'response-type-widened'
  | 'input-narrowed'
  | 'input-required';

export interface BreakingChange {
  readonly kind: BreakingChangeKind;
  /** `POST /v3/fx/trades`, then where in it: `200 data.status`, `body quoteId`, `query limit`. */
  readonly where: string;
  readonly detail: string;
}

export function describeBreakingChange(change: BreakingChange): string {
  return `${change.kind}: ${change.where}: ${change.detail}`;
}

type Schema = oas31.SchemaObject;
type Node = Schema | oas31.ReferenceObject | undefined;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** A document's `$ref`s followed; a cycle or a missing target ends as an empty schema. */
function resolver(document: OpenApiDocument) {
  return function resolve<T>(
    node: T | oas31.ReferenceObject | undefined,
    seen: ReadonlySet<string> = new Set(),
  ): T | undefined {
    if (node === undefined || typeof node !== 'object' || node === null || !('$ref' in node))
      return node as T | undefined;
    const ref = node.$ref;
    if (seen.has(ref) || !ref.startsWith('#/')) return undefined;
    const target = ref
      .slice(2)
      .split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], document);
    return resolve(target as T | oas31.ReferenceObject | undefined, new Set([...seen, ref]));
  };
}

function typesOf(schema: Schema): Set<string> {
  if (schema.type === undefined) return new Set();
  return new Set(Array.isArray(schema.type) ? schema.type : [schema.type]);
}

function valuesOf(schema: Schema): readonly unknown[] | undefined {
  if (schema.const !== undefined) return [schema.const];
  return schema.enum;
}

const key = (value: unknown) => JSON.stringify(value);
const joined = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

interface Comparison {
  readonly before: ReturnType<typeof resolver>;
  readonly after: ReturnType<typeof resolver>;
  readonly changes: BreakingChange[];
}

/** Both sides of one schema, `$ref`s followed, with where it is and its types; undefined past a side's end or too deep. */
function schemaPair(c: Comparison, path: string, beforeNode: Node, afterNode: Node, depth: number) {
  const before = c.before<Schema>(beforeNode);
  const after = c.after<Schema>(afterNode);
  if (before === undefined || after === undefined || depth > 32) return undefined;
  return {
    before,
    after,
    at: path === '' ? 'the body' : path,
    beforeTypes: typesOf(before),
    afterTypes: typesOf(after),
  };
}

/** A response body: what a client reads must still be there, and of a type it knows. */
function compareOutput(c: Comparison, where: string, path: string, beforeNode: Node, afterNode: Node, depth = 0): void {
  const pair = schemaPair(c, path, beforeNode, afterNode, depth);
  if (pair === undefined) return;
  const { before, after, at, beforeTypes, afterTypes } = pair;
  if (beforeTypes.size > 0) {
    // integer to number widens too: a client reading integers may now meet a fraction.
    const added = [...afterTypes].filter((type) => !beforeTypes.has(type));
    if (afterTypes.size === 0)
      c.changes.push({
        kind: 'response-type-widened',
        where,
        detail: `${at} is no longer of type ${[...beforeTypes].join(' or ')}`,
      });
    else if (added.length > 0)
      c.changes.push({
        kind: 'response-type-widened',
        where,
        detail: `${at} may now be ${added.join(' or ')} (was ${[...beforeTypes].join(' or ')})`,
      });
  }
  const beforeProperties = before.properties ?? {};
  const afterProperties = after.properties ?? {};
  const afterRequired = new Set(after.required ?? []);
  for (const [name, property] of Object.entries(beforeProperties)) {
    const field = joined(path, name);
    if (!Object.hasOwn(afterProperties, name)) {
      c.changes.push({ kind: 'response-field-removed', where, detail: `${field} is no longer answered` });
      continue;
    }
    if ((before.required ?? []).includes(name) && !afterRequired.has(name)) {
      c.changes.push({ kind: 'response-field-optional', where, detail: `${field} may now be absent` });
    }
    compareOutput(c, where, field, property, afterProperties[name], depth + 1);
  }
  if (before.items !== undefined) compareOutput(c, where, `${path}[]`, before.items, after.items, depth + 1);
  if (typeof before.additionalProperties === 'object' && typeof after.additionalProperties === 'object') {
    compareOutput(c, where, `${path}.*`, before.additionalProperties, after.additionalProperties, depth + 1);
  }
}

/** A request input: every value a client could send must still be accepted, and nothing new required of it. */
function compareInput(c: Comparison, where: string, path: string, beforeNode: Node, afterNode: Node, depth = 0): void {
  const pair = schemaPair(c, path, beforeNode, afterNode, depth);
  if (pair === undefined) return;
  const { before, after, at, beforeTypes, afterTypes } = pair;
  if (afterTypes.size > 0) {
    // number to integer narrows; integer to number does not (every integer is a number).
    const lost =
      beforeTypes.size === 0
        ? [`anything but ${[...afterTypes].join(' or ')}`]
        : [...beforeTypes].filter((type) => !afterTypes.has(type) && !(type === 'integer' && afterTypes.has('number')));
    if (lost.length > 0)
      c.changes.push({ kind: 'input-narrowed', where, detail: `${at} no longer takes ${lost.join(' or ')}` });
  }
  const beforeValues = valuesOf(before);
  const afterValues = valuesOf(after);
  if (afterValues !== undefined) {
    const allowed = new Set(afterValues.map(key));
    const lost =
      beforeValues === undefined
        ? [`values outside ${afterValues.map(key).join(', ')}`]
        : beforeValues.filter((value) => !allowed.has(key(value))).map(key);
    if (lost.length > 0)
      c.changes.push({ kind: 'input-narrowed', where, detail: `${at} no longer takes ${lost.join(', ')}` });
  }
  const bounds: ReadonlyArray<readonly [keyof Schema, 'min' | 'max']> = [
    ['minimum', 'min'],
    ['exclusiveMinimum', 'min'],
    ['minLength', 'min'],
    ['minItems', 'min'],
    ['maximum', 'max'],
    ['exclusiveMaximum', 'max'],
    ['maxLength', 'max'],
    ['maxItems', 'max'],
  ];
  for (const [bound, side] of bounds) {
    const was = before[bound] as number | undefined;
    const is = after[bound] as number | undefined;
    if (is === undefined) continue;
    if (was === undefined || (side === 'min' ? is > was : is < was))
      c.changes.push({
        kind: 'input-narrowed',
        where,
        detail: `${at}: ${String(bound)} is now ${is}${was === undefined ? '' : ` (was ${was})`}`,
      });
  }
  if (after.pattern !== undefined && after.pattern !== before.pattern) {
    c.changes.push({
      kind: 'input-narrowed',
      where,
      detail: `${at} must now match ${after.pattern}${before.pattern === undefined ? '' : ` (was ${before.pattern})`}`,
    });
  }
  const beforeProperties = before.properties ?? {};
  const afterProperties = after.properties ?? {};
  const beforeRequired = new Set(before.required ?? []);
  for (const name of after.required ?? []) {
    if (!beforeRequired.has(name))
      c.changes.push({ kind: 'input-required', where, detail: `${joined(path, name)} is now required` });
  }
  for (const [name, property] of Object.entries(beforeProperties)) {
    const field = joined(path, name);
    if (Object.hasOwn(afterProperties, name)) compareInput(c, where, field, property, afterProperties[name], depth + 1);
    else if (after.additionalProperties === false)
      c.changes.push({ kind: 'input-narrowed', where, detail: `${field} is no longer accepted` });
  }
  if (before.items !== undefined) compareInput(c, where, `${path}[]`, before.items, after.items, depth + 1);
}

type Parameter = oas31.ParameterObject;

function parametersOf(
  resolve: ReturnType<typeof resolver>,
  item: oas31.PathItemObject,
  operation: oas31.OperationObject,
): Map<string, Parameter> {
  const all = [...(item.parameters ?? []), ...(operation.parameters ?? [])]
    .map((parameter) => resolve<Parameter>(parameter))
    .filter((parameter): parameter is Parameter => parameter !== undefined);
  return new Map(all.map((parameter) => [`${parameter.in} ${parameter.name.toLowerCase()}`, parameter]));
}

function jsonBody(
  resolve: ReturnType<typeof resolver>,
  node: oas31.RequestBodyObject | oas31.ResponseObject | oas31.ReferenceObject | undefined,
) {
  const body = resolve<oas31.RequestBodyObject | oas31.ResponseObject>(node);
  return { body, schema: body?.content?.['application/json']?.schema };
}

/** Every change from `before` to `after` that breaks a client written against `before`. */
export function breakingChanges(beforeDocument: OpenApiDocument, afterDocument: OpenApiDocument): BreakingChange[] {
  const c: Comparison = { before: resolver(beforeDocument), after: resolver(afterDocument), changes: [] };
  for (const [path, beforeItem] of Object.entries(beforeDocument.paths ?? {})) {
    const afterItem = afterDocument.paths?.[path];
    for (const method of METHODS) {
      const beforeOperation = beforeItem[method];
      if (beforeOperation === undefined) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const afterOperation = afterItem?.[method];
      if (afterItem === undefined || afterOperation === undefined) {
        c.changes.push({ kind: 'operation-removed', where, detail: 'the operation is gone' });
        continue;
      }
      const beforeParameters = parametersOf(c.before, beforeItem, beforeOperation);
      for (const [name, parameter] of parametersOf(c.after, afterItem, afterOperation)) {
        const previous = beforeParameters.get(name);
        if (parameter.required && !previous?.required)
          c.changes.push({ kind: 'input-required', where, detail: `${name} is now required` });
        if (previous !== undefined) compareInput(c, where, name, previous.schema, parameter.schema);
      }
      const beforeBody = jsonBody(c.before, beforeOperation.requestBody);
      const afterBody = jsonBody(c.after, afterOperation.requestBody);
      if (
        (afterBody.body as oas31.RequestBodyObject | undefined)?.required &&
        !(beforeBody.body as oas31.RequestBodyObject | undefined)?.required
      ) {
        c.changes.push({ kind: 'input-required', where, detail: 'a body is now required' });
      }
      if (beforeBody.schema !== undefined && afterBody.schema !== undefined)
        compareInput(c, `${where} body`, '', beforeBody.schema, afterBody.schema);
      for (const [status, response] of Object.entries(beforeOperation.responses ?? {})) {
        if (!status.startsWith('2')) continue;
        const afterResponse = afterOperation.responses?.[status];
        if (afterResponse === undefined) {
          c.changes.push({ kind: 'response-removed', where, detail: `${status} is no longer answered` });
          continue;
        }
        const before = jsonBody(c.before, response).schema;
        const after = jsonBody(c.after, afterResponse).schema;
        if (before !== undefined) compareOutput(c, `${where} ${status}`, '', before, after);
      }
    }
  }
  return c.changes;
}
