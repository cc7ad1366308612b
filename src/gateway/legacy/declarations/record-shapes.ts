/**
 * The format of the legacy record shapes and value maps of `mappings/records.ts` and
 * `mappings/value-maps.ts`, and the validator the gateway runs when it loads them. Part of the
 * legacy layer's declarations; imports only the v3 record kinds the gateway reads.
 *
 * A record shape says, field by field, what a legacy client reads and where each value comes
 * from: a field of the v3 record (renamed or not, optionally through a value map or a named
 * converter), a named derived computation, a constant, or the caller's context. Every field
 * carries its JSON type, its source (the v1 documentation, the v2 client, both, the spec, or our
 * own choice) and a one-line reason, so the docs, the OpenAPI documents and the generation diff
 * can be generated from the same declarations the gateway serves.
 */
import { z } from 'zod';

import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';
import { V3_RECORD_KINDS, v3FieldsOf, type V3RecordKind } from '../v3-contract/v3-records.js';
import { describeIssues, parseDeclaration } from './mapping-error.js';

/** Where a legacy fact comes from. */
export const SOURCES = {
  doc: "the legacy service's public v1 documentation",
  client: 'the public v2 client',
  both: 'the v1 documentation and the v2 client',
  spec: 'the interface specification',
  ours: 'our choice where nothing public speaks',
} as const;
export type Source = keyof typeof SOURCES;

/** A declaration's words (a reason, a summary, a message): not empty. */
export const nonEmptyText = z.string().refine((value) => value.trim().length > 0, 'must not be empty');
/** A declared name (a field, a record, a map): letters and digits. */
export const letterName = z.string().regex(/^[A-Za-z][A-Za-z0-9]*$/, 'a name of letters and digits');
const text = nonEmptyText;
const fieldName = letterName;
const provenanceSchema = z.strictObject({
  source: z.enum(Object.keys(SOURCES) as [Source, ...Source[]]),
  reason: text,
});
export const provenanceShape = provenanceSchema.shape;

/** Every declared difference says where it comes from and why. */
export type Provenance = Readonly<z.infer<typeof provenanceSchema>>;

