/**
 * The withdrawal accounts a core process last judged withdrawals on, so that a withdrawal to an
 * account it has seen is one round trip (fx_create_withdrawal) instead of two. A cached account
 * is only ever a guess: the statement locks the account and compares the fields the rules read
 * (judgedFields) with the row, refusing when they differ, and the withdrawal then reads the
 * account again. Part of the core's money movement; it reads nothing itself.
 */
import type { AccountOwner, WithdrawalAccountRow } from './withdrawal-accounts.js';

/** How many accounts a process keeps; the oldest goes first. An entry is a few hundred bytes. */
export const WITHDRAWAL_ACCOUNT_CACHE_SIZE = 10_000;

/**
 * The fields withdrawal rules 1 to 6, 9 and 10 read, as fx_create_withdrawal (migration 0013)
 * builds them from the locked row (SQL NULL standing for an account the book has not).
 */
export function judgedFields(account: WithdrawalAccountRow): Record<string, string | boolean | null> {
  return {
    status: account.status,
    verified: account.verified,
    withdrawals_enabled: account.withdrawals_enabled,
    currency: account.currency,
    asset_type: account.asset_type,
    network: account.network,
    address: account.address,
    transfer_type: account.transfer_type,
    routing_number: account.routing_number,
    swift_code: account.swift_code,
    account_number: account.account_number,
  };
}

export class WithdrawalAccountCache {
  private readonly accounts = new Map<string, WithdrawalAccountRow>();

  constructor(private readonly capacity = WITHDRAWAL_ACCOUNT_CACHE_SIZE) {}

  /** The account as last read, when it is this book's. */
  get(owner: AccountOwner, id: string): WithdrawalAccountRow | undefined {
    const account = this.accounts.get(id);
    return account?.org_id === owner.orgId && account.environment === owner.environment ? account : undefined;
  }

  remember(account: WithdrawalAccountRow): void {
    this.accounts.delete(account.id);
    this.accounts.set(account.id, account);
    if (this.accounts.size > this.capacity) this.accounts.delete(this.accounts.keys().next().value!);
  }

  forget(id: string): void {
    this.accounts.delete(id);
  }
}
