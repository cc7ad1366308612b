/**
 * Paths into a legacy JSON body, as the endpoint tables name amount fields: keys joined by
 * dots, `[]` after a key for every element of that array, `*` for every value of an object.
 *
 *   amount                   the top-level `amount`
 *   data[].amount            `amount` of every element of the `data` array
 *   data.balances.*          every value of the `data.balances` object (keyed by currency)
 *
 * A path that does not reach a value (missing key, null, wrong type on the way) matches nothing;
 * whether a field is required is the request or response schema's business, not the path's.
 */

import { JsonPathSyntaxError } from '../../../lib/errors/internal-errors.js';

export type JsonPathStep =
  { readonly kind: 'key'; readonly key: string } | { readonly kind: 'each' } | { readonly kind: 'values' };

const SEGMENT = /^(?:(\*)|([A-Za-z_$][A-Za-z0-9_$]*))((?:\[\])*)$/;

export function parseJsonPath(path: string): readonly JsonPathStep[] {
  if (path.length === 0) throw new JsonPathSyntaxError(path);
  const steps: JsonPathStep[] = [];
  for (const segment of path.split('.')) {
    const match = SEGMENT.exec(segment);
    if (!match) throw new JsonPathSyntaxError(path);
    steps.push(match[1] === '*' ? { kind: 'values' } : { kind: 'key', key: match[2]! });
    for (let brackets = match[3]!.length / 2; brackets > 0; brackets -= 1) steps.push({ kind: 'each' });
  }
  return steps;
}

export function isJsonPath(path: string): boolean {
  try {
    parseJsonPath(path);
    return true;
  } catch {
    return false;
  }
}

/** One node of compiled paths: whether a path ends here, and where each kind of step leads. */
export interface JsonPathNode {
  ends: boolean;
  readonly keys: Map<string, JsonPathNode>;
  each: JsonPathNode | null;
  values: JsonPathNode | null;
}

/**
 * The paths still active at one node of a body, as nodes of their compiled trie. Walking a body
 * asks at every step which paths go on below; a trie answers without building path arrays, and
 * a subtree that no path reaches shares the one empty set.
 */
export type ActivePaths = readonly JsonPathNode[];

const NO_PATHS: ActivePaths = [];

function newNode(): JsonPathNode {
  return { ends: false, keys: new Map(), each: null, values: null };
}

/** A mapping's path list is compiled once: the tables are loaded at start-up and never change. */
const compiled = new WeakMap<readonly string[], ActivePaths>();

/** The trie of `paths`, as the active set at a body's root. Throws JsonPathSyntaxError. */
export function compileJsonPaths(paths: readonly string[]): ActivePaths {
  if (paths.length === 0) return NO_PATHS;
  const known = compiled.get(paths);
  if (known !== undefined) return known;
  const root = newNode();
  for (const path of paths) {
    let node = root;
    for (const step of parseJsonPath(path)) {
      if (step.kind === 'key') {
        let next = node.keys.get(step.key);
        if (next === undefined) {
          next = newNode();
          node.keys.set(step.key, next);
        }
        node = next;
      } else if (step.kind === 'each') {
        node = node.each ??= newNode();
      } else {
        node = node.values ??= newNode();
      }
    }
    node.ends = true;
  }
  const active = [root];
  compiled.set(paths, active);
  return active;
}

/** The paths active at an object's `key`: those naming the key, and those taking every value. */
export function intoKey(active: ActivePaths, key: string): ActivePaths {
  if (active.length === 0) return NO_PATHS;
  const next: JsonPathNode[] = [];
  for (const node of active) {
    const named = node.keys.get(key);
    if (named !== undefined) next.push(named);
    if (node.values !== null) next.push(node.values);
  }
  return next.length === 0 ? NO_PATHS : next;
}

/** The paths active at every element of an array. */
export function intoElement(active: ActivePaths): ActivePaths {
  if (active.length === 0) return NO_PATHS;
  const next: JsonPathNode[] = [];
  for (const node of active) if (node.each !== null) next.push(node.each);
  return next.length === 0 ? NO_PATHS : next;
}

/** True when one of the active paths ends at this node. */
export function endsHere(active: ActivePaths): boolean {
  for (const node of active) if (node.ends) return true;
  return false;
}

/**
 * Where a walk is in a body, kept as a stack of steps and rendered only when an error message
 * needs it (`data[2].amount`), so that a walk over a good body builds no location strings.
 */
export class JsonLocation {
  private readonly steps: (string | number)[] = [];

  enter(step: string | number): void {
    this.steps.push(step);
  }

  leave(): void {
    this.steps.pop();
  }

  toString(): string {
    let text = '';
    for (const step of this.steps)
      text = typeof step === 'number' ? `${text}[${step}]` : text === '' ? step : `${text}.${step}`;
    return text;
  }
}
