/**
 * GET /v3/fx/exposure over HTTP. Prices are the built-in table (EUR 1.08, GBP 1.27, JPY 0.0067)
 * with the default 20 bps spread, so every figure below is exact:
 * - buy 100.00 EUR for USD: rate 1.08216, sells 108.22 USD (108.216 rounded up), holds 108.22;
 * - buy 50.00 EUR for USD: sells 54.11 USD (54.108 up), holds 54.11;
 * - buy 150 JPY for USD: rate 0.0067134, sells 1.01 USD (1.00701 up), holds 1.01;
 * - sell 1.50 GBP for USD: holds 1.91 (1.905 rounded up);
 * - sell 10.00 EUR for USD: holds 10.80.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { availableCredit } from '../../../src/core/trading/exposure.js';
import { setCreditLine } from '../../../src/core/trading/org-books.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal, formatToDecimals } from '../../../src/lib/money.js';
import { postData, quoteAndTrade, recordTestDeposit, type TradeRequest } from '../../support/book-fixtures.js';
import { expectPipelineHeaders, expectV3Error } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

interface Exposure {
  object: string;
  currency: string;
  creditLine: string;
  committedAmount: string;
  availableCredit: string;
  breakdown: Array<{ currency: string; settlementStage: string; tradeCount: number; amount: string; usdValue: string }>;
}

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

const post = (key: LoadedKey, path: string, body: object) => postData(harness, key, path, body);
const trade = (key: LoadedKey, request: TradeRequest) => quoteAndTrade(harness, key, request);

const BUY_100_EUR = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.00', amountCurrency: 'EUR' };

/** An incoming deposit as the ledger records it: rail in transit → client. */
async function deposit(orgId: string, environment: Mode, currency: string, amount: string): Promise<void> {
  await recordTestDeposit(harness.db, { orgId, environment, currency, amount });
}

async function exposure(key: LoadedKey): Promise<Exposure> {
  const response = await harness.signed({ key, path: '/v3/fx/exposure' });
  expect(response.status, response.text).toBe(200);
  expectPipelineHeaders(response);
  const body = response.json<{ data: Exposure }>();
  expect(Object.keys(body)).toEqual(['data']);
  return body.data;
}

/** The maintained committed_usd agrees with the trades: the sum of sell_usd_value of EXECUTED ones. */
async function expectCommittedMatchesTrades(key: LoadedKey, data: Exposure): Promise<void> {
  const { rows } = await harness.db.query<{ total: string }>(
    `SELECT coalesce(sum(sell_usd_value), 0)::text AS total FROM trades WHERE org_id = $1 AND environment = $2 AND status = 'EXECUTED'`,
    [key.file.orgId, key.file.mode],
  );
  expect(data.committedAmount).toBe(formatToDecimals(new Decimal(rows[0]!.total), 2));
  const { rows: book } = await harness.db.query<{ committed: string }>(
    'SELECT committed_usd::text AS committed FROM org_environments WHERE org_id = $1 AND environment = $2',
    [key.file.orgId, key.file.mode],
  );
  expect(new Decimal(book[0]!.committed).eq(new Decimal(rows[0]!.total))).toBe(true);
}

