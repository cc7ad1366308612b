/**
 * POST /v3/fx/trades and GET /v3/fx/trades/{id} end to end, in the sandbox book and the live
 * book separately: the trade record field by field, the ledger and credit it moves, every error
 * of execution and retrieval, and idempotent replay. After every test the ledger balances
 * (checkLedger is empty), and every refused trade leaves balances, credit and rows as they were.
 */
import { createHash, randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { readClientBalances } from '../../../src/core/ledger/ledger.js';
import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import {
  readOrgBook,
  setCreditLine,
  setCurrencyEnabled,
  setPairEnabled,
  setTradingEnabled,
} from '../../../src/core/trading/org-books.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { newId } from '../../../src/lib/ids.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

interface QuoteRecord {
  id: string;
  buyCurrency: string;
  sellCurrency: string;
  buyAmount: string;
  sellAmount: string;
  rate: string;
  createdAt: string;
  expiresAt: string;
}

interface TradeRecord {
  object: 'trade';
  id: string;
  quoteId: string;
  buyCurrency: string;
  sellCurrency: string;
  buyAmount: string;
  sellAmount: string;
  referencedCurrency: string;
  referencedAmount: string;
  rate: string;
  status: string;
  settlementStage: string;
  clientReferenceId: string | null;
  originalTradeId: string | null;
  reversedByTradeId: string | null;
  source: string;
  actorId: string;
  createdAt: string;
  updatedAt: string;
  settledAt: string | null;
  metadata: Record<string, string>;
}

/** Every field of the trade record the issue names, and nothing else. */
const TRADE_FIELDS = [
  'object',
  'id',
  'quoteId',
  'buyCurrency',
  'sellCurrency',
  'buyAmount',
  'sellAmount',
  'referencedCurrency',
  'referencedAmount',
  'rate',
  'status',
  'settlementStage',
  'clientReferenceId',
  'originalTradeId',
  'reversedByTradeId',
  'source',
  'actorId',
  'createdAt',
  'updatedAt',
  'settledAt',
  'metadata',
].sort();

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MODES: Mode[] = ['sandbox', 'live'];
const TRADES = '/v3/fx/trades';

/** The trading clock: real time unless a test freezes it. */
let frozenAt: Date | null = null;
let harness: V3Harness;

beforeAll(async () => {
  harness = await V3Harness.start({
    now: () => frozenAt ?? new Date(),
    core: { rateLimits: { reads: 100_000, writes: 100_000 } },
  });
});
afterAll(async () => harness?.close());
afterEach(async () => {
  frozenAt = null;
  expect(await checkLedger(harness.db)).toEqual([]);
});

async function quote(key: LoadedKey, body: Record<string, unknown>): Promise<QuoteRecord> {
  const response = await harness.signed({
    key,
    method: 'POST',
    path: '/v3/fx/quotes',
    body: JSON.stringify(body),
    idempotencyKey: randomUUID(),
  });
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: QuoteRecord }>().data;
}

const eurForUsd = (amount = '100', amountCurrency = 'EUR') => ({
  buyCurrency: 'EUR',
  sellCurrency: 'USD',
  amount,
  amountCurrency,
});

/** idempotencyKey null sends none. */
function postTrade(key: LoadedKey, body: unknown, idempotencyKey: string | null = randomUUID()) {
  return harness.signed({
    key,
    method: 'POST',
    path: TRADES,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    idempotencyKey: idempotencyKey ?? undefined,
  });
}

async function executed(
  key: LoadedKey,
  body: Record<string, unknown>,
  idempotencyKey = randomUUID(),
): Promise<TradeRecord> {
  const response = await postTrade(key, body, idempotencyKey);
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: TradeRecord }>().data;
}

function getTrade(key: LoadedKey, id: string) {
  return harness.signed({ key, path: `${TRADES}/${encodeURIComponent(id)}` });
}

