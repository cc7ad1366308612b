/**
 * The webhook signature helper (docs/contract.md#webhooks-v3-signature): headers checked against an
 * independent HMAC implementation (@noble/hashes), the timestamp tolerance, tampering, several v1
 * values and several secrets, malformed headers, and the constant-time comparison path; and the
 * legacy X-Webhook-Signature check that receivers of the gateway's legacy deliveries run.
 */
import type * as NodeCrypto from 'node:crypto';

import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { beforeEach, describe, expect, it, vi } from 'vitest';

// Wrapped (not replaced) so the comparisons the helper makes can be counted.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof NodeCrypto>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const { timingSafeEqual } = await import('node:crypto');
// Test files share a module cache (isolate: false): load the helper afresh so it gets the wrapped crypto.
vi.resetModules();
const { DEFAULT_TOLERANCE_SECONDS, signLegacyWebhook, signWebhook, verifyLegacyWebhook, verifyWebhookSignature } =
  await import('../../../src/lib/webhooks/signature.js');

const SECRET = 'whsec_0Jx8oHq3nS2Qk7m2YbV1wZcT5rLpE9aFgD4uK6iN8sA';
const OTHER_SECRET = 'whsec_Zz9yXw8vUt7sRq6pOn5mLk4jIh3gFe2dCb1aA0bBcCd';
const BODY =
  '{"id":"evt_0190f5c2a1b27c3d8e9fa0b1c2d3e4f5","type":"withdrawals","eventType":"withdrawal.completed","createdAt":"2025-01-02T03:04:05.678Z","data":{"amount":"10.50","note":"café ✓"}}';
const T = 1_735_787_045;

function independentHex(secret: string, message: string): string {
  return Buffer.from(hmac(sha256, new TextEncoder().encode(secret), new TextEncoder().encode(message))).toString('hex');
}
function independentBase64(secret: string, message: string): string {
  return Buffer.from(hmac(sha256, new TextEncoder().encode(secret), new TextEncoder().encode(message))).toString(
    'base64',
  );
}

describe('signWebhook', () => {
  it('produces the three signature headers, matching an independent HMAC-SHA256', () => {
    const headers = signWebhook(SECRET, BODY, T);
    expect(Object.keys(headers).sort()).toEqual([
      'x-service-signature',
      'x-service-webhook-version',
      'x-webhook-signature',
    ]);
    expect(headers['x-service-signature']).toBe(`t=${T},v1=${independentHex(SECRET, `${T}.${BODY}`)}`);
    expect(headers['x-service-signature']).toMatch(/^t=[0-9]+,v1=[0-9a-f]{64}$/);
    expect(headers['x-service-webhook-version']).toBe('v3');
    expect(headers['x-webhook-signature']).toBe(independentBase64(SECRET, BODY));
  });

  it('signs bytes: a string and its UTF-8 Buffer give the same headers', () => {
    expect(signWebhook(SECRET, Buffer.from(BODY, 'utf8'), T)).toEqual(signWebhook(SECRET, BODY, T));
  });

  it('refuses a timestamp that is not a whole number of seconds', () => {
    expect(() => signWebhook(SECRET, BODY, 1.5)).toThrow(RangeError);
    expect(() => signWebhook(SECRET, BODY, -1)).toThrow(RangeError);
  });
});

