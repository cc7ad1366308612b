/**
 * The generation diff's judgement of one legacy success body: every value in it checked against
 * v3 read back, by the declarations of `mappings/`. Part of the comparison tools of the
 * migration; it reads the declarations and asks a V3ReadBack for v3's records, and does no I/O
 * of its own, so the CLI (src/cli/diff/) and the tests drive it alike.
 *
 * - Each record of the body is found by the operation's layout (where a `record` or `list` node
 *   puts it) and read back by its key through the read V3_RECORD_READS names for its v3 kind; a
 *   record of a whole list that carries no key (a market's pair) is the v3 record at its position.
 * - Each field is judged by its declaration: a `from` field equals the v3 field through its map
 *   or converter (ids through the legacy<->v3 id function), a `derived` one the registered
 *   derivation of the v3 record read back, a `constant` its constant, a `context` one the
 *   caller's org or key id; values placed by the layout (`field`, `entries`) equal that v3 read
 *   sent again. Values compare by type (legacy-values.ts), after a check of their JSON type.
 * - Every value must be accounted for: one the declarations do not name is `unaccounted`, a
 *   declared one the body lacks is `missing`. A node declared `answerOnly` is reported, not
 *   compared: v3 answers it once, with the write.
 * - Lists are checked whole: a list v3 returns whole has one legacy record per v3 record, in v3's
 *   order; a page is v3's records at its offsets, and `meta.pagination` agrees with the list.
 */
import { isLosslessNumber } from 'lossless-json';

import { V3ContractError } from '../../lib/errors/internal-errors.js';
import { ID_PREFIXES, type IdKind, idToLegacyUuid, legacyUuidToId } from '../../lib/ids.js';
import {
  type AnswerOnly,
  type EndpointMapping,
  type LayoutNode,
  operationCall,
  type V3Call,
} from '../legacy/declarations/endpoint-mappings.js';
import type {
  FieldType,
  LegacyField,
  RecordShape,
  RecordTable,
  ValueMapTable,
} from '../legacy/declarations/record-shapes.js';
import { CONVERTERS, derivedField } from '../legacy/transforms/derived-fields.js';
import type { RecordContext } from '../legacy/transforms/response-body.js';
import { findV3Operation, V3_RECORD_READS } from '../legacy/v3-contract/operations.js';
import { readV3, V3_RECORDS, type V3RecordKind } from '../legacy/v3-contract/v3-records.js';
import { type LegacyFieldIndex, legacyFieldIndex, legacyLeaves } from './legacy-fields.js';
import { legacyValueText, sameLegacyValue } from './legacy-values.js';

/** What a v3 read gave: the value, or why there is none (not found, an error answer, a timeout). */
export type ReadBack<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

export type V3Record = Readonly<Record<string, unknown>>;

/** A v3 list read from its head: its records in order, and whether its end was reached. */
export interface V3ListRead {
  readonly records: readonly V3Record[];
  readonly complete: boolean;
}

/** How the diff reads v3 again; the CLI's runner sends signed requests, tests answer from memory. */
export interface V3ReadBack {
  /** The v3 record of a kind by its key, through V3_RECORD_READS. */
  record(kind: V3RecordKind, key: string): Promise<ReadBack<V3Record>>;
  /** A read (GET) of the mapping sent again: its whole answer. */
  call(call: V3Call): Promise<ReadBack<V3Record>>;
  /** The operation's list call from its head: at least `count` records, unless the list ends first. */
  list(call: V3Call, count: number): Promise<ReadBack<V3ListRead>>;
}

export type FieldVerdictKind = 'agrees' | 'differs' | 'answer-only' | 'unaccounted' | 'missing' | 'unreadable';

/** The verdicts that fail an operation. */
export const FAILING_VERDICTS: ReadonlySet<FieldVerdictKind> = new Set([
  'differs',
  'unaccounted',
  'missing',
  'unreadable',
]);

export interface FieldProblem {
  /** Where in the body, e.g. `data[2].amount`. */
  readonly path: string;
  readonly kind: 'differs' | 'unaccounted' | 'missing' | 'unreadable';
  /** The value the declarations and v3 call for, as JSON text; absent where none can be said. */
  readonly expected?: string;
  /** The value in the answer, as JSON text (`(absent)` where there is none). */
  readonly actual?: string;
  readonly note?: string;
}

