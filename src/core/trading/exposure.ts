/**
 * Exposure: how much of a book's credit line its open trades hold (GET /v3/fx/exposure).
 *
 * Semantics:
 * - Credit: every EXECUTED trade (neither settled nor reversed) holds its `sell_usd_value` (the
 *   USD value of what it sold, fixed when it was quoted, rounded up to cents) of the book's
 *   credit line. `org_environments.committed_usd` is the sum of those values; the trade,
 *   settlement and reversal transactions maintain it, so it is read here, not recomputed.
 * - creditLine: the book's credit line in USD. committedAmount: committed_usd.
 *   availableCredit = max(0, creditLine − committedAmount), computed on the exact values.
 * - breakdown: the book's EXECUTED trades grouped by sell currency and settlement stage, one
 *   entry `{currency, settlementStage, tradeCount, amount, usdValue}` per group. The stage is the
 *   trade record's own rule (`settlementStage` in trades.ts): AWAITING_FUNDING while the org's
 *   client balance in the sold currency is negative or has no account yet, FUNDED otherwise.
 *   All open trades of one currency share that balance, so a currency appears in one stage at a
 *   time. amount = sum of the sell amounts (the currency's decimals); usdValue = sum of their
 *   sell_usd_value (2 decimals). Sorted by currency.
 * - Every amount is a decimal string; USD figures have 2 decimals. They are whole cents in
 *   practice (a credit line set to fractions of a cent is the exception); where rounding is
 *   needed it goes the cautious way: creditLine and availableCredit down, committedAmount and
 *   usdValue up, so exposure never looks smaller, nor credit larger, than it is.
 * - The book and its trades are read in one REPEATABLE READ snapshot, so committedAmount and
 *   the breakdown describe the same moment even while trades execute.
 */
import { z } from 'zod';

import type { Queryable } from '../../lib/db/database.js';
import { Decimal, formatToDecimals, parseDecimal } from '../../lib/money.js';
import type { Principal } from '../principal.js';
import { currencyCode, decimalString } from '../wire-types.js';
import { readOrgBook } from './org-books.js';
import type { ReferenceSnapshot } from './reference-data.js';
import { type SettlementStage, settlementStage } from './trades.js';
import { type TradingContext, transactionWithReference } from './trading-context.js';

/** The book read: an org in one environment (a request's principal is one). */
type Book = Pick<Principal, 'orgId' | 'environment'>;

/** The stages an open (EXECUTED) trade can be in. */
export type OpenTradeStage = Extract<SettlementStage, 'AWAITING_FUNDING' | 'FUNDED'>;

const exposureBreakdownEntrySchema = z
  .object({
    currency: currencyCode.meta({ description: 'The sell currency.' }),
    settlementStage: z.enum(['AWAITING_FUNDING', 'FUNDED'] as const satisfies readonly OpenTradeStage[]),
    tradeCount: z.number().int().min(1),
    amount: decimalString.meta({ description: 'The sum of the sell amounts, in currency with its decimals.' }),
    usdValue: decimalString.meta({ description: 'The sum of the credit the trades hold, USD with 2 decimals.' }),
  })
  .meta({ id: 'ExposureBreakdownEntry' });

export type ExposureBreakdownEntry = Readonly<z.output<typeof exposureBreakdownEntrySchema>>;

/** The exposure record (docs/contract.md#resources-exposure), as readExposure writes it. */
export const exposureRecordSchema = z
  .object({
    object: z.literal('exposure'),
    currency: z.literal('USD'),
    creditLine: decimalString.meta({ description: "The book's credit line." }),
    committedAmount: decimalString.meta({ description: 'What executed, unsettled trades hold of it.' }),
    availableCredit: decimalString.meta({ description: 'max(0, creditLine - committedAmount).' }),
    breakdown: z
      .array(exposureBreakdownEntrySchema)
      .meta({ description: "The book's EXECUTED trades by sell currency and stage, sorted by currency." }),
  })
  .meta({ id: 'Exposure', description: "The book's credit line and what its open trades commit of it." });

export type ExposureRecord = Readonly<z.output<typeof exposureRecordSchema>>;

