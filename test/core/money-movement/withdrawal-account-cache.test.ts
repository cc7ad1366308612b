/**
 * The process's cache of withdrawal accounts: bounded (the oldest goes first), and an account of
 * one book is never handed to another. Whether a cached account is still right is the
 * statement's to say (withdrawal-concurrency.test.ts).
 */
import { describe, expect, it } from 'vitest';

import { judgedFields, WithdrawalAccountCache } from '../../../src/core/money-movement/withdrawal-account-cache.js';
import type { WithdrawalAccountRow } from '../../../src/core/money-movement/withdrawal-accounts.js';

const ORG = '5b0f1c1e-7a43-4a43-9d7c-3f1d2a9b8c01';

function account(id: string, book: { orgId?: string; environment?: 'sandbox' | 'live' } = {}): WithdrawalAccountRow {
  const at = new Date('2026-11-28T12:00:00.000Z');
  return {
    id,
    org_id: book.orgId ?? ORG,
    environment: book.environment ?? 'sandbox',
    currency: 'USD',
    asset_type: 'FIAT',
    account_name: 'Ops',
    status: 'ACTIVE',
    verified: true,
    withdrawals_enabled: true,
    transfer_type: 'FEDWIRE',
    bank_name: 'JPMorgan Chase',
    account_number: '123456789',
    routing_number: '021000021',
    swift_code: null,
    memo: null,
    network: null,
    address: null,
    comments: null,
    creator_actor_id: 'usr_1',
    idempotency_key: 'k',
    request_fingerprint: 'f',
    created_at: at,
    updated_at: at,
  };
}

describe('WithdrawalAccountCache', () => {
  it('hands an account back to its own book only', () => {
    const cache = new WithdrawalAccountCache();
    cache.remember(account('wac_1'));
    expect(cache.get({ orgId: ORG, environment: 'sandbox' }, 'wac_1')?.id).toBe('wac_1');
    expect(cache.get({ orgId: ORG, environment: 'live' }, 'wac_1')).toBeUndefined();
    expect(
      cache.get({ orgId: '00000000-0000-4000-8000-000000000000', environment: 'sandbox' }, 'wac_1'),
    ).toBeUndefined();
  });

  it('keeps at most its capacity, dropping the account remembered longest ago', () => {
    const cache = new WithdrawalAccountCache(2);
    const book = { orgId: ORG, environment: 'sandbox' } as const;
    cache.remember(account('wac_1'));
    cache.remember(account('wac_2'));
    cache.remember(account('wac_1')); // remembered again: now the newest
    cache.remember(account('wac_3'));
    expect(['wac_1', 'wac_2', 'wac_3'].map((id) => cache.get(book, id) !== undefined)).toEqual([true, false, true]);
    cache.forget('wac_1');
    expect(cache.get(book, 'wac_1')).toBeUndefined();
  });

  it('judges on every field rules 1 to 6, 9 and 10 read: the mutable three, the currency and kind, the destination', () => {
    expect(Object.keys(judgedFields(account('wac_1'))).sort()).toEqual([
      'account_number',
      'address',
      'asset_type',
      'currency',
      'network',
      'routing_number',
      'status',
      'swift_code',
      'transfer_type',
      'verified',
      'withdrawals_enabled',
    ]);
  });
});
