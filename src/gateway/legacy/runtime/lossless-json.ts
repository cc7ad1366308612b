/**
 * Legacy JSON, read and written without losing a digit (money is never a JS number:
 * docs/contract.md#types-amounts).
 *
 * Reading: the raw request text is parsed with lossless-json, so every JSON number arrives as
 * its own text. Numbers at the mapping's amount paths become canonical decimal strings through
 * Decimal (`1e-7` -> "0.0000001", `1E+3` -> "1000", `-0` -> "0", 30 digits stay 30 digits),
 * ready for v3, whose amounts are strings. Every other number becomes a JS number when its exact
 * value is a safe integer (page sizes, validity seconds) and otherwise stays a LosslessNumber,
 * which no request schema accepts as a number or a string: parsing never guesses.
 *
 * Writing: amounts are LegacyAmount values (decimal text the record builder marked as a number)
 * and are written as JSON numbers with exactly their digits (`12345678901234567890.10`, never in
 * exponent notation); any other number must be a safe integer, so a float cannot slip into a
 * legacy answer unnoticed.
 */
import { isLosslessNumber, parse } from 'lossless-json';

import { LegacyJsonParseError, LegacyJsonWriteError } from '../../../lib/errors/internal-errors.js';
import { findKeyProblem } from '../../../lib/json/strict-json.js';
import { Decimal, DECIMAL_PATTERN, formatDecimal } from '../../../lib/money.js';
import {
  type ActivePaths,
  compileJsonPaths,
  endsHere,
  intoElement,
  intoKey,
  JsonLocation,
} from '../declarations/json-paths.js';

/** Bounds on one legacy amount, so `1e999999` cannot become a million digits of text. */
export const LEGACY_NUMBER_LIMITS = {
  integerDigits: 64,
  fractionDigits: 64,
  /** Exponents with more digits than this are refused before Decimal sees them (it would
   * silently round 1e-2000000000 to 0). */
  exponentDigits: 4,
} as const;

/** Nesting depth of a legacy body, read or written (legacy bodies are a few levels deep; a cycle
 * in an answer being built would otherwise recurse until the stack overflows). */
export const LEGACY_JSON_MAX_DEPTH = 64;

/** A JSON number's grammar (RFC 8259), split into sign, integer, fraction and exponent. */
const JSON_NUMBER = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?)([0-9]+))?$/;

/**
 * The exact value of a JSON number's text as a canonical decimal string (no exponent, no
 * trailing fractional zeros, `-0` is "0"). Throws LegacyJsonParseError on anything that is not a
 * JSON number or lies outside LEGACY_NUMBER_LIMITS. Never goes through a JS number.
 */
export function jsonNumberToDecimalString(text: string, location = ''): string {
  const match = JSON_NUMBER.exec(text);
  if (!match)
    throw new LegacyJsonParseError(
      'INVALID_NUMBER',
      location,
      `not a JSON number: ${JSON.stringify(text.slice(0, 64))}`,
    );
  const [, , integer, fraction = '', , exponent = ''] = match;
  if (/^0*$/.test(integer! + fraction)) return '0';
  if (exponent.replace(/^0+/, '').length > LEGACY_NUMBER_LIMITS.exponentDigits) {
    throw new LegacyJsonParseError(
      'NUMBER_OUT_OF_RANGE',
      location,
      `exponent too large in ${JSON.stringify(text.slice(0, 64))}`,
    );
  }
  const value = new Decimal(text);
  if (!value.isFinite())
    throw new LegacyJsonParseError('NUMBER_OUT_OF_RANGE', location, `not finite: ${JSON.stringify(text.slice(0, 64))}`);
  const integerDigits = Math.max((value.e ?? 0) + 1, 1);
  const fractionDigits = value.decimalPlaces() ?? 0;
  if (integerDigits > LEGACY_NUMBER_LIMITS.integerDigits || fractionDigits > LEGACY_NUMBER_LIMITS.fractionDigits) {
    throw new LegacyJsonParseError(
      'NUMBER_OUT_OF_RANGE',
      location,
      `more than ${LEGACY_NUMBER_LIMITS.integerDigits} integer or ${LEGACY_NUMBER_LIMITS.fractionDigits} fractional digits`,
    );
  }
  return formatDecimal(value);
}

/** Exact legacy number -> Decimal, for callers that want the value rather than its text. */
export function jsonNumberToDecimal(text: string, location = ''): Decimal {
  return new Decimal(jsonNumberToDecimalString(text, location));
}

