/**
 * Two answers to one legacy request compared (the shadow mode's comparison), by the semantic
 * rules of the comparison tools (legacy-fields.ts, legacy-values.ts): per normalised path, the same when sameLegacyValue says so
 * for the declared type (a path the declarations do not type compares as its JSON text); a path
 * one answer has and the other lacks differs; list elements are matched by `id` where every
 * element of both lists has one, else by position.
 */
import { isLosslessNumber } from 'lossless-json';

import { isPlainObject, joinPath, legacyElementId, type LegacyFieldIndex, legacyLeaves } from './legacy-fields.js';
import { legacyValueText, parseLegacyAnswer, sameLegacyValue } from './legacy-values.js';

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

/** The leaves of a body by a key that names the same element in both answers. */
function leavesOf(body: unknown, index: LegacyFieldIndex, byId: (path: string) => boolean): Map<string, Leaf> {
  return new Map(legacyLeaves(body, index, byId).map((leaf) => [leaf.path, leaf]));
}

/** The normalised paths of the lists whose every element, in both bodies, has an id (the ids unique in each). */
function idListsOf(bodies: readonly unknown[]): (path: string) => boolean {
  const verdicts = new Map<string, boolean>();
  const visit = (value: unknown, normalized: string): void => {
    if (Array.isArray(value)) {
      const ids = value.map(legacyElementId);
      const usable = ids.every((id) => id !== null) && new Set(ids).size === ids.length;
      verdicts.set(normalized, (verdicts.get(normalized) ?? true) && usable);
      for (const element of value) visit(element, `${normalized}[]`);
    } else if (isPlainObject(value)) {
      for (const [key, child] of Object.entries(value)) visit(child, joinPath(normalized, key));
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
  const byId = idListsOf([legacy, gateway]);
  const left = leavesOf(legacy, index, byId);
  const right = leavesOf(gateway, index, byId);
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
