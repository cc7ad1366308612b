/**
 * The error downgrade tables: what a v1 or v2 client gets for a v3 error. The data is in
 * `mappings/errors.v2.ts` (a row for each of the catalog's codes) and `mappings/errors.v1.ts`
 * (v1 declared as its changes from v2); this module holds their types, the error kinds of the
 * change format (generation-changes.ts takes them into its union), the validators the gateway
 * runs when it loads them, `applyV1ErrorChanges` (v2's tables plus v1's changes = v1's
 * tables), the listing of those changes for the docs, and the lookup that turns a v3 error into
 * the legacy status and body.
 *
 * A table answers for a v3 code whether v3 returned it or the gateway raised it itself on the
 * legacy request (its own auth, validation and idempotency checks use the catalog's codes too).
 */
import { z } from 'zod';

import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';
import {
  ERROR_CODES,
  ERROR_TYPES,
  type ErrorCode,
  type ErrorType,
  isErrorCode,
} from '../../../lib/errors/v3-error-catalog.js';
import {
  LEGACY_OPERATIONS,
  type LegacyGeneration,
  type LegacyOperation,
  type V1Operation,
} from './legacy-operations.js';
import { describeIssues, parseDeclaration } from './mapping-error.js';
import { nonEmptyText as text } from './record-shapes.js';

/**
 * The statuses any v1 answer may have: the three of the v1 documentation (400, 401, 500), plus
 * 429 from the rate limits, which apply to every generation.
 */
export const V1_BASE_STATUSES = [400, 401, 429, 500] as const;
/**
 * The statuses a v1 answer may have only together with an idempotency `error.code` (409
 * IDEMPOTENCY_IN_FLIGHT, 422 IDEMPOTENCY_MISMATCH): v1 writes honour an Idempotency-Key the
 * client sends, and those are the answers such a client can meet.
 */
export const V1_IDEMPOTENCY_STATUSES = [409, 422] as const;
export const V1_ERROR_STATUSES = [400, 401, 409, 422, 429, 500] as const;
/** v2's statuses: those of the v2 documentation, plus 429 from the rate limits. */
export const V2_ERROR_STATUSES = [400, 401, 404, 409, 422, 429, 500, 503] as const;
/** The v2 statuses a v1 answer without an idempotency `error.code` cannot have; v1's status rule maps each to one of V1_BASE_STATUSES. */
export const V1_LACKED_STATUSES = [404, 409, 422, 503] as const;
export type V1BaseStatus = (typeof V1_BASE_STATUSES)[number];
export type V1IdempotencyStatus = (typeof V1_IDEMPOTENCY_STATUSES)[number];
export type V1ErrorStatus = (typeof V1_ERROR_STATUSES)[number];
export type V2ErrorStatus = (typeof V2_ERROR_STATUSES)[number];
export type V1LackedStatus = (typeof V1_LACKED_STATUSES)[number];

