/**
 * The error downgrade tables: what a v1 or v2 client gets for a v3 error (spec 7.5, 7.6, 9;
 * DESIGN 4). The tables themselves are data in `mappings/errors.v1.ts` and `mappings/errors.v2.ts`;
 * this module holds their types, the validator the gateway runs when it loads them (every one of
 * the catalog's codes present, nothing unknown, statuses legal for the generation, messages not
 * empty) and the lookup that turns a v3 error into the legacy status and body.
 *
 * A table answers for a v3 code whether v3 returned it or the gateway raised it itself on the
 * legacy request (its own auth, validation and idempotency checks use the catalog's codes too).
 */
import { z } from 'zod';
import { ERROR_CODES, ERROR_TYPES, type ErrorCode, type ErrorType, isErrorCode } from '../../lib/errors/catalog.js';
import { LegacyMappingError, describeIssues } from './mapping-error.js';
import { LEGACY_OPERATIONS, type LegacyGeneration, type LegacyOperation } from './operations.js';

/** v1's statuses: the three of spec 7.6, plus 429 from the rate limits of spec 8, which apply to every generation. */
export const V1_ERROR_STATUSES = [400, 401, 429, 500] as const;
/** v2's statuses: spec 7.5 and its extra cases, plus 429 from the rate limits of spec 8. */
export const V2_ERROR_STATUSES = [400, 401, 404, 409, 422, 429, 500, 503] as const;
export type V1ErrorStatus = (typeof V1_ERROR_STATUSES)[number];
export type V2ErrorStatus = (typeof V2_ERROR_STATUSES)[number];