/** What is left of the line; never negative (the table keeps committed within the line anyway). */
export function availableCredit(creditLine: Decimal, committed: Decimal): Decimal {
  return Decimal.max(0, creditLine.minus(committed));
}

interface OpenTradeGroupRow {
  sell_currency: string;
  /** The org's client balance in sell_currency; null before that account's first movement. */
  sell_balance: string | null;
  trade_count: number;
  sell_amount: string;
  sell_usd_value: string;
}

/**
 * EXECUTED trades summed per sell currency, with the one balance their stage depends on. The
 * balance is in the GROUP BY only to be selectable: it is one row per currency (the account
 * is unique per org, environment, kind and currency). The partial index
 * trades_unsettled_idx serves the WHERE.
 */
async function openTradeGroups(tx: Queryable, book: Book): Promise<OpenTradeGroupRow[]> {
  const { rows } = await tx.query<OpenTradeGroupRow>(
    `SELECT t.sell_currency, b.balance::text AS sell_balance, count(*)::int AS trade_count,
            sum(t.sell_amount)::text AS sell_amount, sum(t.sell_usd_value)::text AS sell_usd_value
       FROM trades t
       LEFT JOIN ledger_accounts b
         ON b.org_id = t.org_id AND b.environment = t.environment AND b.kind = 'client' AND b.currency = t.sell_currency
      WHERE t.org_id = $1 AND t.environment = $2 AND t.status = 'EXECUTED'
      GROUP BY t.sell_currency, b.balance`,
    [book.orgId, book.environment],
  );
  return rows;
}

/** The stage of an open trade, by the trade record's rule; an EXECUTED trade is never SETTLED or CLOSED. */
function openTradeStage(sellBalance: string | null): OpenTradeStage {
  const stage = settlementStage({ status: 'EXECUTED', sell_balance: sellBalance });
  if (stage !== 'AWAITING_FUNDING' && stage !== 'FUNDED') throw new Error(`an EXECUTED trade cannot be ${stage}`);
  return stage;
}

function toBreakdownEntry(row: OpenTradeGroupRow, reference: ReferenceSnapshot): ExposureBreakdownEntry {
  return {
    currency: row.sell_currency,
    settlementStage: openTradeStage(row.sell_balance),
    tradeCount: row.trade_count,
    amount: formatToDecimals(
      parseDecimal(row.sell_amount),
      reference.currencies.get(row.sell_currency)!.decimals,
      Decimal.ROUND_UP,
    ),
    usdValue: formatToDecimals(parseDecimal(row.sell_usd_value), 2, Decimal.ROUND_UP),
  };
}

/** Code-point order, so that USD sorts before USDC whatever the database collation. */
function byCurrencyThenStage(a: ExposureBreakdownEntry, b: ExposureBreakdownEntry): number {
  const ka = `${a.currency}|${a.settlementStage}`;
  const kb = `${b.currency}|${b.settlementStage}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** The book's exposure record; see the rules at the top of this file. */
export async function readExposure(
  context: Pick<TradingContext, 'db' | 'reference'>,
  book: Book,
): Promise<ExposureRecord> {
  const { reference, orgBook, groups } = await transactionWithReference(context, async (tx, reference) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return {
      reference,
      orgBook: await readOrgBook(tx, book.orgId, book.environment),
      groups: await openTradeGroups(tx, book),
    };
  });
  // Every authenticated org has both books (created with its first key).
  if (!orgBook) throw new Error(`no ${book.environment} book for org ${book.orgId}`);
  return {
    object: 'exposure',
    currency: 'USD',
    creditLine: formatToDecimals(orgBook.creditLineUsd, 2, Decimal.ROUND_DOWN),
    committedAmount: formatToDecimals(orgBook.committedUsd, 2, Decimal.ROUND_UP),
    availableCredit: formatToDecimals(
      availableCredit(orgBook.creditLineUsd, orgBook.committedUsd),
      2,
      Decimal.ROUND_DOWN,
    ),
    breakdown: groups.map((row) => toBreakdownEntry(row, reference)).sort(byCurrencyThenStage),
  };
}
