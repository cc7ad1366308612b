/**
 * The v3 reference as Markdown, rendered from the v3 OpenAPI document (and so from the
 * operations' declarations and the error catalog): for every operation its scope, parameters,
 * body fields, the fields of its success body, and its error codes by status, after an index of
 * them all; then every record. docs/v3-api.md is generated from it (`npm run docs`), so the page,
 * the served document and the snapshot say the same. Part of the core; reads only the document.
 */
import type { oas31 } from 'zod-openapi';

import { isErrorCode } from '../../lib/errors/v3-error-catalog.js';
import type { OpenApiDocument } from '../../lib/openapi/document.js';
import { headingAnchor } from './anchors.js';
import { coreV3Document } from './declared-operations.js';

type Schema = oas31.SchemaObject;
type Node = Schema | oas31.ReferenceObject | undefined;

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function resolve<T>(document: OpenApiDocument, node: T | oas31.ReferenceObject | undefined): T | undefined {
  if (node === undefined || node === null || typeof node !== 'object' || !('$ref' in node))
    return node as T | undefined;
  const name = node.$ref.split('/').at(-1)!;
  return (document.components?.schemas?.[name] ?? (document.components?.parameters?.[name] as unknown)) as
    T | undefined;
}

/** A schema in a few words: `string`, `decimal string`, `trd_ id`, `"trade"`, `EXECUTED | SETTLED`, `array of Trade`, `Trade or null`. */
function typeText(document: OpenApiDocument, node: Node): string {
  if (node === undefined) return '';
  if ('$ref' in node && node.$ref !== undefined) return node.$ref.split('/').at(-1)!;
  if ('$ref' in node) return '';
  if (node.const !== undefined) return `\`${JSON.stringify(node.const)}\``;
  if (node.enum !== undefined) return node.enum.map((value) => `\`${String(value)}\``).join(' \\| ');
  if (node.anyOf !== undefined)
    return node.anyOf
      .map((member) => ('type' in member && member.type === 'null' ? 'null' : typeText(document, member)))
      .join(' or ');
  const types = (Array.isArray(node.type) ? node.type : [node.type]).filter(
    (type): type is NonNullable<typeof type> => type !== undefined,
  );
  const nullable = types.includes('null');
  const main = types.find((type) => type !== 'null');
  let text: string = main ?? 'any';
  if (main === 'array') text = `array of ${typeText(document, node.items)}`;
  else if (main === 'object' && node.additionalProperties && typeof node.additionalProperties === 'object')
    text = `map of ${typeText(document, node.additionalProperties)}`;
  else if (main === 'string' && node.format === 'date-time') text = 'timestamp';
  else if (main === 'string' && node.pattern?.startsWith('^-?(0|')) text = 'decimal string';
  else if (main === 'string' && node.pattern !== undefined && /^\^[a-z]{3}_\[0-9a-f\]\{32\}\$$/.test(node.pattern))
    text = `${node.pattern.slice(1, 4)}_ id`;
  return nullable ? `${text} or null` : text;
}

/** Bounds as wide as a JavaScript integer's say nothing a reader needs. */
const meaningful = (bound: number | undefined) =>
  bound === undefined || Math.abs(bound) >= Number.MAX_SAFE_INTEGER ? undefined : bound;

function rules(node: Node): string {
  if (node === undefined || '$ref' in node) return '';
  const parts: string[] = [];
  if (node.minLength !== undefined || node.maxLength !== undefined)
    parts.push(`${node.minLength ?? 0} to ${node.maxLength ?? '…'} characters`);
  const [minimum, maximum] = [meaningful(node.minimum), meaningful(node.maximum)];
  if (minimum !== undefined || maximum !== undefined) parts.push(`${minimum ?? '…'} to ${maximum ?? '…'}`);
  if (node.default !== undefined) parts.push(`default ${JSON.stringify(node.default)}`);
  // Ids and decimals are named by typeText; a timestamp's pattern is its format's.
  if (
    node.pattern !== undefined &&
    node.format === undefined &&
    !/^\^[a-z]{3}_/.test(node.pattern) &&
    !node.pattern.startsWith('^-?(0|')
  )
    parts.push(`\`${node.pattern}\``);
  if (node.description !== undefined) parts.push(node.description);
  return parts.join('; ');
}

function fieldRows(document: OpenApiDocument, node: Node, prefix = ''): string[] {
  const schema = resolve<Schema>(document, node);
  if (schema === undefined) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(
    ([name, property]) =>
      `| \`${prefix}${name}\` | ${typeText(document, property)} | ${required.has(name) ? 'yes' : 'no'} | ${cell(rules(resolve<Schema>(document, property)))} |`,
  );
}

const tableHead = (presence: string, note: string) => [`| field | type | ${presence} | ${note} |`, '|---|---|---|---|'];

function fieldTable(document: OpenApiDocument, node: Node, presence: string, note: string): string[] {
  return [...tableHead(presence, note), ...fieldRows(document, node)];
}

/** A body that is one of several objects, nested unions flattened: the objects it may be. */
function flattenVariants(document: OpenApiDocument, node: Node): Schema[] {
  const schema = resolve<Schema>(document, node);
  if (schema === undefined) return [];
  const variants = schema.oneOf ?? schema.anyOf;
  return variants === undefined ? [schema] : variants.flatMap((variant) => flattenVariants(document, variant));
}

