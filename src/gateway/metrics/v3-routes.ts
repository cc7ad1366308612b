/**
 * Which declared v3 operation a passthrough request names (legacy/v3-contract/operations.ts, the contract the
 * gateway knows v3 by), for a label that is the operation's declared `METHOD /path/:param`
 * rather than the path itself: ids and queries never become label values. Matched segment by
 * segment on the request target, without splitting it.
 */
import { V3_OPERATIONS, type V3Operation } from '../legacy/v3-contract/operations.js';

interface Template {
  readonly operation: V3Operation;
  /** The path's segments after the leading `/`; null for a `:param`. */
  readonly segments: readonly (string | null)[];
}

/** The end of the segment starting at `from`: the next `/`, `?` or the end of the target. */
function segmentEnd(url: string, from: number): number {
  for (let at = from; at < url.length; at++) {
    const code = url.charCodeAt(at);
    if (code === 47 /* / */ || code === 63 /* ? */) return at;
  }
  return url.length;
}

function matches(template: Template, url: string): boolean {
  let at = 0;
  for (const segment of template.segments) {
    if (url.charCodeAt(at) !== 47) return false;
    const start = at + 1;
    const end = segmentEnd(url, start);
    if (segment === null ? end === start : end - start !== segment.length || !url.startsWith(segment, start))
      return false;
    at = end;
  }
  // The whole path, and no more: a longer path or a trailing `/` names another operation.
  return at === url.length || url.charCodeAt(at) === 63;
}

export class V3OperationMatcher {
  /** Per method, templates by their number of segments. */
  private readonly byMethod = new Map<string, Template[][]>();

  constructor(operations: readonly V3Operation[] = V3_OPERATIONS) {
    for (const operation of operations) {
      const segments = operation.path
        .split('/')
        .slice(1)
        .map((segment) => (segment.startsWith(':') ? null : segment));
      const bySize = this.byMethod.get(operation.method) ?? [];
      (bySize[segments.length] ??= []).push({ operation, segments });
      this.byMethod.set(operation.method, bySize);
    }
  }

  /** The operation a method and request target (path and query) name; null when none does. A HEAD is its GET. */
  match(method: string, url: string): V3Operation | null {
    const bySize = this.byMethod.get(method === 'HEAD' ? 'GET' : method);
    if (bySize === undefined) return null;
    const templates = bySize[segmentCount(url)];
    if (templates === undefined) return null;
    for (const template of templates) if (matches(template, url)) return template.operation;
    return null;
  }
}

/** The number of `/`-separated segments of the target's path. */
function segmentCount(url: string): number {
  let count = 0;
  for (let at = 0; at < url.length; at++) {
    const code = url.charCodeAt(at);
    if (code === 63 /* ? */) break;
    if (code === 47 /* / */) count++;
  }
  return count;
}

/** The label value of a v3 operation: its declared method and path. */
export function v3OperationLabel(operation: V3Operation): string {
  return `${operation.method} ${operation.path}`;
}
