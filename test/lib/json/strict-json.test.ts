/**
 * The strict JSON parse (src/lib/json/strict-json.ts): JSON.parse's grammar and values, and a
 * refusal of every repeated key (same value or another, at any depth, however it is spelt) and of
 * every `__proto__` key, each at its path; a property test holds it to JSON.parse on whatever
 * JSON.stringify writes, and finds a repeat wherever one is put.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { StrictJsonError } from '../../../src/lib/errors/internal-errors.js';
import { findKeyProblem, parseStrictJson } from '../../../src/lib/json/strict-json.js';

function refusal(text: string): StrictJsonError {
  try {
    parseStrictJson(text);
  } catch (error) {
    if (error instanceof StrictJsonError) return error;
    throw error;
  }
  throw new Error(`${text} was accepted`);
}

describe('parseStrictJson', () => {
  it.each<[string, string, string]>([
    ['another value, at the top', '{"amount":"1.00","amount":"99999.00"}', 'amount'],
    ['the same value, at the top', '{"amount":"1.00","amount":"1.00"}', 'amount'],
    ['another value, nested', '{"metadata":{"note":"a","note":"b"}}', 'metadata.note'],
    ['the same value, nested', '{"metadata":{"note":"a","note":"a"}}', 'metadata.note'],
    ['in an object in an array', '{"items":[{"a":1},{"a":1,"b":2,"a":1}]}', 'items[1].a'],
    ['in an array at the top', '[{"a":1},{"a":1,"a":2}]', '[1].a'],
    ['spelt with an escape', '{"amount":"1","\\u0061mount":"2"}', 'amount'],
    ['spelt with escapes both times', '{"\\"q":1,"\\u0022q":2}', '"q'],
    ['after a value holding a quote and a brace', '{"a":"x\\"}{\\\\","b":{},"a":1}', 'a'],
    ['as the seventeenth key', `{${Array.from({ length: 16 }, (_, i) => `"k${i}":${i}`).join(',')},"k3":3}`, 'k3'],
    ['past the seventeenth key', `{${Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`).join(',')},"k39":3}`, 'k39'],
  ])('refuses a key repeated with %s at its path', (_name, text, path) => {
    const error = refusal(text);
    expect(error.reason).toBe('duplicate_key');
    expect(error.path).toBe(path);
    expect(error.toIssue()).toEqual({ path, code: 'duplicate_key', message: error.message });
    expect(error.message).toMatch(/appears more than once in the same object/);
  });

  it('takes the same key in sibling and nested objects, and a key that only looks repeated inside a string', () => {
    const text = '{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}],"c":"\\"a\\":1,\\"a\\":2","d\\\\":1,"d":2}';
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
  });

  it.each<[string, string]>([
    ['{"__proto__":{"polluted":true}}', '__proto__'],
    ['{"metadata":{"__proto__":"x"}}', 'metadata.__proto__'],
    ['[{"__proto\\u005f_":{}}]', '[0].__proto__'],
  ])('refuses the __proto__ key of %s, and nothing is polluted', (text, path) => {
    const error = refusal(text);
    expect([error.reason, error.path]).toEqual(['forbidden_key', path]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('takes "constructor" and "prototype", which are ordinary own keys to every reader', () => {
    expect(parseStrictJson('{"constructor":{"prototype":{"x":1}}}')).toEqual({ constructor: { prototype: { x: 1 } } });
  });

  it.each(['', '{', '{"a":1,}', "{'a':1}", '{"a":1} {}', 'NaN'])(
    'refuses malformed JSON %j as invalid_json',
    (text) => {
      const error = refusal(text);
      expect([error.reason, error.path, error.offset]).toEqual(['invalid_json', '', null]);
    },
  );

  it('reads scalars and deep nesting as JSON.parse does', () => {
    for (const text of ['1', '"x"', 'null', 'true', '[]', '{}', `${'[{"a":'.repeat(400)}1${'}]'.repeat(400)}`])
      expect(JSON.stringify(parseStrictJson(text))).toBe(JSON.stringify(JSON.parse(text)));
  });

  it('gives the offset of the repeated key', () => {
    const text = '{\n  "a": 1,\n  "a": 2\n}';
    expect(refusal(text).offset).toBe(text.lastIndexOf('"a"'));
  });
});

/** Any JSON value without a __proto__ key (JSON.stringify cannot write a repeated key). */
const jsonValue = fc.jsonValue().filter((value) => !JSON.stringify(value).includes('"__proto__"'));

describe('parseStrictJson against JSON.parse (property)', () => {
  it('reads what JSON.stringify writes exactly as JSON.parse does', () => {
    fc.assert(
      fc.property(jsonValue, fc.boolean(), (value, pretty) => {
        const text = pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
        expect(parseStrictJson(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('finds a key repeated in any object, with any value', () => {
    const withObject = fc
      .tuple(jsonValue, fc.dictionary(fc.string(), jsonValue, { minKeys: 1 }), fc.jsonValue(), fc.nat())
      .filter(([, object]) => !Object.keys(object).includes('__proto__'));
    fc.assert(
      fc.property(withObject, ([outer, object, repeatValue, pick]) => {
        const keys = Object.keys(object);
        const key = keys[pick % keys.length]!;
        const inner = `${JSON.stringify(object).slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(repeatValue)}}`;
        const text = `{"outer":${JSON.stringify(outer)},"here":[${inner}]}`;
        // The repeated key comes before anything its value holds, so it is the first problem; it stands where the `}` was.
        const at = text.indexOf(',"here":[') + ',"here":['.length + JSON.stringify(object).length;
        expect(findKeyProblem(text)).toMatchObject({ reason: 'duplicate_key', key, offset: at });
      }),
      { numRuns: 500 },
    );
  });
});
