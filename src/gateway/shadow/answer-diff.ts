/**
 * The shadow mode's comparison of two answers to one legacy request, by the semantic rules of
 * the comparison tools (../compare/): per normalised path, the same when sameLegacyValue says so
 * for the declared type (a path the declarations do not type compares as its JSON text); a path
 * one answer has and the other lacks differs; list elements are matched by `id` where every
 * element of both lists has one, else by position.
 */
import { isLosslessNumber } from 'lossless-json';

import { type LegacyFieldIndex } from '../compare/legacy-fields.js';
import { legacyValueText, parseLegacyAnswer, sameLegacyValue } from '../compare/legacy-values.js';

/** An answer as the client saw it: its status and body text. */
export interface AnswerText {
  readonly status: number;
  readonly body: string;
}

/** One path where two answers differ, with the values at one place it does (as JSON text; `(absent)` where missing). */
export interface FieldDifference {
  /** Normalised: `data[].amount`; `(status)` for the HTTP status. */
  readonly path: string;
  /** Where, concretely: `data[id=01a2...].amount`, `data[3].amount`. */
  readonly at: string;
  readonly legacy: string;
  readonly gateway: string;
}

export type Comparison =
  | { readonly comparable: true; readonly differences: readonly FieldDifference[] }
  | { readonly comparable: false; readonly reason: string };

/** The path that holds the HTTP status in a comparison. */
export const STATUS_PATH = '(status)';

interface Leaf {
  readonly normalized: string;
  readonly value: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype
  );
}

function join(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}

/** Per index, computed once: every mirrored read of an operation compares on the same one. */
const prefixesOf = new WeakMap<LegacyFieldIndex, ReadonlySet<string>>();

/** Every prefix of every typed path, to tell a data-chosen key (`*`) from a declared one. */
function knownPrefixes(index: LegacyFieldIndex): ReadonlySet<string> {
  let known = prefixesOf.get(index);
  if (known === undefined) {
    const prefixes = new Set<string>();
    for (const path of index.keys()) {
      const parts = path.split('.');
      for (let end = 1; end <= parts.length; end += 1) prefixes.add(parts.slice(0, end).join('.'));
    }
    known = prefixes;
    prefixesOf.set(index, known);
  }
  return known;
}

/** The id that matches an element across two lists; null when it has none. */
function idOf(element: unknown): string | null {
  if (!isObject(element)) return null;
  const id = element.id;
  return typeof id === 'string' && id !== '' ? id.toLowerCase() : null;
}

/** The leaves of a body by a key that names the same element in both answers. */
function leavesOf(body: unknown, known: ReadonlySet<string>, matchById: (path: string) => boolean): Map<string, Leaf> {
  const leaves = new Map<string, Leaf>();
  const walk = (value: unknown, at: string, normalized: string): void => {
    if (Array.isArray(value)) {
      const byId = matchById(normalized);
      value.forEach((element, position) =>
        walk(element, `${at}[${byId ? `id=${idOf(element)!}` : position}]`, `${normalized}[]`),
      );
    } else if (isObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        const named = join(normalized, key);
        const wildcard = join(normalized, '*');
        walk(child, join(at, key), !known.has(named) && known.has(wildcard) ? wildcard : named);
      }
    } else {
      leaves.set(at, { normalized, value });
    }
  };
  walk(body, '', '');
  return leaves;
}

/** The normalised paths of the lists whose every element, in both bodies, has an id (the ids unique in each). */
function idListsOf(bodies: readonly unknown[]): (path: string) => boolean {
  const verdicts = new Map<string, boolean>();
  const visit = (value: unknown, normalized: string): void => {
    if (Array.isArray(value)) {
      const ids = value.map(idOf);
      const usable = ids.every((id) => id !== null) && new Set(ids).size === ids.length;
      verdicts.set(normalized, (verdicts.get(normalized) ?? true) && usable);
      for (const element of value) visit(element, `${normalized}[]`);
    } else if (isObject(value)) {
      for (const [key, child] of Object.entries(value)) visit(child, join(normalized, key));
    }
  };
  for (const body of bodies) visit(body, '');
  return (path) => verdicts.get(path) === true;
}

/** Whether two leaf values mean the same, by the path's declared type. */
function sameValue(index: LegacyFieldIndex, path: string, a: unknown, b: unknown): boolean {
  // The same text is the same value whatever the type; most leaves of two agreeing answers are.
  if (a === b || (isLosslessNumber(a) && isLosslessNumber(b) && a.value === b.value)) return true;
  const info = index.get(path);
  if (info !== undefined) return sameLegacyValue(info.type, a, b);
  return legacyValueText(a) === legacyValueText(b);
}

/** The differences between two parsed bodies, one per concrete place. */
function bodyDifferences(index: LegacyFieldIndex, legacy: unknown, gateway: unknown): FieldDifference[] {
  const known = knownPrefixes(index);
  const byId = idListsOf([legacy, gateway]);
  const left = leavesOf(legacy, known, byId);
  const right = leavesOf(gateway, known, byId);
  const differences: FieldDifference[] = [];
  for (const [at, leaf] of left) {
    const other = right.get(at);
    if (other === undefined)
      differences.push({
        path: leaf.normalized,
        at,
        legacy: legacyValueText(leaf.value),
        gateway: legacyValueText(undefined),
      });
    else if (!sameValue(index, leaf.normalized, leaf.value, other.value))
      differences.push({
        path: leaf.normalized,
        at,
        legacy: legacyValueText(leaf.value),
        gateway: legacyValueText(other.value),
      });
  }
  for (const [at, leaf] of right) {
    if (!left.has(at))
      differences.push({
        path: leaf.normalized,
        at,
        legacy: legacyValueText(undefined),
        gateway: legacyValueText(leaf.value),
      });
  }
  return differences;
}

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseLegacyAnswer(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * The legacy service's answer against the gateway's. A legacy answer that is a 5xx or not JSON
 * says nothing about the translation: not comparable. Different statuses are one difference, at
 * `(status)`, and the bodies are then not compared field by field (an error body against a
 * success body would list every field).
 */
export function compareAnswers(index: LegacyFieldIndex, legacy: AnswerText, gateway: AnswerText): Comparison {
  if (legacy.status >= 500) return { comparable: false, reason: `the legacy service answered ${legacy.status}` };
  // The same bytes as the gateway's answer (always JSON) are the same answer.
  if (legacy.status === gateway.status && legacy.body === gateway.body) return { comparable: true, differences: [] };
  const legacyBody = parse(legacy.body);
  if (!legacyBody.ok) return { comparable: false, reason: 'the legacy answer is not JSON' };
  if (legacy.status !== gateway.status) {
    return {
      comparable: true,
      differences: [
        { path: STATUS_PATH, at: STATUS_PATH, legacy: String(legacy.status), gateway: String(gateway.status) },
      ],
    };
  }
  const gatewayBody = parse(gateway.body);
  if (!gatewayBody.ok) return { comparable: false, reason: 'the gateway answer is not JSON' };
  return { comparable: true, differences: bodyDifferences(index, legacyBody.value, gatewayBody.value) };
}

/** The normalised paths at which two translations of one request differ (their noise). */
export function differingPaths(index: LegacyFieldIndex, first: AnswerText, second: AnswerText): ReadonlySet<string> {
  if (first.status !== second.status) return new Set([STATUS_PATH]);
  const a = parse(first.body);
  const b = parse(second.body);
  if (!a.ok || !b.ok) return new Set();
  return new Set(bodyDifferences(index, a.value, b.value).map((difference) => difference.path));
}
