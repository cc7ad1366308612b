/**
 * Settlement through HTTP: POST /v3/fx/trades/{id}/settle in a sandbox and in a live book. A trade
 * settles once the org's balance in the currency it sold is not negative (funded by a deposit,
 * posted here straight to the ledger, or by buying that currency); settling releases the credit
 * the trade held and moves no money. The ledger is checked sound after every test.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import { setCreditLine } from '../../../src/core/trading/org-books.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { newId } from '../../../src/lib/ids.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { recordTestDeposit } from '../../support/book-fixtures.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { type TestResponse, V3Harness } from '../../support/v3-harness.js';

interface TradeJson {
  id: string;
  quoteId: string;
  buyCurrency: string;
  sellCurrency: string;
  buyAmount: string;
  sellAmount: string;
  status: string;
  settlementStage: string;
  createdAt: string;
  updatedAt: string;
  settledAt: string | null;
}

/** 100 EUR bought at 1.08 + 20 bps: 108.22 USD sold. */
const BUY_EUR = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.00', amountCurrency: 'EUR' };
/** 500 USD bought with EUR: funds later USD sales. */
const BUY_USD = { buyCurrency: 'USD', sellCurrency: 'EUR', amount: '500.00', amountCurrency: 'USD' };

let harness: V3Harness;

beforeAll(async () => {
  harness = await V3Harness.start({ core: { rateLimits: { reads: 10_000, writes: 10_000 } } });
});
afterAll(async () => harness?.close());
afterEach(async () => {
  expect(await checkLedger(harness.db)).toEqual([]);
});

function post(key: LoadedKey, path: string, body?: unknown, idempotencyKey?: string): Promise<TestResponse> {
  return harness.post(key, path, body, idempotencyKey);
}

function settle(key: LoadedKey, tradeId: string, idempotencyKey?: string): Promise<TestResponse> {
  return post(key, `/v3/fx/trades/${tradeId}/settle`, undefined, idempotencyKey);
}

function dataOf<T>(response: TestResponse): T {
  expect(response.status, response.text.slice(0, 300)).toBe(200);
  return response.json<{ data: T }>().data;
}

async function newBook(mode: Mode, orgId?: string): Promise<LoadedKey> {
  const key = await harness.createKey({ mode, orgId });
  if (mode === 'live') await setCreditLine(harness.db, key.file.orgId, 'live', new Decimal('1000000'));
  return key;
}

async function executeTrade(key: LoadedKey, terms: Record<string, unknown> = BUY_EUR): Promise<TradeJson> {
  const quote = dataOf<{ id: string }>(await post(key, '/v3/fx/quotes', terms));
  return dataOf<TradeJson>(await post(key, '/v3/fx/trades', { quoteId: quote.id }));
}

async function getTrade(key: LoadedKey, tradeId: string): Promise<TradeJson> {
  return dataOf<TradeJson>(await harness.signed({ key, path: `/v3/fx/trades/${tradeId}` }));
}

/** A deposit as the ledger will record it (the deposit endpoints are a later issue). */
async function deposit(key: LoadedKey, currency: string, amount: string): Promise<void> {
  await recordTestDeposit(harness.db, { orgId: key.file.orgId, environment: key.file.mode, currency, amount });
}

async function committedUsd(key: LoadedKey): Promise<string> {
  const { rows } = await harness.db.query<{ committed: string }>(
    'SELECT committed_usd::text AS committed FROM org_environments WHERE org_id = $1 AND environment = $2',
    [key.file.orgId, key.file.mode],
  );
  return new Decimal(rows[0]!.committed).toFixed();
}

async function sellUsdValue(tradeId: string): Promise<Decimal> {
  const { rows } = await harness.db.query<{ value: string }>(
    'SELECT sell_usd_value::text AS value FROM trades WHERE id = $1',
    [tradeId],
  );
  return new Decimal(rows[0]!.value);
}

async function ledgerTransactionCount(key: LoadedKey): Promise<number> {
  const { rows } = await harness.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM ledger_transactions WHERE org_id = $1 AND environment = $2',
    [key.file.orgId, key.file.mode],
  );
  return Number(rows[0]!.n);
}

