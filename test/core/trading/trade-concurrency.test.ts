/**
 * Trades under concurrency, on real PostgreSQL and Redis: 100 parallel POSTs with one
 * Idempotency-Key make one trade; 100 parallel distinct trades never take the book past its
 * credit line; and when Redis loses the idempotency records (deleted from the server), a retry
 * with the same key still finds the trade the database holds instead of making a second one.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { readClientBalances } from '../../../src/core/ledger/ledger.js';
import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import type { Principal } from '../../../src/core/principal.js';
import { readOrgBook, setCreditLine } from '../../../src/core/trading/org-books.js';
import { DEFAULT_USD_PRICES, StaticRateSource } from '../../../src/core/trading/rate-source.js';
import { referenceData } from '../../../src/core/trading/reference-data.js';
import { executeTrade } from '../../../src/core/trading/trades.js';
import { TRADING_DEFAULTS, type TradingContext } from '../../../src/core/trading/trading-context.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { requestFingerprint } from '../../../src/lib/idempotency-key.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { ForgetfulRedis, startParallelHarness } from '../../support/book-fixtures.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import type { TestResponse, V3Harness } from '../../support/v3-harness.js';

interface TradeRecord {
  id: string;
  quoteId: string;
  buyAmount: string;
  sellAmount: string;
  [field: string]: unknown;
}

const TRADES = '/v3/fx/trades';
const PARALLEL = 100;

let harness: V3Harness;
/** The harness store, with a second connection that can make it forget its idempotency records. */
const redis = new ForgetfulRedis();

beforeAll(async () => {
  harness = await startParallelHarness(redis);
});
afterAll(async () => {
  await redis.close();
  await harness?.close();
});
afterEach(async () => {
  expect(await checkLedger(harness.db)).toEqual([]);
});

async function quote(key: LoadedKey, body: Record<string, unknown>): Promise<{ id: string }> {
  const response = await harness.signed({
    key,
    method: 'POST',
    path: '/v3/fx/quotes',
    body: JSON.stringify(body),
    idempotencyKey: randomUUID(),
  });
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: { id: string } }>().data;
}

function postTrade(key: LoadedKey, body: string, idempotencyKey: string): Promise<TestResponse> {
  return harness.signed({ key, method: 'POST', path: TRADES, body, idempotencyKey });
}

const tradeOf = (response: TestResponse) => response.json<{ data: TradeRecord }>().data;

async function rowsOf(
  orgId: string,
  mode: Mode,
): Promise<Array<{ id: string; quote_id: string; idempotency_key: string; sell_usd_value: string }>> {
  const { rows } = await harness.db.query<{
    id: string;
    quote_id: string;
    idempotency_key: string;
    sell_usd_value: string;
  }>(
    'SELECT id, quote_id, idempotency_key, sell_usd_value::text FROM trades WHERE org_id = $1 AND environment = $2 ORDER BY id',
    [orgId, mode],
  );
  return rows;
}

async function ledgerTransactions(orgId: string, mode: Mode): Promise<number> {
  const { rows } = await harness.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM ledger_transactions WHERE org_id = $1 AND environment = $2',
    [orgId, mode],
  );
  return Number(rows[0]!.n);
}

async function committedUsd(orgId: string, mode: Mode): Promise<Decimal> {
  return (await readOrgBook(harness.db, orgId, mode))!.committedUsd;
}

async function executedUsdSum(orgId: string, mode: Mode): Promise<Decimal> {
  const { rows } = await harness.db.query<{ sum: string }>(
    `SELECT coalesce(sum(sell_usd_value), 0)::text AS sum FROM trades WHERE org_id = $1 AND environment = $2 AND status = 'EXECUTED'`,
    [orgId, mode],
  );
  return new Decimal(rows[0]!.sum);
}

async function newOrgKey(mode: Mode, creditLineUsd: number): Promise<LoadedKey> {
  const key = await harness.createKey({ mode, scopes: ['view', 'trade'] });
  await setCreditLine(harness.db, key.file.orgId, mode, new Decimal(creditLineUsd));
  return key;
}

