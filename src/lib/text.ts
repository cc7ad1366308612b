/**
 * Text that can be parsed from JSON but not stored: U+0000 (PostgreSQL's text refuses it) and an
 * unpaired UTF-16 surrogate (a JSON escape such as "\ud800" alone, which has no UTF-8 encoding:
 * node would write U+FFFD in its place, silently changing the client's data). Every other
 * character is storable, other control characters (tab, newline, U+0001) included. Shared by the
 * core's v3 validation and the gateway's legacy bodies, so both refuse the same input.
 */
import { issuePath, type ValidationIssue } from './errors/validation-issues.js';

/** The issue code of a string that cannot be stored. */
export const UNSTORABLE_TEXT_CODE = 'invalid_text';

export interface TextProblem {
  readonly kind: 'nul' | 'unpaired_surrogate';
  /** Where, in UTF-16 code units from 0 (JavaScript string indices). */
  readonly index: number;
  /** What is wrong and how to fix it, for a client. */
  readonly message: string;
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
const hex = (unit: number) => `U+${unit.toString(16).toUpperCase().padStart(4, '0')}`;

/** The first character of `text` that cannot be stored, or null when all of it can. */
export function unstorableTextProblem(text: string): TextProblem | null {
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit === 0) {
      return {
        kind: 'nul',
        index,
        message: `contains the NUL character (U+0000, JSON "\\u0000") at index ${index}, which cannot be stored; remove it`,
      };
    }
    if (isHighSurrogate(unit) && isLowSurrogate(text.charCodeAt(index + 1))) {
      index += 1; // a pair: one character outside the BMP, such as an emoji
      continue;
    }
    if (isHighSurrogate(unit) || isLowSurrogate(unit)) {
      return {
        kind: 'unpaired_surrogate',
        index,
        message:
          `contains an unpaired UTF-16 surrogate (${hex(unit)}) at index ${index}, which is not a Unicode character and cannot be stored; ` +
          'send well-formed UTF-8, or escape a character outside the BMP as a high surrogate immediately followed by a low one (e.g. "\\ud83d\\ude00")',
      };
    }
  }
  return null;
}

/** A path as a chain to its parent, so that walking a deep value copies no arrays. */
interface PathNode {
  readonly part: PropertyKey;
  readonly parent: PathNode | null;
}

function pathOf(base: readonly PropertyKey[], node: PathNode | null): string {
  const parts: PropertyKey[] = [];
  for (let at = node; at !== null; at = at.parent) parts.push(at.part);
  return issuePath([...base, ...parts.reverse()]);
}

/**
 * One issue per string in a parsed JSON value that cannot be stored, object keys included, each
 * at the path of its key or value (`metadata.a`, `items[0]`), in document order. `path` is where
 * `value` itself sits. Iterative, so that deep nesting cannot exhaust the stack.
 */
export function unstorableTextIssues(value: unknown, path: readonly PropertyKey[] = []): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const report = (node: PathNode | null, message: string) =>
    issues.push({ path: pathOf(path, node), code: UNSTORABLE_TEXT_CODE, message });
  // A work list in reverse document order; a bad key's own issue is queued to come out before its value's.
  type Work =
    | { readonly value: unknown; readonly node: PathNode | null }
    | { readonly keyProblem: string; readonly node: PathNode };
  const pending: Work[] = [{ value, node: null }];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if ('keyProblem' in next) {
      report(next.node, `the key ${next.keyProblem}`);
      continue;
    }
    const current = next.value;
    if (typeof current === 'string') {
      const problem = unstorableTextProblem(current);
      if (problem) report(next.node, problem.message);
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index -= 1)
        pending.push({ value: current[index], node: { part: index, parent: next.node } });
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current);
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, inner] = entries[index]!;
        const node: PathNode = { part: key, parent: next.node };
        pending.push({ value: inner, node });
        const problem = unstorableTextProblem(key);
        if (problem) pending.push({ keyProblem: problem.message, node });
      }
    }
  }
  return issues;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** What a body that is not UTF-8 is told; decoding it leniently would store U+FFFD in its place. */
export const INVALID_UTF8_MESSAGE = 'the body is not valid UTF-8; send the JSON text encoded as UTF-8';

/** The bytes as UTF-8 text, or null when they are not valid UTF-8 (never a silent U+FFFD). */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return null;
  }
}
