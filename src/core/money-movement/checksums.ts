/**
 * Checksum validation for the identifiers a settlement instruction carries: stablecoin
 * addresses, US ABA routing numbers, IBANs and BICs. Every function is pure and total: garbage
 * (including non-strings arriving from untyped JSON) yields `false`, never an exception, so these
 * can sit directly inside schema refinements.
 *
 * These checks catch typing and copy errors; they do not prove that an account or address exists.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';

import { decodeBase58 } from './base58.js';

export type StablecoinNetwork = 'ETHEREUM' | 'POLYGON' | 'BASE' | 'SOLANA' | 'TRON';

export const STABLECOIN_NETWORKS: readonly StablecoinNetwork[] = Object.freeze([
  'ETHEREUM',
  'POLYGON',
  'BASE',
  'SOLANA',
  'TRON',
] as const);

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_LETTER = /[a-fA-F]/;
const TRON_ADDRESS_VERSION = 0x41;
const TRON_ADDRESS_BYTES = 25;
/** A 25-byte TRON address always encodes to 34 characters; bounding first keeps decoding cheap. */
const TRON_ADDRESS_CHARS = 34;
const SOLANA_ADDRESS_BYTES = 32;
/** 32 bytes encode to 32 (all leading zeros) through 44 characters. */
const SOLANA_MIN_CHARS = 32;
const SOLANA_MAX_CHARS = 44;

/**
 * EVM networks (ETHEREUM, POLYGON, BASE) use EIP-55: `0x` (lower-case x, as EIP-55 writes it)
 * and 40 hex digits whose letters must carry the mixed-case checksum. We deliberately reject
 * all-lower and all-upper forms that do not match the checksum, although wallets often accept
 * them: a settlement payout cannot be recalled, and an un-checksummed address has no protection
 * against a mistyped digit. Addresses whose hex part has no letters carry no case information,
 * so any such address is trivially valid. (Some addresses' checksums happen to be all-upper or
 * all-lower; those pass because they are the checksummed form.)
 *
 * TRON: base58check of 25 bytes, version byte 0x41, the last 4 bytes being the first 4 of
 * sha256(sha256(first 21 bytes)).
 *
 * SOLANA: base58 of exactly 32 bytes. Any 32 bytes is an account address (program-derived
 * addresses are off the ed25519 curve on purpose), so there is no checksum to verify; this is
 * the strongest check the format allows.
 */
export function isValidStablecoinAddress(network: StablecoinNetwork, address: string): boolean {
  if (typeof address !== 'string') return false;
  switch (network) {
    case 'ETHEREUM':
    case 'POLYGON':
    case 'BASE':
      return isValidEip55Address(address);
    case 'TRON':
      return isValidTronAddress(address);
    case 'SOLANA':
      return isValidSolanaAddress(address);
    default:
      // Unknown networks from untyped input are not an error, just not valid.
      return false;
  }
}

function isValidEip55Address(address: string): boolean {
  if (!EVM_ADDRESS.test(address)) return false;
  const hex = address.slice(2);
  if (!HEX_LETTER.test(hex)) return true;
  return eip55Checksum(hex) === hex;
}

/** The EIP-55 form of 40 hex digits: a letter is upper-case where the keccak-256 nibble of the lower-case text is >= 8. */
function eip55Checksum(hex: string): string {
  const lower = hex.toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = '';
  for (let i = 0; i < lower.length; i += 1) {
    const byte = hash[i >> 1] ?? 0;
    const nibble = i % 2 === 0 ? byte >> 4 : byte & 0x0f;
    const ch = lower.charAt(i);
    out += nibble >= 8 ? ch.toUpperCase() : ch;
  }
  return out;
}

function isValidTronAddress(address: string): boolean {
  if (address.length !== TRON_ADDRESS_CHARS) return false;
  const bytes = decodeBase58(address);
  if (bytes?.length !== TRON_ADDRESS_BYTES || bytes[0] !== TRON_ADDRESS_VERSION) return false;
  const payload = bytes.subarray(0, TRON_ADDRESS_BYTES - 4);
  const digest = sha256(sha256(payload));
  for (let i = 0; i < 4; i += 1) {
    if (digest[i] !== bytes[TRON_ADDRESS_BYTES - 4 + i]) return false;
  }
  return true;
}

