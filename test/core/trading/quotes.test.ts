/**
 * POST /v3/fx/quotes end to end, in the sandbox book and the live book separately: the quote's
 * shape, exact rates and amounts from DEFAULT_USD_PRICES with the default 20 bps spread in both
 * amount directions (the rounding rules of pricing.ts), every allowed lifetime, and every error
 * a quote can meet, each leaving no quote row behind. GET /v3/fx/quotes/{id} reads one back.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  setCreditLine,
  setCurrencyEnabled,
  setPairEnabled,
  setTradingEnabled,
} from '../../../src/core/trading/org-books.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

interface QuoteRecord {
  object: string;
  id: string;
  buyCurrency: string;
  sellCurrency: string;
  buyAmount: string;
  sellAmount: string;
  amountCurrency: string;
  rate: string;
  reversesTradeId: string | null;
  createdAt: string;
  expiresAt: string;
}

const MODES: Mode[] = ['sandbox', 'live'];

/**
 * Expected terms, worked out by hand from the USD prices (EUR 1.08, GBP 1.27, JPY 0.0067, USD and
 * USDC 1): rate = mid × 1.002 rounded up to 10 places; buy-fixed: sell = buy × rate rounded up to
 * the sell currency; sell-fixed: buy = sell ÷ rate rounded down to the buy currency; the USD value
 * the trade will commit is the sell amount × its USD price rounded up to cents.
 */
const PRICED = [
  {
    buy: 'EUR',
    sell: 'USD',
    amount: '100',
    in: 'EUR',
    rate: '1.08216',
    buyAmount: '100.00',
    sellAmount: '108.22',
    usd: '108.22',
  },
  {
    buy: 'EUR',
    sell: 'USD',
    amount: '100',
    in: 'USD',
    rate: '1.08216',
    buyAmount: '92.40',
    sellAmount: '100.00',
    usd: '100',
  },
  {
    buy: 'USD',
    sell: 'EUR',
    amount: '100',
    in: 'USD',
    rate: '0.9277777778',
    buyAmount: '100.00',
    sellAmount: '92.78',
    usd: '100.21',
  },
  {
    buy: 'USD',
    sell: 'EUR',
    amount: '100',
    in: 'EUR',
    rate: '0.9277777778',
    buyAmount: '107.78',
    sellAmount: '100.00',
    usd: '108',
  },
  {
    buy: 'JPY',
    sell: 'USD',
    amount: '10000',
    in: 'JPY',
    rate: '0.0067134',
    buyAmount: '10000',
    sellAmount: '67.14',
    usd: '67.14',
  },
  {
    buy: 'JPY',
    sell: 'USD',
    amount: '100',
    in: 'USD',
    rate: '0.0067134',
    buyAmount: '14895',
    sellAmount: '100.00',
    usd: '100',
  },
  {
    buy: 'USDC',
    sell: 'GBP',
    amount: '1000',
    in: 'USDC',
    rate: '0.788976378',
    buyAmount: '1000.000000',
    sellAmount: '788.98',
    usd: '1002.01',
  },
  {
    buy: 'GBP',
    sell: 'USDC',
    amount: '500',
    in: 'USDC',
    rate: '1.27254',
    buyAmount: '392.91',
    sellAmount: '500.000000',
    usd: '500',
  },
  {
    buy: 'USD',
    sell: 'JPY',
    amount: '150',
    in: 'JPY',
    rate: '149.552238806',
    buyAmount: '1.00',
    sellAmount: '150',
    usd: '1.01',
  },
  {
    buy: 'EUR',
    sell: 'GBP',
    amount: '250.5',
    in: 'EUR',
    rate: '0.8520944883',
    buyAmount: '250.50',
    sellAmount: '213.45',
    usd: '271.09',
  },
];

let harness: V3Harness;