describe('GET /v3/fx/exposure', () => {
  it('shows an empty sandbox book: the whole line available, no breakdown', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    expect(await exposure(key)).toEqual({
      object: 'exposure',
      currency: 'USD',
      creditLine: '1000000.00',
      committedAmount: '0.00',
      availableCredit: '1000000.00',
      breakdown: [],
    });
  });

  it('commits the USD value of every executed trade and breaks it down by sell currency', async () => {
    const key = await harness.createKey();
    await trade(key, BUY_100_EUR);
    await trade(key, { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '50.00', amountCurrency: 'EUR' });
    await trade(key, { buyCurrency: 'JPY', sellCurrency: 'USD', amount: '150', amountCurrency: 'JPY' });
    await trade(key, { buyCurrency: 'USD', sellCurrency: 'GBP', amount: '1.50', amountCurrency: 'GBP' });

    const data = await exposure(key);
    expect(data).toEqual({
      object: 'exposure',
      currency: 'USD',
      creditLine: '1000000.00',
      committedAmount: '165.25',
      availableCredit: '999834.75',
      breakdown: [
        { currency: 'GBP', settlementStage: 'AWAITING_FUNDING', tradeCount: 1, amount: '1.50', usdValue: '1.91' },
        { currency: 'USD', settlementStage: 'AWAITING_FUNDING', tradeCount: 3, amount: '163.34', usdValue: '163.34' },
      ],
    });
    await expectCommittedMatchesTrades(key, data);
  });

  it('calls a trade FUNDED once the org holds the currency it sold (bought earlier)', async () => {
    const key = await harness.createKey();
    await trade(key, BUY_100_EUR);
    // Sells 10.00 of the 100.00 EUR it holds: that balance stays positive, the USD one does not.
    await trade(key, { buyCurrency: 'USD', sellCurrency: 'EUR', amount: '10.00', amountCurrency: 'EUR' });

    const data = await exposure(key);
    expect(data.committedAmount).toBe('119.02');
    expect(data.availableCredit).toBe('999880.98');
    expect(data.breakdown).toEqual([
      { currency: 'EUR', settlementStage: 'FUNDED', tradeCount: 1, amount: '10.00', usdValue: '10.80' },
      { currency: 'USD', settlementStage: 'AWAITING_FUNDING', tradeCount: 1, amount: '108.22', usdValue: '108.22' },
    ]);
    await expectCommittedMatchesTrades(key, data);
  });

  it('moves trades to FUNDED when a deposit covers the balance, exactly zero included', async () => {
    const key = await harness.createKey();
    const orgId = key.file.orgId;
    await trade(key, BUY_100_EUR);
    await trade(key, { buyCurrency: 'USD', sellCurrency: 'GBP', amount: '1.50', amountCurrency: 'GBP' });
    expect((await exposure(key)).breakdown.map((entry) => [entry.currency, entry.settlementStage])).toEqual([
      ['GBP', 'AWAITING_FUNDING'],
      ['USD', 'AWAITING_FUNDING'],
    ]);

    // USD balance: -108.22 + the 1.90 bought = -106.32; 106.31 leaves it a cent short.
    await deposit(orgId, 'sandbox', 'USD', '106.31');
    expect((await exposure(key)).breakdown.find((entry) => entry.currency === 'USD')!.settlementStage).toBe(
      'AWAITING_FUNDING',
    );
    await deposit(orgId, 'sandbox', 'USD', '500.00');
    await deposit(orgId, 'sandbox', 'GBP', '1.50');

    const data = await exposure(key);
    expect(data.breakdown).toEqual([
      { currency: 'GBP', settlementStage: 'FUNDED', tradeCount: 1, amount: '1.50', usdValue: '1.91' },
      { currency: 'USD', settlementStage: 'FUNDED', tradeCount: 1, amount: '108.22', usdValue: '108.22' },
    ]);
    // Funding does not release credit: settlement does.
    expect(data.committedAmount).toBe('110.13');
    await expectCommittedMatchesTrades(key, data);
  });

  it('keeps the sandbox and live books apart; the live line starts at 0', async () => {
    const sandbox = await harness.createKey();
    const orgId = sandbox.file.orgId;
    const live = await harness.createKey({ orgId, mode: 'live' });
    await trade(sandbox, BUY_100_EUR);

    expect(await exposure(live)).toEqual({
      object: 'exposure',
      currency: 'USD',
      creditLine: '0.00',
      committedAmount: '0.00',
      availableCredit: '0.00',
      breakdown: [],
    });

    // With no line, the live book refuses to trade on credit.
    const quote = await post(live, '/v3/fx/quotes', BUY_100_EUR);
    const refused = await harness.signed({
      key: live,
      method: 'POST',
      path: '/v3/fx/trades',
      body: JSON.stringify({ quoteId: quote.id }),
      idempotencyKey: `exposure-${next()}`,
    });
    expectV3Error(refused, 'TRADE_CREDIT_LIMIT_EXCEEDED');

    await setCreditLine(harness.db, orgId, 'live', new Decimal('500000'));
    await trade(live, { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '50.00', amountCurrency: 'EUR' });
    // A live deposit funds the live book only.
    await deposit(orgId, 'live', 'USD', '1000.00');

    const liveData = await exposure(live);
    expect(liveData).toEqual({
      object: 'exposure',
      currency: 'USD',
      creditLine: '500000.00',
      committedAmount: '54.11',
      availableCredit: '499945.89',
      breakdown: [{ currency: 'USD', settlementStage: 'FUNDED', tradeCount: 1, amount: '54.11', usdValue: '54.11' }],
    });
    await expectCommittedMatchesTrades(live, liveData);

    const sandboxData = await exposure(sandbox);
    expect(sandboxData).toEqual({
      object: 'exposure',
      currency: 'USD',
      creditLine: '1000000.00',
      committedAmount: '108.22',
      availableCredit: '999891.78',
      breakdown: [
        { currency: 'USD', settlementStage: 'AWAITING_FUNDING', tradeCount: 1, amount: '108.22', usdValue: '108.22' },
      ],
    });
    await expectCommittedMatchesTrades(sandbox, sandboxData);
  });

  it('shows another org none of it', async () => {
    const trader = await harness.createKey();
    await trade(trader, BUY_100_EUR);
    const other = await harness.createKey({ scopes: ['view'] });
    expect(await exposure(other)).toMatchObject({
      committedAmount: '0.00',
      availableCredit: '1000000.00',
      breakdown: [],
    });
  });

  it('needs the view scope', async () => {
    const key = await harness.createKey({ scopes: ['trade'] });
    const response = await harness.signed({ key, path: '/v3/fx/exposure' });
    expectV3Error(response, 'AUTH_INSUFFICIENT_SCOPE', { details: { requiredScope: 'view' } });
  });

  it('takes no query parameters', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    const response = await harness.signed({ key, path: '/v3/fx/exposure?currency=USD' });
    const error = expectV3Error(response, 'VALIDATION_QUERY_FAILED');
    expect(error.details).toMatchObject({ issues: [{ path: 'currency' }] });
  });
});

describe('availableCredit', () => {
  it('is what is left of the line, never below 0', () => {
    expect(availableCredit(new Decimal('1000'), new Decimal('250.5')).toFixed()).toBe('749.5');
    expect(availableCredit(new Decimal('1000'), new Decimal('1000')).toFixed()).toBe('0');
    expect(availableCredit(new Decimal('100'), new Decimal('150')).toFixed()).toBe('0');
  });
});
