/**
 * Crash safety of POST /v3/fx/trades (docs/contract.md#errors-recovery), by failing the write at
 * each step with a failpoint, in the sandbox and the live book: a failure inside the transaction
 * (after the credit reservation, after the trade insert, after the ledger movement) answers 500
 * TRADE_EXECUTION_FAILED with details.resourceId, leaves nothing behind (GET by that id is 404, no
 * row, no ledger entry, credit unchanged), and the retry with the same key executes once. A failure
 * after the commit (the response lost) answers the same 500; GET finds the trade, and the retry
 * with the same key returns that trade, never a second one.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { readClientBalances } from '../../../src/core/ledger/ledger.js';
import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import { readOrgBook, setCreditLine } from '../../../src/core/trading/org-books.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { armFailpoint, disarmAllFailpoints } from '../../../src/lib/failpoints.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { type TestResponse, V3Harness } from '../../support/v3-harness.js';

interface TradeRecord {
  id: string;
  quoteId: string;
  buyAmount: string;
  sellAmount: string;
  clientReferenceId: string | null;
  metadata: Record<string, string>;
  [field: string]: unknown;
}

const TRADES = '/v3/fx/trades';
const IN_TRANSACTION = ['trade.after-credit', 'trade.after-insert', 'trade.after-ledger'];

let harness: V3Harness;

beforeAll(async () => {
  harness = await V3Harness.start({ keyCacheTtlMs: 60_000, core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
});
afterAll(async () => harness?.close());
afterEach(async () => {
  disarmAllFailpoints();
  expect(await checkLedger(harness.db)).toEqual([]);
});

async function quote(key: LoadedKey): Promise<{ id: string }> {
  const body = JSON.stringify({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100', amountCurrency: 'EUR' });
  const response = await harness.signed({
    key,
    method: 'POST',
    path: '/v3/fx/quotes',
    body,
    idempotencyKey: randomUUID(),
  });
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: { id: string } }>().data;
}

const postTrade = (key: LoadedKey, body: string, idempotencyKey: string) =>
  harness.signed({ key, method: 'POST', path: TRADES, body, idempotencyKey });
const getTrade = (key: LoadedKey, id: string) => harness.signed({ key, path: `${TRADES}/${id}` });
const tradeOf = (response: TestResponse) => response.json<{ data: TradeRecord }>().data;

interface BookState {
  balances: Array<[string, string]>;
  committed: string;
  tradeIds: string[];
  ledgerTransactions: number;
  ledgerEntries: number;
}

async function bookState(orgId: string, mode: Mode): Promise<BookState> {
  const trades = await harness.db.query<{ id: string }>(
    'SELECT id FROM trades WHERE org_id = $1 AND environment = $2 ORDER BY id',
    [orgId, mode],
  );
  const ledger = await harness.db.query<{ transactions: string; entries: string }>(
    `SELECT count(DISTINCT t.id)::text AS transactions, count(e.id)::text AS entries
       FROM ledger_transactions t LEFT JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE t.org_id = $1 AND t.environment = $2`,
    [orgId, mode],
  );
  return {
    balances: (await readClientBalances(harness.db, orgId, mode)).map((b) => [b.currency, b.balance.toFixed()]),
    committed: (await readOrgBook(harness.db, orgId, mode))!.committedUsd.toFixed(),
    tradeIds: trades.rows.map((row) => row.id),
    ledgerTransactions: Number(ledger.rows[0]!.transactions),
    ledgerEntries: Number(ledger.rows[0]!.entries),
  };
}

async function ledgerRowsFor(referenceId: string): Promise<number> {
  const { rows } = await harness.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM ledger_transactions WHERE reference_id = $1',
    [referenceId],
  );
  return Number(rows[0]!.n);
}

/** The state after exactly one trade of 100 EUR for 108.22 USD on a fresh book. */
function expectOneTrade(state: BookState, tradeId: string): void {
  expect(state).toEqual({
    balances: [
      ['EUR', '100'],
      ['USD', '-108.22'],
    ],
    committed: '108.22',
    tradeIds: [tradeId],
    ledgerTransactions: 1,
    ledgerEntries: 4,
  });
}

