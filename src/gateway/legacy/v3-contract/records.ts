/**
 * The v3 records the legacy shapes are built from, tied to the published v3 document: each kind
 * is a schema of the document's components, and every field the gateway reads (the schemas of
 * v3-records.ts) must be a required property there whose every JSON type, and pattern,
 * the gateway accepts. The schemas themselves stay written by hand: they read more strictly than
 * the document says (ids as legacy UUIDs, cross-field rules), and each problem with its own
 * message. Each record read (operations.ts) must be a GET of the document answering its kind.
 */
import { z } from 'zod';

import type { V3Document } from './document.js';
import { deriveV3Operations, V3_RECORD_READS } from './operations.js';
import { V3_RECORDS, type V3RecordKind } from './v3-records.js';

/** The document's schema of each record kind. */
export const V3_RECORD_SCHEMAS: Readonly<Record<V3RecordKind, string>> = {
  quote: 'Quote',
  trade: 'Trade',
  reversalDetails: 'ReversalDetails',
  balance: 'Balance',
  pair: 'Pair',
  deposit: 'Deposit',
  withdrawalAccount: 'WithdrawalAccount',
  withdrawal: 'Withdrawal',
};

type JsonSchema = Readonly<Record<string, unknown>>;

const isSchema = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null;

function resolve(document: V3Document, schema: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const target = document.components.schemas[ref.replace('#/components/schemas/', '')];
  return target === undefined ? {} : resolve(document, target);
}

/** The JSON types a schema allows (`integer` counted as `number`), and its string patterns. */
function typesOf(document: V3Document, raw: JsonSchema): { types: Set<string>; patterns: Set<string> } {
  const schema = resolve(document, raw);
  const types = new Set<string>();
  const patterns = new Set<string>();
  const branches = [schema.anyOf, schema.oneOf].flatMap((list) => (Array.isArray(list) ? list : []));
  for (const branch of branches.filter(isSchema)) {
    const inner = typesOf(document, branch);
    inner.types.forEach((type) => types.add(type));
    inner.patterns.forEach((pattern) => patterns.add(pattern));
  }
  const declared = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  for (const type of declared) types.add(type === 'integer' ? 'number' : String(type));
  if (schema.nullable === true) types.add('null');
  if (typeof schema.pattern === 'string') patterns.add(schema.pattern);
  return { types, patterns };
}

/** What the gateway accepts of each field of a record kind, as JSON Schema (what it is given, before any transform). */
function acceptedFields(kind: V3RecordKind): { properties: Record<string, JsonSchema>; required: string[] } {
  const json = z.toJSONSchema(V3_RECORDS[kind], { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return { properties: json.properties ?? {}, required: json.required ?? [] };
}

/** Where the gateway's v3 records and record reads disagree with a v3 document; none when they agree. */
export function v3RecordProblems(document: V3Document): string[] {
  const problems: string[] = [];
  for (const [kind, name] of Object.entries(V3_RECORD_SCHEMAS) as [V3RecordKind, string][]) {
    const component = document.components.schemas[name];
    if (component === undefined) {
      problems.push(`${kind}: the document has no schema ${name}`);
      continue;
    }
    const properties = (component.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set(Array.isArray(component.required) ? component.required : []);
    const accepted = acceptedFields(kind);
    for (const [field, schema] of Object.entries(accepted.properties)) {
      const where = `${kind}.${field} (${name}.${field})`;
      const documented = properties[field];
      if (documented === undefined) {
        problems.push(`${where}: not in the document`);
        continue;
      }
      if (accepted.required.includes(field) && !required.has(field))
        problems.push(`${where}: read as always present, optional in the document`);
      const gateway = typesOf(document, schema);
      const v3 = typesOf(document, documented);
      const refused = [...v3.types].filter((type) => gateway.types.size > 0 && !gateway.types.has(type));
      if (refused.length > 0)
        problems.push(
          `${where}: the document allows ${refused.join(', ')}, the gateway reads ${[...gateway.types].join(', ')}`,
        );
      for (const pattern of gateway.patterns)
        if (!v3.patterns.has(pattern))
          problems.push(`${where}: read with the pattern ${pattern}, which the document does not state`);
    }
  }
  const operations = deriveV3Operations(document);
  for (const [kind, read] of Object.entries(V3_RECORD_READS)) {
    if (read === null) continue;
    if (!operations.some((operation) => operation.method === 'GET' && operation.path === read.path))
      problems.push(`${kind}: read again by GET ${read.path}, which the document does not have`);
  }
  return problems;
}
