/**
 * Identifiers. v3 ids are `<prefix>_<32 lower-case hex>`, the hex being a UUIDv7 (time-ordered,
 * so inserts stay local in indexes). The legacy UUID of a record is the same 128 bits with
 * dashes, so the gateway maps ids by a pure function and keeps no table (docs/contract.md#types-ids).
 */
import { createHash } from 'node:crypto';

import { randomBytesPooled } from './random.js';

export const ID_PREFIXES = {
  trade: 'trd',
  quote: 'qte',
  deposit: 'dep',
  withdrawal: 'wtd',
  withdrawalAccount: 'wac',
  balance: 'bal',
  user: 'usr',
  event: 'evt',
  webhookEndpoint: 'whe',
  request: 'req',
  ledgerTransaction: 'ltx',
} as const;
export type IdKind = keyof typeof ID_PREFIXES;
export type IdPrefix = (typeof ID_PREFIXES)[IdKind];

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX32 = /^[0-9a-f]{32}$/;

/** A UUIDv7 (RFC 9562): 48-bit Unix ms timestamp, version 7, variant 10, 74 random bits. */
export function uuidv7Hex(nowMs: number = Date.now()): string {
  const bytes = randomBytesPooled(16);
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return bytes.toString('hex');
}

export function newId(kind: IdKind, nowMs?: number): string {
  return `${ID_PREFIXES[kind]}_${uuidv7Hex(nowMs)}`;
}

export function newUuid(nowMs?: number): string {
  return hexToUuid(uuidv7Hex(nowMs));
}

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return value.startsWith(prefix) && HEX32.test(value.slice(prefix.length));
}

function hexToUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `trd_0190…` -> `0190…-…`; null when the id is not of this kind. */
export function idToLegacyUuid(kind: IdKind, id: string): string | null {
  return isId(kind, id) ? hexToUuid(id.slice(ID_PREFIXES[kind].length + 1)) : null;
}

/** A legacy UUID (any case) -> the v3 id of this kind; null when it is not a UUID. */
export function legacyUuidToId(kind: IdKind, uuid: string): string | null {
  const lower = uuid.toLowerCase();
  return isUuid(lower) ? `${ID_PREFIXES[kind]}_${lower.replaceAll('-', '')}` : null;
}

/** A name-based UUID (RFC 9562 version 5, SHA-1): the same namespace and name give the same UUID everywhere. */
export function nameBasedUuid(namespace: string, name: string): string {
  if (!isUuid(namespace)) throw new TypeError(`the namespace must be a lower-case UUID: ${namespace}`);
  const bytes = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return hexToUuid(bytes.toString('hex'));
}
