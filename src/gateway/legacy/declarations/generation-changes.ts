/**
 * A legacy generation written as the changes from another (v1 from v2, in
 * `mappings/endpoints.v1.ts`; v2's record changes in `mappings/records.ts`): the one change
 * format, endpoint, record and error kinds, its validator, `applyGenerationChanges`, which builds
 * the full endpoint table the gateway serves, and `applyRecordChanges`, which builds a
 * generation's records from the generation before it. The error kinds (v1's, in
 * `mappings/errors.v1.ts`) are defined and applied by error-tables.ts, to v2's error table.
 * Part of the legacy layer's declarations.
 *
 * Where two generations agree, the older one is not written again: a newcomer reads what v1
 * lacks, each change with its source and reason, and the generated docs and changelog list the
 * same changes.
 */
import { z } from 'zod';

import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';
import type { EndpointMapping, IdempotencyRule } from './endpoint-mappings.js';
import { ERROR_CHANGE_SCHEMAS } from './error-tables.js';
import type { LegacyGeneration } from './legacy-operations.js';
import { parseDeclaration } from './mapping-error.js';
import {
  FIELD_TYPES,
  fieldValueSchema,
  type LegacyField,
  letterName as name,
  provenanceShape,
  type RecordShape,
  type RecordTable,
} from './record-shapes.js';

/** Every record change names the record (mappings/records.ts) and the field, as the generation before it has them. */
const recordField = { ...provenanceShape, record: name, field: name };

/** The record kinds: each changes one field of one record, for answers (and so for the documents and docs made from them). */
const recordChangeSchemas = [
  /** The field is written under another name; its value, type and place stay. */
  z.strictObject({ ...recordField, kind: z.literal('field-renamed'), to: name }),
  /** A new field, after `after` (else last), declared as records.ts declares one. */
  z.strictObject({ ...recordField, kind: z.literal('field-added'), after: name.optional(), value: fieldValueSchema }),
  /** The field is not written. */
  z.strictObject({ ...recordField, kind: z.literal('field-removed') }),
  /** The field's JSON type is another; `nullable` says whether it may be null (absent: as before). */
  z.strictObject({
    ...recordField,
    kind: z.literal('field-retyped'),
    type: z.enum(FIELD_TYPES),
    nullable: z.boolean().optional(),
  }),
  /** The field's words go through a value map (mappings/value-maps.ts). */
  z.strictObject({ ...recordField, kind: z.literal('value-mapped'), map: name }),
] as const;

/** One change of a generation against the one before it in the chain (v3 -> v2 -> v1). */
const changeSchema = z.discriminatedUnion('kind', [
  /** The base generation has the operation; this one does not. */
  z.strictObject({ ...provenanceShape, kind: z.literal('operation-removed'), operation: z.string() }),
  /** Every operation of this method follows another idempotency rule (a lifetime is kept from the base). */
  z.strictObject({
    ...provenanceShape,
    kind: z.literal('idempotency'),
    method: z.enum(['GET', 'POST']),
    becomes: z.enum(['none', 'honoured-if-sent']),
  }),
  /** The operation's `data` fields are written at the top of the body too. */
  z.strictObject({ ...provenanceShape, kind: z.literal('data-also-at-root'), operation: z.string() }),
  /** The operation pages its list otherwise (the result is validated: only a GET list pages). */
  z.strictObject({
    ...provenanceShape,
    kind: z.literal('pagination'),
    operation: z.string(),
    becomes: z.enum(['none', 'page-limit']),
  }),
  ...recordChangeSchemas,
  ...ERROR_CHANGE_SCHEMAS,
]);

/** A generation's record changes alone (v2's, in mappings/records.ts). */
const recordChangesSchema = z.array(z.discriminatedUnion('kind', recordChangeSchemas)).readonly();

export type RecordChange = Readonly<z.infer<(typeof recordChangeSchemas)[number]>>;

const changesSchema = z.strictObject({
  /** The generation this one is written against. */
  base: z.enum(['v1', 'v2']),
  changes: z.array(changeSchema).readonly(),
});

export type GenerationChange = Readonly<z.infer<typeof changeSchema>>;
export type GenerationChanges = Readonly<z.infer<typeof changesSchema>>;

function idempotencyAfter(rule: IdempotencyRule, becomes: 'none' | 'honoured-if-sent'): IdempotencyRule {
  if (becomes === 'none') return { kind: 'none' };
  return { kind: 'honoured-if-sent', lifetimeSeconds: rule.kind === 'none' ? 0 : rule.lifetimeSeconds };
}

/**
 * The endpoint table of `generation`: the base table with the declared changes applied, in
 * order. Throws LegacyMappingError for a change that does not apply (an operation the base lacks,
 * a rule that leaves a key without a lifetime). The result is then validated like any table.
 */
