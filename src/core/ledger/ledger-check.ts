/**
 * The ledger's invariants, checked in SQL: every ledger transaction sums to zero per currency,
 * and every account's maintained balance equals the sum of its entries. An empty result means
 * the books are sound; tests run it after every step, operators can run it any time.
 */
import type { Queryable } from '../../lib/db/database.js';

export type LedgerProblem =
  | {
      readonly kind: 'unbalanced_transaction';
      readonly transactionId: string;
      readonly currency: string;
      readonly sum: string;
    }
  | {
      readonly kind: 'balance_mismatch';
      readonly accountId: string;
      readonly balance: string;
      readonly entriesSum: string;
    };

export async function checkLedger(db: Queryable, scope?: { orgId: string }): Promise<LedgerProblem[]> {
  const params = scope ? [scope.orgId] : [];
  const unbalanced = await db.query<{ transaction_id: string; currency: string; sum: string }>(
    `SELECT e.transaction_id, e.currency, sum(e.amount)::text AS sum
       FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
      ${scope ? 'WHERE t.org_id = $1' : ''}
      GROUP BY e.transaction_id, e.currency
     HAVING sum(e.amount) <> 0`,
    params,
  );
  const mismatched = await db.query<{ id: string; balance: string; entries_sum: string }>(
    `SELECT a.id, a.balance::text AS balance, coalesce(sum(e.amount), 0)::text AS entries_sum
       FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
      ${scope ? 'WHERE a.org_id = $1' : ''}
      GROUP BY a.id, a.balance
     HAVING a.balance <> coalesce(sum(e.amount), 0)`,
    params,
  );
  return [
    ...unbalanced.rows.map((row) => ({
      kind: 'unbalanced_transaction' as const,
      transactionId: row.transaction_id,
      currency: row.currency,
      sum: row.sum,
    })),
    ...mismatched.rows.map((row) => ({
      kind: 'balance_mismatch' as const,
      accountId: row.id,
      balance: row.balance,
      entriesSum: row.entries_sum,
    })),
  ];
}