/** The v2 `error.code` values (spec 7.5), each with the only status it comes with. */
export const V2_ERROR_CODE_STATUS = {
  IDEMPOTENCY_KEY_REQUIRED: 400,
  INVALID_IDEMPOTENCY_KEY: 400,
  IDEMPOTENCY_IN_FLIGHT: 409,
  IDEMPOTENCY_MISMATCH: 422,
  IDEMPOTENCY_SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<string, V2ErrorStatus>;
export type V2ErrorCode = keyof typeof V2_ERROR_CODE_STATUS;
const V2_ERROR_CODES = Object.keys(V2_ERROR_CODE_STATUS) as [V2ErrorCode, ...V2ErrorCode[]];

/** What a v1 client gets: the bare envelope `{status: 'error', message}` under this status. */
export interface V1ErrorAnswer {
  readonly status: V1ErrorStatus;
  readonly message: string;
}

/** What a v2 client gets: `{status: 'error', message}`, plus `error: {code, details}` when `error` is set. */
export interface V2ErrorAnswer {
  readonly status: V2ErrorStatus;
  readonly message: string;
  readonly error?: { readonly code: V2ErrorCode; readonly details: string };
}

interface AnswerOf {
  v1: V1ErrorAnswer;
  v2: V2ErrorAnswer;
}
export type LegacyErrorAnswer<G extends LegacyGeneration> = AnswerOf[G];

/** Every row says where it comes from: `spec` (a row of 7.5/7.6, 4.4 or 9) or `closest` (our choice), and why. */
export interface ErrorRowDocs {
  readonly basis: 'spec' | 'closest';
  readonly note: string;
}

export type LegacyErrorRow<G extends LegacyGeneration> = LegacyErrorAnswer<G> &
  ErrorRowDocs & {
    /** Operations whose answer for this code differs (spec 7.5's extra cases). */
    readonly byOperation?: Partial<Record<LegacyOperation<G>, LegacyErrorAnswer<G>>>;
  };

export interface LegacyErrorTables<G extends LegacyGeneration> {
  /** One row for each of the catalog's codes. */
  readonly byCode: Readonly<Record<ErrorCode, LegacyErrorRow<G>>>;
  /** For a code newer than our catalog (spec 7.1: codes are an open vocabulary), by its v3 `type`;
   * an unknown type counts as INTERNAL_ERROR, as spec 7.1 tells clients. */
  readonly byType: Readonly<Record<ErrorType, LegacyErrorAnswer<G> & ErrorRowDocs>>;
}

export type V1ErrorTables = LegacyErrorTables<'v1'>;
export type V2ErrorTables = LegacyErrorTables<'v2'>;

const text = z.string().refine((value) => value.trim().length > 0, 'must not be empty');

function answerShape(generation: LegacyGeneration) {
  return generation === 'v1'
    ? { status: z.literal(V1_ERROR_STATUSES, { error: `must be one of v1's statuses ${V1_ERROR_STATUSES.join(', ')}` }), message: text }
    : {
        status: z.literal(V2_ERROR_STATUSES, { error: `must be one of v2's statuses ${V2_ERROR_STATUSES.join(', ')}` }),
        message: text,
        error: z.strictObject({ code: z.enum(V2_ERROR_CODES), details: text }).optional(),
      };
}

const docsShape = { basis: z.enum(['spec', 'closest']), note: text };

function schemasFor(generation: LegacyGeneration) {
  const answer = z.strictObject(answerShape(generation));
  const operations = z.enum(LEGACY_OPERATIONS[generation] as unknown as [string, ...string[]]);
  return {
    row: z.strictObject({ ...answerShape(generation), ...docsShape, byOperation: z.partialRecord(operations, answer).optional() }),
    fallback: z.strictObject({ ...answerShape(generation), ...docsShape }),
  };
}

/** v2's `error.code` only ever comes with its own status (IDEMPOTENCY_IN_FLIGHT is always 409). */
function codeStatusProblems(where: string, answer: { readonly status: number; readonly error?: unknown }): string[] {
  const code = (answer.error as { code?: V2ErrorCode } | undefined)?.code;
  if (code === undefined) return [];
  const expected = V2_ERROR_CODE_STATUS[code];
  return answer.status === expected ? [] : [`${where}: error.code ${code} goes with status ${expected}, not ${answer.status}`];
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
 * Validates the error tables of a generation, as loaded (unknown input), and returns them typed.
 * Throws LegacyMappingError listing every problem. `codes` is the catalog's list; tests pass
 * their own to prove the check.
 */
export function validateErrorTables<G extends LegacyGeneration>(
  generation: G,
  tables: unknown,
  name = `mappings/errors.${generation}`,
  codes: readonly string[] = ERROR_CODES,
): LegacyErrorTables<G> {
  const outer = tablesShape.safeParse(tables);
  if (!outer.success) throw new LegacyMappingError(name, describeIssues('', outer.error.issues));
  const { byCode, byType } = outer.data;
  const schemas = schemasFor(generation);
  const problems = [...keyProblems('byCode', Object.keys(byCode), codes, 'v3 error code'), ...keyProblems('byType', Object.keys(byType), ERROR_TYPES, 'v3 error type')];

  for (const [code, row] of Object.entries(byCode)) {
    if (!codes.includes(code)) continue;
    const parsed = schemas.row.safeParse(row);
    if (!parsed.success) {
      problems.push(...describeIssues(`byCode.${code}`, parsed.error.issues));
      continue;
    }
    problems.push(...codeStatusProblems(`byCode.${code}`, parsed.data));
    const byOperation: Record<string, { readonly status: number; readonly error?: unknown } | undefined> = parsed.data.byOperation ?? {};
    for (const [operation, answer] of Object.entries(byOperation)) {
      if (answer) problems.push(...codeStatusProblems(`byCode.${code}.byOperation.${operation}`, answer));
    }
  }
  for (const [type, row] of Object.entries(byType)) {
    if (!(ERROR_TYPES as readonly string[]).includes(type)) continue;
    const parsed = schemas.fallback.safeParse(row);
    if (!parsed.success) problems.push(...describeIssues(`byType.${type}`, parsed.error.issues));
    else problems.push(...codeStatusProblems(`byType.${type}`, parsed.data));
  }
  if (problems.length > 0) throw new LegacyMappingError(name, problems);
  return tables as LegacyErrorTables<G>;
}

function answerOnly<G extends LegacyGeneration>(row: LegacyErrorAnswer<G>): LegacyErrorAnswer<G> {
  const { status, message } = row;
  const error = (row as V2ErrorAnswer).error;
  return (error === undefined ? { status, message } : { status, message, error: { code: error.code, details: error.details } }) as LegacyErrorAnswer<G>;
}

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
    const special = operation === undefined ? undefined : (row.byOperation as Partial<Record<string, LegacyErrorAnswer<G>>> | undefined)?.[operation];
    return answerOnly(special ?? row);
  }
  const type = error.type !== undefined && (ERROR_TYPES as readonly string[]).includes(error.type) ? (error.type as ErrorType) : 'INTERNAL_ERROR';
  return answerOnly(tables.byType[type]);
}

export interface LegacyErrorBody {
  readonly status: 'error';
  readonly message: string;
  readonly error?: { readonly code: V2ErrorCode; readonly details: string };
}

/** The body a legacy client reads (spec 7.5, 7.6). */
export function legacyErrorBody(answer: V1ErrorAnswer | V2ErrorAnswer): LegacyErrorBody {
  const error = 'error' in answer ? answer.error : undefined;
  return error === undefined ? { status: 'error', message: answer.message } : { status: 'error', message: answer.message, error: { code: error.code, details: error.details } };
}