/** Own enumerable properties only; `__proto__` stays an ordinary key (lossless-json keeps it so). */
function entriesOf(object: object): [string, unknown][] {
  return Object.keys(object).map((key) => [key, (object as Record<string, unknown>)[key]]);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function reviveNode(node: unknown, active: ActivePaths, at: JsonLocation, depth: number): unknown {
  if (depth > LEGACY_JSON_MAX_DEPTH)
    throw new LegacyJsonParseError('TOO_DEEP', at.toString(), `nested deeper than ${LEGACY_JSON_MAX_DEPTH} levels`);
  if (isLosslessNumber(node)) {
    if (endsHere(active)) return jsonNumberToDecimalString(node.value, at.toString());
    const exact = jsonNumberToDecimalOrNull(node.value);
    return exact !== null && exact.isInteger() && exact.abs().lte(Number.MAX_SAFE_INTEGER)
      ? Number(formatDecimal(exact))
      : node;
  }
  if (Array.isArray(node)) {
    const next = intoElement(active);
    return node.map((element, index) => within(at, index, () => reviveNode(element, next, at, depth + 1)));
  }
  if (isPlainObject(node)) {
    return Object.fromEntries(
      entriesOf(node).map(([key, value]) => [
        key,
        within(at, key, () => reviveNode(value, intoKey(active, key), at, depth + 1)),
      ]),
    );
  }
  return node;
}

/** Runs `walk` one step deeper in the body. */
function within<T>(at: JsonLocation, step: string | number, walk: () => T): T {
  at.enter(step);
  try {
    return walk();
  } finally {
    at.leave();
  }
}

function jsonNumberToDecimalOrNull(text: string): Decimal | null {
  try {
    return jsonNumberToDecimal(text);
  } catch {
    return null;
  }
}

/** The key scan reports repeats, so the parser keeps the first value rather than throw its own error. */
const KEEP_FIRST = { onDuplicateKey: () => undefined } as const;

/**
 * Parses a legacy request body from its raw text. Numbers at `amountPaths` (see json-paths.ts)
 * become canonical decimal strings; other numbers become JS numbers when they are exactly safe
 * integers and otherwise stay LosslessNumber. A key repeated in one object, with the same value
 * or another, and a `__proto__` key are refused at the key's path, as v3 refuses them
 * (lib/json/strict-json.ts): two readers of the same body must not see two different requests.
 * Throws LegacyJsonParseError.
 */
export function parseLegacyJson(text: string, amountPaths: readonly string[] = []): unknown {
  const active = compileJsonPaths(amountPaths);
  let tree: unknown;
  try {
    tree = parse(text, null, KEEP_FIRST);
  } catch (error) {
    // SyntaxError from the grammar; RangeError from absurd nesting (stack depth).
    const detail = error instanceof Error ? error.message : String(error);
    throw new LegacyJsonParseError('MALFORMED_JSON', '', detail, { cause: error });
  }
  // lossless-json calls onDuplicateKey only for a repeat with another value: the scan finds every one.
  const problem = typeof tree === 'object' && tree !== null ? findKeyProblem(text) : null;
  if (problem !== null)
    throw new LegacyJsonParseError(
      problem.reason === 'duplicate_key' ? 'DUPLICATE_KEY' : 'FORBIDDEN_KEY',
      problem.path,
      problem.message,
    );
  return reviveNode(tree, active, new JsonLocation(), 0);
}

/**
 * An amount in a legacy answer: decimal text (as v3 wrote it) to be written as a JSON number with
 * exactly these digits ("100.50" is written 100.50). Only a negative zero loses its sign.
 */
export class LegacyAmount {
  readonly digits: string;
  constructor(text: string) {
    if (!DECIMAL_PATTERN.test(text))
      throw new LegacyJsonWriteError(
        'NOT_A_DECIMAL_STRING',
        '',
        `expected a decimal string, got ${JSON.stringify(text.slice(0, 64))}`,
      );
    this.digits = /^-0(\.0+)?$/.test(text) ? text.slice(1) : text;
  }

  /** What JSON.stringify (logs, tests) makes of it: the same digits, as text. */
  toJSON(): string {
    return this.digits;
  }
}

/**
 * The JSON text of one node, written straight from the answer being built: no copy of the tree,
 * no number objects, no location strings unless an error needs one. Undefined for `undefined`
 * (an object's key that is left out). Arrays write a missing element as null.
 */
function writeNode(node: unknown, at: JsonLocation, depth: number): string | undefined {
  if (depth > LEGACY_JSON_MAX_DEPTH)
    throw new LegacyJsonWriteError(
      'TOO_DEEP',
      at.toString(),
      `nested deeper than ${LEGACY_JSON_MAX_DEPTH} levels (a cycle?)`,
    );
  if (node instanceof LegacyAmount) return node.digits;
  switch (typeof node) {
    case 'string':
      return JSON.stringify(node);
    case 'boolean':
      return node ? 'true' : 'false';
    case 'undefined':
      return undefined;
    case 'number':
      if (!Number.isSafeInteger(node))
        throw new LegacyJsonWriteError(
          'UNSAFE_NUMBER',
          at.toString(),
          `${node} is not a safe integer; amounts are written as LegacyAmount`,
        );
      return JSON.stringify(node);
    case 'object':
      break;
    default:
      throw new LegacyJsonWriteError('UNSUPPORTED_VALUE', at.toString(), `a ${typeof node} cannot be written as JSON`);
  }
  if (node === null) return 'null';
  if (Array.isArray(node)) {
    let text = '[';
    for (let index = 0; index < node.length; index += 1) {
      const element: unknown = node[index];
      at.enter(index);
      const written = writeNode(element === undefined ? null : element, at, depth + 1);
      at.leave();
      text += index === 0 ? `${written}` : `,${written}`;
    }
    return `${text}]`;
  }
  if (!isPlainObject(node))
    throw new LegacyJsonWriteError(
      'UNSUPPORTED_VALUE',
      at.toString(),
      `only plain objects are written, not ${node.constructor?.name ?? 'this object'}`,
    );
  let text = '{';
  for (const key of Object.keys(node)) {
    const value = node[key];
    if (value === undefined) continue;
    at.enter(key);
    const written = writeNode(value, at, depth + 1);
    at.leave();
    text += `${text.length === 1 ? '' : ','}${JSON.stringify(key)}:${written}`;
  }
  return `${text}}`;
}

/**
 * Serialises a legacy response body. LegacyAmount values are written as JSON numbers with
 * exactly their digits; every other number must be a safe integer. Throws LegacyJsonWriteError,
 * never writes `NaN`, `1e+21` or a rounded float.
 */
export function stringifyLegacyJson(value: unknown): string {
  const text = writeNode(value, new JsonLocation(), 0);
  if (text === undefined) throw new LegacyJsonWriteError('UNSUPPORTED_VALUE', '', 'nothing to write');
  return text;
}
