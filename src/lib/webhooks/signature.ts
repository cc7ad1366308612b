/**
 * Webhook signatures (docs/contract.md#webhooks-v3-signature), for the sender and for
 * receivers. It depends on nothing but node:crypto so that a receiver can copy or import this
 * one file.
 *
 *   X-Service-Signature:      t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>
 *   X-Service-Webhook-Version: v3
 *   X-Webhook-Signature:      <base64 HMAC-SHA256(secret, raw body)>   (legacy: no timestamp,
 *                             so it cannot resist replay; use X-Service-Signature)
 *
 * The HMAC key is the secret exactly as shown at endpoint creation, `whsec_` prefix included,
 * as UTF-8 bytes. Verify against the raw body bytes as received: a body parsed and serialised
 * again need not be the same bytes.
 *
 * The gateway's legacy deliveries (the v1/v2 shape) carry X-Webhook-Signature alone, keyed with
 * the legacy subscription's secret; verifyLegacyWebhook checks it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-signature';
export const VERSION_HEADER = 'x-service-webhook-version';
export const LEGACY_SIGNATURE_HEADER = 'x-webhook-signature';
export const WEBHOOK_VERSION = 'v3';
/** How far a signature's timestamp may be from the receiver's clock, by default. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type RawBody = string | Uint8Array;

export interface WebhookSignatureHeaders {
  readonly 'x-service-signature': string;
  readonly 'x-service-webhook-version': string;
  readonly 'x-webhook-signature': string;
}

function hmac(secret: string, parts: readonly RawBody[]): Buffer {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** The headers a delivery of rawBody carries, signed at timestampSeconds. */
export function signWebhook(secret: string, rawBody: RawBody, timestampSeconds: number): WebhookSignatureHeaders {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0)
    throw new RangeError('timestampSeconds must be a non-negative integer');
  const v1 = hmac(secret, [`${timestampSeconds}.`, rawBody]).toString('hex');
  return {
    'x-service-signature': `t=${timestampSeconds},v1=${v1}`,
    'x-service-webhook-version': WEBHOOK_VERSION,
    'x-webhook-signature': signLegacyWebhook(secret, rawBody),
  };
}

/** X-Webhook-Signature: base64 HMAC-SHA256 of the raw body alone (no timestamp). */
export function signLegacyWebhook(secret: string, rawBody: RawBody): string {
  return hmac(secret, [rawBody]).toString('base64');
}

export type VerifyFailure = 'MALFORMED' | 'TIMESTAMP_OUT_OF_TOLERANCE' | 'SIGNATURE_MISMATCH';
export type VerifyResult = { readonly ok: true } | { readonly ok: false; readonly reason: VerifyFailure };

export interface VerifyInput {
  /** The endpoint's secret; several while a receiver rotates secrets (any one may match). */
  readonly secret: string | readonly string[];
  readonly rawBody: RawBody;
  /** The X-Service-Signature header as received (node gives a string; arrays are joined). */
  readonly header: string | readonly string[] | undefined;
  readonly toleranceSeconds?: number;
  /** The receiver's clock in Unix seconds; the system clock when absent. */
  readonly nowSeconds?: number;
}

const TIMESTAMP = /^[0-9]{1,12}$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

interface ParsedHeader {
  readonly timestamp: number;
  readonly signatures: Buffer[];
}

/**
 * `t=…,v1=…[,v1=…]`: exactly one t, at least one v1. Other schemes (v0, a future v2) are
 * skipped, so a sender may add one without breaking receivers that do not know it.
 */
function parseHeader(header: string): ParsedHeader | null {
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator <= 0) return null;
    const name = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (name === 't') {
      if (timestamp !== null || !TIMESTAMP.test(value)) return null;
      timestamp = Number(value);
    } else if (name === 'v1') {
      if (!HEX_SHA256.test(value)) return null;
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}

/**
 * Checks X-Service-Signature. Every v1 value is compared with every secret's expected MAC in
 * constant time and without stopping at the first match, so the time taken says nothing about
 * which bytes were right. The signature is checked before the timestamp: a stale but genuine
 * delivery (a replay, or a clock problem) is told apart from a forged one.
 */
export function verifyWebhookSignature(input: VerifyInput): VerifyResult {
  const header = typeof input.header === 'string' ? input.header : input.header?.join(',');
  const parsed = header === undefined ? null : parseHeader(header);
  if (parsed === null) return { ok: false, reason: 'MALFORMED' };

  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  let matched = false;
  for (const secret of secrets) {
    const expected = hmac(secret, [`${parsed.timestamp}.`, input.rawBody]);
    for (const candidate of parsed.signatures) {
      // Both are 32 bytes (the header pattern guarantees it), as timingSafeEqual requires.
      matched = timingSafeEqual(expected, candidate) || matched;
    }
  }
  if (!matched) return { ok: false, reason: 'SIGNATURE_MISMATCH' };

  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - parsed.timestamp) > tolerance) return { ok: false, reason: 'TIMESTAMP_OUT_OF_TOLERANCE' };
  return { ok: true };
}

export type LegacyVerifyFailure = 'MALFORMED' | 'SIGNATURE_MISMATCH';
export type LegacyVerifyResult = { readonly ok: true } | { readonly ok: false; readonly reason: LegacyVerifyFailure };

/** Standard base64 of 32 bytes, padding included: what signLegacyWebhook writes. */
const BASE64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;

/**
 * Checks X-Webhook-Signature, as the gateway's legacy deliveries carry it: base64 HMAC-SHA256
 * of the raw body with the subscription's secret (several while rotating; any one may match).
 * Compared in constant time with every secret. It has no timestamp, so it cannot tell a replay
 * from a delivery: receivers dedupe by the body's eventId.
 */
export function verifyLegacyWebhook(
  rawBody: RawBody,
  signatureHeader: string | readonly string[] | undefined,
  secret: string | readonly string[],
): LegacyVerifyResult {
  // Two headers are two claims about one body; refusing them is simpler than choosing one.
  const header =
    typeof signatureHeader === 'string'
      ? signatureHeader.trim()
      : signatureHeader?.length === 1
        ? signatureHeader[0]!.trim()
        : undefined;
  if (header === undefined || !BASE64_SHA256.test(header)) return { ok: false, reason: 'MALFORMED' };
  const candidate = Buffer.from(header, 'base64');
  let matched = false;
  for (const key of typeof secret === 'string' ? [secret] : secret) {
    // Both are 32 bytes (the pattern guarantees it), as timingSafeEqual requires.
    matched = timingSafeEqual(hmac(key, [rawBody]), candidate) || matched;
  }
  return matched ? { ok: true } : { ok: false, reason: 'SIGNATURE_MISMATCH' };
}
