/**
 * Text the database cannot store (src/lib/text.ts): U+0000 and unpaired UTF-16 surrogates are
 * found, with their index; everything else, other control characters and paired surrogates
 * (emoji) included, passes. The walker reports keys and values at the pipeline's issue paths.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { decodeUtf8, UNSTORABLE_TEXT_CODE, unstorableTextIssues, unstorableTextProblem } from '../../src/lib/text.js';

describe('unstorableTextProblem', () => {
  it.each([
    ['empty', ''],
    ['ASCII', 'Invoice 42'],
    ['tab, newline, carriage return', 'a\tb\nc\rd'],
    ['U+0001 and U+001F', '\u0001\u001f'],
    ['DEL and C1 controls', '\u007f\u0085\u009f'],
    ['an emoji (a surrogate pair)', '😀'],
    ['emoji back to back', '👩‍💻😀🇩🇪'],
    ['the first and last pairs', '\ud800\udc00\udbff\udfff'],
    ['U+FFFD and U+FFFF', '\ufffd\uffff'],
    ['accents and CJK', 'Müller 東京'],
    ['a backslash-u written out', '\\u0000'],
  ])('accepts %s', (_label, text) => {
    expect(unstorableTextProblem(text)).toBeNull();
  });

  it.each([
    ['NUL alone', '\u0000', 'nul', 0],
    ['NUL inside', 'ab\u0000cd', 'nul', 2],
    ['NUL at the end', 'abc\u0000', 'nul', 3],
    ['a lone high surrogate', '\ud800', 'unpaired_surrogate', 0],
    ['a lone low surrogate', '\udc00', 'unpaired_surrogate', 0],
    ['a high surrogate at the end', 'ab\udbff', 'unpaired_surrogate', 2],
    ['a high surrogate before a letter', '\ud83dx', 'unpaired_surrogate', 0],
    ['a low surrogate before a high one (reversed pair)', '\ude00\ud83d', 'unpaired_surrogate', 0],
    ['two high surrogates', '\ud83d\ud83d\ude00', 'unpaired_surrogate', 0],
    ['a low surrogate after a pair', '😀\ude00', 'unpaired_surrogate', 2],
    ['the first problem of several', 'a\udfffb\u0000', 'unpaired_surrogate', 1],
  ])('finds %s', (_label, text, kind, index) => {
    const problem = unstorableTextProblem(text);
    expect(problem).toMatchObject({ kind, index });
    expect(problem!.message).toContain(`at index ${index}`);
  });

  it('says what is wrong and how to fix it', () => {
    expect(unstorableTextProblem('a\u0000')!.message).toMatch(/NUL character \(U\+0000.*cannot be stored; remove it/);
    expect(unstorableTextProblem('\udc01')!.message).toMatch(
      /unpaired UTF-16 surrogate \(U\+DC01\).*send well-formed UTF-8/,
    );
  });

  it('refuses exactly what does not survive UTF-8 unchanged, and NUL', () => {
    const unit = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 3 }),
      fc.constantFrom('\u0000', '\u0001', '\t', '\ud800', '\udbff', '\udc00', '\udfff', '😀', 'a', 'é'),
    );
    fc.assert(
      fc.property(
        fc.array(unit, { maxLength: 12 }).map((parts) => parts.join('')),
        (text) => {
          const survives = Buffer.from(text, 'utf8').toString('utf8') === text;
          return (unstorableTextProblem(text) === null) === (survives && !text.includes('\u0000'));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('unstorableTextIssues', () => {
  const issue = (path: string, message: RegExp) => ({
    path,
    code: UNSTORABLE_TEXT_CODE,
    message: expect.stringMatching(message),
  });

  it('is empty for storable JSON of any shape', () => {
    expect(unstorableTextIssues({ a: 'x', b: [1, true, null, { c: '😀\t' }], d: { e: '' } })).toEqual([]);
    expect(unstorableTextIssues(undefined)).toEqual([]);
    expect(unstorableTextIssues(42)).toEqual([]);
  });

  it('names values and keys at their paths, a key as the key, in document order', () => {
    const body = {
      clientReferenceId: 'a\u0000',
      metadata: { 'k\u0000': 'fine', ok: '\ud800', 'both\udc00': '\u0000' },
      items: ['x', ['\udfff']],
    };
    expect(unstorableTextIssues(body)).toEqual([
      issue('clientReferenceId', /^contains the NUL/),
      issue('metadata.k\u0000', /^the key contains the NUL/),
      issue('metadata.ok', /^contains an unpaired UTF-16 surrogate \(U\+D800\)/),
      issue('metadata.both\udc00', /^the key contains an unpaired UTF-16 surrogate \(U\+DC00\)/),
      issue('metadata.both\udc00', /^contains the NUL/),
      issue('items[1][0]', /^contains an unpaired UTF-16 surrogate \(U\+DFFF\)/),
    ]);
  });

  it('starts from the path it is given', () => {
    expect(unstorableTextIssues('\u0000', ['clientReferenceId'])).toEqual([issue('clientReferenceId', /NUL/)]);
    expect(unstorableTextIssues('\u0000')).toEqual([issue('', /NUL/)]);
  });

  it('walks a deeply nested value without recursion', () => {
    const depth = 50_000;
    const text = `${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}`;
    const issues = unstorableTextIssues(JSON.parse(text));
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('[0]'.repeat(depth));
  });
});

describe('decodeUtf8', () => {
  it('decodes UTF-8 exactly, a byte-order mark kept for the JSON parser to refuse', () => {
    expect(decodeUtf8(Buffer.from('{"a":"é 😀"}'))).toBe('{"a":"é 😀"}');
    expect(decodeUtf8(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toBe('\ufeff{}');
    expect(decodeUtf8(Buffer.alloc(0))).toBe('');
  });

  it.each([
    ['a lone continuation byte', [0x80]],
    ['an invalid byte', [0xff]],
    ['a truncated sequence', [0xc3]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['an overlong encoding', [0xc0, 0xaf]],
  ])('refuses %s rather than replacing it with U+FFFD', (_name, bytes) => {
    expect(decodeUtf8(Buffer.from([0x61, ...bytes, 0x62]))).toBeNull();
  });
});
