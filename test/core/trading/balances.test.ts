/**
 * GET /v3/fx/balances over HTTP. Prices are the built-in table (EUR 1.08, GBP 1.27, JPY 0.0067)
 * with the default 20 bps spread, so every figure below is exact:
 * - buy 100.00 EUR for USD: sells 108.22 USD;
 * - buy 150 JPY for USD: sells 1.01 USD; 150 JPY is worth 1.005 USD, shown half-even as 1.00;
 * - sell 1.50 GBP for USD: buys 1.90 USD; -1.50 GBP is worth -1.905 USD, shown as -1.90;
 * - buy 10 USDC for EUR: sells 9.28 EUR (worth -10.0224 USD, shown -10.02);
 * - buy 5.00 USD for USDC: sells 5.010000 USDC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { postMovement } from '../../../src/core/ledger/ledger.js';
import { withdrawableBalance } from '../../../src/core/trading/balances.js';
import { setCreditLine } from '../../../src/core/trading/org-books.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { quoteAndTrade, recordTestDeposit, type TradeRequest } from '../../support/book-fixtures.js';
import { expectPipelineHeaders, expectV3Error } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

interface Balance {
  object: string;
  id: string;
  currency: string;
  amount: string;
  withdrawableAmount: string;
  usdValue: string;
  withdrawableUsdValue: string;
  createdAt: string;
  updatedAt: string;
}

interface Totals {
  netPositiveUsd: string;
  netNegativeUsd: string;
  netUsd: string;
}

/** The fields of a record that do not depend on time or generated ids. */
type Figures = Omit<Balance, 'object' | 'id' | 'createdAt' | 'updatedAt'>;

let harness: V3Harness;
let counter = 0;

