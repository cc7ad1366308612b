/**
 * The reference of declared HTTP operations (docs/v3-api.md), rendered from the declarations
 * themselves: method, path, scope, and every query and body parameter from the operation's zod
 * schema through zod 4's `z.toJSONSchema`. The core's `defineOperation` declarations satisfy
 * `DocumentedOperation` as they are; the CLI's docs command hands them over, since library code
 * imports no part.
 *
 * What a schema cannot say (a cross-field rule written as a refinement, such as "sellCurrency
 * must differ from buyCurrency") is in the hand-written guide, not here.
 */
import { z } from 'zod';
import { headingAnchor } from './anchors.js';

/** What the reference reads of an operation: the core's Operation has these fields. */
export interface DocumentedOperation {
  readonly method: string;
  /** Fastify route syntax: `/v3/fx/trades/:id`. */
  readonly path: string;
  readonly scope: string;
  readonly sandboxOnly?: boolean;
  /** One line: what the operation does. */
  readonly summary?: string;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** The codes the handler itself may answer, beside those of the request pipeline. */
  readonly errors?: readonly string[];
}

/** The part of JSON Schema that z.toJSONSchema writes for request schemas. */
interface JsonSchema {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly pattern?: string;
  readonly format?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly default?: unknown;
  readonly description?: string;
  readonly items?: JsonSchema;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: JsonSchema | boolean;
  readonly propertyNames?: JsonSchema;
  readonly oneOf?: readonly JsonSchema[];
  readonly anyOf?: readonly JsonSchema[];
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
const code = (value: unknown) => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;

/** `/v3/fx/trades/:id` -> `/v3/fx/trades/{id}`, as the contract writes paths. */
export const documentedPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** zod writes the bounds of a safe integer on every `.int()`; they say nothing to a reader. */
const isSafeIntegerBound = (value: number | undefined) => value !== undefined && Math.abs(value) === Number.MAX_SAFE_INTEGER;

function rangeText(min: number | undefined, max: number | undefined, unit: string): string | undefined {
  if (min !== undefined && max !== undefined) return min === max ? `exactly ${min}${unit}` : `${min} to ${max}${unit}`;
  if (min !== undefined) return `at least ${min}${unit}`;
  if (max !== undefined) return `at most ${max}${unit}`;
  return undefined;
}

/** A value's type and rules in words: `string, 1 to 64 characters`, `one of \`A\`, \`B\``. */
export function describeSchema(schema: JsonSchema): string {
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants) return variants.map(describeSchema).join('; or ');
  if (schema.const !== undefined) return code(schema.const);
  if (schema.enum) return `one of ${schema.enum.map(code).join(', ')}`;
  const rules: string[] = [];
  switch (schema.type) {
    case 'string': {
      const length = rangeText(schema.minLength, schema.maxLength, ' characters');
      if (length) rules.push(length);
      if (schema.format) rules.push(schema.format);
      if (schema.pattern) rules.push(`matching ${code(schema.pattern)}`);
      break;
    }
    case 'integer':
    case 'number': {
      const min = isSafeIntegerBound(schema.minimum) ? undefined : schema.minimum;
      const max = isSafeIntegerBound(schema.maximum) ? undefined : schema.maximum;
      const range = rangeText(min, max, '');
      if (range) rules.push(range);
      break;
    }
    case 'array': {
      const count = rangeText(schema.minItems, schema.maxItems, ' items');
      return `array${count ? ` of ${count}` : ''}${schema.items ? `, each ${describeSchema(schema.items)}` : ''}`;
    }
    case 'object': {
      if (typeof schema.additionalProperties === 'object') {
        const keys = schema.propertyNames ? describeSchema(schema.propertyNames) : 'string';
        return `object: keys ${keys}; values ${describeSchema(schema.additionalProperties)}`;
      }
      return 'object';
    }
  }
  return [schema.type ?? 'any', ...rules].join(', ');
}

interface ParameterRow {
  readonly name: string;
  readonly schema: JsonSchema;
  readonly required: boolean;
}

function parameterRows(object: JsonSchema, requiredFrom: JsonSchema = object): ParameterRow[] {
  const required = new Set(requiredFrom.required ?? []);
  return Object.entries(object.properties ?? {}).map(([name, schema]) => ({ name, schema, required: required.has(name) }));
}