describe.each<Mode>(['sandbox', 'live'])('crash safety in the %s book', (mode) => {
  async function newOrgKey(): Promise<LoadedKey> {
    const key = await harness.createKey({ mode, scopes: ['view', 'trade'] });
    if (mode === 'live') await setCreditLine(harness.db, key.file.orgId, 'live', new Decimal(1_000_000));
    return key;
  }

  it.each(IN_TRANSACTION)(
    'a failure at %s writes nothing; the retry with the same key executes once',
    async (point) => {
      const key = await newOrgKey();
      const org = key.file.orgId;
      const q = await quote(key);
      const body = JSON.stringify({ quoteId: q.id, clientReferenceId: `crash-${point}`, metadata: { step: point } });
      const idem = randomUUID();
      const before = await bookState(org, mode);

      armFailpoint(point);
      const failed = await postTrade(key, body, idem);
      const error = expectV3Error(failed, 'TRADE_EXECUTION_FAILED');
      const resourceId = error.details.resourceId as string;
      expect(resourceId).toMatch(/^trd_[0-9a-f]{32}$/);

      // Recovery (docs/contract.md#errors-recovery): fetch by resourceId. Absent, and nothing
      // half-written anywhere.
      expectV3Error(await getTrade(key, resourceId), 'TRADE_NOT_FOUND', { details: { tradeId: resourceId } });
      expect(await bookState(org, mode)).toEqual(before);
      expect(await ledgerRowsFor(resourceId)).toBe(0);
      expect(await checkLedger(harness.db)).toEqual([]);

      // ...so retry with the SAME key: a 500 was not stored, and the quote is still unused.
      const retried = await postTrade(key, body, idem);
      expect(retried.status, retried.text).toBe(200);
      expect(retried.headers['idempotency-replayed']).toBe('false');
      const trade = tradeOf(retried);
      expect(trade).toMatchObject({
        quoteId: q.id,
        buyAmount: '100.00',
        sellAmount: '108.22',
        clientReferenceId: `crash-${point}`,
        metadata: { step: point },
      });
      expectOneTrade(await bookState(org, mode), trade.id);
      expect((await getTrade(key, trade.id)).status).toBe(200);

      // The failed attempt's id never comes to life, and further retries replay the one trade.
      expectV3Error(await getTrade(key, resourceId), 'TRADE_NOT_FOUND');
      const again = await postTrade(key, body, idem);
      expect(again.headers['idempotency-replayed']).toBe('true');
      expect(again.text).toBe(retried.text);
      expectOneTrade(await bookState(org, mode), trade.id);
    },
  );

  it('a response lost after the commit: 500 with resourceId, GET finds the trade, the retry returns it', async () => {
    const key = await newOrgKey();
    const org = key.file.orgId;
    const q = await quote(key);
    const body = JSON.stringify({
      quoteId: q.id,
      clientReferenceId: 'lost-response',
      metadata: { step: 'after-commit' },
    });
    const idem = randomUUID();

    armFailpoint('trade.after-commit');
    const failed = await postTrade(key, body, idem);
    const error = expectV3Error(failed, 'TRADE_EXECUTION_FAILED');
    const resourceId = error.details.resourceId as string;

    // Recovery: the resource exists, so the operation succeeded.
    const fetched = await getTrade(key, resourceId);
    expect(fetched.status, fetched.text).toBe(200);
    const trade = tradeOf(fetched);
    expect(trade).toMatchObject({
      id: resourceId,
      quoteId: q.id,
      status: 'EXECUTED',
      clientReferenceId: 'lost-response',
      metadata: { step: 'after-commit' },
    });
    expectOneTrade(await bookState(org, mode), resourceId);

    // A client that retries anyway with the same key gets that trade, not a second one.
    const retried = await postTrade(key, body, idem);
    expect(retried.status, retried.text).toBe(200);
    expect(tradeOf(retried)).toEqual(trade);
    const replay = await postTrade(key, body, idem);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.text).toBe(retried.text);
    expectOneTrade(await bookState(org, mode), resourceId);

    // And another key for the same quote is refused: the quote was executed once.
    const other = await postTrade(key, body, randomUUID());
    expectV3Error(other, 'QUOTE_ALREADY_USED', { details: { quoteId: q.id, tradeId: resourceId } });
  });

  it('fails only the armed attempt: parallel trades of the same book around a failure stay whole', async () => {
    const key = await newOrgKey();
    const org = key.file.orgId;
    const quotes = await Promise.all(Array.from({ length: 10 }, () => quote(key)));
    armFailpoint('trade.after-ledger');
    const responses = await Promise.all(
      quotes.map((q) => postTrade(key, JSON.stringify({ quoteId: q.id }), randomUUID())),
    );
    const failed = responses.filter((r) => r.status !== 200);
    expect(failed).toHaveLength(1);
    const resourceId = expectV3Error(failed[0]!, 'TRADE_EXECUTION_FAILED').details.resourceId as string;
    expectV3Error(await getTrade(key, resourceId), 'TRADE_NOT_FOUND');
    const state = await bookState(org, mode);
    expect(state.tradeIds).toHaveLength(9);
    expect(state.committed).toBe(new Decimal('108.22').times(9).toFixed());
    expect(state.ledgerTransactions).toBe(9);
    expect(state.balances).toEqual([
      ['EUR', '900'],
      ['USD', new Decimal('-108.22').times(9).toFixed()],
    ]);
  });
});