/** A body variant is named by its fixed values: `assetType` `FIAT`, `transferType` `FEDWIRE`. */
function variantName(document: OpenApiDocument, node: Node): string {
  const fixed = Object.entries(resolve<Schema>(document, node)?.properties ?? {}).filter(
    (entry): entry is [string, Schema] => !('$ref' in entry[1]) && entry[1].const !== undefined,
  );
  return fixed.length === 0
    ? 'these fields'
    : fixed.map(([name, property]) => `\`${name}\` \`${JSON.stringify(property.const)}\``).join(', ');
}

const operationHeading = (method: string, path: string) => `\`${method.toUpperCase()} ${path}\``;

const METHODS = ['get', 'post', 'delete'] as const;

/** Every operation of the document with its path and method, in the document's order. */
function operationsOf(document: OpenApiDocument): { method: string; path: string; operation: oas31.OperationObject }[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => (item[method] === undefined ? [] : [{ method, path, operation: item[method] }])),
  );
}

/** One row per operation: its summary, the scope its token needs, whether it takes an Idempotency-Key, and sandbox-only ones. */
function indexTable(document: OpenApiDocument): string[] {
  const lines = ['| operation | what it does | scope | Idempotency-Key | sandbox only |', '|---|---|---|---|---|'];
  for (const { method, path, operation } of operationsOf(document)) {
    const heading = operationHeading(method, path);
    const scope = operation.security?.[0]?.bearerToken?.[0];
    const keyed = (operation.parameters ?? []).some(
      (parameter) => !('$ref' in parameter) && parameter.name === 'Idempotency-Key' && parameter.required === true,
    );
    const sandboxOnly = (operation.description ?? '').includes('Sandbox mode only');
    lines.push(
      `| [${heading}](#${headingAnchor(heading)}) | ${cell(operation.summary ?? '')} | ${scope === undefined ? 'none' : `\`${scope}\``} | ${keyed ? 'required' : ''} | ${sandboxOnly ? 'yes' : ''} |`,
    );
  }
  return lines;
}

function operationSection(
  document: OpenApiDocument,
  method: string,
  path: string,
  operation: oas31.OperationObject,
): string[] {
  const lines = [
    `### ${operationHeading(method, path)}`,
    '',
    `${operation.summary ?? ''}. ${operation.description ?? ''}`,
    '',
  ];
  const parameters = (operation.parameters ?? [])
    .map((parameter) =>
      resolve<oas31.ParameterObject>(document, parameter as oas31.ParameterObject | oas31.ReferenceObject),
    )
    .filter(
      (parameter): parameter is oas31.ParameterObject =>
        parameter !== undefined && (parameter.in !== 'header' || parameter.name === 'Idempotency-Key'),
    );
  if (parameters.length > 0) {
    lines.push('| parameter | in | type | required | rule |', '|---|---|---|---|---|');
    for (const parameter of parameters) {
      const schema = resolve<Schema>(document, parameter.schema);
      lines.push(
        `| \`${parameter.name}\` | ${parameter.in} | ${typeText(document, schema)} | ${parameter.required ? 'yes' : 'no'} | ${cell(parameter.description ?? rules(schema))} |`,
      );
    }
    lines.push('');
  }
  const body = resolve<Schema>(
    document,
    (operation.requestBody as oas31.RequestBodyObject | undefined)?.content['application/json']?.schema,
  );
  const variants = flattenVariants(document, body);
  if (variants.length > 1) {
    lines.push(`Body: one of ${variants.length} shapes.`, '');
    for (const variant of variants)
      lines.push(
        `With ${variantName(document, variant)}:`,
        '',
        ...fieldTable(document, variant, 'required', 'rule'),
        '',
      );
  } else if (fieldRows(document, body).length > 0) {
    lines.push('Body:', '', ...fieldTable(document, body, 'required', 'rule'), '');
  }
  const success = (operation.responses?.['200'] as oas31.ResponseObject | undefined)?.content?.['application/json']
    ?.schema;
  const envelope = resolve<Schema>(document, success);
  const data = envelope?.properties?.data;
  lines.push(
    `Answers 200 with ${Object.keys(envelope?.properties ?? {})
      .map((key) => `\`${key}\``)
      .join(', ')}; \`data\` is ${typeText(document, data)}.`,
    '',
  );
  // An inline data object (the reversal's) is listed here; named records are listed once, below.
  const inline =
    data !== undefined && !('$ref' in data) && data.type === 'object' ? fieldRows(document, data, 'data.') : [];
  if (inline.length > 0) lines.push(...tableHead('always', 'note'), ...inline, '');
  lines.push('| status | codes |', '|---|---|');
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (status === '200') continue;
    const codes = ((response as oas31.ResponseObject).description ?? '')
      .replace(/^[^:]*: /, '')
      .replace(/\.$/, '')
      .split(', ')
      .filter(isErrorCode);
    lines.push(`| ${status} | ${codes.map((code) => `\`${code}\``).join(', ')} |`);
  }
  lines.push('');
  return lines;
}

/** The records the operations answer (the document's named schemas other than error envelopes), field by field. */
function recordSections(document: OpenApiDocument): string[] {
  const lines: string[] = [];
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    if (name.startsWith('Error_')) continue;
    lines.push(
      `### ${name}`,
      '',
      (schema as Schema).description ?? '',
      '',
      ...fieldTable(document, schema, 'always', 'note'),
      '',
    );
  }
  return lines;
}

/** Markdown: an index of every v3 operation, each one (scope, parameters, body, success, error codes by status), then every record. */
export function renderV3ApiReference(document: OpenApiDocument = coreV3Document()): string {
  const lines: string[] = [...indexTable(document), ''];
  for (const { method, path, operation } of operationsOf(document))
    lines.push(...operationSection(document, method, path, operation));
  lines.push('## Records', '', ...recordSections(document));
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd();
}