describe.each<Mode>(['sandbox', 'live'])('settlement in a %s book', (mode) => {
  it('refuses an unfunded trade with what must still be deposited (409 TRADE_SETTLEMENT_UNFUNDED)', async () => {
    const key = await newBook(mode);
    const trade = await executeTrade(key);
    expect(trade).toMatchObject({ sellAmount: '108.22', status: 'EXECUTED', settlementStage: 'AWAITING_FUNDING' });
    expectV3Error(await settle(key, trade.id), 'TRADE_SETTLEMENT_UNFUNDED', {
      details: { requiredAmount: '108.22', availableAmount: '0.00', currency: 'USD' },
    });
    await deposit(key, 'USD', '100');
    expectV3Error(await settle(key, trade.id), 'TRADE_SETTLEMENT_UNFUNDED', {
      details: { requiredAmount: '8.22', availableAmount: '0.00', currency: 'USD' },
    });
    expect(await getTrade(key, trade.id)).toMatchObject({ status: 'EXECUTED', settledAt: null });
  });

  it('settles once a deposit brings the balance to exactly zero, releasing the credit and moving no money', async () => {
    const key = await newBook(mode);
    const trade = await executeTrade(key);
    expect(new Decimal(await committedUsd(key)).eq(await sellUsdValue(trade.id))).toBe(true);
    await deposit(key, 'USD', '108.22');
    expect((await getTrade(key, trade.id)).settlementStage).toBe('FUNDED');
    const movements = await ledgerTransactionCount(key);

    const response = await settle(key, trade.id);
    const settled = dataOf<TradeJson>(response);
    expect(response.headers['idempotency-replayed']).toBe('false');
    expect(settled).toMatchObject({
      id: trade.id,
      status: 'SETTLED',
      settlementStage: 'SETTLED',
      sellAmount: '108.22',
      buyAmount: '100.00',
    });
    expect(settled.settledAt).not.toBeNull();
    expect(settled.updatedAt).toBe(settled.settledAt);
    expect(await getTrade(key, trade.id)).toEqual(settled);
    expect(await committedUsd(key)).toBe('0');
    expect(await ledgerTransactionCount(key)).toBe(movements);
  });

  it('settles a trade funded by buying the sold currency, and not the trade that paid for it', async () => {
    const key = await newBook(mode);
    const usdPurchase = await executeTrade(key, BUY_USD);
    const eurPurchase = await executeTrade(key);
    // USD: +500 - 108.22 is funded; EUR: -x + 100 is not (x > 100 since EUR costs more than USD).
    expect((await getTrade(key, eurPurchase.id)).settlementStage).toBe('FUNDED');
    expect((await getTrade(key, usdPurchase.id)).settlementStage).toBe('AWAITING_FUNDING');

    expect(dataOf<TradeJson>(await settle(key, eurPurchase.id)).status).toBe('SETTLED');
    // Settling one trade releases exactly its own credit: the other's stays committed.
    expect(new Decimal(await committedUsd(key)).eq(await sellUsdValue(usdPurchase.id))).toBe(true);

    const owedEur = new Decimal(usdPurchase.sellAmount).minus('100');
    expectV3Error(await settle(key, usdPurchase.id), 'TRADE_SETTLEMENT_UNFUNDED', {
      details: { requiredAmount: owedEur.toFixed(2), availableAmount: '0.00', currency: 'EUR' },
    });
    await deposit(key, 'EUR', owedEur.toFixed(2));
    expect(dataOf<TradeJson>(await settle(key, usdPurchase.id)).status).toBe('SETTLED');
    expect(await committedUsd(key)).toBe('0');
  });

  it('refuses to settle twice (409 TRADE_ALREADY_SETTLED) and replays a retry with the same key', async () => {
    const key = await newBook(mode);
    await executeTrade(key, BUY_USD);
    const trade = await executeTrade(key);
    const idempotencyKey = randomUUID();
    const first = await settle(key, trade.id, idempotencyKey);
    expect(first.status).toBe(200);
    const replay = await settle(key, trade.id, idempotencyKey);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expectV3Error(await settle(key, trade.id), 'TRADE_ALREADY_SETTLED', { details: { tradeId: trade.id } });
  });

  it('refuses a reversed trade and its reversal (409 TRADE_NOT_SETTLEABLE)', async () => {
    const key = await newBook(mode);
    await deposit(key, 'USD', '1000');
    const trade = await executeTrade(key);
    const quote = dataOf<{ id: string }>(await post(key, `/v3/fx/trades/${trade.id}/reverse-quote`));
    const reversal = dataOf<{ trade: TradeJson }>(
      await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id }),
    ).trade;
    expect(await committedUsd(key)).toBe('0');
    for (const id of [trade.id, reversal.id]) {
      expectV3Error(await settle(key, id), 'TRADE_NOT_SETTLEABLE', { details: { tradeId: id, status: 'REVERSED' } });
    }
    expect(await committedUsd(key)).toBe('0');
  });

  it('answers 404 TRADE_NOT_FOUND for an unknown, malformed, foreign or other-book trade', async () => {
    const key = await newBook(mode);
    const stranger = await newBook(mode);
    await deposit(stranger, 'USD', '1000');
    const theirs = await executeTrade(stranger);
    const otherMode: Mode = mode === 'live' ? 'sandbox' : 'live';
    const sameOrgOtherBook = await newBook(otherMode, key.file.orgId);
    await deposit(sameOrgOtherBook, 'USD', '1000');
    const ownInOtherBook = await executeTrade(sameOrgOtherBook);
    for (const id of [newId('trade'), 'trd_123', theirs.id, ownInOtherBook.id]) {
      expectV3Error(await settle(key, id), 'TRADE_NOT_FOUND', { details: { tradeId: id } });
    }
    expect((await getTrade(stranger, theirs.id)).status).toBe('EXECUTED');
  });

  it('takes no body', async () => {
    const key = await newBook(mode);
    const trade = await executeTrade(key);
    const response = await post(key, `/v3/fx/trades/${trade.id}/settle`, { force: true });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({ error: { code: 'VALIDATION_BODY_FAILED' } });
  });

  it('releases credit once when a settlement races a reversal of the same trade', async () => {
    const key = await newBook(mode);
    await deposit(key, 'USD', '10000');
    const other = await executeTrade(key);
    for (let round = 0; round < 4; round += 1) {
      const trade = await executeTrade(key);
      const quote = dataOf<{ id: string }>(await post(key, `/v3/fx/trades/${trade.id}/reverse-quote`));
      const [settled, reversed] = await Promise.all([
        settle(key, trade.id),
        post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id }),
      ]);
      expect([settled.status, reversed.status].sort(), `${settled.text}\n${reversed.text}`).toEqual([200, 409]);
      if (settled.status === 200) expectV3Error(reversed, 'TRADE_ALREADY_SETTLED', { details: { tradeId: trade.id } });
      else expectV3Error(settled, 'TRADE_NOT_SETTLEABLE', { details: { tradeId: trade.id, status: 'REVERSED' } });
      // Only the untouched trade holds credit: neither path released it twice or not at all.
      expect(new Decimal(await committedUsd(key)).eq(await sellUsdValue(other.id))).toBe(true);
    }
  });
});