/** JSON types of legacy fields; `amount` is a JSON number written with exactly the v3 digits. */
export const FIELD_TYPES = ['amount', 'id', 'timestamp', 'currency', 'string', 'boolean', 'integer'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Values a field may take from the request rather than from v3. */
export const CONTEXT_VALUES = ['orgId', 'keyId'] as const;
export type ContextValue = (typeof CONTEXT_VALUES)[number];

/**
 * A field's value sources; it declares exactly one, and is parsed by that source's schema, so a
 * problem is named precisely. A v3 field goes through a value map or a converter, never both:
 * the two are separate kinds.
 */
const VALUE_SOURCES = ['from', 'derived', 'constant', 'context'] as const;
const fieldCommon = { ...provenanceShape, type: z.enum(FIELD_TYPES), nullable: z.literal(true).optional() };
const notBoth = z.never({ error: 'a map or a converter, not both' }).optional();
const fieldSchemas = {
  /** A field of the v3 record, renamed or not; through a value map when named. */
  from: z.strictObject({ ...fieldCommon, from: fieldName, map: fieldName.optional(), convert: notBoth }),
  /** A field of the v3 record through a registered converter (transforms/derived-fields.ts). */
  converted: z.strictObject({ ...fieldCommon, from: fieldName, convert: fieldName, map: notBoth }),
  /** A named computation over the whole v3 record (transforms/derived-fields.ts), through a value map when named. */
  derived: z.strictObject({ ...fieldCommon, derived: fieldName, map: fieldName.optional() }),
  /** The same value on every record. */
  constant: z.strictObject({ ...fieldCommon, constant: text }),
  /** A value of the caller: the org of the path, the id of the key. */
  context: z.strictObject({ ...fieldCommon, context: z.enum(CONTEXT_VALUES) }),
} as const;
const fieldSchema = z.union([
  fieldSchemas.from,
  fieldSchemas.converted,
  fieldSchemas.derived,
  fieldSchemas.constant,
  fieldSchemas.context,
]);

export type LegacyField = Readonly<z.infer<typeof fieldSchema>>;

/** A field's declaration without its provenance: what a `field-added` change adds, under the change's own source and reason. */
export const fieldValueSchema = z.union([
  fieldSchemas.from.omit({ source: true, reason: true }),
  fieldSchemas.converted.omit({ source: true, reason: true }),
  fieldSchemas.derived.omit({ source: true, reason: true }),
  fieldSchemas.constant.omit({ source: true, reason: true }),
  fieldSchemas.context.omit({ source: true, reason: true }),
]);

const recordSchema = z.strictObject({
  summary: text,
  /** The v3 record kind the legacy record is built from (v3-contract/v3-records.ts). */
  v3: z.enum(V3_RECORD_KINDS as [V3RecordKind, ...V3RecordKind[]]),
  /** In the order the legacy client sees them. */
  fields: z.record(fieldName, fieldSchema),
});

export type RecordShape = Readonly<Omit<z.infer<typeof recordSchema>, 'fields'>> & {
  readonly fields: Readonly<Record<string, LegacyField>>;
};

export type RecordTable = Readonly<Record<string, RecordShape>>;

/**
 * v3 value -> legacy value. A v3 value the map does not list passes through unchanged (v3 may
 * add values in a minor version; the client then sees the v3 word).
 */
const valueMapSchema = z.strictObject({ ...provenanceShape, summary: text, values: z.record(z.string().min(1), text) });
export type ValueMap = Readonly<z.infer<typeof valueMapSchema>>;

export type ValueMapTable = Readonly<Record<string, ValueMap>>;

/** The names of the code the record shapes may refer to: derived computations (by v3 kind) and converters. */
export interface RecordCodeRegistry {
  readonly derived: Readonly<Partial<Record<V3RecordKind, Iterable<string>>>>;
  readonly converters: Iterable<string>;
}

/** Validates the value maps as loaded (unknown input); throws LegacyMappingError listing every problem. */
export function validateValueMaps(table: unknown, tableName = 'mappings/value-maps'): ValueMapTable {
  const outer = parseDeclaration(z.record(fieldName, valueMapSchema), table, tableName);
  const problems: string[] = [];
  for (const [name, map] of Object.entries(outer)) {
    const seen = new Map<string, string>();
    for (const [v3Value, legacy] of Object.entries(map.values)) {
      // Filters translate legacy words back; two v3 values on one word would be ambiguous there.
      const clash = seen.get(legacy.toLowerCase());
      if (clash !== undefined) problems.push(`${name}.values.${v3Value}: ${legacy} is already the word for ${clash}`);
      seen.set(legacy.toLowerCase(), v3Value);
    }
  }
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
  return outer;
}

/**
 * Validates the record shapes as loaded (unknown input) against the v3 records, the value maps
 * and the registered code; returns them typed or throws LegacyMappingError listing every problem.
 */
export function validateRecords(
  table: unknown,
  maps: ValueMapTable,
  registry: RecordCodeRegistry,
  tableName = 'mappings/records',
): RecordTable {
  const outer = parseDeclaration(z.record(fieldName, z.unknown()), table, tableName);
  const converters = new Set(registry.converters);
  const problems: string[] = [];
  for (const [name, entry] of Object.entries(outer)) {
    const parsed = recordSchema.extend({ fields: z.record(fieldName, z.unknown()) }).safeParse(entry);
    if (!parsed.success) {
      problems.push(...describeIssues(name, parsed.error.issues));
      continue;
    }
    const { v3, fields } = parsed.data;
    const v3Fields = v3FieldsOf(v3);
    const derived = new Set(registry.derived[v3] ?? []);
    for (const [fieldKey, raw] of Object.entries(fields)) {
      const where = `${name}.fields.${fieldKey}`;
      const declared =
        typeof raw === 'object' && raw !== null ? VALUE_SOURCES.filter((key) => Object.hasOwn(raw, key)) : [];
      if (declared.length !== 1) {
        problems.push(
          `${where}: must declare exactly one of from, derived, constant or context${declared.length > 1 ? ` (it declares ${declared.join(' and ')})` : ''}`,
        );
        continue;
      }
      const kind = declared[0] === 'from' && Object.hasOwn(raw as object, 'convert') ? 'converted' : declared[0]!;
      const field = fieldSchemas[kind].safeParse(raw);
      if (!field.success) {
        problems.push(...describeIssues(where, field.error.issues));
        continue;
      }
      const value: LegacyField = field.data;
      if ('map' in value && value.map !== undefined && !Object.hasOwn(maps, value.map))
        problems.push(`${where}.map: no value map named ${value.map}`);
      if ('from' in value) {
        if (!v3Fields.includes(value.from))
          problems.push(
            `${where}.from: the v3 ${v3} record has no field ${value.from} (it has ${v3Fields.join(', ')})`,
          );
        if (value.convert !== undefined && !converters.has(value.convert))
          problems.push(`${where}.convert: no converter is registered as ${value.convert}`);
      }
      if ('derived' in value && !derived.has(value.derived))
        problems.push(`${where}.derived: no derived field ${value.derived} is registered for the v3 ${v3} record`);
    }
  }
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
  return outer as RecordTable;
}