export interface FieldVerdict {
  /** The field's normalised path (`data[].amount`, `data.balances.*`). */
  readonly field: string;
  readonly verdict: FieldVerdictKind;
  /** The field's declaration, in words: `deposit.amount: v3 deposit.amount (amount)`. */
  readonly declaration: string;
  /** How many values of the answer were judged. */
  readonly values: number;
  /** The declared reason a field is answer only. */
  readonly answerOnly?: AnswerOnly;
  readonly problems: readonly FieldProblem[];
}

/** A check of a whole list: its records against v3's. */
export interface ListCheck {
  /** The list's normalised path, `data[]`. */
  readonly list: string;
  readonly check: string;
  readonly ok: boolean;
  readonly detail?: string;
}

export interface AnswerVerdict {
  readonly agrees: boolean;
  readonly fields: readonly FieldVerdict[];
  readonly lists: readonly ListCheck[];
  /** Fields compared with v3 or with their declared value (agreeing or not). */
  readonly compared: number;
  /** Fields declared answer only. */
  readonly declared: number;
}

export interface AnswerUnderTest {
  readonly operation: string;
  readonly mapping: EndpointMapping;
  readonly records: RecordTable;
  readonly maps: ValueMapTable;
  /** The legacy success body as parseLegacyAnswer read it (numbers as their text). */
  readonly body: unknown;
  /** The caller: the org of the path and the key's id. */
  readonly context: RecordContext;
  /** The page asked for, on a paginated operation. */
  readonly page?: { readonly page: number; readonly limit: number };
}

type Plain = Record<string, unknown>;
type ReadNode = Exclude<LayoutNode, { readonly object: unknown }>;
type RecordNode = Extract<ReadNode, { readonly record: string }>;
type ListNode = Extract<ReadNode, { readonly list: string }>;
type FieldNode = Extract<ReadNode, { readonly field: string }>;
type EntriesNode = Extract<ReadNode, { readonly entries: string }>;

function isPlain(value: unknown): value is Plain {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !isLosslessNumber(value);
}

function join(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}

