/**
 * The double-entry ledger. Every balance movement is one ledger transaction whose entries sum
 * to zero per currency, written inside the caller's SQL transaction together with the state
 * change that causes it (a trade, a deposit, a withdrawal hold), so the two commit or vanish
 * together. Account balances are maintained rows, updated in the same transaction; the check
 * in ledger-check.ts proves them equal to the sum of their entries.
 */
import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Queryable } from '../../lib/db/database.js';
import { UnbalancedMovementError } from '../../lib/errors/internal-errors.js';
import { newId } from '../../lib/ids.js';
import { Decimal, formatDecimal } from '../../lib/money.js';

/**
 * client: the org's own balance in a currency (its id is the v3 balance id).
 * liquidity: the house's side of the org's trades. rail_in_transit: money on a payment rail.
 * withdrawal_hold: the org's money held by withdrawals not yet completed or failed.
 */
export type AccountKind = 'client' | 'liquidity' | 'rail_in_transit' | 'withdrawal_hold';

export interface Posting {
  readonly account: AccountKind;
  readonly currency: string;
  /** Signed: positive credits the account's balance, negative debits it. */
  readonly amount: Decimal;
}

export interface Movement {
  readonly orgId: string;
  readonly environment: Mode;
  /** What caused it: `trade`, `reversal`, `deposit`, ... */
  readonly kind: string;
  /** The id of the record that caused it (trade id, deposit id, ...). */
  readonly referenceId: string;
  readonly postings: readonly Posting[];
  readonly at: Date;
}

export interface PostedMovement {
  readonly transactionId: string;
  /** Each account the movement changed (a posting netting to zero changes none), with its new balance. */
  readonly balances: readonly { readonly account: AccountKind; readonly currency: string; readonly balance: Decimal }[];
}

interface AccountTotal {
  readonly account: AccountKind;
  readonly currency: string;
  amount: Decimal;
}

/** Sums postings per account; accounts that net to zero are left out (a movement changes none of them). */
function totalsByAccount(postings: readonly Posting[]): AccountTotal[] {
  const totals = new Map<string, AccountTotal>();
  for (const posting of postings) {
    const key = `${posting.account}|${posting.currency}`;
    const total = totals.get(key);
    if (total) total.amount = total.amount.plus(posting.amount);
    else totals.set(key, { account: posting.account, currency: posting.currency, amount: posting.amount });
  }
  return [...totals.values()].filter((total) => !total.amount.isZero());
}

function assertBalanced(postings: readonly Posting[]): void {
  const sums = new Map<string, Decimal>();
  for (const posting of postings)
    sums.set(posting.currency, (sums.get(posting.currency) ?? new Decimal(0)).plus(posting.amount));
  for (const [currency, sum] of sums)
    if (!sum.isZero()) throw new UnbalancedMovementError(currency, formatDecimal(sum));
}

/**
 * Posts a balanced movement inside the caller's transaction; returns its transaction id and the
 * balances of the accounts it moved, as they stand in this transaction (so a caller answering
 * with a balance needs no second read). One call of the database function fx_post_movement
 * (migration 0005) does it all: create missing accounts, add to their balances, write the
 * transaction and its entries. An account row stays locked from this statement until the caller
 * commits; the function takes rows in a fixed order, so concurrent movements cannot deadlock.
 * Trades post theirs inside fx_execute_trade, through the same function.
 */
export async function postMovement(tx: Queryable, movement: Movement): Promise<PostedMovement> {
  assertBalanced(movement.postings);
  const totals = totalsByAccount(movement.postings);
  const transactionId = newId('ledgerTransaction');
  const { rows } = await tx.query<{ account_kind: AccountKind; account_currency: string; account_balance: string }>(
    `SELECT account_kind, account_currency, account_balance::text AS account_balance
       FROM fx_post_movement($1, $2, $3, $4, $5, $6, $7::text[], $8::text[], $9::text[], $10::numeric[])`,
    [
      movement.orgId,
      movement.environment,
      movement.kind,
      movement.referenceId,
      movement.at,
      transactionId,
      totals.map(() => newId('balance', movement.at.getTime())),
      totals.map((total) => total.account),
      totals.map((total) => total.currency),
      totals.map((total) => formatDecimal(total.amount)),
    ],
  );
  return {
    transactionId,
    balances: rows.map((row) => ({
      account: row.account_kind,
      currency: row.account_currency,
      balance: new Decimal(row.account_balance),
    })),
  };
}

export interface AccountBalance {
  readonly id: string;
  readonly currency: string;
  readonly balance: Decimal;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The org's client balances in one book, by currency. */
export async function readClientBalances(db: Queryable, orgId: string, environment: Mode): Promise<AccountBalance[]> {
  const { rows } = await db.query<{
    id: string;
    currency: string;
    balance: string;
    created_at: Date;
    updated_at: Date;
  }>(
    `SELECT id, currency, balance, created_at, updated_at FROM ledger_accounts
      WHERE org_id = $1 AND environment = $2 AND kind = 'client' ORDER BY currency`,
    [orgId, environment],
  );
  return rows.map((row) => ({
    id: row.id,
    currency: row.currency,
    balance: new Decimal(row.balance),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}
