/**
 * Builds legacy success bodies from v3 answers, as the declarations say: the record shapes of
 * `mappings/records.ts` and each operation's response layout. Compiled once per operation at
 * start-up into plain functions, so a request does no lookups by name. Every v3 value is read
 * through its v3 record schema (readV3) and every legacy value checked against its declared
 * type, so a v3 answer that breaks the contract is a V3ContractError naming the field, never an
 * `undefined` or a wrong number in a legacy body. Amounts come out as LegacyAmount, which the
 * writer emits as JSON numbers with exactly their digits.
 */
import { z } from 'zod';

import { V3ContractError } from '../../../lib/errors/internal-errors.js';
import { DECIMAL_PATTERN } from '../../../lib/money.js';
import type { LayoutNode, ResponseShape } from '../declarations/endpoint-mappings.js';
import type { FieldType, LegacyField, RecordShape, RecordTable, ValueMapTable } from '../declarations/record-shapes.js';
import { LegacyAmount } from '../runtime/lossless-json.js';
import { readV3, V3_RECORDS, type V3RecordKind } from '../v3-contract/v3-records.js';
import { CONVERTERS, derivedField } from './derived-fields.js';

/** What a legacy record may take from the caller rather than from v3. */
export interface RecordContext {
  readonly orgId: string;
  readonly keyId: string;
}

/** A v3 success body as parsed JSON: `{data, pagination?, totals?, ...}`. */
export interface V3SuccessBody {
  readonly data: unknown;
  readonly [field: string]: unknown;
}

/** The answers of a mapping's v3 calls, by call name. */
export type V3Answers = Readonly<Record<string, V3SuccessBody>>;

/** The legacy success body, `{status, message, data, ...}`, before pagination adds `meta`. */
export type LegacyBody = Record<string, unknown> & { data: unknown };

export type BuildBody = (answers: V3Answers, context: RecordContext) => LegacyBody;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CURRENCY = /^[A-Z]{3,5}$/;

/** The legacy value of a declared type, or a description of what is wrong with it. */
function typed(type: FieldType, value: unknown): { ok: true; value: unknown } | { ok: false; expected: string } {
  switch (type) {
    case 'amount':
      return typeof value === 'string' && DECIMAL_PATTERN.test(value)
        ? { ok: true, value: new LegacyAmount(value) }
        : { ok: false, expected: 'a decimal string' };
    case 'id':
      return typeof value === 'string' && UUID.test(value) ? { ok: true, value } : { ok: false, expected: 'a UUID' };
    case 'currency':
      return typeof value === 'string' && CURRENCY.test(value)
        ? { ok: true, value }
        : { ok: false, expected: 'a currency code' };
    case 'timestamp':
    case 'string':
      return typeof value === 'string' ? { ok: true, value } : { ok: false, expected: 'a string' };
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : { ok: false, expected: 'a boolean' };
    case 'integer':
      return Number.isSafeInteger(value) ? { ok: true, value } : { ok: false, expected: 'a whole number' };
  }
}

/** Checks one value against its declared type (null where nullable). */
function checked(type: FieldType, nullable: boolean, value: unknown, operation: string, where: string): unknown {
  if (value === null && nullable) return null;
  const result = typed(type, value);
  if (!result.ok)
    throw new V3ContractError(operation, [`${where}: must be ${result.expected}${nullable ? ' or null' : ''}`]);
  return result.value;
}

type FieldValue = (record: Record<string, unknown>, context: RecordContext) => unknown;

function valueOf(field: LegacyField, kind: V3RecordKind, maps: ValueMapTable): FieldValue {
  const through = (map: string | undefined, read: FieldValue): FieldValue => {
    if (map === undefined) return read;
    const values = maps[map]!.values;
    return (record, context) => {
      const value = read(record, context);
      return typeof value === 'string' && Object.hasOwn(values, value) ? values[value] : value;
    };
  };
  if ('from' in field) {
    const name = field.from;
    const convert = field.convert === undefined ? undefined : CONVERTERS[field.convert]!;
    return through(field.map, convert ? (record) => convert(record[name]) : (record) => record[name]);
  }
  if ('derived' in field) {
    const derive = derivedField(kind, field.derived);
    return through(field.map, (record) => derive(record));
  }
  if ('constant' in field) {
    const constant = field.constant;
    return () => constant;
  }
  const key = field.context;
  return (_record, context) => context[key];
}