export function applyGenerationChanges(
  generation: LegacyGeneration,
  baseTable: Readonly<Record<string, EndpointMapping>>,
  changes: unknown,
  tableName = `mappings/endpoints.${generation}`,
): {
  readonly base: LegacyGeneration;
  readonly table: Record<string, EndpointMapping>;
  readonly changes: readonly GenerationChange[];
} {
  const parsed = parseDeclaration(changesSchema, changes, tableName);
  const table: Record<string, EndpointMapping> = { ...baseTable };
  const problems: string[] = [];
  parsed.changes.forEach((change, index) => {
    const where = `changes[${index}]`;
    switch (change.kind) {
      case 'operation-removed':
      case 'data-also-at-root':
      case 'pagination': {
        const mapping = table[change.operation];
        if (!mapping) {
          problems.push(`${where}.operation: ${parsed.base} has no operation ${change.operation}`);
          return;
        }
        if (change.kind === 'operation-removed') delete table[change.operation];
        else if (change.kind === 'pagination')
          table[change.operation] = { ...mapping, pagination: change.becomes } as EndpointMapping;
        else
          table[change.operation] = {
            ...mapping,
            response: { ...mapping.response, dataAlsoAtRoot: { source: change.source, reason: change.reason } },
          };
        return;
      }
      case 'idempotency':
        for (const [operation, mapping] of Object.entries(table)) {
          if (mapping.method !== change.method) continue;
          const rule = idempotencyAfter(mapping.idempotency, change.becomes);
          if (rule.kind === 'honoured-if-sent' && rule.lifetimeSeconds === 0)
            problems.push(`${where}: ${operation} has no lifetime to keep a key for`);
          table[operation] = { ...mapping, idempotency: rule };
        }
        return;
      case 'status-downgraded':
      case 'error-code-kept':
      case 'error-answer-changed':
        problems.push(`${where}: error changes are declared with the error answers (mappings/errors.${generation})`);
        return;
      default:
        // A record change: applyRecordChanges builds the generation's records from them.
        return;
    }
  });
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
  return { base: parsed.base, table, changes: parsed.changes };
}

/** The record kinds of a generation's changes, in order. */
export function recordChangesOf(changes: readonly GenerationChange[]): RecordChange[] {
  return changes.filter(
    (change): change is RecordChange => change.kind.startsWith('field-') || change.kind === 'value-mapped',
  );
}

/** Parses a generation's record changes alone (unknown input, as loaded). */
export function parseRecordChanges(changes: unknown, tableName: string): readonly RecordChange[] {
  const parsed = parseDeclaration(recordChangesSchema, changes, tableName);
  return parsed;
}

function renamed(fields: Readonly<Record<string, LegacyField>>, from: string, to: string, field: LegacyField) {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => (key === from ? [to, field] : [key, value])));
}

function changedRecord(shape: RecordShape, change: RecordChange): RecordShape | string {
  const field = shape.fields[change.field];
  const provenance = { source: change.source, reason: change.reason };
  if (change.kind === 'field-added') {
    if (field !== undefined) return `${change.record} already has a field ${change.field}`;
    const added = { ...change.value, ...provenance } as LegacyField;
    const entries = Object.entries(shape.fields);
    const at = change.after === undefined ? entries.length : entries.findIndex(([key]) => key === change.after) + 1;
    if (at === 0) return `${change.record} has no field ${change.after} to add ${change.field} after`;
    entries.splice(at, 0, [change.field, added]);
    return { ...shape, fields: Object.fromEntries(entries) };
  }
  if (field === undefined)
    return `${change.record} has no field ${change.field} (it has ${Object.keys(shape.fields).join(', ')})`;
  switch (change.kind) {
    case 'field-renamed':
      if (Object.hasOwn(shape.fields, change.to)) return `${change.record} already has a field ${change.to}`;
      return { ...shape, fields: renamed(shape.fields, change.field, change.to, { ...field, ...provenance }) };
    case 'field-removed':
      return {
        ...shape,
        fields: Object.fromEntries(Object.entries(shape.fields).filter(([key]) => key !== change.field)),
      };
    case 'field-retyped': {
      // Whether it may be null stays as it was unless the change says.
      const { nullable: was, ...rest } = field;
      const nullable = change.nullable ?? was === true;
      const retyped = { ...rest, ...provenance, type: change.type, ...(nullable ? { nullable: true } : {}) };
      return { ...shape, fields: renamed(shape.fields, change.field, change.field, retyped as LegacyField) };
    }
    case 'value-mapped':
      if (!('from' in field || 'derived' in field) || ('convert' in field && field.convert !== undefined))
        return `${change.record}.${change.field} is not read from a v3 field or a derived value a map can apply to`;
      return {
        ...shape,
        fields: renamed(shape.fields, change.field, change.field, {
          ...field,
          ...provenance,
          map: change.map,
        } as LegacyField),
      };
  }
}

/**
 * The records of a generation: the records of the one before it with its record changes
 * applied, in order, each change's source and reason becoming the changed field's. Throws
 * LegacyMappingError for a change that does not apply; the result is then validated like any
 * record table (records.ts's format).
 */
export function applyRecordChanges(
  records: RecordTable,
  changes: readonly GenerationChange[],
  tableName: string,
): RecordTable {
  const table: Record<string, RecordShape> = { ...records };
  const problems: string[] = [];
  recordChangesOf(changes).forEach((change, index) => {
    const shape = table[change.record];
    const result = shape === undefined ? `no record named ${change.record}` : changedRecord(shape, change);
    if (typeof result === 'string') problems.push(`record changes[${index}] (${change.kind}): ${result}`);
    else table[change.record] = result;
  });
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
  return table;
}
