import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type DriverName, type StoreName, V3Harness } from '../../support/v3-harness.js';

const SETUPS: Array<{ driver: DriverName; storeKind: StoreName }> = [
  { driver: 'postgres', storeKind: 'redis' },
  { driver: 'pglite', storeKind: 'memory' },
];

describe.each(SETUPS)('GET /v3/fx/pairs on $driver + $storeKind', ({ driver, storeKind }) => {
  let harness: V3Harness;
  beforeAll(async () => {
    harness = await V3Harness.start({ driver, storeKind });
  });
  afterAll(async () => harness?.close());

  it('lists every ordered pair of the seven seeded currencies as a bounded list', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    const response = await harness.signed({ key, path: '/v3/fx/pairs' });
    expect(response.status).toBe(200);
    const body = response.json<{ data: Array<Record<string, unknown>>; pagination?: unknown }>();
    expect(body.pagination).toBeUndefined();
    expect(Object.keys(body)).toEqual(['data']);
    expect(body.data).toHaveLength(7 * 6);
    const symbols = new Set(body.data.map((pair) => pair.symbol));
    expect(symbols.size).toBe(42);
    expect(symbols.has('EUR/USD')).toBe(true);
    expect(symbols.has('USD/EUR')).toBe(true);
  });

  it('writes limits as decimal strings with the base currency decimals', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    const { data } = (await harness.signed({ key, path: '/v3/fx/pairs' })).json<{
      data: Array<Record<string, unknown>>;
    }>();
    expect(data.find((p) => p.symbol === 'EUR/USD')).toEqual({
      object: 'pair',
      symbol: 'EUR/USD',
      baseCurrency: 'EUR',
      quoteCurrency: 'USD',
      baseDecimals: 2,
      quoteDecimals: 2,
      minAmount: '1.00',
      maxAmount: '1000000.00',
    });
    expect(data.find((p) => p.symbol === 'JPY/USDC')).toMatchObject({
      minAmount: '100',
      maxAmount: '150000000',
      baseDecimals: 0,
      quoteDecimals: 6,
    });
    expect(data.find((p) => p.symbol === 'USDC/JPY')).toMatchObject({
      minAmount: '1.000000',
      baseDecimals: 6,
      quoteDecimals: 0,
    });
  });

  it('carries the pipeline headers on success', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    const response = await harness.signed({ key, path: '/v3/fx/pairs', headers: { 'x-request-id': 'client-req-1' } });
    expect(response.headers['x-request-id']).toBe('client-req-1');
    expect(response.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(new Date(response.headers['x-request-timestamp']!).toISOString()).toBe(
      response.headers['x-request-timestamp'],
    );
    expect(response.headers['ratelimit-limit']).toBe('100');
    expect(response.headers['ratelimit-reset']).toMatch(/^\d+$/);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['idempotency-replayed']).toBeUndefined();
  });

  it('takes no query parameters', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    const response = await harness.signed({ key, path: '/v3/fx/pairs?limit=10' });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({
      error: { code: 'VALIDATION_QUERY_FAILED', details: { issues: [{ path: 'limit' }] } },
    });
  });
});
