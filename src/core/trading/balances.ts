/**
 * Balances: the org's client ledger accounts of one book, with their USD values
 * (GET /v3/fx/balances).
 *
 * Semantics:
 * - One record per client ledger account of the book (an account exists from the currency's
 *   first movement: a trade, a deposit). `id` is the account id (`bal_...`). A bounded list:
 *   no cursor, no pagination object. Sorted by currency code (code-point order: USD before USDC).
 * - amount: the maintained account balance, with the currency's decimals; negative while the
 *   org owes that currency (trades on credit).
 * - withdrawableAmount = withdrawableBalance(amount) = max(0, amount) for now. Pending
 *   withdrawals will be subtracted there, and only there, when withdrawals exist.
 * - usdValue and withdrawableUsdValue: the amount × `rates.usdPrice(currency)`, rounded half-even
 *   to 2 decimals (a valuation for display, unlike the credit check's round-up).
 * - totals (next to `data`, for the v2 legacy shape): netPositiveUsd = sum of the positive
 *   usdValues, netNegativeUsd = sum of the negative ones (≤ 0), netUsd = their sum. They add up
 *   the rounded usdValues shown, so a reader can check the totals against the list.
 * - createdAt: the account's first movement; updatedAt: its latest.
 * - Every amount is a decimal string.
 */
import { Decimal, formatToDecimals } from '../../lib/money.js';
import type { Principal } from '../http/request-state.js';
import { type AccountBalance, readClientBalances } from '../ledger/ledger.js';
import type { ReferenceSnapshot } from './reference-data.js';
import type { TradingContext } from './trading-context.js';

/** The book read: an org in one environment (a request's principal is one). */
type Book = Pick<Principal, 'orgId' | 'environment'>;

export interface BalanceRecord {
  readonly object: 'balance';
  readonly id: string;
  readonly currency: string;
  readonly amount: string;
  readonly withdrawableAmount: string;
  readonly usdValue: string;
  readonly withdrawableUsdValue: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface BalanceTotals {
  readonly netPositiveUsd: string;
  readonly netNegativeUsd: string;
  readonly netUsd: string;
}

export interface BalanceList {
  readonly data: readonly BalanceRecord[];
  readonly totals: BalanceTotals;
}

/**
 * What the org may withdraw of a balance: all of it when positive, nothing when it owes.
 * Pending withdrawals (a later issue) will be subtracted here, never below 0.
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

function valueBalance(account: AccountBalance, usdPrice: Decimal, reference: ReferenceSnapshot): ValuedBalance {
  const decimals = reference.currencies.get(account.currency)!.decimals;
  const withdrawable = withdrawableBalance(account.balance);
  const usdValue = displayUsdValue(account.balance, usdPrice);
  return {
    usdValue,
    record: {
      object: 'balance',
      id: account.id,
      currency: account.currency,
      amount: formatToDecimals(account.balance, decimals),
      withdrawableAmount: formatToDecimals(withdrawable, decimals),
      usdValue: formatToDecimals(usdValue, 2),
      withdrawableUsdValue: formatToDecimals(displayUsdValue(withdrawable, usdPrice), 2),
      createdAt: account.createdAt.toISOString(),
      updatedAt: account.updatedAt.toISOString(),
    },
  };
}

export function balanceTotals(usdValues: readonly Decimal[]): BalanceTotals {
  const positive = usdValues.filter((value) => value.isGreaterThan(0)).reduce((sum, value) => sum.plus(value), new Decimal(0));
  const negative = usdValues.filter((value) => value.isLessThan(0)).reduce((sum, value) => sum.plus(value), new Decimal(0));
  return {
    netPositiveUsd: formatToDecimals(positive, 2),
    netNegativeUsd: formatToDecimals(negative, 2),
    netUsd: formatToDecimals(positive.plus(negative), 2),
  };
}

/** The book's balances and totals; see the rules at the top of this file. */
export async function readBalances(context: Pick<TradingContext, 'db' | 'reference' | 'rates'>, book: Book): Promise<BalanceList> {
  const [reference, accounts] = await Promise.all([context.reference(), readClientBalances(context.db, book.orgId, book.environment)]);
  // Code-point order: the SQL ORDER BY follows the database collation, which may differ.
  const sorted = [...accounts].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
  const prices = await Promise.all(sorted.map((account) => context.rates.usdPrice(account.currency)));
  const valued = sorted.map((account, index) => valueBalance(account, prices[index]!, reference));
  return { data: valued.map((entry) => entry.record), totals: balanceTotals(valued.map((entry) => entry.usdValue)) };
}