describe.each<Mode>(['sandbox', 'live'])('concurrent trades in the %s book', (mode) => {
  it(`${PARALLEL} parallel POSTs with one Idempotency-Key and one quote make exactly one trade`, async () => {
    const key = await newOrgKey(mode, 1_000_000);
    const q = await quote(key, { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100', amountCurrency: 'EUR' });
    const body = JSON.stringify({ quoteId: q.id, clientReferenceId: 'one-key' });
    const idem = randomUUID();

    const responses = await Promise.all(Array.from({ length: PARALLEL }, () => postTrade(key, body, idem)));
    const ok = responses.filter((r) => r.status === 200);
    const others = responses.filter((r) => r.status !== 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const response of ok) expect(response.text).toBe(ok[0]!.text);
    for (const response of others) expectV3Error(response, 'IDEMPOTENCY_IN_FLIGHT');

    const trade = tradeOf(ok[0]!);
    expect(await rowsOf(key.file.orgId, mode)).toEqual([
      { id: trade.id, quote_id: q.id, idempotency_key: idem, sell_usd_value: expect.any(String) },
    ]);
    expect(await ledgerTransactions(key.file.orgId, mode)).toBe(1);
    expect((await committedUsd(key.file.orgId, mode)).toFixed()).toBe('108.22');
    const balances = await readClientBalances(harness.db, key.file.orgId, mode);
    expect(balances.map((b) => [b.currency, b.balance.toFixed()])).toEqual([
      ['EUR', '100'],
      ['USD', '-108.22'],
    ]);

    // Once settled, the key replays the one trade.
    const replay = await postTrade(key, body, idem);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.text).toBe(ok[0]!.text);
  });

  it(`${PARALLEL} parallel distinct trades never take the book past its credit line`, async () => {
    const line = 1000;
    const perTrade = 37;
    const key = await newOrgKey(mode, line);
    const org = key.file.orgId;
    const quotes = await Promise.all(
      Array.from({ length: PARALLEL }, () =>
        quote(key, { buyCurrency: 'EUR', sellCurrency: 'USD', amount: String(perTrade), amountCurrency: 'USD' }),
      ),
    );
    const responses = await Promise.all(
      quotes.map((q) => postTrade(key, JSON.stringify({ quoteId: q.id }), randomUUID())),
    );

    const accepted = responses.filter((r) => r.status === 200).map(tradeOf);
    const refused = responses.filter((r) => r.status !== 200);
    // Every request either fits or is refused for credit; the line takes exactly floor(1000 / 37) = 27.
    expect(accepted.length).toBe(Math.floor(line / perTrade));
    expect(accepted.length * perTrade).toBeLessThanOrEqual(line);
    for (const response of refused) {
      const error = expectV3Error(response, 'TRADE_CREDIT_LIMIT_EXCEEDED');
      expect(error.details).toMatchObject({ creditLine: '1000.00', requiredAmount: '37.00', currency: 'USD' });
      expect(new Decimal(error.details.committedAmount as string).plus(perTrade).gt(line)).toBe(true);
    }

    const committed = await committedUsd(org, mode);
    expect(committed.toFixed()).toBe(String(accepted.length * perTrade));
    expect((await executedUsdSum(org, mode)).eq(committed)).toBe(true);
    expect(new Set((await rowsOf(org, mode)).map((row) => row.id))).toEqual(new Set(accepted.map((t) => t.id)));
    const balances = new Map((await readClientBalances(harness.db, org, mode)).map((b) => [b.currency, b.balance]));
    expect(balances.get('USD')!.toFixed()).toBe(String(-accepted.length * perTrade));
    expect(balances.get('EUR')!.eq(accepted.reduce((sum, t) => sum.plus(t.buyAmount), new Decimal(0)))).toBe(true);
  });

  it(`${PARALLEL} parallel trades of mixed sizes: every refusal was one that no longer fitted`, async () => {
    const line = 2500;
    const key = await newOrgKey(mode, line);
    const org = key.file.orgId;
    const sizes = [37, 53, 71, 5, 149];
    const quotes = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        quote(key, {
          buyCurrency: 'GBP',
          sellCurrency: 'USD',
          amount: String(sizes[i % sizes.length]),
          amountCurrency: 'USD',
        }),
      ),
    );
    const responses = await Promise.all(
      quotes.map((q) => postTrade(key, JSON.stringify({ quoteId: q.id }), randomUUID())),
    );

    const committed = await committedUsd(org, mode);
    let acceptedSum = new Decimal(0);
    responses.forEach((response, i) => {
      const size = sizes[i % sizes.length]!;
      if (response.status === 200) {
        acceptedSum = acceptedSum.plus(size);
      } else {
        expectV3Error(response, 'TRADE_CREDIT_LIMIT_EXCEEDED');
        // Committed credit only grows here, so what did not fit then does not fit now.
        expect(
          committed.plus(size).gt(line),
          `a refused ${size} USD trade fits ${committed.toFixed()} of ${line}`,
        ).toBe(true);
      }
    });
    expect(acceptedSum.lte(line)).toBe(true);
    expect(committed.eq(acceptedSum)).toBe(true);
    expect((await executedUsdSum(org, mode)).eq(committed)).toBe(true);
    expect((await rowsOf(org, mode)).length).toBe(responses.filter((r) => r.status === 200).length);
  });

  it('a retry after Redis lost the idempotency records finds the same trade, never a second one', async () => {
    const line = 1000;
    const key = await newOrgKey(mode, line);
    const org = key.file.orgId;
    const quotes = await Promise.all(
      Array.from({ length: 40 }, () =>
        quote(key, { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '37', amountCurrency: 'USD' }),
      ),
    );
    const requests = quotes.map((q) => ({
      body: JSON.stringify({ quoteId: q.id, metadata: { q: q.id } }),
      idem: randomUUID(),
    }));
    const first = await Promise.all(requests.map((r) => postTrade(key, r.body, r.idem)));
    const acceptedIds = first.filter((r) => r.status === 200).map((r) => tradeOf(r).id);
    expect(acceptedIds).toHaveLength(27);
    const rowsBefore = await rowsOf(org, mode);
    const committedBefore = await committedUsd(org, mode);
    const ledgerBefore = await ledgerTransactions(org, mode);

    expect(await redis.loseIdempotencyRecords()).toBeGreaterThanOrEqual(27);
    const retried = await Promise.all(requests.map((r) => postTrade(key, r.body, r.idem)));
    retried.forEach((response, i) => {
      if (first[i]!.status === 200) {
        expect(response.status, response.text).toBe(200);
        // Not a replay from the store: the trade found in the database by its key.
        expect(response.headers['idempotency-replayed']).toBe('false');
        expect(tradeOf(response)).toEqual(tradeOf(first[i]!));
      } else {
        expectV3Error(response, 'TRADE_CREDIT_LIMIT_EXCEEDED');
      }
    });
    expect(await rowsOf(org, mode)).toEqual(rowsBefore);
    expect((await committedUsd(org, mode)).eq(committedBefore)).toBe(true);
    expect(await ledgerTransactions(org, mode)).toBe(ledgerBefore);

    // The store holds the answers again: a third round replays them.
    const third = await postTrade(key, requests[0]!.body, requests[0]!.idem);
    expect(third.headers['idempotency-replayed']).toBe(first[0]!.status === 200 ? 'true' : undefined);

    // With the record lost, the same key with another body is still a mismatch (from the trade row).
    const winner = requests[first.findIndex((r) => r.status === 200)]!;
    expect(await redis.loseIdempotencyRecords()).toBeGreaterThan(0);
    const other = await quote(key, { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '5', amountCurrency: 'USD' });
    const mismatch = await postTrade(key, JSON.stringify({ quoteId: other.id }), winner.idem);
    expectV3Error(mismatch, 'IDEMPOTENCY_MISMATCH', {
      details: { originalRequestHash: requestFingerprint('POST', TRADES, Buffer.from(winner.body)) },
    });
    // Also when the other body would be refused on its own (a quote that does not exist, one
    // another trade used): the earlier trade of the key answers first, not the refusal.
    const usedQuoteId = quotes[first.findIndex((r, i) => r.status === 200 && requests[i] !== winner)]!.id;
    for (const quoteId of ['qte_00000000000000000000000000000000', usedQuoteId]) {
      expect(await redis.loseIdempotencyRecords()).toBeGreaterThan(0);
      expectV3Error(await postTrade(key, JSON.stringify({ quoteId }), winner.idem), 'IDEMPOTENCY_MISMATCH');
    }
    expect(await rowsOf(org, mode)).toEqual(rowsBefore);
  });

  it(`${PARALLEL} parallel retries with one key and no idempotency record at all return the one trade`, async () => {
    const key = await newOrgKey(mode, 1_000_000);
    const org = key.file.orgId;
    const q = await quote(key, { buyCurrency: 'USD', sellCurrency: 'EUR', amount: '250', amountCurrency: 'USD' });
    const body = JSON.stringify({ quoteId: q.id });
    const idem = randomUUID();
    const first = await postTrade(key, body, idem);
    expect(first.status).toBe(200);
    await redis.loseIdempotencyRecords();

    const responses = await Promise.all(Array.from({ length: PARALLEL }, () => postTrade(key, body, idem)));
    for (const response of responses) {
      if (response.status === 200) expect(tradeOf(response)).toEqual(tradeOf(first));
      else expectV3Error(response, 'IDEMPOTENCY_IN_FLIGHT');
    }
    expect((await rowsOf(org, mode)).map((row) => row.id)).toEqual([tradeOf(first).id]);
    expect(await ledgerTransactions(org, mode)).toBe(1);
  });

  it('attempts racing with one key after the store lost it all return the one trade (the database key is the second line)', async () => {
    // The idempotency store normally lets one attempt through; here it has lost the key while
    // attempts run, so they reach executeTrade together, as after a Redis failover.
    const key = await newOrgKey(mode, 1_000_000);
    const org = key.file.orgId;
    const q = await quote(key, { buyCurrency: 'EUR', sellCurrency: 'GBP', amount: '80', amountCurrency: 'EUR' });
    const context: TradingContext = {
      ...TRADING_DEFAULTS,
      db: harness.db,
      reference: referenceData(harness.db),
      rates: new StaticRateSource(DEFAULT_USD_PRICES),
      now: () => new Date(),
    };
    const principal: Principal = { keyName: key.file.name, orgId: org, scopes: ['view', 'trade'], environment: mode };
    const body = JSON.stringify({ quoteId: q.id });
    const idempotency = { key: randomUUID(), fingerprint: requestFingerprint('POST', TRADES, Buffer.from(body)) };

    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () => executeTrade(context, principal, { quoteId: q.id, idempotency })),
    );
    const errors = outcomes.flatMap((o) =>
      o.status === 'rejected' ? [String((o.reason as { code?: string }).code ?? o.reason)] : [],
    );
    expect(errors).toEqual([]);
    const ids = new Set(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.id : '')));
    expect(ids.size).toBe(1);
    expect((await rowsOf(org, mode)).map((row) => row.id)).toEqual([...ids]);
    expect(await ledgerTransactions(org, mode)).toBe(1);

    // Racing with the same key and quote but another body: one trade, the others a key reuse.
    const q2 = await quote(key, { buyCurrency: 'EUR', sellCurrency: 'GBP', amount: '80', amountCurrency: 'EUR' });
    const key2 = randomUUID();
    const attempts = Array.from({ length: 10 }, (_, i) => {
      const metadata = { attempt: String(i) };
      const fingerprint = requestFingerprint('POST', TRADES, Buffer.from(JSON.stringify({ quoteId: q2.id, metadata })));
      return executeTrade(context, principal, { quoteId: q2.id, metadata, idempotency: { key: key2, fingerprint } });
    });
    const settled = await Promise.allSettled(attempts);
    expect(settled.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const codes = settled.flatMap((o) => (o.status === 'rejected' ? [(o.reason as { code?: string }).code] : []));
    expect(new Set(codes)).toEqual(new Set(['IDEMPOTENCY_MISMATCH']));
    expect(await rowsOf(org, mode)).toHaveLength(2);
  });
});
