/**
 * Reversal through HTTP: POST /v3/fx/trades/{id}/reverse-quote and /reverse, in a sandbox and in
 * a live book, with rates moved between trade and reverse quote (CREDIT and DEBIT), an injected
 * clock for the reversal window and quote expiry, racing reversals, and the ledger checked sound
 * after every test.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import { setCreditLine, setPairEnabled } from '../../../src/core/trading/org-books.js';
import { DEFAULT_USD_PRICES, StaticRateSource } from '../../../src/core/trading/rate-source.js';
import { referenceData } from '../../../src/core/trading/reference-data.js';
import { reverseTrade } from '../../../src/core/trading/reversals.js';
import { TRADING_DEFAULTS, type TradingContext } from '../../../src/core/trading/trading-context.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { newId } from '../../../src/lib/ids.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { type TestResponse, V3Harness } from '../../support/v3-harness.js';

const WINDOW_MS = 10 * 60 * 1000;

interface QuoteJson {
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

interface TradeJson {
  id: string;
  quoteId: string;
  buyCurrency: string;
  sellCurrency: string;
  buyAmount: string;
  sellAmount: string;
  status: string;
  settlementStage: string;
  clientReferenceId: string | null;
  originalTradeId: string | null;
  reversedByTradeId: string | null;
  createdAt: string;
  updatedAt: string;
  metadata: Record<string, string>;
}

interface ReversalJson {
  trade: TradeJson;
  reversalDetails: { direction: 'CREDIT' | 'DEBIT'; differentialAmount: string; currency: string };
}

const BUY_EUR = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.00', amountCurrency: 'EUR' };

let harness: V3Harness;
const rates = new StaticRateSource(DEFAULT_USD_PRICES);
/** The trading book's clock: frozen, moved only by tests, so window edges are exact. */
let clockMs = Date.now();

beforeAll(async () => {
  harness = await V3Harness.start({
    rates,
    now: () => new Date(clockMs),
    core: { trading: { reversalWindowMs: WINDOW_MS }, rateLimits: { reads: 10_000, writes: 10_000 } },
  });
});
afterAll(async () => harness?.close());
beforeEach(() => {
  clockMs = Date.now();
  rates.replacePrices(DEFAULT_USD_PRICES);
});
afterEach(async () => {
  expect(await checkLedger(harness.db)).toEqual([]);
});

function post(key: LoadedKey, path: string, body?: unknown, idempotencyKey?: string): Promise<TestResponse> {
  return harness.post(key, path, body, idempotencyKey);
}

function get(key: LoadedKey, path: string): Promise<TestResponse> {
  return harness.signed({ key, path });
}

function dataOf<T>(response: TestResponse): T {
  expect(response.status, response.text.slice(0, 300)).toBe(200);
  return response.json<{ data: T }>().data;
}

/** A fresh org's book in this mode; a live book gets a credit line (it starts with none). */
async function newBook(mode: Mode, orgId?: string): Promise<LoadedKey> {
  const key = await harness.createKey({ mode, orgId });
  if (mode === 'live') await setCreditLine(harness.db, key.file.orgId, 'live', new Decimal('1000000'));
  return key;
}

async function executeTrade(key: LoadedKey, terms: Record<string, unknown> = BUY_EUR): Promise<TradeJson> {
  const quote = dataOf<QuoteJson>(await post(key, '/v3/fx/quotes', terms));
  return dataOf<TradeJson>(await post(key, '/v3/fx/trades', { quoteId: quote.id }));
}

async function reverseQuote(key: LoadedKey, tradeId: string, body?: unknown): Promise<QuoteJson> {
  return dataOf<QuoteJson>(await post(key, `/v3/fx/trades/${tradeId}/reverse-quote`, body));
}

async function committedUsd(key: LoadedKey): Promise<Decimal> {
  const { rows } = await harness.db.query<{ committed: string }>(
    'SELECT committed_usd::text AS committed FROM org_environments WHERE org_id = $1 AND environment = $2',
    [key.file.orgId, key.file.mode],
  );
  return new Decimal(rows[0]!.committed);
}