describe('verifyWebhookSignature', () => {
  const header = signWebhook(SECRET, BODY, T)['x-service-signature'];

  it('accepts a genuine signature within the tolerance, on either side of the receiver clock', () => {
    expect(DEFAULT_TOLERANCE_SECONDS).toBe(300);
    for (const nowSeconds of [T, T + 300, T - 300]) {
      expect(verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header, nowSeconds })).toEqual({ ok: true });
    }
    expect(verifyWebhookSignature({ secret: SECRET, rawBody: Buffer.from(BODY), header, nowSeconds: T })).toEqual({
      ok: true,
    });
  });

  it('refuses a timestamp outside the tolerance (default 300 s, or as given)', () => {
    for (const nowSeconds of [T + 301, T - 301, T + 86_400]) {
      expect(verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header, nowSeconds })).toEqual({
        ok: false,
        reason: 'TIMESTAMP_OUT_OF_TOLERANCE',
      });
    }
    expect(
      verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T + 10, toleranceSeconds: 5 }),
    ).toEqual({ ok: false, reason: 'TIMESTAMP_OUT_OF_TOLERANCE' });
    expect(
      verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T + 10, toleranceSeconds: 10 }),
    ).toEqual({ ok: true });
  });

  it('uses the system clock when no nowSeconds is given', () => {
    const now = Math.floor(Date.now() / 1000);
    const fresh = signWebhook(SECRET, BODY, now)['x-service-signature'];
    expect(verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header: fresh })).toEqual({ ok: true });
    expect(verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header })).toEqual({
      ok: false,
      reason: 'TIMESTAMP_OUT_OF_TOLERANCE',
    });
  });

  it('refuses a tampered body, a tampered timestamp and a wrong secret', () => {
    const mismatch = { ok: false, reason: 'SIGNATURE_MISMATCH' };
    expect(
      verifyWebhookSignature({ secret: SECRET, rawBody: BODY.replace('10.50', '10.51'), header, nowSeconds: T }),
    ).toEqual(mismatch);
    expect(verifyWebhookSignature({ secret: SECRET, rawBody: `${BODY} `, header, nowSeconds: T })).toEqual(mismatch);
    // Parsed and serialised again is not the same bytes: verify the raw body.
    const reserialised = JSON.stringify(JSON.parse(BODY), null, 1);
    expect(verifyWebhookSignature({ secret: SECRET, rawBody: reserialised, header, nowSeconds: T })).toEqual(mismatch);
    const shifted = header.replace(`t=${T}`, `t=${T + 1}`);
    expect(verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header: shifted, nowSeconds: T })).toEqual(mismatch);
    expect(verifyWebhookSignature({ secret: OTHER_SECRET, rawBody: BODY, header, nowSeconds: T })).toEqual(mismatch);
  });

  it('reports a forged stale signature as a mismatch, not as a timestamp problem', () => {
    const forged = `t=${T - 10_000},v1=${'ab'.repeat(32)}`;
    expect(verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header: forged, nowSeconds: T })).toEqual({
      ok: false,
      reason: 'SIGNATURE_MISMATCH',
    });
  });

  it('accepts the header when any of several v1 values matches (secret rotation), in any position', () => {
    const good = header.split('v1=')[1]!;
    const old = signWebhook(OTHER_SECRET, BODY, T)['x-service-signature'].split('v1=')[1]!;
    for (const variant of [
      `t=${T},v1=${old},v1=${good}`,
      `t=${T},v1=${good},v1=${old}`,
      `v1=${old}, t=${T}, v1=${good}`,
    ]) {
      expect(verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header: variant, nowSeconds: T })).toEqual({
        ok: true,
      });
    }
    expect(
      verifyWebhookSignature({
        secret: SECRET,
        rawBody: BODY,
        header: `t=${T},v1=${old},v1=${'0'.repeat(64)}`,
        nowSeconds: T,
      }),
    ).toEqual({
      ok: false,
      reason: 'SIGNATURE_MISMATCH',
    });
  });

  it('accepts any of several receiver secrets, and uppercase hex', () => {
    expect(verifyWebhookSignature({ secret: [OTHER_SECRET, SECRET], rawBody: BODY, header, nowSeconds: T })).toEqual({
      ok: true,
    });
    expect(verifyWebhookSignature({ secret: [], rawBody: BODY, header, nowSeconds: T })).toEqual({
      ok: false,
      reason: 'SIGNATURE_MISMATCH',
    });
    const upper = header.replace(/v1=([0-9a-f]+)/, (_match, hex: string) => `v1=${hex.toUpperCase()}`);
    expect(verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header: upper, nowSeconds: T })).toEqual({
      ok: true,
    });
  });

  it('joins a header that arrived as several lines', () => {
    const [t, v1] = header.split(',');
    expect(verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header: [t!, v1!], nowSeconds: T })).toEqual({
      ok: true,
    });
  });

  it('skips schemes it does not know (v0, a future v2)', () => {
    expect(
      verifyWebhookSignature({
        secret: SECRET,
        rawBody: BODY,
        header: `${header},v0=legacy,v2=${'f'.repeat(128)}`,
        nowSeconds: T,
      }),
    ).toEqual({ ok: true });
  });

  it('calls a malformed header MALFORMED', () => {
    const v1 = header.split('v1=')[1]!;
    const malformed = [
      undefined,
      '',
      'garbage',
      `v1=${v1}`,
      `t=${T}`,
      `t=${T},t=${T},v1=${v1}`,
      `t=abc,v1=${v1}`,
      `t=-${T},v1=${v1}`,
      `t=1e9,v1=${v1}`,
      `t=${T},v1=${v1.slice(2)}`,
      `t=${T},v1=${v1}00`,
      `t=${T},v1=${'g'.repeat(64)}`,
      `t=${T},,v1=${v1}`,
      `t=${T},=x,v1=${v1}`,
    ];
    for (const bad of malformed) {
      expect(
        verifyWebhookSignature({ secret: SECRET, rawBody: BODY, header: bad, nowSeconds: T }),
        String(bad),
      ).toEqual({ ok: false, reason: 'MALFORMED' });
    }
  });

  describe('the comparison', () => {
    const compare = vi.mocked(timingSafeEqual);
    beforeEach(() => {
      compare.mockClear();
    });

    it('compares every v1 value with every secret in constant time, never stopping at a match', () => {
      const good = header.split('v1=')[1]!;
      const wrong = 'cd'.repeat(32);
      expect(
        verifyWebhookSignature({
          secret: SECRET,
          rawBody: BODY,
          header: `t=${T},v1=${good},v1=${wrong},v1=${wrong}`,
          nowSeconds: T,
        }).ok,
      ).toBe(true);
      expect(compare).toHaveBeenCalledTimes(3);
      compare.mockClear();
      expect(
        verifyWebhookSignature({
          secret: [SECRET, OTHER_SECRET],
          rawBody: BODY,
          header: `t=${T},v1=${good},v1=${wrong}`,
          nowSeconds: T,
        }).ok,
      ).toBe(true);
      expect(compare).toHaveBeenCalledTimes(4);
      for (const [a, b] of compare.mock.calls) {
        expect(a.byteLength).toBe(32);
        expect(b.byteLength).toBe(32);
      }
    });

    it('takes the same path whether the first or the last byte is wrong', () => {
      const good = header.split('v1=')[1]!;
      const flip = (hex: string, at: number) => hex.slice(0, at) + (hex[at] === '0' ? '1' : '0') + hex.slice(at + 1);
      for (const at of [0, 63]) {
        compare.mockClear();
        const result = verifyWebhookSignature({
          secret: SECRET,
          rawBody: BODY,
          header: `t=${T},v1=${flip(good, at)}`,
          nowSeconds: T,
        });
        expect(result).toEqual({ ok: false, reason: 'SIGNATURE_MISMATCH' });
        expect(compare).toHaveBeenCalledTimes(1);
        expect(compare.mock.results[0]!.value).toBe(false);
      }
    });
  });
});

