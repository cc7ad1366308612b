/**
 * Balances: the org's client ledger accounts of one book, with their USD values
 * (GET /v3/fx/balances).
 *
 * Semantics:
 * - One record per client ledger account of the book (an account exists from the currency's
 *   first movement: a trade, a deposit). `id` is the account id (`bal_...`). A bounded list:
 *   no cursor, no pagination object. Sorted by currency code (code-point order: USD before USDC).
 * - amount: the org's balance with the currency's decimals: its client ledger account plus
 *   what its pending withdrawals hold (the withdrawal_hold account; the money is still the
 *   org's until the withdrawal completes). Negative while the org owes that currency (trades
 *   on credit).
 * - withdrawableAmount = balance minus pending withdrawals, never below 0
 *   (docs/contract.md#ledger-balances). A withdrawal moves its amount from the client account to
 *   the hold, so that is withdrawableBalance(client balance) = max(0, client balance): nothing is
 *   subtracted twice.
 * - usdValue and withdrawableUsdValue: the amount × `rates.usdPrice(currency)`, rounded half-even
 *   to 2 decimals (a valuation for display, unlike the credit check's round-up).
 * - totals (next to `data`, for the v2 legacy shape): netPositiveUsd = sum of the positive
 *   usdValues, netNegativeUsd = sum of the negative ones (≤ 0), netUsd = their sum. They add up
 *   the rounded usdValues shown, so a reader can check the totals against the list.
 * - createdAt: the account's first movement; updatedAt: its latest, or its hold's if later.
 * - Every amount is a decimal string.
 */
import { z } from 'zod';

import type { Queryable } from '../../lib/db/database.js';
import { Decimal, formatToDecimals } from '../../lib/money.js';
import type { AccountBalance } from '../ledger/ledger.js';
import type { Principal } from '../principal.js';
import { currencyCode, decimalString, timestamp, v3Id } from '../wire-types.js';
import type { ReferenceSnapshot } from './reference-data.js';
import type { TradingContext } from './trading-context.js';

/** The book read: an org in one environment (a request's principal is one). */
type Book = Pick<Principal, 'orgId' | 'environment'>;

/** The balance record (docs/contract.md#resources-balance), as readBalances writes it. */
export const balanceRecordSchema = z
  .object({
    object: z.literal('balance'),
    id: v3Id('balance').meta({ description: "The book's client ledger account in the currency." }),
    currency: currencyCode,
    amount: decimalString.meta({
      description: 'The balance, including what pending withdrawals hold; negative while the book owes the currency.',
    }),
    withdrawableAmount: decimalString.meta({ description: 'The balance minus pending withdrawals, never below 0.' }),
    usdValue: decimalString.meta({ description: 'amount valued in USD, rounded half-even to cents.' }),
    withdrawableUsdValue: decimalString.meta({
      description: 'withdrawableAmount valued in USD, rounded half-even to cents.',
    }),
    createdAt: timestamp.meta({ description: "The account's first movement." }),
    updatedAt: timestamp.meta({ description: "Its latest movement, or its hold's if later." }),
  })
  .meta({ id: 'Balance', description: "One currency's balance of the book." });

export type BalanceRecord = Readonly<z.output<typeof balanceRecordSchema>>;

export const balanceTotalsSchema = z
  .object({
    netPositiveUsd: decimalString.meta({ description: 'The sum of the positive usdValues.' }),
    netNegativeUsd: decimalString.meta({ description: 'The sum of the negative usdValues, at most 0.' }),
    netUsd: decimalString.meta({ description: 'Their sum.' }),
  })
  .meta({ id: 'BalanceTotals', description: 'The USD totals of the rounded values shown.' });

export type BalanceTotals = Readonly<z.output<typeof balanceTotalsSchema>>;

/** The success body of GET /v3/fx/balances: a bounded list with its totals beside `data`. */
export const balanceListSchema = z.object({ data: z.array(balanceRecordSchema), totals: balanceTotalsSchema });

export interface BalanceList {
  readonly data: readonly BalanceRecord[];
  readonly totals: BalanceTotals;
}