/** The org's client balances in one book as canonical strings; absent currencies are 0. */
async function balances(orgId: string, mode: Mode): Promise<Map<string, Decimal>> {
  return new Map((await readClientBalances(harness.db, orgId, mode)).map((b) => [b.currency, b.balance]));
}

function expectMoved(before: Map<string, Decimal>, after: Map<string, Decimal>, moves: Record<string, string>): void {
  const currencies = new Set([...before.keys(), ...after.keys()]);
  for (const currency of currencies) {
    const delta = (after.get(currency) ?? new Decimal(0)).minus(before.get(currency) ?? new Decimal(0));
    expect(delta.toFixed(), `balance change in ${currency}`).toBe(new Decimal(moves[currency] ?? '0').toFixed());
  }
  for (const currency of Object.keys(moves))
    expect(currencies.has(currency) || new Decimal(moves[currency]!).isZero(), currency).toBe(true);
}

async function committed(orgId: string, mode: Mode): Promise<string> {
  return (await readOrgBook(harness.db, orgId, mode))!.committedUsd.toFixed();
}

async function tradeCount(orgId: string, mode: Mode): Promise<number> {
  const { rows } = await harness.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM trades WHERE org_id = $1 AND environment = $2',
    [orgId, mode],
  );
  return Number(rows[0]!.n);
}

interface BookState {
  balances: Map<string, Decimal>;
  committed: string;
  trades: number;
  ledgerTransactions: number;
}

async function bookState(orgId: string, mode: Mode): Promise<BookState> {
  const { rows } = await harness.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM ledger_transactions WHERE org_id = $1 AND environment = $2',
    [orgId, mode],
  );
  return {
    balances: await balances(orgId, mode),
    committed: await committed(orgId, mode),
    trades: await tradeCount(orgId, mode),
    ledgerTransactions: Number(rows[0]!.n),
  };
}

function actorIdOf(key: LoadedKey): string {
  return `usr_${key.file.name.split('/').at(-1)!.replaceAll('-', '')}`;
}

function fingerprintOf(body: string): string {
  return `sha256:${createHash('sha256').update(`POST\n${TRADES}\n`).update(body).digest('hex')}`;
}

