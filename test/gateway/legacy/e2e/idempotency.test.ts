/**
 * The v2 idempotency bridge end to end (docs/contract.md#idempotency-legacy,
 * docs/contract.md#idempotency-derived-key): the v2 contract at the gateway, and underneath it the
 * derived v3 key that keeps a retry from moving money twice even when the gateway's own record is
 * gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MemoryStore } from '../../../../src/cli/store/memory-store.js';
import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import type { EphemeralStore } from '../../../../src/lib/store/ephemeral-store.js';
import { recordTestDeposit } from '../../../support/book-fixtures.js';
import { idemKey, LegacyHarness } from '../../../support/legacy-harness.js';

let h: LegacyHarness;
let key: LoadedKey;
/** The gateway's store, swappable: a fresh one is a gateway that lost every record. */
let gatewayStore: EphemeralStore;

/** Delegates to whatever `gatewayStore` is now. */
const swappable: EphemeralStore = new Proxy({} as EphemeralStore, {
  get: (_target, name) => {
    const value = (gatewayStore as unknown as Record<PropertyKey, unknown>)[name];
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(gatewayStore) : value;
  },
});

async function quoteId(): Promise<string> {
  const response = await h.v2(key, {
    path: 'generate_quote',
    body: '{"amount":5,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}',
    headers: { 'idempotency-key': idemKey() },
  });
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: { quote: { id: string } } }>().data.quote.id;
}

async function v3TradeCount(): Promise<number> {
  const response = await h.core.signed({ key, path: '/v3/fx/trades?limit=100' });
  return response.json<{ data: unknown[] }>().data.length;
}

beforeAll(async () => {
  gatewayStore = new MemoryStore();
  h = await LegacyHarness.start({ gatewayStore: swappable });
  key = await h.createKey();
  await recordTestDeposit(h.core.db, {
    orgId: key.file.orgId,
    environment: 'sandbox',
    currency: 'USD',
    amount: '10000.00',
  });
});
afterAll(async () => {
  await h?.close();
  await gatewayStore?.close();
});

