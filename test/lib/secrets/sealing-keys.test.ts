/**
 * Sealing keys as an operator writes them: a list or a file, base64 or base64url, and for every
 * mistake a message that says how to fix it and shows nothing of any key.
 */
import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { keyIdOf } from '../../../src/lib/secrets/sealing-keyring.js';
import {
  generateSealingKey,
  keyEntriesOfFile,
  keyEntriesOfList,
  keyFileText,
  keyringOf,
} from '../../../src/lib/secrets/sealing-keys.js';

/** The keyring's key ids for a list, or its problems. */
function ofList(text: string): readonly string[] | { problems: readonly string[] } {
  const { entries, problems } = keyEntriesOfList(text);
  if (problems.length > 0) return { problems };
  const made = keyringOf(entries);
  return 'keyring' in made ? made.keyring.keyIds : { problems: made.problems };
}

function problemsOf(text: string): readonly string[] {
  const made = ofList(text);
  if (!('problems' in made)) throw new Error(`accepted ${text}`);
  return made.problems;
}

describe('a key list', () => {
  const key = randomBytes(32);

  it('takes a key in base64url (43 characters) or base64, with or without its padding, the first sealing', () => {
    const other = randomBytes(32);
    expect(generateSealingKey()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateSealingKey()).not.toBe(generateSealingKey());
    for (const written of [
      key.toString('base64url'),
      key.toString('base64'),
      key.toString('base64').replace(/=+$/, ''),
      ` ${key.toString('base64url')} `,
    ])
      expect(ofList(written)).toEqual([keyIdOf(key)]);
    expect(ofList(`${other.toString('base64')}, ${key.toString('base64url')}`)).toEqual([keyIdOf(other), keyIdOf(key)]);
  });

  it('refuses each mistake saying what a key is, without showing any part of it', () => {
    const short = randomBytes(16).toString('base64url');
    const long = randomBytes(48).toString('base64');
    const mixed = `+${key.toString('base64url').slice(1, 42)}_`;
    const spaced = `${key.toString('base64url').slice(0, 20)} ${key.toString('base64url').slice(20)}`;
    const cases: [string, RegExp][] = [
      [
        short,
        /^key 1 is 16 bytes \(22 characters\); a key is 32 random bytes in base64 or base64url \(43 characters, such as `fxgate secrets generate-key` prints\)$/,
      ],
      [long, /^key 1 is 48 bytes \(64 characters\); a key is 32 random bytes/],
      [mixed, /^key 1 is not base64 or base64url; a key is 32 random bytes/],
      [spaced, /^key 1 is not base64 or base64url/],
      [`${key.toString('base64url')},`, /^key 2 is empty; separate the keys with single commas$/],
      [`${key.toString('base64url').slice(0, 42)}B`, /^key 1 is not well-formed base64 or base64url/],
    ];
    for (const [written, message] of cases) {
      const found = problemsOf(written);
      expect(found, written).toHaveLength(1);
      expect(found[0]).toMatch(message);
      for (const part of written.split(/[\s,]+/).filter((piece) => piece.length >= 8))
        expect(found[0]).not.toContain(part.slice(0, 8));
    }
  });

  it('refuses a key given twice, in either alphabet, naming both places', () => {
    const other = randomBytes(32).toString('base64url');
    expect(problemsOf(`${key.toString('base64url')},${other},${key.toString('base64')}`)).toEqual([
      'key 3 is the same key as key 1; give each key once',
    ]);
  });
});

describe('a key file', () => {
  it('reads one key a line, the first sealing, skipping blank lines and # comments, naming lines in its messages', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const text = `\uFEFF# keys of the deployment\n\n${a.toString('base64url')}  # new, seals\r\n   \n${b.toString('base64')}\n# the end\n`;
    const entries = keyEntriesOfFile(text, '/etc/fxgate/secrets.key');
    expect(entries.map((entry) => entry.label)).toEqual([
      'line 3 of /etc/fxgate/secrets.key',
      'line 5 of /etc/fxgate/secrets.key',
    ]);
    const made = keyringOf(entries);
    expect('keyring' in made && made.keyring.keyIds).toEqual([keyIdOf(a), keyIdOf(b)]);
    const bad = keyringOf(keyEntriesOfFile(`# one\nnot a key\n`, 'k.txt'));
    expect(bad).toEqual({
      problems: [expect.stringMatching(/^line 2 of k\.txt is not base64 or base64url; a key is 32 random bytes/)],
    });
    expect(keyringOf(keyEntriesOfFile('# nothing here\n\n', 'k.txt'))).toEqual({ problems: ['holds no key'] });
  });

  it('is written as it is read: the comment, then the keys', () => {
    const keys = [generateSealingKey(), generateSealingKey()];
    const text = keyFileText(keys, 'line one\nline two');
    expect(text.split('\n').slice(0, 2)).toEqual(['# line one', '# line two']);
    expect(keyEntriesOfFile(text, 'f').map((entry) => entry.text)).toEqual(keys);
  });
});