describe.each(MODES)('trades in the %s book', (mode) => {
  const otherMode: Mode = mode === 'sandbox' ? 'live' : 'sandbox';
  let key: LoadedKey;
  let orgId: string;

  /** A new org with a key of this mode; a live book gets a credit line (it starts with none). */
  async function newOrgKey(scopes: Array<'view' | 'trade'> = ['view', 'trade']): Promise<LoadedKey> {
    const created = await harness.createKey({ mode, scopes });
    if (mode === 'live') await setCreditLine(harness.db, created.file.orgId, 'live', new Decimal(1_000_000));
    return created;
  }

  beforeAll(async () => {
    key = await newOrgKey();
    orgId = key.file.orgId;
  });

  /** Expects the refusal and proves the book untouched by it. */
  async function expectRefused(
    as: LoadedKey,
    body: unknown,
    code: Parameters<typeof expectV3Error>[1],
    details?: Record<string, unknown>,
    idempotencyKey: string | null = randomUUID(),
  ) {
    const before = await bookState(as.file.orgId, mode);
    const response = await postTrade(as, body, idempotencyKey);
    const error = expectV3Error(response, code, details === undefined ? {} : { details });
    expect(await bookState(as.file.orgId, mode)).toEqual(before);
    return error;
  }

  describe('execute and retrieve', () => {
    it('executes a buy-fixed quote: every field of the record, the ledger and the credit it holds', async () => {
      const q = await quote(key, eurForUsd('100'));
      const before = await bookState(orgId, mode);
      const otherBefore = await balances(orgId, otherMode);
      const metadata = { order: 'A-1', desk: 'fx-emea' };

      const response = await postTrade(key, { quoteId: q.id, clientReferenceId: 'order-1', metadata });
      expect(response.status, response.text).toBe(200);
      expect(response.headers['idempotency-replayed']).toBe('false');
      const body = response.json<{ data: TradeRecord }>();
      expect(Object.keys(body)).toEqual(['data']);
      expect(Object.keys(body.data).sort()).toEqual(TRADE_FIELDS);
      const trade = body.data;
      expect(trade).toEqual({
        object: 'trade',
        id: expect.stringMatching(/^trd_[0-9a-f]{32}$/),
        quoteId: q.id,
        buyCurrency: 'EUR',
        sellCurrency: 'USD',
        buyAmount: '100.00',
        sellAmount: '108.22',
        referencedCurrency: 'EUR',
        referencedAmount: '100.00',
        rate: '1.08216',
        status: 'EXECUTED',
        // The org sold USD it does not hold: the USD balance is negative until funded.
        settlementStage: 'AWAITING_FUNDING',
        clientReferenceId: 'order-1',
        originalTradeId: null,
        reversedByTradeId: null,
        source: 'API',
        actorId: actorIdOf(key),
        createdAt: expect.stringMatching(ISO_MS),
        updatedAt: trade.createdAt,
        settledAt: null,
        metadata,
      });
      expect(Date.parse(trade.createdAt)).toBeGreaterThanOrEqual(Date.parse(q.createdAt));
      expect(Date.parse(trade.createdAt)).toBeLessThan(Date.parse(q.expiresAt));

      // GET by id answers the same record.
      const fetched = await getTrade(key, trade.id);
      expect(fetched.status, fetched.text).toBe(200);
      expect(fetched.json<{ data: TradeRecord }>()).toEqual({ data: trade });

      // Ledger: +100 EUR, -108.22 USD for the client, in this book only; one balanced movement.
      const after = await bookState(orgId, mode);
      expectMoved(before.balances, after.balances, { EUR: '100', USD: '-108.22' });
      expect(await balances(orgId, otherMode)).toEqual(otherBefore);
      expect(after.trades).toBe(before.trades + 1);
      expect(after.ledgerTransactions).toBe(before.ledgerTransactions + 1);
      expect(new Decimal(after.committed).minus(before.committed).toFixed()).toBe('108.22');
      const { rows } = await harness.db.query<{ kind: string; entries: string }>(
        `SELECT t.kind, count(e.id)::text AS entries FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE t.reference_id = $1 GROUP BY t.kind`,
        [trade.id],
      );
      expect(rows).toEqual([{ kind: 'trade', entries: '4' }]);
      const row = await harness.db.query<{ environment: string; sell_usd_value: string }>(
        'SELECT environment, sell_usd_value::text FROM trades WHERE id = $1',
        [trade.id],
      );
      expect(row.rows[0]!.environment).toBe(mode);
      expect(new Decimal(row.rows[0]!.sell_usd_value).toFixed()).toBe('108.22');
    });

    it('executes a sell-fixed quote: the referenced side is the sell side, with the currency decimals', async () => {
      const q = await quote(key, { buyCurrency: 'GBP', sellCurrency: 'USDC', amount: '500', amountCurrency: 'USDC' });
      const before = await bookState(orgId, mode);
      const trade = await executed(key, { quoteId: q.id });
      expect(trade).toMatchObject({
        buyCurrency: 'GBP',
        sellCurrency: 'USDC',
        buyAmount: '392.91',
        sellAmount: '500.000000',
        referencedCurrency: 'USDC',
        referencedAmount: '500.000000',
        rate: '1.27254',
        status: 'EXECUTED',
        settlementStage: 'AWAITING_FUNDING',
        clientReferenceId: null,
        metadata: {},
      });
      const after = await bookState(orgId, mode);
      expectMoved(before.balances, after.balances, { GBP: '392.91', USDC: '-500' });
      expect(new Decimal(after.committed).minus(before.committed).toFixed()).toBe('500');
    });

    it('reports FUNDED once the balance of the sold currency is not negative', async () => {
      const fresh = await newOrgKey();
      const first = await executed(fresh, { quoteId: (await quote(fresh, eurForUsd('100'))).id });
      // Sell 50 of the 100 EUR just bought: the EUR balance stays positive.
      const second = await executed(fresh, {
        quoteId: (await quote(fresh, { buyCurrency: 'USD', sellCurrency: 'EUR', amount: '50', amountCurrency: 'EUR' }))
          .id,
      });
      expect(second).toMatchObject({ buyAmount: '53.89', sellAmount: '50.00', settlementStage: 'FUNDED' });
      expect((await getTrade(fresh, first.id)).json<{ data: TradeRecord }>().data.settlementStage).toBe(
        'AWAITING_FUNDING',
      );
      expectMoved(new Map(), await balances(fresh.file.orgId, mode), { EUR: '50', USD: '-54.33' });
    });

    it('lets a view-only key read and refuses a trade-only key (scopes)', async () => {
      const trade = await executed(key, { quoteId: (await quote(key, eurForUsd('10'))).id });
      const viewer = await harness.createKey({ mode, scopes: ['view'], orgId });
      expect((await getTrade(viewer, trade.id)).status).toBe(200);
      const trader = await harness.createKey({ mode, scopes: ['trade'], orgId });
      expectV3Error(await getTrade(trader, trade.id), 'AUTH_INSUFFICIENT_SCOPE', {
        details: { requiredScope: 'view' },
      });
      const q = await quote(key, eurForUsd('10'));
      await expectRefused(viewer, { quoteId: q.id }, 'AUTH_INSUFFICIENT_SCOPE', { requiredScope: 'trade' });
    });
  });

  describe('404 TRADE_NOT_FOUND', () => {
    let trade: TradeRecord;
    beforeAll(async () => {
      trade = await executed(key, { quoteId: (await quote(key, eurForUsd('20'))).id });
    });

    it.each([
      ['an unknown id', () => newId('trade')],
      ['a malformed id', () => 'trd_not-a-trade'],
      ['a bare word', () => 'nope'],
      ['a quote id', () => newId('quote')],
      ['an upper-case id', () => trade.id.toUpperCase()],
    ])('for %s', async (_label, id) => {
      const value = id();
      expectV3Error(await getTrade(key, value), 'TRADE_NOT_FOUND', { details: { tradeId: value } });
    });

    it("for another org's trade", async () => {
      const stranger = await harness.createKey({ mode, scopes: ['view', 'trade'] });
      expectV3Error(await getTrade(stranger, trade.id), 'TRADE_NOT_FOUND', { details: { tradeId: trade.id } });
    });

    it(`for the same org's trade from its ${otherMode} book`, async () => {
      const otherBook = await harness.createKey({ mode: otherMode, scopes: ['view', 'trade'], orgId });
      expectV3Error(await getTrade(otherBook, trade.id), 'TRADE_NOT_FOUND', { details: { tradeId: trade.id } });
      expect((await getTrade(key, trade.id)).status).toBe(200);
    });
  });

  describe('quote errors at execution', () => {
    it("404 QUOTE_NOT_FOUND for another org's quote, the other book's quote and unknown ids; errors carry no metadata", async () => {
      const stranger = await newOrgKey();
      const theirs = await quote(stranger, eurForUsd('10'));
      const metadata = { order: 'A-2' };
      await expectRefused(key, { quoteId: theirs.id, metadata }, 'QUOTE_NOT_FOUND', { quoteId: theirs.id });
      const otherBook = await harness.createKey({ mode: otherMode, scopes: ['trade'], orgId });
      const otherBookQuote = await quote(otherBook, eurForUsd('10'));
      await expectRefused(key, { quoteId: otherBookQuote.id, metadata }, 'QUOTE_NOT_FOUND', {
        quoteId: otherBookQuote.id,
      });
      const unknown = newId('quote');
      await expectRefused(key, { quoteId: unknown, metadata }, 'QUOTE_NOT_FOUND', { quoteId: unknown });
      await expectRefused(key, { quoteId: 'garbage', metadata }, 'QUOTE_NOT_FOUND', { quoteId: 'garbage' });
      // The owner can still execute it: a refused stranger consumed nothing.
      expect((await executed(stranger, { quoteId: theirs.id })).quoteId).toBe(theirs.id);
    });

    it('409 QUOTE_EXPIRED from the instant the quote expires (injected clock)', async () => {
      const start = new Date(Math.floor(Date.now() / 1000) * 1000);
      frozenAt = start;
      const early = await quote(key, { ...eurForUsd('10'), validForSeconds: 3 });
      const late = await quote(key, { ...eurForUsd('10'), validForSeconds: 3 });
      expect(late.expiresAt).toBe(new Date(start.getTime() + 3000).toISOString());

      frozenAt = new Date(start.getTime() + 2999);
      const inTime = await executed(key, { quoteId: early.id });
      expect(inTime.createdAt).toBe(frozenAt.toISOString());

      frozenAt = new Date(start.getTime() + 3000);
      await expectRefused(key, { quoteId: late.id, metadata: { a: 'b' } }, 'QUOTE_EXPIRED', {
        quoteId: late.id,
        expiredAt: late.expiresAt,
      });
      frozenAt = new Date(start.getTime() + 3_600_000);
      await expectRefused(key, { quoteId: late.id }, 'QUOTE_EXPIRED', { quoteId: late.id, expiredAt: late.expiresAt });

      // An expired quote: a fresh quote and a new key (docs/contract.md#errors-recovery).
      frozenAt = null;
      expect((await executed(key, { quoteId: (await quote(key, eurForUsd('10'))).id })).status).toBe('EXECUTED');
    });

    it('409 QUOTE_ALREADY_USED for a second trade of the quote, with another Idempotency-Key or another API key', async () => {
      const q = await quote(key, eurForUsd('10'));
      const first = await executed(key, { quoteId: q.id });
      await expectRefused(key, { quoteId: q.id }, 'QUOTE_ALREADY_USED', { quoteId: q.id, tradeId: first.id });
      const secondApiKey = await harness.createKey({ mode, scopes: ['trade'], orgId });
      await expectRefused(secondApiKey, { quoteId: q.id, clientReferenceId: 'again' }, 'QUOTE_ALREADY_USED', {
        quoteId: q.id,
        tradeId: first.id,
      });
      const { rows } = await harness.db.query('SELECT id FROM trades WHERE quote_id = $1', [q.id]);
      expect(rows).toEqual([{ id: first.id }]);
    });
  });

  describe('trading settings changed after quoting (403 at execution)', () => {
    it('TRADE_DISABLED, and the quote stays usable once trading is back on', async () => {
      const fresh = await newOrgKey();
      const q = await quote(fresh, eurForUsd('10'));
      await setTradingEnabled(harness.db, fresh.file.orgId, mode, false);
      try {
        await expectRefused(fresh, { quoteId: q.id }, 'TRADE_DISABLED', {});
      } finally {
        await setTradingEnabled(harness.db, fresh.file.orgId, mode, true);
      }
      expect((await executed(fresh, { quoteId: q.id })).quoteId).toBe(q.id);
    });

    it('TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT and TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT', async () => {
      const fresh = await newOrgKey();
      const org = fresh.file.orgId;
      const q = await quote(fresh, eurForUsd('10'));
      await setCurrencyEnabled(harness.db, org, mode, 'USD', false);
      try {
        await expectRefused(fresh, { quoteId: q.id }, 'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT', { currency: 'USD' });
      } finally {
        await setCurrencyEnabled(harness.db, org, mode, 'USD', true);
      }
      await setPairEnabled(harness.db, org, mode, { buyCurrency: 'EUR', sellCurrency: 'USD' }, false);
      try {
        await expectRefused(fresh, { quoteId: q.id }, 'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT', {
          buyCurrency: 'EUR',
          sellCurrency: 'USD',
        });
      } finally {
        await setPairEnabled(harness.db, org, mode, { buyCurrency: 'EUR', sellCurrency: 'USD' }, true);
      }
      // Settings of the other book do not apply here.
      await setTradingEnabled(harness.db, org, otherMode, false);
      expect((await executed(fresh, { quoteId: q.id })).quoteId).toBe(q.id);
    });
  });

  describe('409 TRADE_CREDIT_LIMIT_EXCEEDED', () => {
    it('holds each executed trade at its sell amount in USD and refuses what would pass the line', async () => {
      const fresh = await newOrgKey();
      const org = fresh.file.orgId;
      await setCreditLine(harness.db, org, mode, new Decimal(500));

      await executed(fresh, { quoteId: (await quote(fresh, eurForUsd('400', 'USD'))).id });
      expect(await committed(org, mode)).toBe('400');

      const over = await quote(fresh, eurForUsd('100.01', 'USD'));
      const refusedKey = randomUUID();
      const details = { creditLine: '500.00', committedAmount: '400.00', requiredAmount: '100.01', currency: 'USD' };
      await expectRefused(
        fresh,
        { quoteId: over.id, metadata: { m: '1' } },
        'TRADE_CREDIT_LIMIT_EXCEEDED',
        details,
        refusedKey,
      );
      // A non-USD sell side counts at its USD value, rounded up: 92.60 EUR × 1.08 = 100.008.
      const overInEur = await quote(fresh, {
        buyCurrency: 'USD',
        sellCurrency: 'EUR',
        amount: '92.60',
        amountCurrency: 'EUR',
      });
      await expectRefused(fresh, { quoteId: overInEur.id }, 'TRADE_CREDIT_LIMIT_EXCEEDED', details);

      // Exactly up to the line is allowed.
      await executed(fresh, { quoteId: (await quote(fresh, eurForUsd('100', 'USD'))).id });
      expect(await committed(org, mode)).toBe('500');
      await expectRefused(fresh, { quoteId: overInEur.id }, 'TRADE_CREDIT_LIMIT_EXCEEDED', {
        ...details,
        committedAmount: '500.00',
      });

      // A 409 is not stored: once the line is raised, the same key executes the same request.
      await setCreditLine(harness.db, org, mode, new Decimal(1000));
      const retried = await executed(fresh, { quoteId: over.id, metadata: { m: '1' } }, refusedKey);
      expect(retried.metadata).toEqual({ m: '1' });
      expect(await committed(org, mode)).toBe('600.01');
      const { rows } = await harness.db.query<{ sum: string }>(
        `SELECT sum(sell_usd_value)::text AS sum FROM trades WHERE org_id = $1 AND environment = $2 AND status = 'EXECUTED'`,
        [org, mode],
      );
      expect(new Decimal(rows[0]!.sum).toFixed()).toBe('600.01');
    });

    if (mode === 'live') {
      it('refuses the first trade of a live book that has no credit line yet', async () => {
        const fresh = await harness.createKey({ mode: 'live', scopes: ['trade'] });
        const q = await quote(fresh, eurForUsd('100'));
        await expectRefused(fresh, { quoteId: q.id }, 'TRADE_CREDIT_LIMIT_EXCEEDED', {
          creditLine: '0.00',
          committedAmount: '0.00',
          requiredAmount: '108.22',
          currency: 'USD',
        });
      });
    } else {
      it('starts a sandbox book with a 1,000,000 USD line', async () => {
        const fresh = await harness.createKey({ mode: 'sandbox', scopes: ['trade'] });
        const q = await quote(fresh, eurForUsd('1000000'));
        await expectRefused(fresh, { quoteId: q.id }, 'TRADE_CREDIT_LIMIT_EXCEEDED', {
          creditLine: '1000000.00',
          committedAmount: '0.00',
          requiredAmount: '1082160.00',
          currency: 'USD',
        });
        await executed(fresh, { quoteId: (await quote(fresh, eurForUsd('1000000', 'USD'))).id });
        expect(await committed(fresh.file.orgId, 'sandbox')).toBe('1000000');
      });
    }
  });

  describe('idempotency', () => {
    it('replays the same trade for the same key and body, byte for byte, without a second row', async () => {
      const q = await quote(key, eurForUsd('30'));
      const body = JSON.stringify({ quoteId: q.id, clientReferenceId: 'replay-1', metadata: { k: 'v' } });
      const idem = randomUUID();
      const first = await postTrade(key, body, idem);
      expect(first.status, first.text).toBe(200);
      const afterFirst = await bookState(orgId, mode);
      const second = await postTrade(key, body, idem);
      expect(second.status).toBe(200);
      expect(second.headers['idempotency-replayed']).toBe('true');
      expect(second.text).toBe(first.text);
      expect(await bookState(orgId, mode)).toEqual(afterFirst);
      const { rows } = await harness.db.query('SELECT id FROM trades WHERE quote_id = $1', [q.id]);
      expect(rows).toHaveLength(1);
    });

    it('422 IDEMPOTENCY_MISMATCH for the same key with another body; the key keeps its trade', async () => {
      const q = await quote(key, eurForUsd('31'));
      const body = JSON.stringify({ quoteId: q.id, clientReferenceId: 'mm-1' });
      const idem = randomUUID();
      const first = await postTrade(key, body, idem);
      expect(first.status).toBe(200);
      await expectRefused(
        key,
        { quoteId: q.id, clientReferenceId: 'mm-2' },
        'IDEMPOTENCY_MISMATCH',
        { originalRequestHash: fingerprintOf(body) },
        idem,
      );
      const other = await quote(key, eurForUsd('31'));
      await expectRefused(
        key,
        { quoteId: other.id, clientReferenceId: 'mm-1' },
        'IDEMPOTENCY_MISMATCH',
        { originalRequestHash: fingerprintOf(body) },
        idem,
      );
      expect((await postTrade(key, body, idem)).text).toBe(first.text);
    });

    it('428 IDEMPOTENCY_KEY_MISSING without a key', async () => {
      const q = await quote(key, eurForUsd('10'));
      await expectRefused(key, { quoteId: q.id }, 'IDEMPOTENCY_KEY_MISSING', { endpoint: 'POST /v3/fx/trades' }, null);
    });
  });

  describe('400 VALIDATION_BODY_FAILED', () => {
    const paths = (error: { details: Record<string, unknown> }) =>
      (error.details.issues as { path: string }[]).map((issue) => issue.path);

    it('rejects a missing or empty quoteId, unknown fields and bad optional fields', async () => {
      const q = await quote(key, eurForUsd('10'));
      expect(paths(await expectRefused(key, {}, 'VALIDATION_BODY_FAILED'))).toEqual(['quoteId']);
      expect(paths(await expectRefused(key, { quoteId: '' }, 'VALIDATION_BODY_FAILED'))).toEqual(['quoteId']);
      expect(paths(await expectRefused(key, { quoteId: q.id, amount: '10' }, 'VALIDATION_BODY_FAILED'))).toEqual([
        'amount',
      ]);
      expect(
        paths(await expectRefused(key, { quoteId: q.id, clientReferenceId: '' }, 'VALIDATION_BODY_FAILED')),
      ).toEqual(['clientReferenceId']);
      expect(paths(await expectRefused(key, { quoteId: q.id, metadata: { n: 1 } }, 'VALIDATION_BODY_FAILED'))).toEqual([
        'metadata.n',
      ]);
      const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
      expect(paths(await expectRefused(key, { quoteId: q.id, metadata: tooMany }, 'VALIDATION_BODY_FAILED'))).toEqual([
        'metadata',
      ]);
      expect(
        paths(
          await expectRefused(key, { quoteId: q.id, metadata: { ['x'.repeat(41)]: 'v' } }, 'VALIDATION_BODY_FAILED'),
        ),
      ).toContain(`metadata.${'x'.repeat(41)}`);
      // Nothing consumed the quote.
      expect((await executed(key, { quoteId: q.id })).quoteId).toBe(q.id);
    });
  });
});