async function clientBalance(key: LoadedKey, currency: string): Promise<Decimal> {
  const { rows } = await harness.db.query<{ balance: string }>(
    "SELECT balance::text AS balance FROM ledger_accounts WHERE org_id = $1 AND environment = $2 AND kind = 'client' AND currency = $3",
    [key.file.orgId, key.file.mode, currency],
  );
  return new Decimal(rows[0]?.balance ?? '0');
}

describe.each<Mode>(['sandbox', 'live'])('reversal in a %s book', (mode) => {
  describe('POST /v3/fx/trades/{id}/reverse-quote', () => {
    it('quotes buying back the sold currency with exactly the amount bought', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const quote = await reverseQuote(key, trade.id);
      expect(quote).toMatchObject({
        object: 'quote',
        buyCurrency: 'USD',
        sellCurrency: 'EUR',
        sellAmount: '100.00',
        amountCurrency: 'EUR',
        reversesTradeId: trade.id,
      });
      expect(quote.id).toMatch(/^qte_[0-9a-f]{32}$/);
      // The default validity, as for quotes.
      expect(new Date(quote.expiresAt).getTime() - new Date(quote.createdAt).getTime()).toBe(30_000);
    });

    it('takes an optional validForSeconds and refuses one outside the allowed set', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const quote = await reverseQuote(key, trade.id, { validForSeconds: 15 });
      expect(new Date(quote.expiresAt).getTime() - new Date(quote.createdAt).getTime()).toBe(15_000);
      expect((await reverseQuote(key, trade.id, {})).reversesTradeId).toBe(trade.id);
      const bad = await post(key, `/v3/fx/trades/${trade.id}/reverse-quote`, { validForSeconds: 7 });
      expect(bad.status).toBe(400);
      expect(bad.json()).toMatchObject({
        error: { code: 'VALIDATION_BODY_FAILED', details: { issues: [{ path: 'validForSeconds' }] } },
      });
      const unknown = await post(key, `/v3/fx/trades/${trade.id}/reverse-quote`, { amount: '5' });
      expect(unknown.json()).toMatchObject({
        error: { code: 'VALIDATION_BODY_FAILED', details: { issues: [{ path: 'amount' }] } },
      });
    });

    it('answers 404 TRADE_NOT_FOUND for an unknown, malformed, other org or other book id', async () => {
      const key = await newBook(mode);
      const stranger = await newBook(mode);
      const theirs = await executeTrade(stranger);
      const otherMode: Mode = mode === 'live' ? 'sandbox' : 'live';
      const sameOrgOtherBook = await newBook(otherMode, key.file.orgId);
      const ownInOtherBook = await executeTrade(sameOrgOtherBook);
      for (const id of [newId('trade'), 'trd_nope', theirs.id, ownInOtherBook.id]) {
        expectV3Error(await post(key, `/v3/fx/trades/${id}/reverse-quote`), 'TRADE_NOT_FOUND', {
          details: { tradeId: id },
        });
      }
    });

    it('refuses a trade whose reversal window has closed, exactly at its end', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const windowEnd = new Date(trade.createdAt).getTime() + WINDOW_MS;
      clockMs = windowEnd - 1;
      expect((await reverseQuote(key, trade.id)).reversesTradeId).toBe(trade.id);
      clockMs = windowEnd;
      expectV3Error(await post(key, `/v3/fx/trades/${trade.id}/reverse-quote`), 'TRADE_REVERSAL_WINDOW_CLOSED', {
        details: { tradeId: trade.id, windowEndedAt: new Date(windowEnd).toISOString() },
      });
    });

    it("applies the org's trading settings to the reverse direction", async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      await setPairEnabled(harness.db, key.file.orgId, mode, { buyCurrency: 'USD', sellCurrency: 'EUR' }, false);
      expectV3Error(await post(key, `/v3/fx/trades/${trade.id}/reverse-quote`), 'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT', {
        details: { buyCurrency: 'USD', sellCurrency: 'EUR' },
      });
    });
  });

  describe('POST /v3/fx/trades/{id}/reverse', () => {
    it('with unchanged rates reverses at a DEBIT (the spread), moves the ledger back and releases the credit', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      expect(await committedUsd(key)).not.toEqual(new Decimal(0));
      const quote = await reverseQuote(key, trade.id);
      const response = await post(key, `/v3/fx/trades/${trade.id}/reverse`, {
        quoteId: quote.id,
        clientReferenceId: 'undo-1',
        metadata: { why: 'test' },
      });
      const { trade: reversal, reversalDetails } = dataOf<ReversalJson>(response);
      expect(response.headers['idempotency-replayed']).toBe('false');

      expect(reversal).toMatchObject({
        object: 'trade',
        quoteId: quote.id,
        buyCurrency: 'USD',
        sellCurrency: 'EUR',
        buyAmount: quote.buyAmount,
        sellAmount: '100.00',
        status: 'REVERSED',
        settlementStage: 'CLOSED',
        clientReferenceId: 'undo-1',
        originalTradeId: trade.id,
        reversedByTradeId: null,
        metadata: { why: 'test' },
      });
      expect(reversal.id).not.toBe(trade.id);
      // 100 EUR bought at 1.08 + 20 bps cost 108.22 USD; sold back at 1/1.08 + 20 bps they fetch 107.78.
      expect(trade.sellAmount).toBe('108.22');
      expect(reversal.buyAmount).toBe('107.78');
      expect(reversalDetails).toEqual({ direction: 'DEBIT', differentialAmount: '0.44', currency: 'USD' });

      const original = dataOf<TradeJson>(await get(key, `/v3/fx/trades/${trade.id}`));
      expect(original).toMatchObject({
        status: 'REVERSED',
        settlementStage: 'CLOSED',
        reversedByTradeId: reversal.id,
        originalTradeId: null,
      });
      expect(original.updatedAt).toBe(reversal.createdAt);
      expect(dataOf<TradeJson>(await get(key, `/v3/fx/trades/${reversal.id}`))).toEqual(reversal);

      expect((await clientBalance(key, 'EUR')).toFixed()).toBe('0');
      expect((await clientBalance(key, 'USD')).toFixed()).toBe('-0.44');
      expect((await committedUsd(key)).toFixed()).toBe('0');
    });

    it('reverses at a CREDIT when the bought currency rose since the trade', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      rates.replacePrices({ ...DEFAULT_USD_PRICES, EUR: '1.10' });
      const quote = await reverseQuote(key, trade.id);
      const { trade: reversal, reversalDetails } = dataOf<ReversalJson>(
        await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id }),
      );
      // 100 EUR now fetch 100 / (1/1.10 + 20 bps) = 109.78 USD, 1.56 more than the 108.22 paid.
      expect(reversal.buyAmount).toBe('109.78');
      expect(reversalDetails).toEqual({ direction: 'CREDIT', differentialAmount: '1.56', currency: 'USD' });
      expect((await clientBalance(key, 'USD')).toFixed()).toBe('1.56');
      expect((await committedUsd(key)).toFixed()).toBe('0');
    });

    it('reports the differential in the sold currency with its decimals (USD bought with JPY)', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key, {
        buyCurrency: 'USD',
        sellCurrency: 'JPY',
        amount: '50.00',
        amountCurrency: 'USD',
      });
      rates.replacePrices({ ...DEFAULT_USD_PRICES, JPY: '0.0066' });
      const quote = await reverseQuote(key, trade.id);
      expect(quote).toMatchObject({ buyCurrency: 'JPY', sellCurrency: 'USD', sellAmount: '50.00' });
      const { reversalDetails } = dataOf<ReversalJson>(
        await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id }),
      );
      const expected = new Decimal(quote.buyAmount).minus(trade.sellAmount);
      expect(expected.isPositive() && !expected.isZero()).toBe(true);
      expect(reversalDetails).toEqual({
        direction: 'CREDIT',
        differentialAmount: expected.toFixed(0),
        currency: 'JPY',
      });
    });

    it('replays the same request with the same Idempotency-Key', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const quote = await reverseQuote(key, trade.id);
      const idempotencyKey = randomUUID();
      const first = await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id }, idempotencyKey);
      const again = await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id }, idempotencyKey);
      expect(again.status).toBe(200);
      expect(again.headers['idempotency-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
    });

    it('refuses a reversal of a reversal, of a reversed trade and of a settled trade', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const quote = await reverseQuote(key, trade.id);
      const { trade: reversal } = dataOf<ReversalJson>(
        await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id }),
      );

      for (const path of [`/v3/fx/trades/${trade.id}/reverse-quote`, `/v3/fx/trades/${trade.id}/reverse`]) {
        expectV3Error(
          await post(key, path, path.endsWith('reverse') ? { quoteId: quote.id } : undefined),
          'TRADE_ALREADY_REVERSED',
          {
            details: { tradeId: trade.id, reversedByTradeId: reversal.id },
          },
        );
      }
      for (const path of [`/v3/fx/trades/${reversal.id}/reverse-quote`, `/v3/fx/trades/${reversal.id}/reverse`]) {
        expectV3Error(
          await post(key, path, path.endsWith('reverse') ? { quoteId: quote.id } : undefined),
          'TRADE_NOT_REVERSIBLE',
          {
            details: { tradeId: reversal.id, status: 'REVERSED' },
          },
        );
      }

      // Settled: settling a USD sale needs a USD balance of at least 0, so the org buys USD first.
      await executeTrade(key, { buyCurrency: 'USD', sellCurrency: 'EUR', amount: '500.00', amountCurrency: 'USD' });
      const funded = await executeTrade(key);
      const fundedQuote = await reverseQuote(key, funded.id);
      expect(dataOf<TradeJson>(await post(key, `/v3/fx/trades/${funded.id}/settle`)).status).toBe('SETTLED');
      expectV3Error(await post(key, `/v3/fx/trades/${funded.id}/reverse-quote`), 'TRADE_ALREADY_SETTLED', {
        details: { tradeId: funded.id },
      });
      expectV3Error(
        await post(key, `/v3/fx/trades/${funded.id}/reverse`, { quoteId: fundedQuote.id }),
        'TRADE_ALREADY_SETTLED',
        {
          details: { tradeId: funded.id },
        },
      );
    });

    it('refuses once the window has closed, even with a reverse quote taken inside it', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const windowEnd = new Date(trade.createdAt).getTime() + WINDOW_MS;
      clockMs = windowEnd - 10_000;
      const quote = await reverseQuote(key, trade.id, { validForSeconds: 60 });
      clockMs = windowEnd;
      expectV3Error(
        await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id }),
        'TRADE_REVERSAL_WINDOW_CLOSED',
        {
          details: { tradeId: trade.id, windowEndedAt: new Date(windowEnd).toISOString() },
        },
      );
      clockMs = windowEnd - 1;
      expect(
        dataOf<ReversalJson>(await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id })).trade.status,
      ).toBe('REVERSED');
    });

    it('refuses a quote that is not a reverse quote of this trade (422 REVERSE_QUOTE_INVALID)', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const other = await executeTrade(key);
      const ordinary = dataOf<QuoteJson>(
        await post(key, '/v3/fx/quotes', { ...BUY_EUR, buyCurrency: 'USD', sellCurrency: 'EUR' }),
      );
      const ofOther = await reverseQuote(key, other.id);
      for (const quoteId of [ordinary.id, ofOther.id]) {
        expectV3Error(await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId }), 'REVERSE_QUOTE_INVALID', {
          details: { quoteId, tradeId: trade.id },
        });
      }
      // Nor can a reverse quote execute as an ordinary trade.
      expectV3Error(await post(key, '/v3/fx/trades', { quoteId: ofOther.id }), 'REVERSE_QUOTE_INVALID', {
        details: { quoteId: ofOther.id, tradeId: other.id },
      });
      expect(dataOf<TradeJson>(await get(key, `/v3/fx/trades/${trade.id}`)).status).toBe('EXECUTED');
    });

    it('refuses an expired reverse quote (409 QUOTE_EXPIRED)', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const quote = await reverseQuote(key, trade.id, { validForSeconds: 3 });
      clockMs = new Date(quote.expiresAt).getTime();
      expectV3Error(await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: quote.id }), 'QUOTE_EXPIRED', {
        details: { quoteId: quote.id, expiredAt: quote.expiresAt },
      });
      // A fresh reverse quote still works: the trade is untouched.
      const fresh = await reverseQuote(key, trade.id);
      expect(
        dataOf<ReversalJson>(await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: fresh.id })).trade
          .originalTradeId,
      ).toBe(trade.id);
    });

    it('refuses a used quote (409 QUOTE_ALREADY_USED) and an unknown or foreign one (404 QUOTE_NOT_FOUND)', async () => {
      const key = await newBook(mode);
      const first = await executeTrade(key);
      const trade = await executeTrade(key);
      expectV3Error(
        await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: first.quoteId }),
        'QUOTE_ALREADY_USED',
        {
          details: { quoteId: first.quoteId, tradeId: first.id },
        },
      );
      const stranger = await newBook(mode);
      const strangerQuote = await reverseQuote(stranger, (await executeTrade(stranger)).id);
      for (const quoteId of [newId('quote'), strangerQuote.id]) {
        expectV3Error(await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId }), 'QUOTE_NOT_FOUND', {
          details: { quoteId },
        });
      }
    });

    it('answers 404 TRADE_NOT_FOUND for an unknown, malformed or foreign trade', async () => {
      const key = await newBook(mode);
      const stranger = await newBook(mode);
      const theirs = await executeTrade(stranger);
      const theirQuote = await reverseQuote(stranger, theirs.id);
      for (const id of [newId('trade'), 'not-a-trade', theirs.id]) {
        expectV3Error(await post(key, `/v3/fx/trades/${id}/reverse`, { quoteId: theirQuote.id }), 'TRADE_NOT_FOUND', {
          details: { tradeId: id },
        });
      }
    });

    it('validates the body strictly', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const missing = await post(key, `/v3/fx/trades/${trade.id}/reverse`, {});
      expect(missing.json()).toMatchObject({
        error: { code: 'VALIDATION_BODY_FAILED', details: { issues: [{ path: 'quoteId' }] } },
      });
      const extra = await post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId: 'qte_x', tradeId: trade.id });
      expect(extra.json()).toMatchObject({
        error: { code: 'VALIDATION_BODY_FAILED', details: { issues: [{ path: 'tradeId' }] } },
      });
    });

    it('lets exactly one of two racing reversals through, with different quotes or the same one', async () => {
      const key = await newBook(mode);
      for (let round = 0; round < 4; round += 1) {
        const trade = await executeTrade(key);
        const [a, b] = [await reverseQuote(key, trade.id), await reverseQuote(key, trade.id)];
        // Odd rounds race on one quote: the loser then finds it used, and is told the trade is reversed.
        const quotes = round % 2 === 0 ? [a.id, b.id] : [a.id, a.id];
        const responses = await Promise.all(
          quotes.map((quoteId) => post(key, `/v3/fx/trades/${trade.id}/reverse`, { quoteId })),
        );
        const winners = responses.filter((response) => response.status === 200);
        expect(winners, responses.map((r) => r.text).join('\n')).toHaveLength(1);
        const reversal = winners[0]!.json<{ data: ReversalJson }>().data.trade;
        const loser = responses.find((response) => response.status !== 200)!;
        expectV3Error(loser, 'TRADE_ALREADY_REVERSED', {
          details: { tradeId: trade.id, reversedByTradeId: reversal.id },
        });
        const { rows } = await harness.db.query<{ n: string }>(
          'SELECT count(*)::text AS n FROM trades WHERE original_trade_id = $1',
          [trade.id],
        );
        expect(rows[0]!.n).toBe('1');
      }
      expect((await committedUsd(key)).toFixed()).toBe('0');
    });

    it('replays a reversal whose idempotency record was lost, from the trade that carries its key', async () => {
      const key = await newBook(mode);
      const trade = await executeTrade(key);
      const quote = await reverseQuote(key, trade.id);
      const context: TradingContext = {
        ...TRADING_DEFAULTS,
        reversalWindowMs: WINDOW_MS,
        db: harness.db,
        reference: referenceData(harness.db),
        rates,
        now: () => new Date(clockMs),
      };
      const principal = { keyName: key.file.name, orgId: key.file.orgId, scopes: key.file.scopes, environment: mode };
      const idempotency = { key: randomUUID(), fingerprint: `sha256:${'a'.repeat(64)}` };
      const first = await reverseTrade(context, principal, trade.id, { quoteId: quote.id, idempotency });
      const again = await reverseTrade(context, principal, trade.id, { quoteId: quote.id, idempotency });
      expect(again.reversal.id).toBe(first.reversal.id);
      // Another key is a new attempt, refused because the trade is reversed.
      await expect(
        reverseTrade(context, principal, trade.id, {
          quoteId: quote.id,
          idempotency: { ...idempotency, key: randomUUID() },
        }),
      ).rejects.toMatchObject({
        code: 'TRADE_ALREADY_REVERSED',
      });
    });
  });
});