describe('verifyLegacyWebhook (X-Webhook-Signature of the legacy deliveries)', () => {
  const LEGACY_BODY =
    '{"eventId":"0190f5c2-a1b2-7c3d-8e9f-a0b1c2d3e4f5","type":"deposits","message":"Completed Deposits","timestamp":"2025-01-02T03:04:05.678Z","data":[{"amount":1234.50,"comments":"café ✓"}]}';
  const signature = independentBase64(SECRET, LEGACY_BODY);

  it('signs as an independent base64 HMAC-SHA256 of the body alone, the same header the v3 deliveries carry for legacy receivers', () => {
    expect(signLegacyWebhook(SECRET, LEGACY_BODY)).toBe(signature);
    expect(signLegacyWebhook(SECRET, Buffer.from(LEGACY_BODY, 'utf8'))).toBe(signature);
    expect(signWebhook(SECRET, LEGACY_BODY, T)['x-webhook-signature']).toBe(signature);
  });

  it('accepts the genuine signature, from a string or the raw bytes, with spaces around it', () => {
    expect(verifyLegacyWebhook(LEGACY_BODY, signature, SECRET)).toEqual({ ok: true });
    expect(verifyLegacyWebhook(Buffer.from(LEGACY_BODY), ` ${signature} `, SECRET)).toEqual({ ok: true });
    expect(verifyLegacyWebhook(LEGACY_BODY, [signature], SECRET)).toEqual({ ok: true });
  });

  it('refuses a tampered or re-serialised body and a wrong secret', () => {
    const mismatch = { ok: false, reason: 'SIGNATURE_MISMATCH' };
    expect(verifyLegacyWebhook(LEGACY_BODY.replace('1234.50', '1234.5'), signature, SECRET)).toEqual(mismatch);
    expect(verifyLegacyWebhook(JSON.stringify(JSON.parse(LEGACY_BODY)), signature, SECRET)).toEqual(mismatch);
    expect(verifyLegacyWebhook(LEGACY_BODY, signature, OTHER_SECRET)).toEqual(mismatch);
    expect(verifyLegacyWebhook(LEGACY_BODY, signature, [])).toEqual(mismatch);
  });

  it('accepts any of several secrets (rotation)', () => {
    expect(verifyLegacyWebhook(LEGACY_BODY, signature, [OTHER_SECRET, SECRET])).toEqual({ ok: true });
  });

  it('calls a missing, doubled or malformed header MALFORMED', () => {
    const malformed = [
      undefined,
      '',
      'garbage',
      signature.slice(1),
      `${signature}=`,
      signature.replace('=', ''),
      Buffer.from(signature, 'base64').toString('hex'),
      Buffer.from(signature, 'base64').toString('base64url'),
      [signature, signature],
      [],
    ];
    for (const bad of malformed) {
      expect(verifyLegacyWebhook(LEGACY_BODY, bad as string | string[] | undefined, SECRET), String(bad)).toEqual({
        ok: false,
        reason: 'MALFORMED',
      });
    }
  });

  it('compares with every secret in constant time, never stopping at a match', () => {
    const compare = vi.mocked(timingSafeEqual);
    compare.mockClear();
    expect(verifyLegacyWebhook(LEGACY_BODY, signature, [SECRET, OTHER_SECRET, 'whsec_third'])).toEqual({ ok: true });
    expect(compare).toHaveBeenCalledTimes(3);
    for (const [a, b] of compare.mock.calls) {
      expect(a.byteLength).toBe(32);
      expect(b.byteLength).toBe(32);
    }
  });
});