function isValidSolanaAddress(address: string): boolean {
  if (address.length < SOLANA_MIN_CHARS || address.length > SOLANA_MAX_CHARS) return false;
  return decodeBase58(address)?.length === SOLANA_ADDRESS_BYTES;
}

const ABA_WEIGHTS = [3, 7, 1, 3, 7, 1, 3, 7, 1] as const;

/**
 * ABA routing number: 9 digits whose weighted sum (weights 3, 7, 1 repeating) is a multiple of
 * 10. The weights are all coprime to 10, so every single-digit error changes the sum's last
 * digit and is caught. All zeros passes the arithmetic but is no bank, so it is refused. The
 * Federal Reserve prefix ranges are not checked: they are assigned by policy and may change.
 */
export function isValidAbaRoutingNumber(value: string): boolean {
  if (typeof value !== 'string' || !/^[0-9]{9}$/.test(value) || value === '000000000') return false;
  let sum = 0;
  for (let i = 0; i < 9; i += 1) sum += (value.charCodeAt(i) - 48) * (ABA_WEIGHTS[i] ?? 0);
  return sum % 10 === 0;
}

/**
 * IBAN lengths per country, from the SWIFT IBAN registry. A country not listed is held to the
 * general 15-34 bound only: refusing a real IBAN would block a payout, while mod-97 still
 * catches the typing errors this check exists for.
 */
const IBAN_LENGTHS: Readonly<Record<string, number>> = Object.freeze({
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SC: 31,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
});

const IBAN_SHAPE = /^[A-Z]{2}[0-9]{2}[A-Z0-9]+$/;

/**
 * IBAN (ISO 13616): country code, two check digits, alphanumeric BBAN; 15-34 characters, the
 * listed countries' exact lengths, and mod-97 of the rearranged number equal to 1. Spaces are
 * ignored anywhere, so the printed form in groups of four passes. Letters must be upper case,
 * as the standard writes them: run user input through `normaliseIban` first. Check digits 00,
 * 01 and 99 are refused: they are never generated (the check digits are 98 - n mod 97, so 2-98)
 * and each is congruent to a valid pair (97, 98, 02), which would let a two-digit error pass.
 */
export function isValidIban(value: string): boolean {
  if (typeof value !== 'string') return false;
  const iban = value.replaceAll(' ', '');
  if (iban.length < 15 || iban.length > 34 || !IBAN_SHAPE.test(iban)) return false;
  const expectedLength = IBAN_LENGTHS[iban.slice(0, 2)];
  if (expectedLength !== undefined && iban.length !== expectedLength) return false;
  const checkDigits = iban.slice(2, 4);
  if (checkDigits === '00' || checkDigits === '01' || checkDigits === '99') return false;
  return ibanMod97(iban.slice(4) + iban.slice(0, 4)) === 1;
}

/** n mod 97 of the number formed by writing each letter as 10-35, folded a digit at a time so it never needs a bignum. */
function ibanMod97(rearranged: string): number {
  let remainder = 0;
  for (let i = 0; i < rearranged.length; i += 1) {
    const code = rearranged.charCodeAt(i);
    remainder = code <= 57 ? (remainder * 10 + (code - 48)) % 97 : (remainder * 100 + (code - 55)) % 97;
  }
  return remainder;
}

const BIC_SHAPE = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?$/;

/**
 * BIC (ISO 9362): 4-letter institution, 2-letter country (shape only, not checked against the
 * ISO 3166 list), 2-character location, optional 3-character branch. Upper case only, and no
 * surrounding spaces: a BIC is a code, not free text, and accepting variants would let two
 * spellings of one BIC reach storage.
 */
export function isValidBic(value: string): boolean {
  return typeof value === 'string' && BIC_SHAPE.test(value);
}

/**
 * What a user types into an IBAN field, in electronic form: trimmed, every whitespace character
 * (spaces, tabs, no-break spaces from copied text) removed, ASCII letters upper-cased. Only ASCII
 * is upper-cased because `toUpperCase` would turn some non-ASCII letters (dotless i, for one) into
 * valid ASCII and let a lookalike character pass validation.
 */
export function normaliseIban(value: string): string {
  if (typeof value !== 'string') return '';
  return value
    .trim()
    .replace(/\s+/gu, '')
    .replace(/[a-z]/g, (c) => c.toUpperCase());
}
