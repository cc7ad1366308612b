/**
 * The keyring: what goes into a row is never the secret, names the key that sealed it, opens only
 * with a keyring holding that key and only for the row it was sealed for, and any change to it is
 * refused. The former format opens only through openFormerSealed, for the upgrade.
 */
import { createHash, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';

import { describe, expect, it } from 'vitest';

import { SealedSecretError } from '../../../src/lib/errors/internal-errors.js';
import { keyIdOf, openFormerSealed, sealedKeyId, SealingKeyring } from '../../../src/lib/secrets/sealing-keyring.js';
import { sealFormer } from '../../support/former-sealing.js';

const SECRET = 'whsec_0Jx8oHq3nS2Qk7m2YbV1wZcT5rLpE9aFgD4uK6iN8sA';
const SEALED = /^v2\.([0-9a-f]{16})\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/;

describe('SealingKeyring', () => {
  const [a, b] = [randomBytes(32), randomBytes(32)];
  const keyringA = SealingKeyring.of([a]);

  it('seals to text naming its key, holding no trace of the secret, different each time, and opens it again', () => {
    const first = keyringA.seal(SECRET, 'row:1');
    const second = keyringA.seal(SECRET, 'row:1');
    expect(first).toMatch(SEALED);
    expect(SEALED.exec(first)![1]).toBe(keyringA.sealingKeyId);
    expect(sealedKeyId(first)).toBe(keyringA.sealingKeyId);
    expect(first).not.toBe(second);
    expect(first).not.toContain(SECRET.slice(6, 20));
    expect(keyringA.open(first, 'row:1')).toBe(SECRET);
    expect(keyringA.open(second, 'row:1')).toBe(SECRET);
    expect(keyringA.open(keyringA.seal('café ✓', 'x'), 'x')).toBe('café ✓');
  });

  it('names a key by the first 8 bytes of SHA-256 over a domain-separated key: not the digest of the key alone', () => {
    const id = keyIdOf(a);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(id).toBe(
      createHash('sha256').update('fxgate sealing key id\0').update(a).digest().subarray(0, 8).toString('hex'),
    );
    expect(id).not.toBe(createHash('sha256').update(a).digest().subarray(0, 8).toString('hex'));
    expect(keyIdOf(b)).not.toBe(id);
  });

  it('with two keys, opens what either sealed and seals with the first', () => {
    const keyringBA = SealingKeyring.of([b, a]);
    expect(keyringBA.keyIds).toEqual([keyIdOf(b), keyIdOf(a)]);
    expect(keyringBA.sealingKeyId).toBe(keyIdOf(b));
    const underA = keyringA.seal(SECRET, 'row:1');
    const underB = SealingKeyring.of([b]).seal(SECRET, 'row:2');
    expect(keyringBA.open(underA, 'row:1')).toBe(SECRET);
    expect(keyringBA.open(underB, 'row:2')).toBe(SECRET);
    const sealed = keyringBA.seal(SECRET, 'row:3');
    expect(sealedKeyId(sealed)).toBe(keyIdOf(b));
    expect(() => keyringA.open(sealed, 'row:3')).toThrow(SealedSecretError);
    expect(keyringBA.holds(keyIdOf(a))).toBe(true);
    expect(keyringA.holds(keyIdOf(b))).toBe(false);
  });

  it('refuses a key id it does not hold with a SealedSecretError naming the id, without trying its own keys', () => {
    const sealed = SealingKeyring.of([b]).seal(SECRET, 'row:1');
    expect(() => keyringA.open(sealed, 'row:1')).toThrow(
      new SealedSecretError(`the secret for row:1 is sealed under key ${keyIdOf(b)}, which this process was not given`),
    );
    // The id names the key: text relabelled with a held key's id does not open under it.
    const relabelled = sealed.replace(keyIdOf(b), keyringA.sealingKeyId);
    expect(() => keyringA.open(relabelled, 'row:1')).toThrow('does not open for row:1');
  });

  it('does not open for another row, or once changed', () => {
    const sealed = keyringA.seal(SECRET, 'row:1');
    expect(() => keyringA.open(sealed, 'row:2')).toThrow(SealedSecretError);
    const [version, keyId, iv, ciphertext, tag] = sealed.split('.') as [string, string, string, string, string];
    const flipped = (text: string) =>
      Buffer.from(Buffer.from(text, 'base64url').map((byte, index) => (index === 0 ? byte ^ 1 : byte))).toString(
        'base64url',
      );
    for (const changed of [
      [version, keyId, flipped(iv), ciphertext, tag],
      [version, keyId, iv, flipped(ciphertext), tag],
      [version, keyId, iv, ciphertext, flipped(tag)],
      ['v3', keyId, iv, ciphertext, tag],
    ]) {
      expect(() => keyringA.open(changed.join('.'), 'row:1')).toThrow(SealedSecretError);
    }
    for (const garbage of ['', SECRET, 'v2.a.b', `${sealed}.extra`, sealFormer(a, SECRET, 'row:1')])
      expect(() => keyringA.open(garbage, 'row:1')).toThrow(SealedSecretError);
  });

  it('wants one or more distinct 256-bit keys', () => {
    expect(() => SealingKeyring.of([])).toThrow(RangeError);
    expect(() => SealingKeyring.of([randomBytes(16)])).toThrow(RangeError);
    expect(() => SealingKeyring.of([a, b, Buffer.from(a)])).toThrow(RangeError);
  });

  it('shows key ids only: no inspection or JSON of a keyring holds a key', () => {
    const keyring = SealingKeyring.of([a, b]);
    const shown = [inspect(keyring, { showHidden: true, depth: 5 }), JSON.stringify(keyring), String(keyring)];
    for (const text of shown) {
      for (const key of [a, b])
        for (const encoding of ['base64', 'base64url', 'hex'] as const)
          expect(text).not.toContain(key.toString(encoding));
    }
    expect(JSON.parse(JSON.stringify(keyring))).toEqual({ keyIds: [keyIdOf(a), keyIdOf(b)] });
  });
});

describe('openFormerSealed', () => {
  it('opens what the former version sealed under its in-database key, for the row it was sealed for only', () => {
    const key = randomBytes(32);
    const sealed = sealFormer(key, SECRET, 'row:1');
    expect(openFormerSealed(sealed, 'row:1', key)).toBe(SECRET);
    expect(() => openFormerSealed(sealed, 'row:2', key)).toThrow(SealedSecretError);
    expect(() => openFormerSealed(sealed, 'row:1', randomBytes(32))).toThrow(SealedSecretError);
    expect(() => openFormerSealed(SealingKeyring.of([key]).seal(SECRET, 'row:1'), 'row:1', key)).toThrow(
      SealedSecretError,
    );
  });
});
