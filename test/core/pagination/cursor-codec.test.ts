import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  createCursorCodec,
  type CursorPosition,
  cursorScope,
  MAX_CURSOR_LENGTH,
} from '../../../src/core/pagination/cursor-codec.js';

const codec = createCursorCodec(Buffer.alloc(32, 1));
const scope = cursorScope('trades', 'org-1', 'live', { status: 'completed' });
const position: CursorPosition = {
  createdAtMs: Date.parse('2025-03-01T12:00:00.123Z'),
  id: 'trd_0190a1b2c3d4e5f60718293a4b5c6d7e',
  inclusive: false,
};

describe('cursor codec', () => {
  it('round-trips positions, including the inclusive flag', () => {
    expect(codec.decode(codec.encode(position, scope), scope)).toEqual(position);
    const inclusive = { ...position, inclusive: true };
    expect(codec.decode(codec.encode(inclusive, scope), scope)).toEqual(inclusive);
  });

  it('round-trips any position it accepts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -8.64e15, max: 8.64e15 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }),
        fc.boolean(),
        fc.string(),
        (createdAtMs, id, inclusive, anyScope) => {
          const p = { createdAtMs, id, inclusive };
          const cursor = codec.encode(p, anyScope);
          expect(cursor.length).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
          expect(codec.decode(cursor, anyScope)).toEqual(p);
        },
      ),
    );
  });

  it('produces url-safe, opaque strings', () => {
    const cursor = codec.encode(position, scope);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain(position.id);
  });

  it('rejects a cursor with any single character changed', () => {
    const cursor = codec.encode(position, scope);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    for (let i = 0; i < cursor.length; i += 1) {
      for (const replacement of alphabet) {
        if (replacement === cursor[i]) continue;
        const tampered = cursor.slice(0, i) + replacement + cursor.slice(i + 1);
        expect(codec.decode(tampered, scope), tampered).toBeNull();
      }
    }
  });

  it('rejects a cursor with a byte of its payload or mac flipped', () => {
    const [payload = '', mac = ''] = codec.encode(position, scope).split('.');
    const payloadBytes = Buffer.from(payload, 'base64url');
    const macBytes = Buffer.from(mac, 'base64url');
    for (let i = 0; i < payloadBytes.length; i += 1) {
      const flipped = Buffer.from(payloadBytes);
      flipped[i] = (flipped[i] ?? 0) ^ 0x01;
      expect(codec.decode(`${flipped.toString('base64url')}.${mac}`, scope)).toBeNull();
    }
    for (let i = 0; i < macBytes.length; i += 1) {
      const flipped = Buffer.from(macBytes);
      flipped[i] = (flipped[i] ?? 0) ^ 0x80;
      expect(codec.decode(`${payload}.${flipped.toString('base64url')}`, scope)).toBeNull();
    }
  });

  it('rejects the inclusive flag switched without the mac', () => {
    const [, mac = ''] = codec.encode(position, scope).split('.');
    const [otherPayload = ''] = codec.encode({ ...position, inclusive: true }, scope).split('.');
    expect(codec.decode(`${otherPayload}.${mac}`, scope)).toBeNull();
  });

  it('rejects a cursor presented in another scope: org, environment, list or filters', () => {
    const cursor = codec.encode(position, scope);
    const others = [
      cursorScope('trades', 'org-2', 'live', { status: 'completed' }),
      cursorScope('trades', 'org-1', 'sandbox', { status: 'completed' }),
      cursorScope('deposits', 'org-1', 'live', { status: 'completed' }),
      cursorScope('trades', 'org-1', 'live', { status: 'pending' }),
      cursorScope('trades', 'org-1', 'live'),
      cursorScope('trades', 'org-1', 'live', { status: 'completed', currency: 'USD' }),
    ];
    for (const other of others) expect(codec.decode(cursor, other)).toBeNull();
  });

  it('rejects a cursor made with another secret', () => {
    const other = createCursorCodec(Buffer.alloc(32, 2));
    expect(codec.decode(other.encode(position, scope), scope)).toBeNull();
  });

  it('rejects truncated cursors', () => {
    const cursor = codec.encode(position, scope);
    for (let length = 0; length < cursor.length; length += 1) {
      expect(codec.decode(cursor.slice(0, length), scope)).toBeNull();
    }
    const [payload = '', mac = ''] = cursor.split('.');
    expect(codec.decode(payload, scope)).toBeNull();
    expect(codec.decode(`${payload}.`, scope)).toBeNull();
    expect(codec.decode(`.${mac}`, scope)).toBeNull();
  });

  it('rejects non-canonical spellings of a valid cursor', () => {
    const cursor = codec.encode(position, scope);
    expect(codec.decode(`${cursor}=`, scope)).toBeNull();
    expect(codec.decode(` ${cursor}`, scope)).toBeNull();
    expect(codec.decode(cursor.replace('.', '..'), scope)).toBeNull();
    // Node's decoder ignores the unused low bits of the last character; the codec must not.
    const [payload = '', mac = ''] = cursor.split('.');
    const last = payload.at(-1) ?? '';
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBytes = [...alphabet].filter(
      (c) => c !== last && Buffer.from(payload.slice(0, -1) + c, 'base64url').equals(Buffer.from(payload, 'base64url')),
    );
    expect(sameBytes.length).toBeGreaterThan(0);
    for (const c of sameBytes) expect(codec.decode(`${payload.slice(0, -1)}${c}.${mac}`, scope)).toBeNull();
  });

  it('returns null for empty, huge and random input without throwing', () => {
    expect(codec.decode('', scope)).toBeNull();
    expect(codec.decode('.', scope)).toBeNull();
    expect(codec.decode('a'.repeat(MAX_CURSOR_LENGTH + 1), scope)).toBeNull();
    expect(codec.decode(`${'A'.repeat(5_000_000)}.${'B'.repeat(22)}`, scope)).toBeNull();
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 700 }), (garbage) => {
        expect(codec.decode(garbage, scope)).toBeNull();
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 40 }), (payload, mac) => {
        expect(
          codec.decode(
            `${Buffer.from(payload).toString('base64url')}.${Buffer.from(mac).toString('base64url')}`,
            scope,
          ),
        ).toBeNull();
      }),
    );
  });

  it('refuses short secrets and positions it cannot represent', () => {
    expect(() => createCursorCodec(Buffer.alloc(31))).toThrow(RangeError);
    expect(() => codec.encode({ ...position, id: '' }, scope)).toThrow(RangeError);
    expect(() => codec.encode({ ...position, createdAtMs: 1.5 }, scope)).toThrow(RangeError);
    expect(() => codec.encode({ ...position, createdAtMs: 9e15 }, scope)).toThrow(RangeError);
  });

  it('keeps scopes of different filter sets apart, whatever the values contain', () => {
    expect(cursorScope('l', 'o', 'e', { a: 'x|b=y' })).not.toBe(cursorScope('l', 'o', 'e', { a: 'x', b: 'y' }));
    expect(cursorScope('l', 'o', 'e', { b: '2', a: '1' })).toBe(cursorScope('l', 'o', 'e', { a: '1', b: '2' }));
    expect(cursorScope('l', 'o', 'e', { a: '1', b: undefined })).toBe(cursorScope('l', 'o', 'e', { a: '1' }));
  });
});
