/**
 * What each field of a legacy answer is, read from the declarations: for every path of an
 * operation's success body (`data[].amount`, `data.quote.id`, `data.tradeLimits[].*.minTradeLimit`,
 * `meta.pagination.total`), its JSON type and where it comes from. Part of the comparison tools
 * of the migration (the generation diff and the shadow mode); it reads the legacy declarations and
 * touches nothing else.
 *
 * Paths are normalised: an array element is `[]`, a key of an object keyed by data (a currency of
 * `balances`, a pair of `tradeLimits`) is `*`.
 */
import type { EndpointMapping, LayoutNode } from '../legacy/declarations/endpoint-mappings.js';
import type { FieldType, LegacyField, Provenance, RecordTable } from '../legacy/declarations/record-shapes.js';

export type FieldOrigin =
  /** A field of a legacy record shape. */
  | { readonly kind: 'record'; readonly record: string; readonly field: string; readonly declaration: LegacyField }
  /** A value placed by the layout (`field` or `entries` nodes). */
  | { readonly kind: 'layout'; readonly node: LayoutNode & Provenance }
  /** The envelope every success body shares: status, message, pagination. */
  | { readonly kind: 'envelope'; readonly constant?: string; readonly reason: string };

export interface LegacyFieldInfo {
  readonly type: FieldType;
  readonly nullable: boolean;
  readonly origin: FieldOrigin;
}

export type LegacyFieldIndex = ReadonlyMap<string, LegacyFieldInfo>;

const PAGINATION_FIELDS = ['total', 'start', 'end', 'page', 'limit'] as const;

/** `prefix.key`, or `key` at the top. */
export function joinPath(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}

function indexNode(node: LayoutNode, path: string, records: RecordTable, index: Map<string, LegacyFieldInfo>): void {
  if ('object' in node) {
    for (const [key, child] of Object.entries(node.object)) indexNode(child, joinPath(path, key), records, index);
    return;
  }
  if ('field' in node) {
    index.set(path, { type: node.type, nullable: false, origin: { kind: 'layout', node } });
    return;
  }
  if ('entries' in node) {
    index.set(`${path}.*`, { type: node.type, nullable: false, origin: { kind: 'layout', node } });
    return;
  }
  const recordName = 'record' in node ? node.record : node.list;
  const shape = records[recordName]!;
  const base = 'record' in node ? path : 'keyedBy' in node ? `${path}[].*` : `${path}[]`;
  for (const [field, declaration] of Object.entries(shape.fields)) {
    index.set(joinPath(base, field), {
      type: declaration.type,
      nullable: declaration.nullable === true,
      origin: { kind: 'record', record: recordName, field, declaration },
    });
  }
}

/** Every path of an operation's success body, with its type and origin. */
export function legacyFieldIndex(mapping: EndpointMapping, records: RecordTable): LegacyFieldIndex {
  const index = new Map<string, LegacyFieldInfo>();
  index.set('status', {
    type: 'string',
    nullable: false,
    origin: { kind: 'envelope', constant: 'success', reason: 'Every success says so.' },
  });
  index.set('message', {
    type: 'string',
    nullable: false,
    origin: { kind: 'envelope', constant: mapping.response.message.text, reason: mapping.response.message.reason },
  });
  indexNode(mapping.response.data, 'data', records, index);
  for (const [key, node] of Object.entries(mapping.response.root ?? {})) indexNode(node, key, records, index);
  if (mapping.response.dataAlsoAtRoot) {
    for (const [path, info] of [...index]) if (path.startsWith('data.')) index.set(path.slice('data.'.length), info);
  }
  if (mapping.pagination === 'page-limit') {
    for (const field of PAGINATION_FIELDS) {
      index.set(`meta.pagination.${field}`, {
        type: 'integer',
        nullable: false,
        origin: { kind: 'envelope', reason: "The legacy page's position in the list, computed by the gateway." },
      });
    }
  }
  return index;
}

/** One value of a body, at its concrete path (`data[2].amount`) and its normalised one (`data[].amount`). */
export interface LegacyLeaf {
  readonly path: string;
  readonly normalized: string;
  readonly value: unknown;
}

/** A plain object of a parsed body (not an array, not a lossless number). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype
  );
}

/** Per index, computed once: every body of an operation is walked with the same one. */
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
export function legacyElementId(element: unknown): string | null {
  if (!isPlainObject(element)) return null;
  const id = element.id;
  return typeof id === 'string' && id !== '' ? id.toLowerCase() : null;
}

/**
 * Every leaf of a body (a value that is neither a plain object nor an array), with its paths. An
 * object key is normalised to `*` where the index knows `<prefix>.*` and not `<prefix>.<key>`. A
 * list element is named by its position, or by its id (`[id=...]`) in the lists `byId` names by
 * their normalised path.
 */
export function legacyLeaves(
  body: unknown,
  index: LegacyFieldIndex,
  byId: (normalized: string) => boolean = () => false,
): LegacyLeaf[] {
  const known = knownPrefixes(index);
  const leaves: LegacyLeaf[] = [];
  const walk = (value: unknown, path: string, normalized: string): void => {
    if (Array.isArray(value)) {
      const named = byId(normalized);
      value.forEach((element, position) =>
        walk(element, `${path}[${named ? `id=${legacyElementId(element)!}` : position}]`, `${normalized}[]`),
      );
    } else if (isPlainObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        const named = joinPath(normalized, key);
        const wildcard = joinPath(normalized, '*');
        walk(child, joinPath(path, key), !known.has(named) && known.has(wildcard) ? wildcard : named);
      }
    } else {
      leaves.push({ path, normalized, value });
    }
  };
  walk(body, '', '');
  return leaves;
}