/**
 * What the org may withdraw, given its client balance (which already excludes what pending
 * withdrawals hold): all of it when positive, nothing when it owes.
 */
export function withdrawableBalance(balance: Decimal): Decimal {
  return Decimal.max(0, balance);
}

/** USD value for display: half-even to cents (the credit check rounds up instead, see pricing.ts). */
export function displayUsdValue(amount: Decimal, usdPrice: Decimal): Decimal {
  return amount.times(usdPrice).decimalPlaces(2, Decimal.ROUND_HALF_EVEN);
}

interface ValuedBalance {
  readonly record: BalanceRecord;
  readonly usdValue: Decimal;
}

/** A client account with what pending withdrawals hold in its currency. */
interface HeldBalance extends AccountBalance {
  readonly held: Decimal;
}

function valueBalance(account: HeldBalance, usdPrice: Decimal, reference: ReferenceSnapshot): ValuedBalance {
  const decimals = reference.currencies.get(account.currency)!.decimals;
  const amount = account.balance.plus(account.held);
  const withdrawable = withdrawableBalance(account.balance);
  const usdValue = displayUsdValue(amount, usdPrice);
  return {
    usdValue,
    record: {
      object: 'balance',
      id: account.id,
      currency: account.currency,
      amount: formatToDecimals(amount, decimals),
      withdrawableAmount: formatToDecimals(withdrawable, decimals),
      usdValue: formatToDecimals(usdValue, 2),
      withdrawableUsdValue: formatToDecimals(displayUsdValue(withdrawable, usdPrice), 2),
      createdAt: account.createdAt.toISOString(),
      updatedAt: account.updatedAt.toISOString(),
    },
  };
}

export function balanceTotals(usdValues: readonly Decimal[]): BalanceTotals {
  const positive = usdValues
    .filter((value) => value.isGreaterThan(0))
    .reduce((sum, value) => sum.plus(value), new Decimal(0));
  const negative = usdValues
    .filter((value) => value.isLessThan(0))
    .reduce((sum, value) => sum.plus(value), new Decimal(0));
  return {
    netPositiveUsd: formatToDecimals(positive, 2),
    netNegativeUsd: formatToDecimals(negative, 2),
    netUsd: formatToDecimals(positive.plus(negative), 2),
  };
}

/**
 * The client accounts of the book with their holds. updatedAt is the later of the two: a
 * withdrawal's completion moves only the hold, and changes the balance all the same.
 */
async function readHeldBalances(db: Queryable, book: Book): Promise<HeldBalance[]> {
  const { rows } = await db.query<{
    id: string;
    currency: string;
    balance: string;
    held: string;
    created_at: Date;
    updated_at: Date;
  }>(
    `SELECT c.id, c.currency, c.balance::text AS balance, coalesce(h.balance, 0)::text AS held, c.created_at,
            greatest(c.updated_at, h.updated_at) AS updated_at
       FROM ledger_accounts c
       LEFT JOIN ledger_accounts h ON h.org_id = c.org_id AND h.environment = c.environment AND h.kind = 'withdrawal_hold' AND h.currency = c.currency
      WHERE c.org_id = $1 AND c.environment = $2 AND c.kind = 'client'`,
    [book.orgId, book.environment],
  );
  return rows.map((row) => ({
    id: row.id,
    currency: row.currency,
    balance: new Decimal(row.balance),
    held: new Decimal(row.held),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}

/** The book's balances and totals; see the rules at the top of this file. */
export async function readBalances(
  context: Pick<TradingContext, 'db' | 'reference' | 'rates'>,
  book: Book,
): Promise<BalanceList> {
  const [reference, accounts] = await Promise.all([context.reference(), readHeldBalances(context.db, book)]);
  // Code-point order: the SQL ORDER BY follows the database collation, which may differ.
  const sorted = [...accounts].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
  const prices = await Promise.all(sorted.map((account) => context.rates.usdPrice(account.currency)));
  const valued = sorted.map((account, index) => valueBalance(account, prices[index]!, reference));
  return { data: valued.map((entry) => entry.record), totals: balanceTotals(valued.map((entry) => entry.usdValue)) };
}
