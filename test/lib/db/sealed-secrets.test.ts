/**
 * Sealed secrets: what goes into a row is never the secret, opens only with the service's key and
 * for the row it was sealed for, and any change to it is refused; the key is made once per
 * database and shared by every process on it.
 */
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SealedSecretError, SecretSealer } from '../../../src/lib/db/sealed-secrets.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';

const SECRET = 'whsec_0Jx8oHq3nS2Qk7m2YbV1wZcT5rLpE9aFgD4uK6iN8sA';

describe('SecretSealer', () => {
  const sealer = SecretSealer.withKey(randomBytes(32));

  it('seals to text that holds no trace of the secret, different each time, and opens it again', () => {
    const first = sealer.seal(SECRET, 'row:1');
    const second = sealer.seal(SECRET, 'row:1');
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(first).not.toBe(second);
    expect(first).not.toContain(SECRET.slice(6, 20));
    expect(sealer.open(first, 'row:1')).toBe(SECRET);
    expect(sealer.open(second, 'row:1')).toBe(SECRET);
    expect(sealer.open(sealer.seal('café ✓', 'x'), 'x')).toBe('café ✓');
  });

  it('does not open for another row, under another key, or once changed', () => {
    const sealed = sealer.seal(SECRET, 'row:1');
    expect(() => sealer.open(sealed, 'row:2')).toThrow(SealedSecretError);
    expect(() => SecretSealer.withKey(randomBytes(32)).open(sealed, 'row:1')).toThrow(SealedSecretError);
    const [version, iv, ciphertext, tag] = sealed.split('.') as [string, string, string, string];
    const flipped = (text: string) =>
      Buffer.from(Buffer.from(text, 'base64url').map((byte, index) => (index === 0 ? byte ^ 1 : byte))).toString(
        'base64url',
      );
    for (const changed of [
      [version, flipped(iv), ciphertext, tag],
      [version, iv, flipped(ciphertext), tag],
      [version, iv, ciphertext, flipped(tag)],
      ['v2', iv, ciphertext, tag],
    ]) {
      expect(() => sealer.open(changed.join('.'), 'row:1')).toThrow(SealedSecretError);
    }
    for (const garbage of ['', SECRET, 'v1.a.b', `${sealed}.extra`])
      expect(() => sealer.open(garbage, 'row:1')).toThrow(SealedSecretError);
  });

  it('wants a 256-bit key', () => {
    expect(() => SecretSealer.withKey(randomBytes(16))).toThrow(RangeError);
  });
});

describe('SecretSealer.open on a database', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestPostgres();
  });
  afterAll(async () => database?.drop());

  it('makes its key once: every sealer of the same name, concurrent or later, opens what another sealed', async () => {
    const sealers = await Promise.all(
      Array.from({ length: 5 }, () => SecretSealer.open(database.db, 'test-sealing-key')),
    );
    const sealed = sealers[0]!.seal(SECRET, 'row');
    for (const other of [...sealers, await SecretSealer.open(database.db, 'test-sealing-key')])
      expect(other.open(sealed, 'row')).toBe(SECRET);
    expect(() =>
      SecretSealer.open(database.db, 'another-key').then((other) => other.open(sealed, 'row')),
    ).rejects.toThrow(SealedSecretError);
  });
});