describe('the v2 contract', () => {
  it('a write without Idempotency-Key is 400 IDEMPOTENCY_KEY_REQUIRED and reaches nothing', async () => {
    const before = await v3TradeCount();
    const response = await h.v2(key, { path: 'trade', body: JSON.stringify({ quoteId: await quoteId() }) });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({
      status: 'error',
      error: { code: 'IDEMPOTENCY_KEY_REQUIRED', details: expect.any(String) },
    });
    expect(await v3TradeCount()).toBe(before);
  });

  it('a malformed key is 400 INVALID_IDEMPOTENCY_KEY', async () => {
    const response = await h.v2(key, {
      path: 'trade',
      body: '{"quoteId":"x"}',
      headers: { 'idempotency-key': 'not a key!' },
    });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({ error: { code: 'INVALID_IDEMPOTENCY_KEY' } });
  });

  it('the same key and body replays the first answer byte for byte; one trade', async () => {
    const before = await v3TradeCount();
    const body = JSON.stringify({ quoteId: await quoteId() });
    const k = idemKey();
    const first = await h.v2(key, { path: 'trade', body, headers: { 'idempotency-key': k } });
    const second = await h.v2(key, { path: 'trade', body, headers: { 'idempotency-key': k } });
    expect(first.status, first.text).toBe(200);
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers['idempotency-replayed']).toBe('true');
    expect(first.headers['idempotency-replayed']).toBeUndefined();
    expect(await v3TradeCount()).toBe(before + 1);
  });

  it('the same key with another body is 422 IDEMPOTENCY_MISMATCH', async () => {
    const k = idemKey();
    await h.v2(key, {
      path: 'trade',
      body: JSON.stringify({ quoteId: await quoteId() }),
      headers: { 'idempotency-key': k },
    });
    const other = await h.v2(key, {
      path: 'trade',
      body: JSON.stringify({ quoteId: await quoteId() }),
      headers: { 'idempotency-key': k },
    });
    expect(other.status).toBe(422);
    expect(other.json()).toMatchObject({ status: 'error', error: { code: 'IDEMPOTENCY_MISMATCH' } });
  });

  it('20 concurrent requests with one key make one trade; the rest replay it or are told 409 with Retry-After', async () => {
    const before = await v3TradeCount();
    const body = JSON.stringify({ quoteId: await quoteId() });
    const k = idemKey();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => h.v2(key, { path: 'trade', body, headers: { 'idempotency-key': k } })),
    );
    const statuses = responses.map((response) => response.status);
    expect(
      statuses.every((status) => status === 200 || status === 409),
      statuses.join(','),
    ).toBe(true);
    for (const conflict of responses.filter((response) => response.status === 409)) {
      expect(conflict.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_IN_FLIGHT' } });
      expect(Number(conflict.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const ids = new Set(
      responses.filter((r) => r.status === 200).map((r) => r.json<{ data: { trade: { id: string } } }>().data.trade.id),
    );
    expect(ids.size).toBe(1);
    expect(await v3TradeCount()).toBe(before + 1);
  });

  it('a GET with a key is replayed; without one it is not', async () => {
    const k = idemKey();
    const first = await h.v2(key, { path: 'balances', headers: { 'idempotency-key': k } });
    const second = await h.v2(key, { path: 'balances', headers: { 'idempotency-key': k } });
    expect(second.headers['idempotency-replayed']).toBe('true');
    expect(second.text).toBe(first.text);
    const plain = await h.v2(key, { path: 'balances' });
    expect(plain.headers['idempotency-replayed']).toBeUndefined();
  });
});

describe('the derived v3 key', () => {
  it('a retry after the gateway lost its record reaches v3 with the same key: still one trade', async () => {
    const before = await v3TradeCount();
    const body = JSON.stringify({ quoteId: await quoteId() });
    const k = idemKey();
    const first = await h.v2(key, { path: 'trade', body, headers: { 'idempotency-key': k } });
    expect(first.status, first.text).toBe(200);

    const old = gatewayStore;
    gatewayStore = new MemoryStore();
    await old.close();
    const retry = await h.v2(key, { path: 'trade', body, headers: { 'idempotency-key': k } });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.headers['idempotency-replayed']).toBeUndefined();
    const tradeOf = (text: string) => (JSON.parse(text) as { data: { trade: unknown } }).data.trade;
    expect(tradeOf(retry.text)).toEqual(tradeOf(first.text));
    expect(await v3TradeCount()).toBe(before + 1);
  });

  it('v1 writes sent without a key get a fresh v3 key each: two v1 trades of two quotes are two trades', async () => {
    const before = await v3TradeCount();
    for (let i = 0; i < 2; i++) {
      const quote = await h.v1(key, {
        path: 'generate_quote',
        body: '{"amount":5,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}',
      });
      const trade = await h.v1(key, {
        path: 'trade',
        body: JSON.stringify({ quoteId: quote.json<{ data: { quote: { id: string } } }>().data.quote.id }),
      });
      expect(trade.status, trade.text).toBe(200);
    }
    expect(await v3TradeCount()).toBe(before + 2);
  });

  it('the gateway store down: v2 writes fail closed with 503 IDEMPOTENCY_SERVICE_UNAVAILABLE', async () => {
    const old = gatewayStore;
    const down = new MemoryStore();
    await down.close();
    gatewayStore = down;
    try {
      const response = await h.v2(key, {
        path: 'trade',
        body: '{"quoteId":"00000000-0000-7000-8000-000000000000"}',
        headers: { 'idempotency-key': idemKey() },
      });
      expect(response.status).toBe(503);
      expect(response.json()).toMatchObject({ status: 'error', error: { code: 'IDEMPOTENCY_SERVICE_UNAVAILABLE' } });
    } finally {
      gatewayStore = old;
    }
  });
});
