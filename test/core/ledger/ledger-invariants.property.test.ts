/**
 * Property: whatever sequence of quotes, trades, reversals, settlements and deposits a book goes
 * through (successful or refused), after every step the ledger balances to zero per currency,
 * every maintained balance equals the sum of its entries, and the committed credit equals the
 * USD value of the book's unsettled trades and stays within the credit line.
 */

import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { parseDecimal } from '../../../src/lib/money.js';
import { recordTestDeposit } from '../../support/book-fixtures.js';
import { V3Harness } from '../../support/v3-harness.js';

const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'USDC'] as const;
const RUNS = 40;

let harness: V3Harness;

beforeAll(async () => {
  harness = await V3Harness.start({ core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
});
afterAll(async () => harness?.close());

type Action =
  | { kind: 'trade'; buy: number; sell: number; amount: string; fixBuy: boolean }
  | { kind: 'reverse'; pick: number }
  | { kind: 'settle'; pick: number; fund: boolean }
  | { kind: 'deposit'; currency: number; amount: string };

const amounts = fc.integer({ min: 1, max: 400_000 }).map((n) => String(n));
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('trade' as const),
      buy: fc.nat(4),
      sell: fc.nat(4),
      amount: amounts,
      fixBuy: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reverse' as const), pick: fc.nat(50) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('settle' as const), pick: fc.nat(50), fund: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('deposit' as const), currency: fc.nat(4), amount: amounts }) },
);

async function post(key: LoadedKey, path: string, body?: unknown) {
  return harness.post(key, path, body);
}

async function apply(key: LoadedKey, trades: string[], step: Action): Promise<number> {
  switch (step.kind) {
    case 'trade': {
      const buy = CURRENCIES[step.buy]!;
      const sell = CURRENCIES[step.sell]!;
      const quote = await post(key, '/v3/fx/quotes', {
        buyCurrency: buy,
        sellCurrency: sell,
        amount: step.amount,
        amountCurrency: step.fixBuy ? buy : sell,
      });
      if (quote.status !== 200) return quote.status;
      const trade = await post(key, '/v3/fx/trades', { quoteId: quote.json<{ data: { id: string } }>().data.id });
      if (trade.status === 200) trades.push(trade.json<{ data: { id: string } }>().data.id);
      return trade.status;
    }
    case 'reverse': {
      const id = trades[step.pick % Math.max(1, trades.length)];
      if (!id) return 0;
      const quote = await post(key, `/v3/fx/trades/${id}/reverse-quote`);
      if (quote.status !== 200) return quote.status;
      const reversal = await post(key, `/v3/fx/trades/${id}/reverse`, {
        quoteId: quote.json<{ data: { id: string } }>().data.id,
      });
      return reversal.status;
    }
    case 'settle': {
      const id = trades[step.pick % Math.max(1, trades.length)];
      if (!id) return 0;
      if (step.fund) {
        // Deposit what the trade sold, so that settlement is often possible.
        const trade = (await harness.signed({ key, path: `/v3/fx/trades/${id}` })).json<{
          data: { sellCurrency: string; sellAmount: string };
        }>().data;
        await deposit(key, trade.sellCurrency, trade.sellAmount);
      }
      return (await post(key, `/v3/fx/trades/${id}/settle`)).status;
    }
    case 'deposit':
      await deposit(key, CURRENCIES[step.currency]!, step.amount);
      return 200;
  }
}

/** Deposits arrive through their own issue's endpoints; here is the movement they post. */
async function deposit(key: LoadedKey, currency: string, amount: string): Promise<void> {
  await recordTestDeposit(harness.db, { orgId: key.file.orgId, environment: 'sandbox', currency, amount });
}

async function expectInvariants(orgId: string) {
  expect(await checkLedger(harness.db, { orgId })).toEqual([]);
  const { rows } = await harness.db.query<{ committed: string; line: string; unsettled: string }>(
    `SELECT e.committed_usd::text AS committed, e.credit_line_usd::text AS line,
            coalesce((SELECT sum(sell_usd_value) FROM trades t WHERE t.org_id = e.org_id AND t.environment = e.environment AND t.status = 'EXECUTED'), 0)::text AS unsettled
       FROM org_environments e WHERE e.org_id = $1 AND e.environment = 'sandbox'`,
    [orgId],
  );
  const book = rows[0]!;
  expect(
    parseDecimal(book.committed).eq(parseDecimal(book.unsettled)),
    `committed ${book.committed} vs unsettled ${book.unsettled}`,
  ).toBe(true);
  expect(parseDecimal(book.committed).lte(parseDecimal(book.line))).toBe(true);
}

it(`keeps the books sound through ${RUNS} random sequences of trading steps`, async () => {
  const statuses = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(fc.array(action, { minLength: 4, maxLength: 14 }), async (steps) => {
      const key = await harness.createKey({ mode: 'sandbox' });
      const trades: string[] = [];
      for (const step of steps) {
        const status = await apply(key, trades, step);
        expect(status, `${step.kind} answered ${status}`).toBeLessThan(500);
        statuses.set(`${step.kind}:${status}`, (statuses.get(`${step.kind}:${status}`) ?? 0) + 1);
        await expectInvariants(key.file.orgId);
      }
    }),
    { numRuns: RUNS },
  );
  // The sequences must really trade, reverse and settle, or the property proves little.
  for (const outcome of ['trade:200', 'reverse:200', 'settle:200'])
    expect(statuses.get(outcome) ?? 0, outcome).toBeGreaterThan(0);
}, 300_000);