/** One record shape as a function of a v3 record already read through its schema. */
export type BuildRecord = (
  v3: Record<string, unknown>,
  context: RecordContext,
  operation: string,
  where: string,
) => Record<string, unknown>;

export function compileRecord(shape: RecordShape, maps: ValueMapTable): BuildRecord {
  const fields = Object.entries(shape.fields).map(([name, field]) => ({
    name,
    type: field.type,
    nullable: field.nullable === true,
    value: valueOf(field, shape.v3, maps),
  }));
  return (v3, context, operation, where) => {
    const legacy: Record<string, unknown> = {};
    for (const field of fields)
      legacy[field.name] = checked(
        field.type,
        field.nullable,
        field.value(v3, context),
        operation,
        `${where}.${field.name}`,
      );
    return legacy;
  };
}

const LIST_SCHEMAS = new Map<V3RecordKind, z.ZodType<Record<string, unknown>[]>>();

/** The array schema of a v3 record kind, made once. */
function listOf(kind: V3RecordKind): z.ZodType<Record<string, unknown>[]> {
  let schema = LIST_SCHEMAS.get(kind);
  if (!schema) {
    schema = z.array(V3_RECORDS[kind]) as unknown as z.ZodType<Record<string, unknown>[]>;
    LIST_SCHEMAS.set(kind, schema);
  }
  return schema;
}

/** The value at a dotted path of an answer; undefined where the path leads nowhere. */
function at(answer: unknown, path: readonly string[]): unknown {
  let value = answer;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, key))
      return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

type BuildNode = (answers: V3Answers, context: RecordContext) => unknown;

function compileNode(node: LayoutNode, records: RecordTable, maps: ValueMapTable, operation: string): BuildNode {
  if ('object' in node) {
    const children = Object.entries(node.object).map(
      ([key, child]) => [key, compileNode(child, records, maps, operation)] as const,
    );
    return (answers, context) => Object.fromEntries(children.map(([key, build]) => [key, build(answers, context)]));
  }
  const from = node.from;
  if ('field' in node) {
    const path = node.field.split('.');
    const where = `${from}.${node.field}`;
    return (answers) => checked(node.type, false, at(answers[from], path), operation, where);
  }
  const path = (node.at ?? 'data').split('.');
  const where = `${from}.${path.join('.')}`;
  if ('entries' in node) {
    const schema = listOf(node.entries);
    const { key, value, type } = node;
    return (answers) => {
      const list = readV3(schema, at(answers[from], path), operation, where);
      const entries: Record<string, unknown> = {};
      list.forEach((record, index) => {
        const name = String(record[key]);
        // Keyed by the field: a second record with the same key would silently replace the first.
        if (Object.hasOwn(entries, name))
          throw new V3ContractError(operation, [`${where}[${index}].${key}: a second record for ${name}`]);
        entries[name] = checked(type, false, record[value], operation, `${where}[${index}].${value}`);
      });
      return entries;
    };
  }
  if ('record' in node) {
    const shape = records[node.record]!;
    const build = compileRecord(shape, maps);
    const schema = V3_RECORDS[shape.v3] as unknown as z.ZodType<Record<string, unknown>>;
    return (answers, context) =>
      build(readV3(schema, at(answers[from], path), operation, where), context, operation, where);
  }
  const shape = records[node.list]!;
  const build = compileRecord(shape, maps);
  const schema = listOf(shape.v3);
  const keyedBy = 'keyedBy' in node ? node.keyedBy : undefined;
  return (answers, context) =>
    readV3(schema, at(answers[from], path), operation, where).map((v3, index) => {
      const legacy = build(v3, context, operation, `${where}[${index}]`);
      return keyedBy === undefined ? legacy : { [String(v3[keyedBy])]: legacy };
    });
}

/** An operation's success body, `{status: 'success', message, data, ...root}`, as a function of its v3 answers. */
export function compileResponse(
  response: ResponseShape,
  records: RecordTable,
  maps: ValueMapTable,
  operation: string,
): BuildBody {
  const data = compileNode(response.data, records, maps, operation);
  const root = Object.entries(response.root ?? {}).map(
    ([key, node]) => [key, compileNode(node, records, maps, operation)] as const,
  );
  const message = response.message.text;
  const dataAlsoAtRoot = response.dataAlsoAtRoot !== undefined;
  return (answers, context) => {
    const body: LegacyBody = { status: 'success', message, data: data(answers, context) };
    for (const [key, build] of root) body[key] = build(answers, context);
    if (dataAlsoAtRoot) Object.assign(body, body.data);
    return body;
  };
}
