/**
 * Cursors of the v3 lists (docs/contract.md#pagination-cursor): opaque to clients, tamper-evident,
 * and bound to the list they came from. A cursor is `base64url(payload).base64url(mac)`: the
 * payload is the position, the mac is a truncated HMAC-SHA256 over the scope and the payload. The
 * scope (list, org, environment, filters) is not in the payload, only in the mac, so a cursor
 * replayed against another org, environment, list or filter set fails verification instead of
 * leaking a position into a set it was not made for.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A boundary in the newest-first order, given by a record's key. `inclusive` puts the record at
 * that key inside the range the cursor selects; it exists for empty pages, whose cursors must
 * lead back to a record that was never on a page and so has no neighbour to point at.
 */
export interface CursorPosition {
  /** created_at in epoch milliseconds: the precision records are stored at. */
  readonly createdAtMs: number;
  /** Breaks ties in createdAt. */
  readonly id: string;
  readonly inclusive: boolean;
}

export interface CursorCodec {
  encode(position: CursorPosition, scope: string): string;
  /** The position, or null for anything forged, truncated, malformed or made for another scope. */
  decode(cursor: string, scope: string): CursorPosition | null;
}

/** Longer strings are rejected before any decoding work; real cursors are far shorter. */
export const MAX_CURSOR_LENGTH = 512;
/** Shorter secrets would make the mac the weak point; this is a configuration error at start-up. */
export const MIN_SECRET_BYTES = 32;

const FORMAT_VERSION = 1;
/** 128 bits: forging stays out of reach, and cursors stay short. */
const MAC_BYTES = 16;
const HEADER_BYTES = 1 + 1 + 8; // version, flags, createdAtMs as int64
const FLAG_INCLUSIVE = 1;
/** The limit of ECMAScript Date; a position outside it can only come from a bug or a forgery. */
const MAX_ABS_EPOCH_MS = 8.64e15;
const MAX_ID_BYTES = 256;
const CURSOR_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** A mac domain label, so that the secret can never produce a valid mac for anything else. */
const MAC_DOMAIN = Buffer.from('fxgate-cursor\0', 'utf8');
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

export function createCursorCodec(secret: Buffer): CursorCodec {
  if (secret.length < MIN_SECRET_BYTES) {
    throw new RangeError(`The cursor secret must be at least ${MIN_SECRET_BYTES} bytes.`);
  }
  const key = Buffer.from(secret); // a private copy: later changes to the caller's buffer do not leak in

  const macOf = (scope: string, payload: Buffer): Buffer => {
    const scopeBytes = Buffer.from(scope, 'utf8');
    const scopeLength = Buffer.alloc(4);
    scopeLength.writeUInt32BE(scopeBytes.length);
    // The length prefix keeps scope and payload apart: no (scope, payload) pair can pose as another.
    return createHmac('sha256', key)
      .update(MAC_DOMAIN)
      .update(scopeLength)
      .update(scopeBytes)
      .update(payload)
      .digest()
      .subarray(0, MAC_BYTES);
  };

  return {
    encode(position, scope) {
      const payload = encodePayload(position);
      return `${payload.toString('base64url')}.${macOf(scope, payload).toString('base64url')}`;
    },

    decode(cursor, scope) {
      if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH || !CURSOR_SHAPE.test(cursor)) return null;
      const [payloadText = '', macText = ''] = cursor.split('.');
      const payload = canonicalBase64url(payloadText);
      const mac = canonicalBase64url(macText);
      if (payload === null || mac === null || mac.length !== MAC_BYTES) return null;
      if (!timingSafeEqual(mac, macOf(scope, payload))) return null;
      return decodePayload(payload);
    },
  };
}

/**
 * Binds cursors to one list as the client asked for it. Filters are sorted and unset ones left
 * out, so that the same request always yields the same scope; JSON keeps values containing any
 * separator from running into each other.
 */
export function cursorScope(
  list: string,
  orgId: string,
  environment: string,
  filters: Readonly<Record<string, string | undefined>> = {},
): string {
  const setFilters = Object.entries(filters)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([list, orgId, environment, setFilters]);
}

function encodePayload(position: CursorPosition): Buffer {
  const id = Buffer.from(position.id, 'utf8');
  if (!Number.isSafeInteger(position.createdAtMs) || Math.abs(position.createdAtMs) > MAX_ABS_EPOCH_MS) {
    throw new RangeError('A cursor position needs createdAtMs as an integer within the Date range.');
  }
  if (id.length === 0 || id.length > MAX_ID_BYTES) {
    throw new RangeError(`A cursor position needs an id of 1 to ${MAX_ID_BYTES} bytes.`);
  }
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(FORMAT_VERSION, 0);
  header.writeUInt8(position.inclusive ? FLAG_INCLUSIVE : 0, 1);
  header.writeBigInt64BE(BigInt(position.createdAtMs), 2);
  return Buffer.concat([header, id]);
}

/** Only reached with a verified mac, so a failure here means a format change or a leaked secret. */
function decodePayload(payload: Buffer): CursorPosition | null {
  if (payload.length <= HEADER_BYTES || payload.length > HEADER_BYTES + MAX_ID_BYTES) return null;
  const flags = payload.readUInt8(1);
  if (payload.readUInt8(0) !== FORMAT_VERSION || (flags & ~FLAG_INCLUSIVE) !== 0) return null;
  const createdAtMs = Number(payload.readBigInt64BE(2));
  if (Math.abs(createdAtMs) > MAX_ABS_EPOCH_MS) return null;
  const id = strictUtf8(payload.subarray(HEADER_BYTES));
  if (id === null) return null;
  return { createdAtMs, id, inclusive: (flags & FLAG_INCLUSIVE) !== 0 };
}

/**
 * Node's decoder ignores stray characters and unused trailing bits, so several strings decode to
 * the same bytes; accepting only the canonical spelling keeps every cursor a single string.
 */
function canonicalBase64url(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

function strictUtf8(bytes: Buffer): string | null {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return null; // invalid UTF-8 is the only way decode throws
  }
}