function parameterTable(kind: string, rows: readonly ParameterRow[]): string[] {
  const lines = [`| ${kind} | required | type and rules | default |`, '|---|---|---|---|'];
  for (const row of rows) {
    const fallback = row.schema.default === undefined ? '' : code(row.schema.default);
    const description = row.schema.description ? `. ${row.schema.description}` : '';
    lines.push(`| \`${row.name}\` | ${row.required ? 'yes' : 'no'} | ${cell(describeSchema(row.schema) + description)} | ${fallback} |`);
  }
  return lines;
}

/** A body that is one of several objects: each variant's fixed values name it (`assetType` `FIAT`, `transferType` `FEDWIRE`). */
function flattenVariants(schema: JsonSchema): JsonSchema[] {
  const variants = schema.oneOf ?? schema.anyOf;
  return variants ? variants.flatMap(flattenVariants) : [schema];
}

function variantName(variant: JsonSchema): string {
  const fixed = Object.entries(variant.properties ?? {}).filter(([, property]) => property.const !== undefined);
  return fixed.length === 0 ? 'variant' : fixed.map(([name, property]) => `\`${name}\` ${code(property.const)}`).join(', ');
}

function bodyLines(body: z.ZodType): string[] {
  const schema = z.toJSONSchema(body, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const variants = flattenVariants(schema);
  if (variants.length === 1) return parameterTable('body field', parameterRows(schema));
  const lines = [`The body is one of ${variants.length} shapes:`];
  for (const variant of variants) lines.push('', `With ${variantName(variant)}:`, '', ...parameterTable('body field', parameterRows(variant)));
  return lines;
}

/** A schema that says nothing: what z.toJSONSchema writes for a transform's output. */
const isOpaque = (schema: JsonSchema) => schema.type === undefined && schema.enum === undefined && schema.const === undefined && !schema.oneOf && !schema.anyOf;

function queryLines(query: z.ZodType): string[] {
  // The parsed value (io 'output') carries what a query string cannot: a limit is a number with
  // its bounds and default. Where a transform hides the output, the text sent is described.
  // Whether a parameter may be left out is a property of the input.
  const output = z.toJSONSchema(query, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  const input = z.toJSONSchema(query, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const rows = parameterRows(output, input).map((row) => (isOpaque(row.schema) ? { ...row, schema: input.properties?.[row.name] ?? row.schema } : row));
  return parameterTable('query parameter', rows);
}

export interface OperationReferenceOptions {
  /** Says how a write is made idempotent, for the operations whose method requires a key. */
  readonly idempotencyKeyRequired: (method: string) => boolean;
}

/**
 * The index of every operation, then one part per operation with its parameters. Operations
 * appear in the order declared; an operation without a query or body schema takes none (an
 * empty body or `{}` on a write).
 */
export function renderOperationReference(operations: readonly DocumentedOperation[], options: OperationReferenceOptions): string {
  const lines = ['| operation | what it does | scope | Idempotency-Key | sandbox only |', '|---|---|---|---|---|'];
  const heading = (operation: DocumentedOperation) => `\`${operation.method} ${documentedPath(operation.path)}\``;
  for (const operation of operations) {
    lines.push(`| [${heading(operation)}](#${headingAnchor(heading(operation))}) | ${cell(operation.summary ?? '')} | \`${operation.scope}\` | ${options.idempotencyKeyRequired(operation.method) ? 'required' : ''} | ${operation.sandboxOnly ? 'yes' : ''} |`);
  }
  for (const operation of operations) {
    const path = documentedPath(operation.path);
    lines.push('', `### ${heading(operation)}`, '');
    const facts = [...(operation.summary ? [`${operation.summary}.`] : []), `Scope \`${operation.scope}\`.`];
    const pathParameters = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => `\`${match[1]}\``);
    if (pathParameters.length > 0) facts.push(`Path: ${pathParameters.join(', ')}.`);
    if (options.idempotencyKeyRequired(operation.method)) facts.push('Idempotency-Key required.');
    if (operation.sandboxOnly) facts.push('Sandbox only (`X-App-Mode: SANDBOX`).');
    lines.push(facts.join(' '));
    if (operation.query) lines.push('', ...queryLines(operation.query));
    if (operation.body) lines.push('', ...bodyLines(operation.body));
    if (!operation.query && !operation.body) lines.push('', operation.method === 'GET' ? 'No parameters.' : 'No parameters: an empty body or `{}`.');
    if (operation.errors && operation.errors.length > 0) lines.push('', `Its own errors, beside the pipeline's: ${operation.errors.map((code) => `\`${code}\``).join(', ')}.`);
  }
  return lines.join('\n');
}
