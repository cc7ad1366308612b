/**
 * One JSON text, one meaning. JSON.parse keeps the last of a repeated key, other parsers (a
 * proxy, a WAF, a log pipeline) the first, so `{"amount":"1.00","amount":"99999.00"}` is two
 * different requests to two readers; I-JSON (RFC 7493 2.3) says names MUST be unique. A `__proto__`
 * key is an own property to JSON.parse but the prototype to an object literal or an assignment,
 * and zod drops it from a record without a word: two meanings again. Both are refused here, in
 * every generation's bodies and every JSON file the CLI reads.
 *
 * parseStrictJson is JSON.parse (the grammar, at native speed) followed by one scan of the text
 * for its keys (findKeyProblem); the gateway's legacy bodies use lossless-json's grammar and the
 * same scan. Part of lib: it imports no part.
 */
import { StrictJsonError } from '../errors/internal-errors.js';
import { issuePath } from '../errors/validation-issues.js';

/** The one key whose meaning depends on the reader (an own property, or the prototype). */
export const FORBIDDEN_KEY = '__proto__';

/** A repeated or forbidden key of a text that is otherwise valid JSON. */
export interface KeyProblem {
  readonly reason: 'duplicate_key' | 'forbidden_key';
  /** The key's own path in the document, as validation issues write it: `metadata.note`, `items[2].amount`. */
  readonly path: string;
  readonly key: string;
  /** UTF-16 offset of the key's opening quote in the text. */
  readonly offset: number;
  /** What is wrong and how to fix it, for a client. */
  readonly message: string;
}

/** Parses JSON text, refusing a repeated key in any object and any `__proto__` key. Throws StrictJsonError. */
export function parseStrictJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new StrictJsonError('invalid_json', '', null, error instanceof Error ? error.message : 'malformed JSON', {
      cause: error,
    });
  }
  // Scalars have no keys; most bodies are objects, and the scan is what they cost.
  if (typeof value === 'object' && value !== null) {
    const problem = findKeyProblem(text);
    if (problem !== null) throw new StrictJsonError(problem.reason, problem.path, problem.offset, problem.message);
  }
  return value;
}

/** One open object or array on the way down to the current position. */
interface Frame {
  /** Keys seen so far; null for an array. */
  keys: string[] | Set<string> | null;
  /** The object's current key, or the array's current index. */
  step: string | number;
  /** In an object: whether the next string is a key. */
  expectKey: boolean;
}

/** Past this many keys an object's keys go into a Set; below it a list is cheaper to make and search. */
const KEY_LIST_LIMIT = 16;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** The offset of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes += 1;
    // An even run of backslashes escapes itself, not the quote.
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

function pathTo(stack: readonly Frame[]): string {
  return issuePath(stack.map((frame) => frame.step));
}

/**
 * The first repeated or `__proto__` key of `text`, in document order, or null. `text` must be
 * JSON another parser accepted: the scan knows strings and nesting only, and decodes a key only
 * when it has an escape (`"a"` and `"\u0061"` are one key).
 */
export function findKeyProblem(text: string): KeyProblem | null {
  const stack: Frame[] = [];
  let top: Frame | undefined;
  for (let at = 0; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      if (top !== undefined && top.expectKey) {
        const raw = text.slice(at + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        top.expectKey = false;
        top.step = key;
        if (key === FORBIDDEN_KEY)
          return {
            reason: 'forbidden_key',
            path: pathTo(stack),
            key,
            offset: at,
            message: `the key "${FORBIDDEN_KEY}" is not accepted: readers disagree on what it means; rename it`,
          };
        const keys = top.keys!;
        if (keys instanceof Set ? keys.has(key) : keys.includes(key))
          return {
            reason: 'duplicate_key',
            path: pathTo(stack),
            key,
            offset: at,
            message: `the key ${JSON.stringify(key)} appears more than once in the same object; send it once`,
          };
        if (keys instanceof Set) keys.add(key);
        else if (keys.length < KEY_LIST_LIMIT) keys.push(key);
        else top.keys = new Set([...keys, key]);
      }
      at = end;
    } else if (code === OPEN_BRACE) {
      top = { keys: [], step: '', expectKey: true };
      stack.push(top);
    } else if (code === OPEN_BRACKET) {
      top = { keys: null, step: 0, expectKey: false };
      stack.push(top);
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      stack.pop();
      top = stack[stack.length - 1];
    } else if (code === COMMA && top !== undefined) {
      if (top.keys === null) top.step = (top.step as number) + 1;
      else top.expectKey = true;
    }
  }
  return null;
}