beforeAll(async () => {
  harness = await V3Harness.start({ core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
});
afterAll(async () => harness?.close());

function next(): number {
  counter += 1;
  return counter;
}

const trade = (key: LoadedKey, request: TradeRequest) => quoteAndTrade(harness, key, request);

const BUY_100_EUR = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.00', amountCurrency: 'EUR' };

/** An incoming deposit as the ledger records it: rail in transit → client. */
async function deposit(orgId: string, environment: Mode, currency: string, amount: string, at: Date): Promise<void> {
  await recordTestDeposit(harness.db, { orgId, environment, currency, amount, at });
}

async function balances(key: LoadedKey): Promise<{ data: Balance[]; totals: Totals }> {
  const response = await harness.signed({ key, path: '/v3/fx/balances' });
  expect(response.status, response.text).toBe(200);
  expectPipelineHeaders(response);
  const body = response.json<{ data: Balance[]; totals: Totals }>();
  // A bounded list: no pagination object, only the totals the v2 shape needs beside the data.
  expect(Object.keys(body)).toEqual(['data', 'totals']);
  return body;
}

function figures(records: readonly Balance[]): Figures[] {
  return records.map(({ currency, amount, withdrawableAmount, usdValue, withdrawableUsdValue }) => ({
    currency,
    amount,
    withdrawableAmount,
    usdValue,
    withdrawableUsdValue,
  }));
}

describe('GET /v3/fx/balances', () => {
  it('is an empty list with zero totals before any movement', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    expect(await balances(key)).toEqual({
      data: [],
      totals: { netPositiveUsd: '0.00', netNegativeUsd: '0.00', netUsd: '0.00' },
    });
  });

  it('lists one record per client account after a trade, negative where the org owes', async () => {
    const key = await harness.createKey();
    await trade(key, BUY_100_EUR);
    const { data, totals } = await balances(key);

    const { rows } = await harness.db.query<{ id: string; currency: string; created_at: Date; updated_at: Date }>(
      `SELECT id, currency, created_at, updated_at FROM ledger_accounts WHERE org_id = $1 AND environment = 'sandbox' AND kind = 'client' ORDER BY currency`,
      [key.file.orgId],
    );
    expect(data).toEqual(
      rows.map((row) => ({
        object: 'balance',
        id: row.id,
        currency: row.currency,
        createdAt: row.created_at.toISOString(),
        updatedAt: row.updated_at.toISOString(),
        ...figures(data).find((entry) => entry.currency === row.currency),
      })),
    );
    for (const record of data) expect(record.id).toMatch(/^bal_/);
    expect(figures(data)).toEqual([
      {
        currency: 'EUR',
        amount: '100.00',
        withdrawableAmount: '100.00',
        usdValue: '108.00',
        withdrawableUsdValue: '108.00',
      },
      {
        currency: 'USD',
        amount: '-108.22',
        withdrawableAmount: '0.00',
        usdValue: '-108.22',
        withdrawableUsdValue: '0.00',
      },
    ]);
    expect(totals).toEqual({ netPositiveUsd: '108.00', netNegativeUsd: '-108.22', netUsd: '-0.22' });
  });

  it('rounds USD values half-even to cents, positive and negative alike', async () => {
    const key = await harness.createKey();
    await trade(key, { buyCurrency: 'JPY', sellCurrency: 'USD', amount: '150', amountCurrency: 'JPY' });
    const sale = await trade(key, { buyCurrency: 'USD', sellCurrency: 'GBP', amount: '1.50', amountCurrency: 'GBP' });
    expect(sale.buyAmount).toBe('1.90');

    const { data, totals } = await balances(key);
    expect(figures(data)).toEqual([
      { currency: 'GBP', amount: '-1.50', withdrawableAmount: '0.00', usdValue: '-1.90', withdrawableUsdValue: '0.00' },
      { currency: 'JPY', amount: '150', withdrawableAmount: '150', usdValue: '1.00', withdrawableUsdValue: '1.00' },
      { currency: 'USD', amount: '0.89', withdrawableAmount: '0.89', usdValue: '0.89', withdrawableUsdValue: '0.89' },
    ]);
    // The totals add up the values shown.
    expect(totals).toEqual({ netPositiveUsd: '1.89', netNegativeUsd: '-1.90', netUsd: '-0.01' });
  });

  it("writes each amount with its currency's decimals and sorts by code (USD before USDC)", async () => {
    const key = await harness.createKey();
    await trade(key, { buyCurrency: 'USDC', sellCurrency: 'EUR', amount: '10', amountCurrency: 'USDC' });
    await trade(key, { buyCurrency: 'USD', sellCurrency: 'USDC', amount: '5.00', amountCurrency: 'USD' });

    const { data, totals } = await balances(key);
    expect(figures(data)).toEqual([
      {
        currency: 'EUR',
        amount: '-9.28',
        withdrawableAmount: '0.00',
        usdValue: '-10.02',
        withdrawableUsdValue: '0.00',
      },
      { currency: 'USD', amount: '5.00', withdrawableAmount: '5.00', usdValue: '5.00', withdrawableUsdValue: '5.00' },
      {
        currency: 'USDC',
        amount: '4.990000',
        withdrawableAmount: '4.990000',
        usdValue: '4.99',
        withdrawableUsdValue: '4.99',
      },
    ]);
    expect(totals).toEqual({ netPositiveUsd: '9.99', netNegativeUsd: '-10.02', netUsd: '-0.03' });
  });

  it('follows deposits: a covered balance becomes withdrawable, updatedAt moves, createdAt stays', async () => {
    const key = await harness.createKey();
    const orgId = key.file.orgId;
    await trade(key, BUY_100_EUR);
    const before = (await balances(key)).data.find((record) => record.currency === 'USD')!;

    const later = new Date(Date.parse(before.updatedAt) + 60_000);
    await deposit(orgId, 'sandbox', 'USD', '1000.00', later);
    await deposit(orgId, 'sandbox', 'GBP', '25.00', later);

    const { data, totals } = await balances(key);
    const after = data.find((record) => record.currency === 'USD')!;
    expect(after).toMatchObject({ id: before.id, createdAt: before.createdAt, updatedAt: later.toISOString() });
    expect(figures(data)).toEqual([
      {
        currency: 'EUR',
        amount: '100.00',
        withdrawableAmount: '100.00',
        usdValue: '108.00',
        withdrawableUsdValue: '108.00',
      },
      {
        currency: 'GBP',
        amount: '25.00',
        withdrawableAmount: '25.00',
        usdValue: '31.75',
        withdrawableUsdValue: '31.75',
      },
      {
        currency: 'USD',
        amount: '891.78',
        withdrawableAmount: '891.78',
        usdValue: '891.78',
        withdrawableUsdValue: '891.78',
      },
    ]);
    expect(totals).toEqual({ netPositiveUsd: '1031.53', netNegativeUsd: '0.00', netUsd: '1031.53' });
  });

  it('counts money held by pending withdrawals in amount, not in withdrawableAmount', async () => {
    const key = await harness.createKey();
    const orgId = key.file.orgId;
    await deposit(orgId, 'sandbox', 'USD', '1000.00', new Date());
    const before = (await balances(key)).data[0]!;
    // A withdrawal's hold as the ledger records it: client -> withdrawal_hold.
    const later = new Date(Date.parse(before.updatedAt) + 60_000);
    await harness.db.transaction((tx) =>
      postMovement(tx, {
        orgId,
        environment: 'sandbox',
        kind: 'withdrawal_hold',
        referenceId: `wtd_test_${next()}`,
        at: later,
        postings: [
          { account: 'client', currency: 'USD', amount: new Decimal('-250.50') },
          { account: 'withdrawal_hold', currency: 'USD', amount: new Decimal('250.50') },
        ],
      }),
    );
    const { data, totals } = await balances(key);
    // One record per currency still (the hold is no balance of its own), the client account's id.
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({ id: before.id, updatedAt: later.toISOString() });
    expect(figures(data)).toEqual([
      {
        currency: 'USD',
        amount: '1000.00',
        withdrawableAmount: '749.50',
        usdValue: '1000.00',
        withdrawableUsdValue: '749.50',
      },
    ]);
    expect(totals).toEqual({ netPositiveUsd: '1000.00', netNegativeUsd: '0.00', netUsd: '1000.00' });
  });

  it('keeps the sandbox and live books apart', async () => {
    const sandbox = await harness.createKey();
    const orgId = sandbox.file.orgId;
    const live = await harness.createKey({ orgId, mode: 'live' });
    await trade(sandbox, BUY_100_EUR);
    expect((await balances(live)).data).toEqual([]);

    await setCreditLine(harness.db, orgId, 'live', new Decimal('500000'));
    await trade(live, { buyCurrency: 'GBP', sellCurrency: 'USD', amount: '10.00', amountCurrency: 'GBP' });

    const liveBody = await balances(live);
    expect(liveBody.data.map((record) => record.currency)).toEqual(['GBP', 'USD']);
    expect(liveBody.data[0]).toMatchObject({ amount: '10.00', usdValue: '12.70' });
    const sandboxBody = await balances(sandbox);
    expect(figures(sandboxBody.data).map((record) => [record.currency, record.amount])).toEqual([
      ['EUR', '100.00'],
      ['USD', '-108.22'],
    ]);
    // Different books, different accounts.
    const liveIds = new Set(liveBody.data.map((record) => record.id));
    expect(sandboxBody.data.some((record) => liveIds.has(record.id))).toBe(false);
  });

  it('shows another org none of it', async () => {
    const trader = await harness.createKey();
    await trade(trader, BUY_100_EUR);
    const other = await harness.createKey({ scopes: ['view'] });
    expect((await balances(other)).data).toEqual([]);
  });

  it('needs the view scope', async () => {
    const key = await harness.createKey({ scopes: ['trade'] });
    const response = await harness.signed({ key, path: '/v3/fx/balances' });
    expectV3Error(response, 'AUTH_INSUFFICIENT_SCOPE', { details: { requiredScope: 'view' } });
  });

  it('takes no query parameters', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    const response = await harness.signed({ key, path: '/v3/fx/balances?limit=10' });
    const error = expectV3Error(response, 'VALIDATION_QUERY_FAILED');
    expect(error.details).toMatchObject({ issues: [{ path: 'limit' }] });
  });
});

describe('withdrawableBalance', () => {
  // Given the client balance, which already excludes what pending withdrawals hold.
  it('is the balance when positive and 0 when the org owes', () => {
    expect(withdrawableBalance(new Decimal('12.34')).toFixed()).toBe('12.34');
    expect(withdrawableBalance(new Decimal('0')).toFixed()).toBe('0');
    expect(withdrawableBalance(new Decimal('-5')).toFixed()).toBe('0');
  });
});
