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

export type JsonPathStep = { readonly kind: 'key'; readonly key: string } | { readonly kind: 'each' } | { readonly kind: 'values' };

const SEGMENT = /^(?:(\*)|([A-Za-z_$][A-Za-z0-9_$]*))((?:\[\])*)$/;

export class JsonPathSyntaxError extends Error {
  readonly code = 'FXGATE_JSON_PATH_SYNTAX';
  constructor(readonly path: string) {
    super(`not a JSON path of the form key.key[].*: ${JSON.stringify(path)}`);
    this.name = 'JsonPathSyntaxError';
  }
}

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

/** The paths still active below one step: `key` into an object's `key`, or into an array element. */
export function stepInto(active: readonly (readonly JsonPathStep[])[], into: { readonly key: string } | 'element'): (readonly JsonPathStep[])[] {
  const next: (readonly JsonPathStep[])[] = [];
  for (const steps of active) {
    const first = steps[0];
    if (first === undefined) continue;
    const matches = into === 'element' ? first.kind === 'each' : first.kind === 'values' || (first.kind === 'key' && first.key === into.key);
    if (matches) next.push(steps.slice(1));
  }
  return next;
}

/** True when one of the active paths ends at this node. */
export function endsHere(active: readonly (readonly JsonPathStep[])[]): boolean {
  return active.some((steps) => steps.length === 0);
}

/** Renders the location of a node for error messages: `data[2].amount`. */
export function describeLocation(parent: string, into: { readonly key: string } | number): string {
  if (typeof into === 'number') return `${parent}[${into}]`;
  return parent === '' ? into.key : `${parent}.${into.key}`;
}