beforeAll(async () => {
  harness = await V3Harness.start({ core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
});
afterAll(async () => harness?.close());

function requestQuote(key: LoadedKey, body: unknown) {
  return harness.signed({
    key,
    method: 'POST',
    path: '/v3/fx/quotes',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    idempotencyKey: randomUUID(),
  });
}

async function quoteCount(orgId: string): Promise<number> {
  const { rows } = await harness.db.query<{ n: string }>('SELECT count(*)::text AS n FROM quotes WHERE org_id = $1', [
    orgId,
  ]);
  return Number(rows[0]!.n);
}

describe.each(MODES)('POST /v3/fx/quotes in the %s book', (mode) => {
  let key: LoadedKey;
  let orgId: string;

  beforeAll(async () => {
    key = await harness.createKey({ mode, scopes: ['view', 'trade'] });
    orgId = key.file.orgId;
  });

  /** Sends the request and expects the error, then proves that no quote row was written. */
  async function expectRefused(
    body: unknown,
    code: Parameters<typeof expectV3Error>[1],
    details?: Record<string, unknown>,
    as = key,
  ) {
    const before = await quoteCount(as.file.orgId);
    const response = await requestQuote(as, body);
    const error = expectV3Error(response, code, details === undefined ? {} : { details });
    expect(await quoteCount(as.file.orgId)).toBe(before);
    return error;
  }

  describe('success', () => {
    it.each(PRICED)('prices $buy/$sell for $amount $in exactly', async (c) => {
      const response = await requestQuote(key, {
        buyCurrency: c.buy,
        sellCurrency: c.sell,
        amount: c.amount,
        amountCurrency: c.in,
      });
      expect(response.status, response.text).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = response.json<{ data: QuoteRecord }>();
      expect(Object.keys(body)).toEqual(['data']);
      expect(body.data).toEqual({
        object: 'quote',
        id: expect.stringMatching(/^qte_[0-9a-f]{32}$/),
        buyCurrency: c.buy,
        sellCurrency: c.sell,
        buyAmount: c.buyAmount,
        sellAmount: c.sellAmount,
        amountCurrency: c.in,
        rate: c.rate,
        reversesTradeId: null,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        expiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      // The client's amount is kept exactly; the other side is what the rule made of it.
      expect(new Decimal(c.in === c.buy ? body.data.buyAmount : body.data.sellAmount).eq(c.amount)).toBe(true);

      // The row is in this book, with the USD value a trade of it will commit.
      const { rows } = await harness.db.query<{
        org_id: string;
        environment: string;
        sell_usd_value: string;
        spread_bps: number;
        actor_key: string;
      }>('SELECT org_id, environment, sell_usd_value::text, spread_bps, actor_key FROM quotes WHERE id = $1', [
        body.data.id,
      ]);
      expect(rows[0]).toMatchObject({ org_id: orgId, environment: mode, spread_bps: 20, actor_key: key.file.name });
      expect(new Decimal(rows[0]!.sell_usd_value).eq(c.usd)).toBe(true);
    });

    it('accepts the exact pair limits and the most decimals the currency has', async () => {
      for (const amount of ['1', '1000000', '1.00', '999999.99']) {
        const response = await requestQuote(key, {
          buyCurrency: 'EUR',
          sellCurrency: 'USD',
          amount,
          amountCurrency: 'EUR',
        });
        expect(response.status, `${amount}: ${response.text}`).toBe(200);
      }
      const jpy = await requestQuote(key, {
        buyCurrency: 'JPY',
        sellCurrency: 'USD',
        amount: '100',
        amountCurrency: 'JPY',
      });
      expect(jpy.json<{ data: QuoteRecord }>().data.buyAmount).toBe('100');
      const usdc = await requestQuote(key, {
        buyCurrency: 'USDC',
        sellCurrency: 'EUR',
        amount: '1.123456',
        amountCurrency: 'USDC',
      });
      expect(usdc.json<{ data: QuoteRecord }>().data.buyAmount).toBe('1.123456');
    });

    it('is valid for 30 seconds by default', async () => {
      const { data } = (
        await requestQuote(key, { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10', amountCurrency: 'EUR' })
      ).json<{ data: QuoteRecord }>();
      expect(Date.parse(data.expiresAt) - Date.parse(data.createdAt)).toBe(30_000);
      expect(Math.abs(Date.parse(data.createdAt) - Date.now())).toBeLessThan(10_000);
    });

    it.each([3, 15, 30, 45, 60])('is valid for validForSeconds %i when asked', async (validForSeconds) => {
      const response = await requestQuote(key, {
        buyCurrency: 'GBP',
        sellCurrency: 'EUR',
        amount: '10',
        amountCurrency: 'EUR',
        validForSeconds,
      });
      expect(response.status, response.text).toBe(200);
      const { data } = response.json<{ data: QuoteRecord }>();
      expect(Date.parse(data.expiresAt) - Date.parse(data.createdAt)).toBe(validForSeconds * 1000);
    });

    it('reads a quote back by id as POST answered it, used or expired, in its own book only (GET /v3/fx/quotes/{id})', async () => {
      const created = (
        await requestQuote(key, {
          buyCurrency: 'EUR',
          sellCurrency: 'USD',
          amount: '250',
          amountCurrency: 'EUR',
          validForSeconds: 3,
        })
      ).json<{ data: QuoteRecord }>().data;
      const read = await harness.signed({ key, path: `/v3/fx/quotes/${created.id}` });
      expect(read.status, read.text).toBe(200);
      expect(read.json()).toEqual({ data: created });
      // Used by a trade, it still reads the same.
      await setCreditLine(harness.db, orgId, mode, new Decimal(1000));
      const traded = await harness.signed({
        key,
        method: 'POST',
        path: '/v3/fx/trades',
        body: JSON.stringify({ quoteId: created.id }),
        idempotencyKey: randomUUID(),
      });
      expect(traded.status, traded.text).toBe(200);
      expect((await harness.signed({ key, path: `/v3/fx/quotes/${created.id}` })).json()).toEqual({ data: created });

      // The other book, another org, an unknown and a malformed id: 404 QUOTE_NOT_FOUND alike.
      const otherBook = await harness.createKey({
        orgId,
        mode: mode === 'live' ? 'sandbox' : 'live',
        scopes: ['view'],
      });
      const otherOrg = await harness.createKey({ mode, scopes: ['view'] });
      for (const [as, id] of [
        [otherBook, created.id],
        [otherOrg, created.id],
        [key, 'qte_0190b5a0c0de7000800000000000abcd'],
        [key, 'trd_0190b5a0c0de7000800000000000abcd'],
        [key, 'not-an-id'],
      ] as const) {
        expectV3Error(await harness.signed({ key: as, path: `/v3/fx/quotes/${id}` }), 'QUOTE_NOT_FOUND', {
          details: { quoteId: id },
        });
      }
      // A read needs the view scope, as every v3 read does.
      const tradeOnly = await harness.createKey({ orgId, mode, scopes: ['trade'] });
      expectV3Error(
        await harness.signed({ key: tradeOnly, path: `/v3/fx/quotes/${created.id}` }),
        'AUTH_INSUFFICIENT_SCOPE',
        { details: { requiredScope: 'view' } },
      );
    });

    it('makes a fresh quote per request', async () => {
      const body = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10', amountCurrency: 'EUR' };
      const [a, b] = await Promise.all([requestQuote(key, body), requestQuote(key, body)]);
      expect(a.json<{ data: QuoteRecord }>().data.id).not.toBe(b.json<{ data: QuoteRecord }>().data.id);
    });
  });

  describe('schema errors: 400 VALIDATION_BODY_FAILED', () => {
    const base = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10', amountCurrency: 'EUR' };
    const issuePaths = (error: { details: Record<string, unknown> }) =>
      (error.details.issues as { path: string; code: string }[]).map((i) => i.path);

    it.each([7, 0, 29, 3.5, '30', null])('rejects validForSeconds %j', async (validForSeconds) => {
      const error = await expectRefused({ ...base, validForSeconds }, 'VALIDATION_BODY_FAILED');
      expect(issuePaths(error)).toEqual(['validForSeconds']);
    });

    it('rejects the same currency on both sides', async () => {
      const error = await expectRefused(
        { buyCurrency: 'USD', sellCurrency: 'USD', amount: '10', amountCurrency: 'USD' },
        'VALIDATION_BODY_FAILED',
      );
      expect(error.details.issues).toEqual([
        { path: 'sellCurrency', code: 'same_currency', message: expect.any(String) },
      ]);
    });

    it('rejects an amountCurrency that is neither side of the pair', async () => {
      const error = await expectRefused({ ...base, amountCurrency: 'GBP' }, 'VALIDATION_BODY_FAILED');
      expect(error.details.issues).toEqual([
        { path: 'amountCurrency', code: 'invalid_value', message: expect.any(String) },
      ]);
    });

    it.each([10, 10.5, '-10', '1e3', '1.123456789', ' 10', '10.', '.5', '', 'ten'])(
      'rejects the amount %j',
      async (amount) => {
        const error = await expectRefused({ ...base, amount }, 'VALIDATION_BODY_FAILED');
        expect(issuePaths(error)).toEqual(['amount']);
      },
    );

    it('rejects missing fields, unknown fields, lower-case codes and malformed JSON', async () => {
      expect(
        issuePaths(
          await expectRefused({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10' }, 'VALIDATION_BODY_FAILED'),
        ),
      ).toEqual(['amountCurrency']);
      expect(issuePaths(await expectRefused({ ...base, side: 'BUY' }, 'VALIDATION_BODY_FAILED'))).toEqual(['side']);
      expect(issuePaths(await expectRefused({ ...base, buyCurrency: 'eur' }, 'VALIDATION_BODY_FAILED'))).toContain(
        'buyCurrency',
      );
      expect(issuePaths(await expectRefused('{"buyCurrency":', 'VALIDATION_BODY_FAILED'))).toEqual(['']);
    });
  });

  describe('business errors', () => {
    it('422 PAIR_NOT_SUPPORTED for a currency that does not exist, on either side', async () => {
      await expectRefused(
        { buyCurrency: 'XYZ', sellCurrency: 'USD', amount: '10', amountCurrency: 'USD' },
        'PAIR_NOT_SUPPORTED',
        {
          buyCurrency: 'XYZ',
          sellCurrency: 'USD',
        },
      );
      await expectRefused(
        { buyCurrency: 'EUR', sellCurrency: 'XYZ', amount: '10', amountCurrency: 'EUR' },
        'PAIR_NOT_SUPPORTED',
        {
          buyCurrency: 'EUR',
          sellCurrency: 'XYZ',
        },
      );
    });

    it('422 QUOTE_INVALID_AMOUNT_PRECISION names the currency and its decimals', async () => {
      await expectRefused(
        { buyCurrency: 'USD', sellCurrency: 'EUR', amount: '1.001', amountCurrency: 'USD' },
        'QUOTE_INVALID_AMOUNT_PRECISION',
        {
          maxDecimals: 2,
          currency: 'USD',
        },
      );
      await expectRefused(
        { buyCurrency: 'JPY', sellCurrency: 'USD', amount: '1000.5', amountCurrency: 'JPY' },
        'QUOTE_INVALID_AMOUNT_PRECISION',
        {
          maxDecimals: 0,
          currency: 'JPY',
        },
      );
      // Precision is checked before the limits: 1.5 JPY is also below the minimum.
      await expectRefused(
        { buyCurrency: 'JPY', sellCurrency: 'USD', amount: '1.5', amountCurrency: 'JPY' },
        'QUOTE_INVALID_AMOUNT_PRECISION',
        {
          maxDecimals: 0,
          currency: 'JPY',
        },
      );
      // The sell side when the amount is in the sell currency.
      await expectRefused(
        { buyCurrency: 'EUR', sellCurrency: 'JPY', amount: '20000.5', amountCurrency: 'JPY' },
        'QUOTE_INVALID_AMOUNT_PRECISION',
        {
          maxDecimals: 0,
          currency: 'JPY',
        },
      );
      await expectRefused(
        { buyCurrency: 'USDC', sellCurrency: 'EUR', amount: '1.1234567', amountCurrency: 'USDC' },
        'QUOTE_INVALID_AMOUNT_PRECISION',
        {
          maxDecimals: 6,
          currency: 'USDC',
        },
      );
    });

    it('422 QUOTE_AMOUNT_OUT_OF_RANGE below the minimum and above the maximum, in the bought currency', async () => {
      const eurLimits = { minAmount: '1.00', maxAmount: '1000000.00', currency: 'EUR' };
      await expectRefused(
        { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '0.99', amountCurrency: 'EUR' },
        'QUOTE_AMOUNT_OUT_OF_RANGE',
        eurLimits,
      );
      await expectRefused(
        { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '1000000.01', amountCurrency: 'EUR' },
        'QUOTE_AMOUNT_OUT_OF_RANGE',
        eurLimits,
      );
      // Sell-fixed: the limits apply to the bought amount the rate gives (about 1,016,486 EUR here).
      await expectRefused(
        { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '1100000', amountCurrency: 'USD' },
        'QUOTE_AMOUNT_OUT_OF_RANGE',
        eurLimits,
      );
      await expectRefused(
        { buyCurrency: 'JPY', sellCurrency: 'USD', amount: '99', amountCurrency: 'JPY' },
        'QUOTE_AMOUNT_OUT_OF_RANGE',
        {
          minAmount: '100',
          maxAmount: '150000000',
          currency: 'JPY',
        },
      );
    });

    it('422 QUOTE_AMOUNT_OUT_OF_RANGE when a sell-fixed amount buys less than the minimum, down to 0', async () => {
      const usdLimits = { minAmount: '1.00', maxAmount: '1000000.00', currency: 'USD' };
      // 1 JPY buys 0.0066 USD, rounded down to 0.00; 149 JPY buys 0.99 USD.
      await expectRefused(
        { buyCurrency: 'USD', sellCurrency: 'JPY', amount: '1', amountCurrency: 'JPY' },
        'QUOTE_AMOUNT_OUT_OF_RANGE',
        usdLimits,
      );
      await expectRefused(
        { buyCurrency: 'USD', sellCurrency: 'JPY', amount: '149', amountCurrency: 'JPY' },
        'QUOTE_AMOUNT_OUT_OF_RANGE',
        usdLimits,
      );
      await expectRefused(
        { buyCurrency: 'USD', sellCurrency: 'EUR', amount: '0.01', amountCurrency: 'EUR' },
        'QUOTE_AMOUNT_OUT_OF_RANGE',
        usdLimits,
      );
    });

    it.each(['0', '0.00', '000'])('400 VALIDATION_BODY_FAILED for the zero amount %j, never a 500', async (amount) => {
      const error = await expectRefused(
        { buyCurrency: 'EUR', sellCurrency: 'USD', amount, amountCurrency: 'EUR' },
        'VALIDATION_BODY_FAILED',
      );
      expect(error.details.issues).toEqual([{ path: 'amount', code: 'too_small', message: expect.any(String) }]);
    });

    it('403 AUTH_INSUFFICIENT_SCOPE for a key without the trade scope', async () => {
      const viewer = await harness.createKey({ mode, scopes: ['view'], orgId });
      await expectRefused(
        { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10', amountCurrency: 'EUR' },
        'AUTH_INSUFFICIENT_SCOPE',
        { requiredScope: 'trade' },
        viewer,
      );
    });
  });

  describe('per-org trading settings (403), in this book only', () => {
    let settingsKey: LoadedKey;
    let otherBookKey: LoadedKey;
    const otherMode: Mode = mode === 'sandbox' ? 'live' : 'sandbox';
    const eurUsd = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10', amountCurrency: 'EUR' };

    beforeAll(async () => {
      settingsKey = await harness.createKey({ mode, scopes: ['trade'] });
      otherBookKey = await harness.createKey({ mode: otherMode, scopes: ['trade'], orgId: settingsKey.file.orgId });
    });

    const expectQuotes = async (as: LoadedKey, body: unknown) => {
      const response = await requestQuote(as, body);
      expect(response.status, response.text).toBe(200);
    };

    it('TRADE_DISABLED while trading is off, before any other check', async () => {
      const org = settingsKey.file.orgId;
      await setTradingEnabled(harness.db, org, mode, false);
      try {
        await expectRefused(eurUsd, 'TRADE_DISABLED', {}, settingsKey);
        await expectRefused(
          { buyCurrency: 'XYZ', sellCurrency: 'USD', amount: '10', amountCurrency: 'USD' },
          'TRADE_DISABLED',
          {},
          settingsKey,
        );
        await expectRefused({ ...eurUsd, amount: '0.5' }, 'TRADE_DISABLED', {}, settingsKey);
        await expectQuotes(otherBookKey, eurUsd);
      } finally {
        await setTradingEnabled(harness.db, org, mode, true);
      }
      await expectQuotes(settingsKey, eurUsd);
    });

    it('TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT for a disabled currency on either side', async () => {
      const org = settingsKey.file.orgId;
      await setCurrencyEnabled(harness.db, org, mode, 'GBP', false);
      try {
        await expectRefused(
          { buyCurrency: 'GBP', sellCurrency: 'USD', amount: '10', amountCurrency: 'GBP' },
          'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT',
          { currency: 'GBP' },
          settingsKey,
        );
        await expectRefused(
          { buyCurrency: 'EUR', sellCurrency: 'GBP', amount: '10', amountCurrency: 'EUR' },
          'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT',
          { currency: 'GBP' },
          settingsKey,
        );
        await expectQuotes(settingsKey, eurUsd);
        await expectQuotes(otherBookKey, {
          buyCurrency: 'GBP',
          sellCurrency: 'USD',
          amount: '10',
          amountCurrency: 'GBP',
        });
      } finally {
        await setCurrencyEnabled(harness.db, org, mode, 'GBP', true);
      }
      await expectQuotes(settingsKey, { buyCurrency: 'GBP', sellCurrency: 'USD', amount: '10', amountCurrency: 'GBP' });
    });

    it('TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT for a disabled direction of a pair only', async () => {
      const org = settingsKey.file.orgId;
      await setPairEnabled(harness.db, org, mode, { buyCurrency: 'EUR', sellCurrency: 'USD' }, false);
      try {
        await expectRefused(
          eurUsd,
          'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT',
          { buyCurrency: 'EUR', sellCurrency: 'USD' },
          settingsKey,
        );
        await expectRefused(
          { ...eurUsd, amountCurrency: 'USD' },
          'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT',
          { buyCurrency: 'EUR', sellCurrency: 'USD' },
          settingsKey,
        );
        await expectQuotes(settingsKey, {
          buyCurrency: 'USD',
          sellCurrency: 'EUR',
          amount: '10',
          amountCurrency: 'USD',
        });
        await expectQuotes(otherBookKey, eurUsd);
      } finally {
        await setPairEnabled(harness.db, org, mode, { buyCurrency: 'EUR', sellCurrency: 'USD' }, true);
      }
      await expectQuotes(settingsKey, eurUsd);
    });

    it('quotes regardless of the credit line (credit is taken by trades)', async () => {
      await setCreditLine(harness.db, settingsKey.file.orgId, mode, new Decimal(0));
      await expectQuotes(settingsKey, { ...eurUsd, amount: '1000000' });
    });
  });
});