/** The legacy `error.code` values (the idempotency cases of the v2 documentation), each with the only status it comes with. */
export const V2_ERROR_CODE_STATUS = {
  IDEMPOTENCY_KEY_REQUIRED: 400,
  INVALID_IDEMPOTENCY_KEY: 400,
  IDEMPOTENCY_IN_FLIGHT: 409,
  IDEMPOTENCY_MISMATCH: 422,
  IDEMPOTENCY_SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<string, V2ErrorStatus>;
export type V2ErrorCode = keyof typeof V2_ERROR_CODE_STATUS;
const V2_ERROR_CODES = Object.keys(V2_ERROR_CODE_STATUS) as [V2ErrorCode, ...V2ErrorCode[]];

/** The `error` object of a legacy body: `{code, details}`, `details` a string. */
const errorObjectSchema = z.strictObject({ code: z.enum(V2_ERROR_CODES), details: text });
export type LegacyErrorObject = Readonly<z.infer<typeof errorObjectSchema>>;

/**
 * What a v1 client gets: `{status: 'error', message}` under this status, plus `error: {code,
 * details}` when `error` is set. 409 and 422 come only with an idempotency `error`.
 */
export type V1ErrorAnswer =
  | { readonly status: V1BaseStatus; readonly message: string; readonly error?: LegacyErrorObject }
  | { readonly status: V1IdempotencyStatus; readonly message: string; readonly error: LegacyErrorObject };

/** What a v2 client gets: `{status: 'error', message}`, plus `error: {code, details}` when `error` is set. */
export interface V2ErrorAnswer {
  readonly status: V2ErrorStatus;
  readonly message: string;
  readonly error?: LegacyErrorObject;
}

interface AnswerOf {
  v1: V1ErrorAnswer;
  v2: V2ErrorAnswer;
}
export type LegacyErrorAnswer<G extends LegacyGeneration> = AnswerOf[G];

/**
 * Every row says where it comes from and why: `spec` (the status, and the message where one is
 * worded, are the legacy documentation's) or `closest` (our choice where it gives none).
 */
const docsSchema = z.strictObject({ basis: z.enum(['spec', 'closest']), note: text });
const docsShape = docsSchema.shape;
export type ErrorRowDocs = Readonly<z.infer<typeof docsSchema>>;

export type LegacyErrorRow<G extends LegacyGeneration> = LegacyErrorAnswer<G> &
  ErrorRowDocs & {
    /** Operations whose answer for this code differs from the row's (the documentation's per-operation cases). */
    readonly byOperation?: Partial<Record<LegacyOperation<G>, LegacyErrorAnswer<G>>>;
    /**
     * The row of a code v3 can only answer the gateway through the gateway's own fault (its
     * credential, its wiring, the keys and bodies it writes), with the reason: when v3 answers
     * it, the client gets INTERNAL_ERROR's answer. The row itself answers the code when the
     * gateway raises it on the legacy request. v1 keeps v2's.
     */
    readonly defect?: string;
  };

export interface LegacyErrorTables<G extends LegacyGeneration> {
  /** One row for each of the catalog's codes. */
  readonly byCode: Readonly<Record<ErrorCode, LegacyErrorRow<G>>>;
  /** For a code newer than our catalog (v3 codes are an open vocabulary), by its v3 `type`;
   * an unknown type counts as INTERNAL_ERROR, as v3 tells its clients to do. */
  readonly byType: Readonly<Record<ErrorType, LegacyErrorAnswer<G> & ErrorRowDocs>>;
}

export type V1ErrorTables = LegacyErrorTables<'v1'>;
export type V2ErrorTables = LegacyErrorTables<'v2'>;

const v1BaseStatus = z.literal(V1_BASE_STATUSES, {
  error: `must be one of the statuses every v1 answer may have: ${V1_BASE_STATUSES.join(', ')}`,
});
/** The error changes say whether the v1 documentation answers so (`doc`: basis `spec`) or we chose (`ours`: `closest`). */
const errorProvenance = { source: z.enum(['doc', 'ours']), reason: text };
const errorCode = z.enum(ERROR_CODES);

/**
 * The error kinds of the change format (generation-changes.ts): v1's error answers as changes of
 * v2's tables (`mappings/errors.v1.ts`), applied by applyV1ErrorChanges. Each reason becomes
 * the note of the rows it makes.
 */
export const ERROR_CHANGE_SCHEMAS = [
  /** A v2 status v1 lacks becomes one every v1 answer may have; under it a v2 answer keeps its message and drops its `error`. */
  z.strictObject({
    ...errorProvenance,
    kind: z.literal('status-downgraded'),
    from: z.literal(V1_LACKED_STATUSES, { error: `must be a v2 status v1 lacks: ${V1_LACKED_STATUSES.join(', ')}` }),
    to: v1BaseStatus,
  }),
  /** v2's answers for the code stay as they are, the idempotency `error: {code, details}` included. */
  z.strictObject({ ...errorProvenance, kind: z.literal('error-code-kept'), code: errorCode }),
  /** v1's one answer for the code on every operation, in the bare envelope; nothing of v2's row carries over. */
  z.strictObject({
    ...errorProvenance,
    kind: z.literal('error-answer-changed'),
    code: errorCode,
    status: v1BaseStatus,
    message: text,
  }),
] as const;

const errorChangesSchema = z.array(z.discriminatedUnion('kind', ERROR_CHANGE_SCHEMAS)).readonly();
export type ErrorChange = Readonly<z.infer<(typeof ERROR_CHANGE_SCHEMAS)[number]>>;
type ErrorChangeOf<K extends ErrorChange['kind']> = Extract<ErrorChange, { readonly kind: K }>;
type StatusDowngrade = ErrorChangeOf<'status-downgraded'>;

/** v1's error changes, indexed: the status rule by v2 status, the kept and changed codes by code. */
interface V1ErrorRules {
  readonly statuses: Readonly<Partial<Record<number, StatusDowngrade>>>;
  readonly kept: ReadonlyMap<ErrorCode, ErrorChangeOf<'error-code-kept'>>;
  readonly changed: ReadonlyMap<ErrorCode, ErrorChangeOf<'error-answer-changed'>>;
}

function basisOf(change: ErrorChange): ErrorRowDocs['basis'] {
  return change.source === 'doc' ? 'spec' : 'closest';
}

function answerShape(generation: LegacyGeneration) {
  const statuses = generation === 'v1' ? V1_ERROR_STATUSES : V2_ERROR_STATUSES;
  return {
    status: z.literal(statuses, {
      error: `must be one of ${generation}'s statuses ${statuses.join(', ')}${generation === 'v1' ? ` (${V1_IDEMPOTENCY_STATUSES.join(' and ')} only with an idempotency error.code)` : ''}`,
    }),
    message: text,
    error: errorObjectSchema.optional(),
  };
}

function schemasFor(generation: LegacyGeneration) {
  const answer = z.strictObject(answerShape(generation));
  const operations = z.enum(LEGACY_OPERATIONS[generation] as unknown as [string, ...string[]]);
  return {
    row: z.strictObject({
      ...answerShape(generation),
      ...docsShape,
      byOperation: z.partialRecord(operations, answer).optional(),
      defect: text.optional(),
    }),
    fallback: z.strictObject({ ...answerShape(generation), ...docsShape }),
  };
}

interface AnswerLike {
  readonly status: number;
  readonly message?: string;
  readonly error?: { readonly code: V2ErrorCode; readonly details?: string } | undefined;
}

/**
 * A legacy `error.code` only ever comes with its own status (IDEMPOTENCY_IN_FLIGHT is always
 * 409), and on v1, 409 and 422 only ever come with such a code.
 */
function answerProblems(generation: LegacyGeneration, where: string, answer: AnswerLike): string[] {
  const code = answer.error?.code;
  if (code === undefined) {
    const idempotencyOnly =
      generation === 'v1' && (V1_IDEMPOTENCY_STATUSES as readonly number[]).includes(answer.status);
    return idempotencyOnly
      ? [
          `${where}: v1 answers ${answer.status} only with an idempotency error.code (${V2_ERROR_CODES.filter((each) => V2_ERROR_CODE_STATUS[each] === answer.status).join(', ')})`,
        ]
      : [];
  }
  const expected = V2_ERROR_CODE_STATUS[code];
  return answer.status === expected
    ? []
    : [`${where}: error.code ${code} goes with status ${expected}, not ${answer.status}`];
}

function rowProblems(
  generation: LegacyGeneration,
  where: string,
  row: AnswerLike & { readonly byOperation?: Readonly<Record<string, AnswerLike | undefined>> | undefined },
): string[] {
  const problems = answerProblems(generation, where, row);
  for (const [operation, answer] of Object.entries(row.byOperation ?? {})) {
    if (answer) problems.push(...answerProblems(generation, `${where}.byOperation.${operation}`, answer));
  }
  return problems;
}

function keyProblems(where: string, keys: readonly string[], expected: readonly string[], what: string): string[] {
  const problems: string[] = [];
  for (const key of expected) if (!keys.includes(key)) problems.push(`${where}: no row for ${what} ${key}`);
  for (const key of keys) if (!expected.includes(key)) problems.push(`${where}.${key}: not a ${what} (unknown key)`);
  return problems;
}

const tablesShape = z.strictObject({
  byCode: z.record(z.string(), z.unknown()),
  byType: z.record(z.string(), z.unknown()),
});

/**
 * Validates the error tables of a generation (unknown input) and returns them typed. Throws
 * LegacyMappingError listing every problem. `codes` is the catalog's list; tests pass their own
 * to prove the check.
 */
export function validateErrorTables<G extends LegacyGeneration>(
  generation: G,
  tables: unknown,
  name = `mappings/errors.${generation}`,
  codes: readonly string[] = ERROR_CODES,
): LegacyErrorTables<G> {
  const outer = parseDeclaration(tablesShape, tables, name);
  const { byCode, byType } = outer;
  const schemas = schemasFor(generation);
  const problems = [
    ...keyProblems('byCode', Object.keys(byCode), codes, 'v3 error code'),
    ...keyProblems('byType', Object.keys(byType), ERROR_TYPES, 'v3 error type'),
  ];

  for (const [code, row] of Object.entries(byCode)) {
    if (!codes.includes(code)) continue;
    const parsed = schemas.row.safeParse(row);
    if (parsed.success) problems.push(...rowProblems(generation, `byCode.${code}`, parsed.data));
    else problems.push(...describeIssues(`byCode.${code}`, parsed.error.issues));
  }
  for (const [type, row] of Object.entries(byType)) {
    if (!(ERROR_TYPES as readonly string[]).includes(type)) continue;
    const parsed = schemas.fallback.safeParse(row);
    if (parsed.success) problems.push(...answerProblems(generation, `byType.${type}`, parsed.data));
    else problems.push(...describeIssues(`byType.${type}`, parsed.error.issues));
  }
  if (problems.length > 0) throw new LegacyMappingError(name, problems);
  return tables as LegacyErrorTables<G>;
}

// ---------------------------------------------------------------------------------------------
// v1 as changes from v2

function sameAnswer(a: AnswerLike, b: AnswerLike): boolean {
  return (
    a.status === b.status &&
    a.message === b.message &&
    a.error?.code === b.error?.code &&
    a.error?.details === b.error?.details
  );
}

function answerOnly<G extends LegacyGeneration>(row: LegacyErrorAnswer<G>): LegacyErrorAnswer<G> {
  const { status, message, error } = row as AnswerLike & { readonly message: string };
  return (
    error === undefined ? { status, message } : { status, message, error: { code: error.code, details: error.details } }
  ) as LegacyErrorAnswer<G>;
}

/** v1's byOperation: only the operations v1 has. */
function v1Operations<A>(byOperation: Readonly<Partial<Record<string, A>>> | undefined): [V1Operation, A][] {
  return Object.entries(byOperation ?? {}).filter(
    (entry): entry is [V1Operation, A] =>
      entry[1] !== undefined && (LEGACY_OPERATIONS.v1 as readonly string[]).includes(entry[0]),
  );
}

function withOperations(
  row: V1ErrorAnswer & ErrorRowDocs,
  operations: readonly (readonly [V1Operation, V1ErrorAnswer])[],
): LegacyErrorRow<'v1'> {
  return operations.length === 0 ? row : { ...row, byOperation: Object.fromEntries(operations) };
}

/** A v2 answer under v1's status rule: a status v1 lacks becomes the rule's, the message stays, the `error` goes. */
function underRule(
  rules: V1ErrorRules,
  answer: V2ErrorAnswer,
): { readonly answer: V1ErrorAnswer; readonly change?: StatusDowngrade } {
  const change = rules.statuses[answer.status];
  const status = (change?.to ?? answer.status) as V1BaseStatus;
  return change === undefined
    ? { answer: { status, message: answer.message } }
    : { answer: { status, message: answer.message }, change };
}

/** The docs of a v1 row taken from v2: as v2 when the rule changes nothing, else our choice, with the rule's reasons. */
function ruleDocs(v2: ErrorRowDocs, used: readonly (StatusDowngrade | undefined)[]): ErrorRowDocs {
  const reasons = [...new Set(used.filter((change) => change !== undefined).map((change) => change.reason))];
  return reasons.length === 0
    ? { basis: v2.basis, note: `As v2: ${v2.note}` }
    : { basis: 'closest', note: `${v2.note} On v1: ${reasons.join(' ')}` };
}

/** v1's row for a code as v2's row under the rule, ignoring changed and kept codes. */
function ruleRow(rules: V1ErrorRules, v2: LegacyErrorRow<'v2'>): LegacyErrorRow<'v1'> {
  const base = underRule(rules, v2);
  const operations = v1Operations(v2.byOperation).map(
    ([operation, answer]) => [operation, underRule(rules, answer)] as const,
  );
  const docs = ruleDocs(v2, [base.change, ...operations.map(([, mapped]) => mapped.change)]);
  return withOperations(
    { ...base.answer, ...docs },
    operations.map(([operation, mapped]) => [operation, mapped.answer] as const),
  );
}

function keptRow(kept: ErrorChangeOf<'error-code-kept'>, v2: LegacyErrorRow<'v2'>): LegacyErrorRow<'v1'> {
  const docs = { basis: basisOf(kept), note: `${kept.reason} As v2: ${v2.note}` };
  const operations = v1Operations(v2.byOperation).map(
    ([operation, answer]) => [operation, answerOnly<'v1'>(answer as V1ErrorAnswer)] as const,
  );
  return withOperations({ ...answerOnly<'v1'>(v2 as V1ErrorAnswer), ...docs }, operations);
}

/** v1's row for a changed code: the one answer, on every operation. */
function changedRow(change: ErrorChangeOf<'error-answer-changed'>): LegacyErrorRow<'v1'> {
  return { status: change.status, message: change.message, basis: basisOf(change), note: change.reason };
}

/** Whether two rows answer alike on every v1 operation (and without one). */
function sameRowAnswers(a: LegacyErrorRow<'v1'>, b: LegacyErrorRow<'v1'>): boolean {
  const at = (row: LegacyErrorRow<'v1'>, operation: V1Operation): V1ErrorAnswer =>
    (row.byOperation as Partial<Record<string, V1ErrorAnswer>> | undefined)?.[operation] ?? row;
  return sameAnswer(a, b) && LEGACY_OPERATIONS.v1.every((operation) => sameAnswer(at(a, operation), at(b, operation)));
}

function describeChange(change: ErrorChange): string {
  return change.kind === 'status-downgraded' ? `${change.kind} ${change.from}` : `${change.kind} ${change.code}`;
}

/**
 * Validates v1's error changes (unknown input, as loaded) against v2's validated tables and
 * returns them indexed. Throws LegacyMappingError listing every problem, each naming its change
 * (`changes[3] (error-code-kept TRADE_NOT_FOUND): ...`). Each v2 status v1 lacks is downgraded once; a
 * code is kept or changed, once; every v2 answer with an `error.code` is one of the two; a kept
 * code's v2 answer has an idempotency `error` under a status v1 has with one; a changed code
 * answers otherwise than the status rule would.
 */
function v1ErrorRules(v2: LegacyErrorTables<'v2'>, changes: unknown, name: string): V1ErrorRules {
  const parsed = parseDeclaration(errorChangesSchema, changes, name, 'changes');
  const statuses: Partial<Record<number, StatusDowngrade>> = {};
  const kept = new Map<ErrorCode, ErrorChangeOf<'error-code-kept'>>();
  const changed = new Map<ErrorCode, ErrorChangeOf<'error-answer-changed'>>();
  const problems: string[] = [];
  parsed.forEach((change, index) => {
    const where = `changes[${index}] (${describeChange(change)})`;
    if (change.kind === 'status-downgraded') {
      if (statuses[change.from] !== undefined) problems.push(`${where}: ${change.from} is downgraded twice`);
      else statuses[change.from] = change;
      return;
    }
    if (kept.has(change.code) || changed.has(change.code)) {
      problems.push(`${where}: ${change.code} already has a change; a code is either kept from v2 or changed, once`);
      return;
    }
    if (change.kind === 'error-answer-changed') {
      changed.set(change.code, change);
      return;
    }
    const answer = v2.byCode[change.code];
    if (answer.error === undefined)
      problems.push(
        `${where}: v2 answers ${change.code} without an idempotency error.code; only such answers are kept as they are`,
      );
    else if (!(V1_ERROR_STATUSES as readonly number[]).includes(answer.status))
      problems.push(
        `${where}: v2 answers ${change.code} with ${answer.status}, a status v1 does not have even with an error.code`,
      );
    kept.set(change.code, change);
  });
  for (const status of V1_LACKED_STATUSES)
    if (statuses[status] === undefined)
      problems.push(`status-downgraded: no change for ${status}, a v2 status v1 lacks`);

  // v1 decides every v2 answer that has an error.code: kept as it is, or changed.
  for (const code of ERROR_CODES) {
    const row = v2.byCode[code];
    const withCode = [row, ...Object.values(row.byOperation ?? {})].some((answer) => answer?.error !== undefined);
    if (withCode && !kept.has(code) && !changed.has(code))
      problems.push(`${code}: v2 answers it with an error.code; declare it error-code-kept or error-answer-changed`);
  }
  const rules = { statuses, kept, changed };

  // Only differences are changes (checked once the rest is sound, as it needs the status rule).
  if (problems.length === 0) {
    for (const [code, change] of changed) {
      if (sameRowAnswers(changedRow(change), ruleRow(rules, v2.byCode[code])))
        problems.push(
          `error-answer-changed ${code}: answers as v2's row under the status rule does; only differences are changes`,
        );
    }
  }
  if (problems.length > 0) throw new LegacyMappingError(name, problems);
  return rules;
}

/**
 * v1's error tables: v2's, changed by `changes` (`V1_ERROR_CHANGES` of `mappings/errors.v1.ts`).
 * Every v2 row and every per-operation answer for an operation v1 has goes through the status
 * rule (`status-downgraded`); kept codes keep v2's answers; changed codes get their one answer; v2's
 * per-operation answers for operations v1 lacks are dropped. The result passes
 * `validateErrorTables('v1', ...)` (checked here, so a bad combination stops start-up too).
 */
export function applyV1ErrorChanges(
  v2: LegacyErrorTables<'v2'>,
  changes: unknown,
  name = 'mappings/errors.v1',
): LegacyErrorTables<'v1'> {
  const rules = v1ErrorRules(v2, changes, name);
  return validateErrorTables('v1', buildV1Tables(v2, rules), name);
}

function buildV1Tables(v2: LegacyErrorTables<'v2'>, rules: V1ErrorRules): LegacyErrorTables<'v1'> {
  const byCode = {} as Record<ErrorCode, LegacyErrorRow<'v1'>>;
  for (const code of ERROR_CODES) {
    const changed = rules.changed.get(code);
    const kept = rules.kept.get(code);
    const row =
      changed !== undefined
        ? changedRow(changed)
        : kept !== undefined
          ? keptRow(kept, v2.byCode[code])
          : ruleRow(rules, v2.byCode[code]);
    const defect = v2.byCode[code].defect;
    byCode[code] = defect === undefined ? row : { ...row, defect };
  }
  const byType = {} as Record<ErrorType, V1ErrorAnswer & ErrorRowDocs>;
  for (const type of ERROR_TYPES) {
    const fallback = v2.byType[type];
    const mapped = underRule(rules, fallback);
    byType[type] = { ...mapped.answer, ...ruleDocs(fallback, [mapped.change]) };
  }
  return { byCode, byType };
}

/** One line of the v1 changes, as the docs list them. */
export interface V1ErrorChangeLine {
  /** The v3 code, or `(new TYPE code)` for the answer by type to a code newer than the catalog. */
  readonly code: string;
  /** The operation, for a per-operation answer; undefined for the code's own answer. */
  readonly operation: V1Operation | undefined;
  /** `409 Request with this idempotency key is currently processing (IDEMPOTENCY_IN_FLIGHT)`. */
  readonly v2: string;
  readonly v1: string;
  readonly reason: string;
}

function ruleReason(rules: V1ErrorRules, answer: V2ErrorAnswer): string {
  return underRule(rules, answer).change?.reason ?? "v1's bare envelope has no error object.";
}

function answerText(answer: AnswerLike & { readonly message: string }): string {
  return `${answer.status} ${answer.message}${answer.error === undefined ? '' : ` (${answer.error.code})`}`;
}

/**
 * Where v1 answers differently from v2, and why, in readable form for the generated docs: every
 * code (and per-operation answer) the status rule or a changed answer changes, and the idempotency
 * codes v1 keeps as v2 answers them. Per-operation answers are listed only where either table
 * has its own answer for the operation, and only for operations v1 has.
 */
export function describeV1ErrorChanges(
  v2: LegacyErrorTables<'v2'>,
  changes: unknown,
  name = 'mappings/errors.v1',
): V1ErrorChangeLine[] {
  const rules = v1ErrorRules(v2, changes, name);
  const v1 = validateErrorTables('v1', buildV1Tables(v2, rules), name);
  const lines: V1ErrorChangeLine[] = [];
  for (const code of ERROR_CODES) {
    const kept = rules.kept.get(code);
    const v2Row = v2.byCode[code];
    const v1Row = v1.byCode[code];
    const reasonFor = (v2Answer: V2ErrorAnswer): string =>
      (rules.changed.get(code) ?? kept)?.reason ?? ruleReason(rules, v2Answer);
    if (kept !== undefined || !sameAnswer(v2Row, v1Row))
      lines.push({
        code,
        operation: undefined,
        v2: answerText(v2Row),
        v1: answerText(v1Row),
        reason: reasonFor(v2Row),
      });
    const v2Operations = (v2Row.byOperation ?? {}) as Partial<Record<string, V2ErrorAnswer>>;
    const v1Operations = (v1Row.byOperation ?? {}) as Partial<Record<string, V1ErrorAnswer>>;
    for (const operation of LEGACY_OPERATIONS.v1) {
      const v2Answer = v2Operations[operation];
      const v1Answer = v1Operations[operation];
      if (v2Answer === undefined && v1Answer === undefined) continue;
      const v2Resolved = v2Answer ?? v2Row;
      const v1Resolved = v1Answer ?? v1Row;
      if (sameAnswer(v2Resolved, v1Resolved) || (sameAnswer(v2Resolved, v2Row) && sameAnswer(v1Resolved, v1Row)))
        continue;
      lines.push({
        code,
        operation,
        v2: answerText(v2Resolved),
        v1: answerText(v1Resolved),
        reason: reasonFor(v2Resolved),
      });
    }
  }
  for (const type of ERROR_TYPES) {
    const v2Answer = v2.byType[type];
    const v1Answer = v1.byType[type];
    if (!sameAnswer(v2Answer, v1Answer))
      lines.push({
        code: `(new ${type} code)`,
        operation: undefined,
        v2: answerText(v2Answer),
        v1: answerText(v1Answer),
        reason: ruleReason(rules, v2Answer),
      });
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Lookup

/**
 * The legacy answer for a v3 error met while serving `operation`: the operation's own row when
 * the table has one, else the code's row; a code the catalog does not know goes by its type.
 */
export function resolveLegacyError<G extends LegacyGeneration>(
  tables: LegacyErrorTables<G>,
  error: { readonly code: string; readonly type?: string | undefined },
  operation?: LegacyOperation<G>,
): LegacyErrorAnswer<G> {
  if (isErrorCode(error.code)) {
    const row = tables.byCode[error.code];
    const special =
      operation === undefined
        ? undefined
        : (row.byOperation as Partial<Record<string, LegacyErrorAnswer<G>>> | undefined)?.[operation];
    return answerOnly(special ?? row);
  }
  const type =
    error.type !== undefined && (ERROR_TYPES as readonly string[]).includes(error.type)
      ? (error.type as ErrorType)
      : 'INTERNAL_ERROR';
  return answerOnly(tables.byType[type]);
}

/** Whether v3 answering `code` to the gateway is the gateway's own defect (the table's `defect` rows). */
export function isDeclaredDefect(tables: LegacyErrorTables<LegacyGeneration>, code: string): boolean {
  return isErrorCode(code) && tables.byCode[code].defect !== undefined;
}

export interface LegacyErrorBody {
  readonly status: 'error';
  readonly message: string;
  readonly error?: LegacyErrorObject;
}

/** The body a legacy client reads: `{status: 'error', message}`, plus `error` where the answer has one. */
export function legacyErrorBody(answer: V1ErrorAnswer | V2ErrorAnswer): LegacyErrorBody {
  const error = answer.error;
  return error === undefined
    ? { status: 'error', message: answer.message }
    : { status: 'error', message: answer.message, error: { code: error.code, details: error.details } };
}
