/**
 * Sealing keys as an operator writes them: 32 random bytes in base64 or base64url, several in
 * FXGATE_SECRETS_KEY separated by commas, or one a line in a key file (blank lines and `#`
 * comments ignored). Every problem is described so that the operator can fix the value, and no
 * message ever repeats a key or any part of one. Shared library code: reads nothing itself.
 */
import { randomBytes } from 'node:crypto';

import { SEALING_KEY_BYTES, SealingKeyring } from './sealing-keyring.js';

/** A key written out: 43 characters of base64url. */
export function generateSealingKey(): string {
  return randomBytes(SEALING_KEY_BYTES).toString('base64url');
}

const HOW_TO_MAKE = `a key is ${SEALING_KEY_BYTES} random bytes in base64 or base64url (43 characters, such as \`fxgate secrets generate-key\` prints)`;

/** One alphabet or the other, with base64's padding at most: a mix is a damaged key. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** The key, or a problem about `label` that shows nothing of the text. */
function decodeKey(text: string, label: string): Buffer | string {
  if (!BASE64.test(text) && !BASE64URL.test(text)) return `${label} is not base64 or base64url; ${HOW_TO_MAKE}`;
  const key = Buffer.from(text, 'base64');
  if (key.length !== SEALING_KEY_BYTES)
    return `${label} is ${key.length} bytes (${text.length} characters); ${HOW_TO_MAKE}`;
  // Node decodes what it can and ignores the rest; the key must be exactly what was written.
  if (key.toString('base64url') !== text.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'))
    return `${label} is not well-formed base64 or base64url; ${HOW_TO_MAKE}`;
  return key;
}

export interface KeyEntry {
  readonly text: string;
  /** How a message names it: `key 2`, `line 3 of /etc/fxgate/secrets.key`. */
  readonly label: string;
}

/** The keyring of the entries, in order, or every problem found. */
export function keyringOf(entries: readonly KeyEntry[]): { keyring: SealingKeyring } | { problems: string[] } {
  const problems: string[] = [];
  const keys: Buffer[] = [];
  const seen = new Map<string, string>();
  for (const { text, label } of entries) {
    const decoded = decodeKey(text, label);
    if (typeof decoded === 'string') {
      problems.push(decoded);
      continue;
    }
    const canonical = decoded.toString('hex');
    const first = seen.get(canonical);
    if (first !== undefined) {
      problems.push(`${label} is the same key as ${first}; give each key once`);
      continue;
    }
    seen.set(canonical, label);
    keys.push(decoded);
  }
  if (problems.length > 0) return { problems };
  if (keys.length === 0) return { problems: ['holds no key'] };
  return { keyring: SealingKeyring.of(keys) };
}

/** FXGATE_SECRETS_KEY: keys separated by commas, the first sealing. */
export function keyEntriesOfList(text: string): { entries: KeyEntry[]; problems: string[] } {
  const parts = text.split(',').map((part) => part.trim());
  const problems: string[] = [];
  const entries: KeyEntry[] = [];
  parts.forEach((part, index) => {
    if (part === '') problems.push(`key ${index + 1} is empty; separate the keys with single commas`);
    else entries.push({ text: part, label: `key ${index + 1}` });
  });
  return { entries, problems };
}

/** A key file: one key a line, the first sealing; blank lines and everything from a `#` on are ignored. */
export function keyEntriesOfFile(text: string, path: string): KeyEntry[] {
  const entries: KeyEntry[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((line, index) => {
      // `#` is in neither alphabet, so it cannot be part of a key.
      const content = line.replace(/#.*$/, '').trim();
      if (content !== '') entries.push({ text: content, label: `line ${index + 1} of ${path}` });
    });
  return entries;
}

/** The text of a key file holding these keys, the first sealing. */
export function keyFileText(keys: readonly string[], comment: string): string {
  return `${comment
    .split('\n')
    .map((line) => `# ${line}`)
    .join('\n')}\n${keys.join('\n')}\n`;
}