/** The value at a dotted path; undefined where the path leads nowhere. */
function at(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (!isPlain(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/** The id kind a v3 id's prefix names; null for a value that is no v3 id. */
function idKindOf(value: unknown): IdKind | null {
  if (typeof value !== 'string') return null;
  const prefix = value.slice(0, value.indexOf('_'));
  const kind = (Object.keys(ID_PREFIXES) as IdKind[]).find((candidate) => ID_PREFIXES[candidate] === prefix);
  return kind !== undefined && idToLegacyUuid(kind, value) !== null ? kind : null;
}

/** The JSON type a declared type is written as in a legacy body. */
function jsonTypeProblem(type: FieldType, nullable: boolean, value: unknown): string | null {
  if (value === null) return nullable ? null : 'null where the declaration allows none';
  const json =
    isLosslessNumber(value) || typeof value === 'number'
      ? 'number'
      : typeof value === 'string'
        ? 'string'
        : typeof value === 'boolean'
          ? 'boolean'
          : Array.isArray(value)
            ? 'array'
            : 'object';
  const wanted = type === 'amount' || type === 'integer' ? 'number' : type === 'boolean' ? 'boolean' : 'string';
  return json === wanted ? null : `a JSON ${json} where the declaration says a JSON ${wanted}`;
}

/** An answer-only value's verdict: its type problem, if any (such a value is not compared with v3). */
function typeVerdict(typeProblem: string | null, actual: unknown): Omit<FieldProblem, 'path'> | null {
  return typeProblem ? { kind: 'differs', actual: legacyValueText(actual), note: typeProblem } : null;
}

/** An expected value as the legacy body would write it: amounts and integers as bare digits. */
function expectedText(type: FieldType, value: unknown): string {
  if ((type === 'amount' || type === 'integer') && (typeof value === 'string' || typeof value === 'number'))
    return String(value);
  return legacyValueText(value);
}

function describeField(recordName: string, shape: RecordShape, field: string, declared: LegacyField): string {
  const name = `${recordName}.${field}`;
  if ('from' in declared) {
    const through = declared.map ? ` through ${declared.map}` : declared.convert ? ` through ${declared.convert}` : '';
    return `${name}: v3 ${shape.v3}.${declared.from}${through} (${declared.type})`;
  }
  if ('derived' in declared)
    return `${name}: derived ${declared.derived} of the v3 ${shape.v3}${declared.map ? ` through ${declared.map}` : ''} (${declared.type})`;
  if ('constant' in declared) return `${name}: always ${JSON.stringify(declared.constant)}`;
  return `${name}: the caller's ${declared.context}`;
}

/** Collects the judgements of one answer, field by field. */
class Ledger {
  private readonly fields = new Map<
    string,
    { declaration: string; values: number; problems: FieldProblem[]; answerOnly?: AnswerOnly }
  >();
  readonly lists: ListCheck[] = [];
  /** Concrete paths judged, so that any other value of the body is unaccounted for. */
  readonly judged = new Set<string>();

  private entry(field: string, declaration: string) {
    let entry = this.fields.get(field);
    if (!entry) {
      entry = { declaration, values: 0, problems: [] };
      this.fields.set(field, entry);
    }
    return entry;
  }

  /** Declares a field (so a field never seen is missing) without judging a value. */
  expect(field: string, declaration: string, answerOnly?: AnswerOnly): void {
    const entry = this.entry(field, declaration);
    if (answerOnly) entry.answerOnly = answerOnly;
  }

  value(
    field: string,
    declaration: string,
    path: string,
    problem: Omit<FieldProblem, 'path'> | null,
    answerOnly?: AnswerOnly,
  ): void {
    const entry = this.entry(field, declaration);
    if (answerOnly) entry.answerOnly = answerOnly;
    this.judged.add(path);
    entry.values += 1;
    if (problem) entry.problems.push({ path, ...problem });
  }

  /** A value judged but not comparable: the v3 side or the expectation could not be read. */
  unreadable(field: string, declaration: string, path: string, actual: unknown, note: string): void {
    this.value(field, declaration, path, { kind: 'unreadable', actual: legacyValueText(actual), note });
  }

  /** A value judged against what v3 says it should be; unreadable when that could not be found. */
  compared(
    field: string,
    declaration: string,
    path: string,
    type: FieldType,
    nullable: boolean,
    actual: unknown,
    expected: ReadBack<Expected>,
  ): void {
    if (expected.ok) this.value(field, declaration, path, judgeValue(type, nullable, actual, expected.value));
    else this.unreadable(field, declaration, path, actual, expected.problem);
  }

  problem(field: string, declaration: string, problem: FieldProblem): void {
    this.entry(field, declaration).problems.push(problem);
  }

  list(check: ListCheck): void {
    this.lists.push(check);
  }

  verdicts(): FieldVerdict[] {
    const order: FieldVerdictKind[] = ['unaccounted', 'missing', 'unreadable', 'differs'];
    return [...this.fields].map(([field, entry]) => {
      const kinds = new Set(entry.problems.map((problem) => problem.kind));
      let verdict: FieldVerdictKind =
        order.find((kind) => kinds.has(kind as FieldProblem['kind'])) ?? (entry.answerOnly ? 'answer-only' : 'agrees');
      if (entry.problems.length === 0 && entry.values === 0) verdict = 'missing';
      const problems =
        verdict === 'missing' && entry.problems.length === 0
          ? [{ path: field, kind: 'missing' as const, note: 'declared, but the answer has no such value' }]
          : entry.problems;
      return {
        field,
        verdict,
        declaration: entry.declaration,
        values: entry.values,
        ...(entry.answerOnly ? { answerOnly: entry.answerOnly } : {}),
        problems,
      };
    });
  }
}

/** One record of the body, where the layout put it. */
interface RecordInstance {
  readonly path: string;
  readonly normalized: string;
  readonly value: unknown;
  readonly shapeName: string;
  readonly node: RecordNode | ListNode;
  /** The v3 record's key when the layout gives it (keyedBy). */
  readonly layoutKey?: string;
  /** Its position in a list. */
  readonly position?: number;
}

export async function compareLegacyAnswer(input: AnswerUnderTest, reader: V3ReadBack): Promise<AnswerVerdict> {
  const { mapping, records, body } = input;
  const index = legacyFieldIndex(mapping, records);
  const ledger = new Ledger();
  const judge = new Judge(input, reader, ledger);

  for (const key of ['status', 'message'] as const) {
    const info = index.get(key)!;
    const constant = info.origin.kind === 'envelope' ? info.origin.constant! : '';
    const actual = isPlain(body) ? body[key] : undefined;
    const declaration = `the envelope: always ${JSON.stringify(constant)}`;
    if (actual === undefined)
      ledger.problem(key, declaration, {
        path: key,
        kind: 'missing',
        expected: JSON.stringify(constant),
        actual: '(absent)',
      });
    else
      ledger.value(
        key,
        declaration,
        key,
        actual === constant
          ? null
          : { kind: 'differs', expected: JSON.stringify(constant), actual: legacyValueText(actual) },
      );
  }

  await judge.node(mapping.response.data, 'data', 'data', isPlain(body) ? body.data : undefined, true);
  for (const [key, node] of Object.entries(mapping.response.root ?? {}))
    await judge.node(node, key, key, isPlain(body) ? body[key] : undefined, false);
  if (mapping.response.dataAlsoAtRoot && 'object' in mapping.response.data) {
    for (const [key, node] of Object.entries(mapping.response.data.object))
      await judge.node(node, key, key, isPlain(body) ? body[key] : undefined, false);
  }
  if (mapping.pagination === 'page-limit') await judge.pagination(isPlain(body) ? body : {});

  for (const leaf of legacyLeaves(body, index)) {
    if (ledger.judged.has(leaf.path)) continue;
    const declared = index.has(leaf.normalized);
    ledger.problem(
      leaf.normalized,
      declared ? 'declared, but not where the layout puts it' : 'not in the declarations',
      {
        path: leaf.path,
        kind: 'unaccounted',
        actual: legacyValueText(leaf.value),
        note: declared ? 'the layout does not reach this value' : 'no declaration names this field',
      },
    );
  }
  for (const path of index.keys()) ledger.expect(path, describeIndexed(index, path));

  const fields = ledger.verdicts();
  const compared = fields.filter((field) => field.verdict === 'agrees' || field.verdict === 'differs').length;
  const declared = fields.filter((field) => field.verdict === 'answer-only').length;
  const agrees =
    fields.every((field) => !FAILING_VERDICTS.has(field.verdict)) && ledger.lists.every((check) => check.ok);
  return { agrees, fields, lists: ledger.lists, compared, declared };
}

function describeIndexed(index: LegacyFieldIndex, path: string): string {
  const origin = index.get(path)!.origin;
  if (origin.kind === 'record') return `${origin.record}.${origin.field}`;
  if (origin.kind === 'envelope') return 'the envelope';
  return 'placed by the layout';
}

/** Judges the body node by node, reading v3 through the reader. */
class Judge {
  private readonly firstCall: readonly [string, V3Call];

  constructor(
    private readonly input: AnswerUnderTest,
    private readonly reader: V3ReadBack,
    private readonly ledger: Ledger,
  ) {
    this.firstCall = operationCall(input.mapping);
  }

  private callOf(name: string): V3Call {
    return this.input.mapping.v3[name]!;
  }

  /** The answer of a named call, read again: only a GET can be. */
  private async reread(name: string): Promise<ReadBack<V3Record>> {
    const call = this.callOf(name);
    if (call.method !== 'GET')
      return {
        ok: false,
        problem: `${name} is a write (${call.method} ${call.path}): no v3 read serves its answer again; declare the node answerOnly with its reason if v3 answers it only once`,
      };
    return this.reader.call(call);
  }

  async node(node: LayoutNode, path: string, normalized: string, value: unknown, isData: boolean): Promise<void> {
    if ('object' in node) {
      for (const [key, child] of Object.entries(node.object))
        await this.node(child, join(path, key), join(normalized, key), isPlain(value) ? value[key] : undefined, false);
      return;
    }
    if ('field' in node) return this.field(node, path, normalized, value);
    if ('entries' in node) return this.entries(node, path, normalized, value);
    if ('record' in node) {
      await this.records([{ path, normalized, value, shapeName: node.record, node }], node, normalized);
      return;
    }
    const elementPath = 'keyedBy' in node ? `${normalized}[].*` : `${normalized}[]`;
    const instances: RecordInstance[] = [];
    if (!Array.isArray(value)) {
      this.ledger.list({
        list: `${normalized}[]`,
        check: 'is a list',
        ok: false,
        detail: `the answer has ${legacyValueText(value)} here`,
      });
    } else {
      value.forEach((element, position) => {
        if ('keyedBy' in node) {
          const keys = isPlain(element) ? Object.keys(element) : [];
          if (keys.length !== 1) {
            this.ledger.list({
              list: `${normalized}[]`,
              check: `each element is {${node.keyedBy}: record}`,
              ok: false,
              detail: `${path}[${position}] is ${legacyValueText(element)}`,
            });
            return;
          }
          instances.push({
            path: `${path}[${position}].${keys[0]!}`,
            normalized: elementPath,
            value: (element as Plain)[keys[0]!],
            shapeName: node.list,
            node,
            layoutKey: keys[0]!,
            position,
          });
        } else {
          instances.push({
            path: `${path}[${position}]`,
            normalized: elementPath,
            value: element,
            shapeName: node.list,
            node,
            position,
          });
        }
      });
    }
    const paged = isData && this.input.mapping.pagination === 'page-limit';
    if (!paged) await this.wholeList(node, normalized, instances);
    else this.page = { normalized: `${normalized}[]`, instances };
    await this.records(instances, node, elementPath);
  }

  /** The page of a paginated list, checked once the records are. */
  private page: { normalized: string; instances: RecordInstance[] } | null = null;

  /** The v3 key of a legacy record: given by the layout, or the legacy value of the field read from the key. */
  private keyOf(instance: RecordInstance, shape: RecordShape, key: string): string | null | undefined {
    if (instance.layoutKey !== undefined && 'keyedBy' in instance.node && instance.node.keyedBy === key)
      return instance.layoutKey;
    const entry = Object.entries(shape.fields).find(
      ([, declared]) => 'from' in declared && declared.from === key && !declared.map && !declared.convert,
    );
    if (!entry || !isPlain(instance.value)) return undefined;
    const legacy = instance.value[entry[0]];
    if (typeof legacy !== 'string') return null;
    if (shape.fields[entry[0]]!.type !== 'id') return legacy;
    const kind = V3_ID_KINDS[shape.v3];
    return kind === undefined ? null : legacyUuidToId(kind, legacy);
  }

  /** A list v3 returns whole: one legacy record per v3 record, in v3's order. */
  private async wholeList(node: ListNode, normalized: string, instances: readonly RecordInstance[]): Promise<void> {
    if (node.answerOnly) return;
    const answer = await this.reread(node.from);
    const list = `${normalized}[]`;
    if (!answer.ok) {
      this.ledger.list({ list, check: 'one record per v3 record', ok: false, detail: answer.problem });
      return;
    }
    const v3 = at(answer.value, node.at ?? 'data');
    if (!Array.isArray(v3)) {
      this.ledger.list({
        list,
        check: 'one record per v3 record',
        ok: false,
        detail: `the v3 answer has no list at ${node.at ?? 'data'}`,
      });
      return;
    }
    const count = instances.length === v3.length;
    this.ledger.list({
      list,
      check: `one record per v3 record (${v3.length})`,
      ok: count,
      ...(count ? {} : { detail: `the answer has ${instances.length}` }),
    });
    const shape = this.input.records[node.list]!;
    const read = V3_RECORD_READS[shape.v3];
    if (read === null || instances.length === 0) return;
    const legacyKeys = instances.map((instance) => this.keyOf(instance, shape, read.key));
    if (legacyKeys.some((key) => key === undefined)) return;
    const v3Keys = v3.map((record) => (isPlain(record) ? String(record[read.key]) : '(not a record)'));
    const same = legacyKeys.length === v3Keys.length && legacyKeys.every((key, position) => key === v3Keys[position]);
    this.ledger.list({
      list,
      check: `the records are v3's, in v3's order (by ${read.key})`,
      ok: same,
      ...(same ? {} : { detail: `v3: ${v3Keys.join(', ')}; the answer: ${legacyKeys.join(', ')}` }),
    });
  }

  /** The v3 record behind each legacy record, then each of its fields. */
  private async records(
    instances: readonly RecordInstance[],
    node: RecordNode | ListNode,
    normalized: string,
  ): Promise<void> {
    const shapeName = 'record' in node ? node.record : node.list;
    const shape = this.input.records[shapeName]!;
    for (const [field, declared] of Object.entries(shape.fields))
      this.ledger.expect(join(normalized, field), describeField(shapeName, shape, field, declared), node.answerOnly);
    for (const instance of instances) {
      const v3 = node.answerOnly ? null : await this.v3RecordOf(instance, shape);
      for (const [field, declared] of Object.entries(shape.fields)) {
        const path = `${instance.path}.${field}`;
        const normalized = join(instance.normalized, field);
        const declaration = describeField(shapeName, shape, field, declared);
        const actual =
          isPlain(instance.value) && Object.hasOwn(instance.value, field) ? instance.value[field] : undefined;
        if (actual === undefined) {
          this.ledger.problem(normalized, declaration, {
            path,
            kind: 'missing',
            actual: '(absent)',
            note: `the ${shapeName} record declares ${field}`,
          });
          continue;
        }
        const typeProblem = jsonTypeProblem(declared.type, declared.nullable === true, actual);
        if (node.answerOnly) {
          this.ledger.value(normalized, declaration, path, typeVerdict(typeProblem, actual), node.answerOnly);
          continue;
        }
        const record = v3!;
        const expected = record.ok ? this.expectedValue(declared, shape, record.value) : record;
        this.ledger.compared(
          normalized,
          declaration,
          path,
          declared.type,
          declared.nullable === true,
          actual,
          expected,
        );
      }
      if (isPlain(instance.value)) {
        for (const extra of Object.keys(instance.value)) {
          if (Object.hasOwn(shape.fields, extra)) continue;
          this.ledger.problem(join(instance.normalized, extra), 'not in the declarations', {
            path: `${instance.path}.${extra}`,
            kind: 'unaccounted',
            actual: legacyValueText(instance.value[extra]),
            note: `the ${shapeName} record declares no ${extra}`,
          });
          markJudged(this.ledger, `${instance.path}.${extra}`, instance.value[extra]);
        }
      }
    }
  }

  /** The v3 record a legacy record was built from, read back. */
  private async v3RecordOf(instance: RecordInstance, shape: RecordShape): Promise<ReadBack<V3Record>> {
    const read = V3_RECORD_READS[shape.v3];
    if (read === null)
      return {
        ok: false,
        problem: `no v3 read serves the v3 ${shape.v3} record again; declare the node answerOnly with its reason if v3 answers it only once`,
      };
    const key = this.keyOf(instance, shape, read.key);
    if (key === null) return { ok: false, problem: `its ${read.key} does not name a v3 ${shape.v3} record` };
    if (key !== undefined) return this.reader.record(shape.v3, key);
    // A record of a whole list without its key (a market's pair) is the v3 record at its position.
    const node = instance.node;
    if (
      instance.position !== undefined &&
      'list' in node &&
      this.callOf(node.from).method === 'GET' &&
      this.input.mapping.pagination === 'none'
    ) {
      const answer = await this.reread(node.from);
      if (!answer.ok) return answer;
      const list = at(answer.value, node.at ?? 'data');
      const record = Array.isArray(list) ? list[instance.position] : undefined;
      return isPlain(record)
        ? { ok: true, value: record }
        : { ok: false, problem: `v3's list has no record at position ${instance.position}` };
    }
    return {
      ok: false,
      problem: `the ${instance.shapeName} record carries no ${read.key} to read the v3 ${shape.v3} by`,
    };
  }

  /** What the declaration makes of the v3 record read back. */
  private expectedValue(declared: LegacyField, shape: RecordShape, v3: V3Record): ReadBack<Expected> {
    if ('constant' in declared) return { ok: true, value: { value: declared.constant } };
    if ('context' in declared) return { ok: true, value: { value: this.input.context[declared.context] } };
    const map = (value: unknown, name: string | undefined): unknown => {
      if (name === undefined || typeof value !== 'string') return value;
      const values = this.input.maps[name]!.values;
      return Object.hasOwn(values, value) ? values[value] : value;
    };
    if ('from' in declared) {
      if (!Object.hasOwn(v3, declared.from))
        return { ok: false, problem: `the v3 ${shape.v3} read back has no ${declared.from}` };
      const value = v3[declared.from];
      if (declared.convert !== undefined) return { ok: true, value: { value: CONVERTERS[declared.convert]!(value) } };
      if (declared.type === 'id' && value !== null) {
        const kind = idKindOf(value);
        if (kind === null)
          return {
            ok: false,
            problem: `the v3 ${shape.v3}.${declared.from} read back is ${legacyValueText(value)}, not a v3 id`,
          };
        return {
          ok: true,
          value: { value: idToLegacyUuid(kind, value as string), v3Id: { id: value as string, kind } },
        };
      }
      return { ok: true, value: { value: map(value, declared.map) } };
    }
    try {
      const parsed = readV3(V3_RECORDS[shape.v3] as never, v3, this.input.operation, `the v3 ${shape.v3} read back`);
      return { ok: true, value: { value: map(derivedField(shape.v3, declared.derived)(parsed), declared.map) } };
    } catch (error) {
      if (error instanceof V3ContractError) return { ok: false, problem: error.problems.join('; ') };
      throw error;
    }
  }

  /** A value the layout places (`field`): that v3 read sent again. */
  private async field(node: FieldNode, path: string, normalized: string, actual: unknown): Promise<void> {
    const declaration = `v3 ${node.from} ${node.field} (${node.type})`;
    this.ledger.expect(normalized, declaration, node.answerOnly);
    if (actual === undefined) {
      this.ledger.problem(normalized, declaration, { path, kind: 'missing', actual: '(absent)' });
      return;
    }
    const typeProblem = jsonTypeProblem(node.type, false, actual);
    if (node.answerOnly) {
      this.ledger.value(normalized, declaration, path, typeVerdict(typeProblem, actual), node.answerOnly);
      return;
    }
    const answer = await this.reread(node.from);
    const expected = answer.ok ? { ok: true as const, value: { value: at(answer.value, node.field) } } : answer;
    this.ledger.compared(normalized, declaration, path, node.type, false, actual, expected);
  }

  /** `{key: value}` over a v3 list (`entries`): each entry is a v3 record's value, and each v3 record has its entry. */
  private async entries(node: EntriesNode, path: string, normalized: string, actual: unknown): Promise<void> {
    const field = `${normalized}.*`;
    const declaration = `{${node.key}: ${node.value}} over the v3 ${node.entries} records of ${node.from} (${node.type})`;
    this.ledger.expect(field, declaration, node.answerOnly);
    if (!isPlain(actual)) {
      this.ledger.problem(field, declaration, {
        path,
        kind: 'missing',
        actual: legacyValueText(actual),
        note: 'an object of entries belongs here',
      });
      return;
    }
    const answer = node.answerOnly ? null : await this.reread(node.from);
    const list = answer?.ok ? at(answer.value, node.at ?? 'data') : undefined;
    const v3 = Array.isArray(list) ? list.filter(isPlain) : [];
    for (const [key, value] of Object.entries(actual)) {
      const here = `${path}.${key}`;
      const typeProblem = jsonTypeProblem(node.type, false, value);
      if (answer === null) {
        this.ledger.value(
          field,
          declaration,
          here,
          typeProblem ? { kind: 'differs', actual: legacyValueText(value), note: typeProblem } : null,
          node.answerOnly,
        );
      } else if (!answer.ok || !Array.isArray(list)) {
        this.ledger.unreadable(
          field,
          declaration,
          here,
          value,
          answer.ok ? `the v3 answer has no list at ${node.at ?? 'data'}` : answer.problem,
        );
      } else {
        const record = v3.find((candidate) => String(candidate[node.key]) === key);
        this.ledger.value(
          field,
          declaration,
          here,
          record === undefined
            ? {
                kind: 'differs',
                expected: '(absent)',
                actual: legacyValueText(value),
                note: `no v3 ${node.entries} record has ${node.key} ${key}`,
              }
            : judgeValue(node.type, false, value, { value: record[node.value] }),
        );
      }
    }
    for (const record of v3) {
      const key = String(record[node.key]);
      if (!Object.hasOwn(actual, key))
        this.ledger.problem(field, declaration, {
          path: `${path}.${key}`,
          kind: 'missing',
          expected: expectedText(node.type, record[node.value]),
          actual: '(absent)',
          note: `v3 has a ${node.entries} record with ${node.key} ${key}`,
        });
    }
  }

  /** `meta.pagination` and the page's records, against the v3 list read from its head. */
  async pagination(body: Plain): Promise<void> {
    const meta = at(body, 'meta.pagination');
    const numbers: Record<string, number | undefined> = {};
    for (const name of ['total', 'start', 'end', 'page', 'limit']) {
      const value = isPlain(meta) ? meta[name] : undefined;
      numbers[name] =
        isLosslessNumber(value) && Number.isSafeInteger(Number(value.value)) ? Number(value.value) : undefined;
    }
    const count = this.page?.instances.length ?? 0;
    const [, call] = this.firstCall;
    const bounded = findV3Operation(call.method, call.path)?.list === 'bounded';
    const { total, start, end } = numbers;
    const asked = this.input.page;
    const expected: Record<string, { value: number | undefined; why: string }> = {
      page: { value: asked?.page, why: 'the page asked for' },
      limit: { value: asked?.limit, why: 'the limit asked for' },
      start: {
        value: asked && total !== undefined ? Math.min((asked.page - 1) * asked.limit, total) : undefined,
        why: 'the offset of the page: (page - 1) * limit, at most total',
      },
      end: { value: start === undefined ? undefined : start + count, why: 'start plus the records on the page' },
    };
    let v3: ReadBack<V3ListRead> | null = null;
    if (start !== undefined && end !== undefined) v3 = await this.reader.list(call, end + 1);
    const totalProblems: string[] = [];
    if (total !== undefined && end !== undefined && total < end)
      totalProblems.push(`total ${total} is below end ${end}`);
    if (count > (asked?.limit ?? Number.POSITIVE_INFINITY))
      totalProblems.push(`the page has ${count} records, more than its limit`);
    if (v3?.ok && total !== undefined && end !== undefined) {
      const known = v3.value.records.length;
      if (v3.value.complete && bounded && total !== known)
        totalProblems.push(`v3 returns the whole list, ${known} records, and total is ${total}`);
      if (v3.value.complete && total > known)
        totalProblems.push(`v3's list has ${known} records, fewer than total ${total}`);
      if (known > end && total <= end)
        totalProblems.push(`v3 has records after the page (${known} read), and total ${total} shows none`);
    }
    for (const name of ['total', 'start', 'end', 'page', 'limit']) {
      const path = `meta.pagination.${name}`;
      const declaration =
        name === 'total' ? 'the envelope: the length of the list, against v3' : `the envelope: ${expected[name]!.why}`;
      const raw = isPlain(meta) ? meta[name] : undefined;
      if (raw === undefined) {
        this.ledger.problem(path, declaration, { path, kind: 'missing', actual: '(absent)' });
        continue;
      }
      const actual = numbers[name];
      if (actual === undefined) {
        this.ledger.value(path, declaration, path, {
          kind: 'differs',
          actual: legacyValueText(raw),
          note: 'a whole JSON number belongs here',
        });
        continue;
      }
      if (name === 'total') {
        this.ledger.value(
          path,
          declaration,
          path,
          totalProblems.length === 0
            ? null
            : { kind: 'differs', actual: String(actual), note: totalProblems.join('; ') },
        );
        continue;
      }
      const want = expected[name]!.value;
      this.ledger.value(
        path,
        declaration,
        path,
        want === undefined || want === actual
          ? null
          : { kind: 'differs', expected: String(want), actual: String(actual), note: expected[name]!.why },
      );
    }
    if (!this.page || v3 === null) return;
    const list = this.page.normalized;
    if (!v3.ok) {
      this.ledger.list({ list, check: "the page is v3's records at its offsets", ok: false, detail: v3.problem });
      return;
    }
    const shape = this.input.records[(this.input.mapping.response.data as { list: string }).list]!;
    const read = V3_RECORD_READS[shape.v3];
    if (read === null || start === undefined) return;
    const legacyKeys = this.page.instances.map((instance) => this.keyOf(instance, shape, read.key) ?? '(none)');
    const v3Keys = v3.value.records.slice(start, start + legacyKeys.length).map((record) => String(record[read.key]));
    const same = legacyKeys.length === v3Keys.length && legacyKeys.every((key, position) => key === v3Keys[position]);
    this.ledger.list({
      list,
      check: `the page is v3's records ${start} to ${start + legacyKeys.length}, in v3's order (by ${read.key})`,
      ok: same,
      ...(same
        ? {}
        : { detail: `v3: ${v3Keys.join(', ') || '(none)'}; the answer: ${legacyKeys.join(', ') || '(none)'}` }),
    });
  }
}

/** The v3 id kind of each record kind's own id. */
const V3_ID_KINDS: Partial<Record<V3RecordKind, IdKind>> = {
  quote: 'quote',
  trade: 'trade',
  balance: 'balance',
  deposit: 'deposit',
  withdrawalAccount: 'withdrawalAccount',
  withdrawal: 'withdrawal',
};

/** Marks every leaf under a value judged (an unaccounted object is reported once, at its top). */
function markJudged(ledger: Ledger, path: string, value: unknown): void {
  if (Array.isArray(value)) value.forEach((element, position) => markJudged(ledger, `${path}[${position}]`, element));
  else if (isPlain(value))
    for (const [key, child] of Object.entries(value)) markJudged(ledger, `${path}.${key}`, child);
  else ledger.judged.add(path);
}

/** What a legacy value should be; an id also says which v3 id it must name through the id function. */
interface Expected {
  readonly value: unknown;
  readonly v3Id?: { readonly id: string; readonly kind: IdKind };
}

/** One legacy value against what v3 and the declaration call for. */
function judgeValue(
  type: FieldType,
  nullable: boolean,
  actual: unknown,
  expected: Expected,
): Omit<FieldProblem, 'path'> | null {
  const shown = expected.v3Id
    ? `${legacyValueText(expected.value)} (v3 ${expected.v3Id.id})`
    : expectedText(type, expected.value);
  const typeProblem = jsonTypeProblem(type, nullable, actual);
  if (typeProblem) return { kind: 'differs', expected: shown, actual: legacyValueText(actual), note: typeProblem };
  if (expected.v3Id) {
    // Through the id function: the legacy UUID must name this very v3 id.
    const same = typeof actual === 'string' && legacyUuidToId(expected.v3Id.kind, actual) === expected.v3Id.id;
    return same
      ? null
      : {
          kind: 'differs',
          expected: shown,
          actual: legacyValueText(actual),
          note: 'the legacy UUID does not name this v3 id',
        };
  }
  return sameLegacyValue(type, actual, expected.value)
    ? null
    : { kind: 'differs', expected: shown, actual: legacyValueText(actual) };
}
