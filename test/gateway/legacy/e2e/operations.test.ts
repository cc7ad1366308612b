/**
 * The v1 and v2 operations end to end: a legacy client (node:crypto JWTs) calls the gateway,
 * which calls the real core over HTTP. Checks the legacy shapes, amounts as exact JSON numbers
 * read from the raw text, ids as UUIDs, and that each answer agrees with what v3 itself says
 * about the same records. The contract suite (../contract/) reads every operation the way a
 * client written from the public legacy contract does.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { idToLegacyUuid } from '../../../../src/lib/ids.js';
import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import {
  FEDWIRE_ACCOUNT,
  postData,
  postEmpty,
  quoteAndTrade,
  recordTestDeposit,
} from '../../../support/book-fixtures.js';
import { idemKey, LegacyHarness } from '../../../support/legacy-harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let h: LegacyHarness;
let key: LoadedKey;
let usdAccountId: string;
let usdcAccountId: string;

/** The raw text of `"field":<number>`: proves a number was written with exactly these digits. */
function rawNumber(text: string, field: string): string[] {
  return [...text.matchAll(new RegExp(`"${field}":(-?[0-9.]+)`, 'g'))].map((match) => match[1]!);
}

beforeAll(async () => {
  h = await LegacyHarness.start();
  key = await h.createKey();
  const orgId = key.file.orgId;
  await recordTestDeposit(h.core.db, { orgId, environment: 'sandbox', currency: 'USD', amount: '100000.00' });
  await recordTestDeposit(h.core.db, { orgId, environment: 'sandbox', currency: 'USDC', amount: '5000.000000' });
  const usd = await postData(h.core, key, '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT);
  const usdc = await postData(h.core, key, '/v3/fx/withdrawal-accounts', {
    currency: 'USDC',
    assetType: 'STABLECOIN',
    accountName: 'Treasury wallet',
    network: 'ETHEREUM',
    address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  });
  for (const id of [usd.id!, usdc.id!]) await postEmpty(h.core, key, `/v3/fx/sandbox/withdrawal-accounts/${id}/verify`);
  usdAccountId = idToLegacyUuid('withdrawalAccount', usd.id!)!;
  usdcAccountId = idToLegacyUuid('withdrawalAccount', usdc.id!)!;
});
afterAll(async () => {
  await h?.close();
});

describe('quotes and trades', () => {
  it('v2 generate_quote answers the legacy quote shape with exact amounts', async () => {
    const body = '{"amount":100.50,"buy":"EUR","sell":"USD","referencedUnit":"EUR","quoteForSeconds":60}';
    const response = await h.v2(key, { path: 'generate_quote', body, headers: { 'idempotency-key': idemKey() } });
    expect(response.status, response.text).toBe(200);
    const {
      data: { quote: data },
    } = response.json<{ data: { quote: Record<string, unknown> } }>();
    expect(response.json()).toMatchObject({ status: 'success', message: 'Quote generated successfully' });
    expect(data).toMatchObject({
      buy: 'EUR',
      sell: 'USD',
      referencedUnit: 'EUR',
      referencedAmount: 100.5,
      expiryTimeinSeconds: 60,
    });
    expect(data.id).toMatch(UUID);
    expect(rawNumber(response.text, 'referencedAmount')).toEqual(['100.50']);
    expect(rawNumber(response.text, 'quoteAmount')[0]).toMatch(/^[0-9]+\.[0-9]{2}$/);
  });

  it('v1 generate_quote then trade: the trade result with balances and credit, in data and at the top', async () => {
    const quote = await h.v1(key, {
      path: 'generate_quote',
      body: '{"amount":250,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}',
    });
    expect(quote.status, quote.text).toBe(200);
    const quoteId = quote.json<{ data: { quote: { id: string } } }>().data.quote.id;
    const trade = await h.v1(key, { path: 'trade', body: JSON.stringify({ quoteId }) });
    expect(trade.status, trade.text).toBe(200);
    type Result = {
      trade: Record<string, unknown>;
      balances: Record<string, number>;
      userCreditLimit: number;
      userCreditUsed: number;
    };
    const body = trade.json<{ data: Result } & Result>();
    const { data } = body;
    expect(data.trade).toMatchObject({
      buy: 'EUR',
      sell: 'USD',
      referencedUnit: 'EUR',
      referencedAmount: 250,
      referenceAmount: 250,
      status: 'EXECUTED',
      quoteId,
    });
    expect({
      trade: body.trade,
      balances: body.balances,
      userCreditLimit: body.userCreditLimit,
      userCreditUsed: body.userCreditUsed,
    }).toEqual(data);
    expect(data.trade.id).toMatch(UUID);
    expect(Object.keys(data.balances)).toEqual(expect.arrayContaining(['USD', 'EUR']));
    expect(data.userCreditLimit).toBe(1_000_000);
    expect(data.userCreditUsed).toBeGreaterThan(0);
    expect(trade.headers.deprecation).toBe('@1767225600');
    expect(trade.headers.sunset).toBe('Thu, 31 Dec 2026 23:59:59 GMT');
    expect(trade.headers.link).toContain('rel="deprecation"');

    const v3 = await h.core.signed({ key, path: `/v3/fx/trades/trd_${(data.trade.id as string).replaceAll('-', '')}` });
    expect(v3.status).toBe(200);
    expect(v3.json<{ data: { referencedAmount: string; sellAmount: string } }>().data).toMatchObject({
      referencedAmount: '250.00',
    });
    expect(rawNumber(trade.text, 'amount')).toEqual(
      Array(2).fill(v3.json<{ data: { sellAmount: string } }>().data.sellAmount),
    );
  });

  it('v2 trade answers {balances, trade, userCreditLimit, userCreditUsed}', async () => {
    const quote = await h.v2(key, {
      path: 'generate_quote',
      body: '{"amount":10,"buy":"USD","sell":"EUR","referencedUnit":"USD"}',
      headers: { 'idempotency-key': idemKey() },
    });
    const quoteId = quote.json<{ data: { quote: { id: string } } }>().data.quote.id;
    const trade = await h.v2(key, {
      path: 'trade',
      body: JSON.stringify({ quoteId, clientReferenceId: 'inv-7' }),
      headers: { 'idempotency-key': idemKey() },
    });
    expect(trade.status, trade.text).toBe(200);
    const { data } = trade.json<{ data: { trade: Record<string, unknown> } }>();
    expect(data.trade).toMatchObject({
      buy: 'USD',
      sell: 'EUR',
      referencedUnit: 'USD',
      referencedAmount: 10,
      referenceAmount: 10,
      status: 'EXECUTED',
      quoteId,
      clientReferenceId: 'inv-7',
      originalTradeId: null,
    });
    expect(trade.json()).not.toHaveProperty('trade');
    expect(trade.headers.deprecation).toBeUndefined();
  });

  it('v2 reverse-quote, reverse and settle', async () => {
    const original = await quoteAndTrade(h.core, key, {
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      amount: '40.00',
      amountCurrency: 'EUR',
    });
    const tradeId = idToLegacyUuid('trade', original.id!)!;
    const quote = await h.v2(key, {
      path: 'trade/reverse-quote',
      body: JSON.stringify({ tradeId }),
      headers: { 'idempotency-key': idemKey() },
    });
    expect(quote.status, quote.text).toBe(200);
    const reverseQuoteId = quote.json<{ data: { quote: { id: string } } }>().data.quote.id;
    const reversed = await h.v2(key, {
      path: 'trade/reverse',
      body: JSON.stringify({ tradeId, quoteId: reverseQuoteId }),
      headers: { 'idempotency-key': idemKey() },
    });
    expect(reversed.status, reversed.text).toBe(200);
    const result = reversed.json<{
      data: { trade: Record<string, unknown>; reversalDetails: Record<string, unknown> };
    }>().data;
    expect(result.trade).toMatchObject({ status: 'REVERSED', originalTradeId: tradeId });
    expect(result.reversalDetails).toMatchObject({
      direction: expect.stringMatching(/^(CREDIT|DEBIT)$/),
      currency: 'USD',
    });

    const toSettle = await quoteAndTrade(h.core, key, {
      buyCurrency: 'USDC',
      sellCurrency: 'USD',
      amount: '10',
      amountCurrency: 'USD',
    });
    const settled = await h.v2(key, {
      path: 'trade/settle',
      body: JSON.stringify({ tradeId: idToLegacyUuid('trade', toSettle.id!) }),
      headers: { 'idempotency-key': idemKey() },
    });
    expect(settled.status, settled.text).toBe(200);
    expect(settled.json<{ data: { trade: Record<string, unknown> } }>().data.trade).toMatchObject({
      status: 'SETTLED',
    });
  });
});

describe('reads', () => {
  it.each(['v1', 'v2'] as const)(
    '%s trade/{id} answers the trade record; a malformed id is the legacy 400 without an upstream call',
    async (generation) => {
      const trade = await quoteAndTrade(h.core, key, {
        buyCurrency: 'USD',
        sellCurrency: 'EUR',
        amount: '12.34',
        amountCurrency: 'EUR',
      });
      const response = await h.call(generation, key, { path: `trade/${idToLegacyUuid('trade', trade.id!)}` });
      expect(response.status, response.text).toBe(200);
      expect(response.json<{ data: unknown }>().data).toMatchObject({
        tradingPair: 'EUR/USD',
        tradeDirection: 'SELL',
        amount: 12.34,
        status: 'EXECUTED',
        buy: 'USD',
        sell: 'EUR',
      });
      const malformed = await h.call(generation, key, { path: 'trade/not-a-uuid' });
      expect(malformed.status).toBe(400);
      expect(malformed.json()).toEqual({ status: 'error', message: 'Query validation failed' });
    },
  );

  it.each(['v1', 'v2'] as const)('%s balances: the balance records with the USD totals', async (generation) => {
    const response = await h.call(generation, key, { path: 'balances' });
    expect(response.status, response.text).toBe(200);
    const body = response.json<{ data: Record<string, unknown>[]; netBalanceInUSD: number }>();
    const usd = body.data.find((balance) => balance.currency === 'USD')!;
    expect(usd).toMatchObject({ totalBalanceInUSD: usd.amount });
    expect(usd.id).toMatch(UUID);
    expect(typeof body.netBalanceInUSD).toBe('number');
    const v3 = await h.core.signed({ key, path: '/v3/fx/balances' });
    const v3Usd = v3
      .json<{ data: { currency: string; amount: string }[] }>()
      .data.find((balance) => balance.currency === 'USD')!;
    expect(rawNumber(response.text, 'amount')).toContain(v3Usd.amount);
  });

  it.each(['v1', 'v2'] as const)('%s trades: a page with meta.pagination', async (generation) => {
    const response = await h.call(generation, key, { path: 'trades?page=1&limit=2' });
    expect(response.status, response.text).toBe(200);
    const body = response.json<{ data: unknown[]; meta: { pagination: Record<string, number> } }>();
    expect(body.data).toHaveLength(2);
    expect(body.meta.pagination).toMatchObject({ page: 1, limit: 2, start: 0, end: 2 });
    expect(body.meta.pagination.total).toBeGreaterThanOrEqual(5);
  });

  it('v1 deposits with a currency filter; v2 deposits', async () => {
    await postData(h.core, key, '/v3/fx/sandbox/deposits', { currency: 'EUR', amount: '75.25' });
    await postData(h.core, key, '/v3/fx/sandbox/deposits', { currency: 'GBP', amount: '10.00' });
    const eur = await h.v1(key, { path: 'deposits?currency=EUR' });
    expect(eur.status, eur.text).toBe(200);
    const body = eur.json<{ data: Record<string, unknown>[]; meta: { pagination: { total: number } } }>();
    expect(body.meta.pagination.total).toBe(1);
    expect(body.data[0]).toMatchObject({
      currency: 'EUR',
      amount: 75.25,
      orgId: key.file.orgId,
      network: 'FIAT',
      status: 'COMPLETED',
      completedAt: expect.any(String),
    });
    const all = await h.v2(key, { path: 'deposits' });
    expect(all.json<{ meta: { pagination: { total: number } } }>().meta.pagination.total).toBe(2);
  });

  it('a deposit v3 failed: v2 shows it as ERROR and v1 the same, with no completedAt', async () => {
    const other = await h.createKey();
    await postData(h.core, other, '/v3/fx/sandbox/deposits', { currency: 'USD', amount: '20.00', outcome: 'FAILED' });
    for (const generation of ['v1', 'v2'] as const) {
      const response = await h[generation](other, { path: 'deposits' });
      expect(response.status, response.text).toBe(200);
      expect(response.json<{ data: Record<string, unknown>[] }>().data).toEqual([
        expect.objectContaining({ currency: 'USD', amount: 20, status: 'ERROR', completedAt: null }),
      ]);
    }
  });

  it('v1 fiat_withdrawal_addresses and withdrawal_addresses', async () => {
    const fiat = await h.v1(key, { path: 'fiat_withdrawal_addresses' });
    expect(fiat.status, fiat.text).toBe(200);
    expect(fiat.json<{ data: unknown[] }>().data).toEqual([
      expect.objectContaining({
        id: usdAccountId,
        currency: 'USD',
        nickname: 'Operating account',
        status: 'active',
        verified: true,
        transferType: 'FEDWIRE',
        routingNumber: '021000021',
        orgId: key.file.orgId,
      }),
    ]);
    const crypto = await h.v1(key, { path: 'withdrawal_addresses' });
    expect(crypto.json<{ data: unknown[] }>().data).toEqual([
      expect.objectContaining({
        id: usdcAccountId,
        name: 'Treasury wallet',
        coinName: 'USDC',
        coinNetworkName: 'Ethereum',
        status: 'Verified',
        verified: true,
      }),
    ]);
  });

  it.each(['v1', 'v2'] as const)("%s available_markets: the pairs and each pair's limits", async (generation) => {
    const response = await h.call(generation, key, { path: 'available_markets' });
    expect(response.status, response.text).toBe(200);
    const { data } = response.json<{
      data: { tradingPairs: { buy: string; sell: string }[]; tradeLimits: Record<string, { minTradeLimit: number }>[] };
    }>();
    expect(data.tradingPairs).toContainEqual({ buy: 'EUR', sell: 'USD' });
    expect(data.tradeLimits.map((limit) => Object.keys(limit))).toContainEqual(['EUR/USD']);
    expect(rawNumber(response.text, 'minTradeLimit')[0]).toMatch(/^[0-9]+(\.[0-9]+)?$/);
  });
});

describe('withdrawals', () => {
  it('v2 withdrawal (stablecoin) and fiat_withdrawal, then the v2 withdrawals list', async () => {
    const crypto = await h.v2(key, {
      path: 'withdrawal',
      body: `{"amount":12.5,"currency":"USDC","withdrawalAddressId":"${usdcAccountId}"}`,
      headers: { 'idempotency-key': idemKey() },
    });
    expect(crypto.status, crypto.text).toBe(200);
    expect(crypto.json<{ data: unknown }>().data).toMatchObject({
      currency: 'USDC',
      amount: 12.5,
      withdrawalAddressId: usdcAccountId,
      network: 'ETHEREUM',
    });
    expect(rawNumber(crypto.text, 'amount')).toEqual(['12.500000']);
    const fiat = await h.v2(key, {
      path: 'fiat_withdrawal',
      body: `{"amount":1e2,"currency":"USD","withdrawalAddressId":"${usdAccountId}"}`,
      headers: { 'idempotency-key': idemKey() },
    });
    expect(fiat.status, fiat.text).toBe(200);
    expect(rawNumber(fiat.text, 'amount')).toEqual(['100.00']);
    expect(fiat.json<{ data: unknown }>().data).toMatchObject({ network: 'FIAT', withdrawalAddressId: usdAccountId });
    const list = await h.v2(key, { path: 'withdrawals?limit=50' });
    expect(list.json<{ meta: { pagination: { total: number } } }>().meta.pagination.total).toBe(2);
  });

  it('a 20-digit amount is read from the raw text, never through a JS number', async () => {
    const response = await h.v2(key, {
      path: 'withdrawal',
      body: `{"amount":12345678901234567890.12,"currency":"USDC","withdrawalAddressId":"${usdcAccountId}"}`,
      headers: { 'idempotency-key': idemKey() },
    });
    // v3 refuses it (more than the balance); what matters is that it got the exact amount.
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({ status: 'error', message: 'Insufficient balance for this withdraw.' });
  });

  it('an unknown withdrawal address is the v2 400, a not-found in v2 terms', async () => {
    const response = await h.v2(key, {
      path: 'withdrawal',
      body: `{"amount":1,"currency":"USDC","withdrawalAddressId":"${randomUUID()}"}`,
      headers: { 'idempotency-key': idemKey() },
    });
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({ status: 'error', message: 'Withdrawal address not found' });
  });
});
