/**
 * The v3 records the legacy shapes are built from (V3_RECORDS, by kind) and readV3: every kind
 * reads the core's real answer, ids come out as legacy UUIDs, fields v3 adds are dropped, and a
 * record that breaks the contract is a V3ContractError naming the operation and every field
 * that is wrong, where it is.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import {
  readV3,
  V3_RECORD_KINDS,
  V3_RECORDS,
  v3FieldsOf,
  type V3RecordKind,
  v3TradeSchema,
} from '../../../../src/gateway/legacy/v3-contract/v3-records.js';
import { V3ContractError } from '../../../../src/lib/errors/internal-errors.js';
import {
  BALANCE_EUR,
  DEPOSIT_USD,
  DEPOSIT_USDC,
  FIAT_ACCOUNT,
  FIAT_WITHDRAWAL,
  PAIR,
  QUOTE,
  REVERSAL,
  TRADE,
  UUIDS,
  WALLET_ACCOUNT,
  WITHDRAWAL,
} from './v3-samples.js';

function contractError(run: () => unknown): V3ContractError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(V3ContractError);
    return error as V3ContractError;
  }
  throw new Error('expected a V3ContractError');
}

/** One real v3 record per kind. */
const SAMPLES: Record<V3RecordKind, unknown> = {
  quote: QUOTE,
  trade: TRADE,
  reversalDetails: REVERSAL.reversalDetails,
  balance: BALANCE_EUR,
  pair: PAIR,
  deposit: DEPOSIT_USDC,
  withdrawalAccount: WALLET_ACCOUNT,
  withdrawal: WITHDRAWAL,
};

const problemsOf = (kind: V3RecordKind, value: unknown) =>
  contractError(() => readV3(V3_RECORDS[kind] as z.ZodType, value, 'op', 'answer.data')).problems;

describe('V3_RECORDS', () => {
  it('has a schema for each kind the record shapes may name', () => {
    expect([...V3_RECORD_KINDS].sort()).toEqual([
      'balance',
      'deposit',
      'pair',
      'quote',
      'reversalDetails',
      'trade',
      'withdrawal',
      'withdrawalAccount',
    ]);
    expect(Object.keys(SAMPLES).sort()).toEqual([...V3_RECORD_KINDS].sort());
  });

  it.each(V3_RECORD_KINDS)("reads the core's %s record, keeping exactly the declared fields", (kind) => {
    const read = readV3(V3_RECORDS[kind] as z.ZodType, SAMPLES[kind], 'op', 'answer.data') as Record<string, unknown>;
    expect(Object.keys(read).sort()).toEqual([...v3FieldsOf(kind)].sort());
  });

  it('names the fields the legacy records read, including completedAt and the withdrawal rail', () => {
    expect(v3FieldsOf('deposit')).toContain('completedAt');
    expect(v3FieldsOf('withdrawal')).toEqual(expect.arrayContaining(['assetType', 'completedAt', 'network']));
    // The legacy webhook record reads who asked and the rail's references.
    expect(v3FieldsOf('withdrawal')).toEqual(expect.arrayContaining(['paymentDetails', 'actorEmail']));
    expect(v3FieldsOf('pair')).toEqual(['symbol', 'baseCurrency', 'quoteCurrency', 'minAmount', 'maxAmount']);
  });
});

describe('readV3', () => {
  it('returns the record with its ids as legacy UUIDs, accepting and dropping fields v3 added', () => {
    const trade = readV3(v3TradeSchema, { ...TRADE, newField: { nested: true } }, 'trade/{id}', 'trade.data');
    expect(trade).toMatchObject({
      id: UUIDS.trade,
      quoteId: UUIDS.quote,
      originalTradeId: null,
      referencedAmount: '100.50',
    });
    expect(trade).not.toHaveProperty('newField');
    expect(trade).not.toHaveProperty('rate');
    expect(readV3(v3TradeSchema, REVERSAL.trade, 'op', '').originalTradeId).toBe(UUIDS.trade);
    expect(readV3(V3_RECORDS.withdrawalAccount, FIAT_ACCOUNT, 'op', '').creatorId).toBe(UUIDS.user);
    expect(readV3(V3_RECORDS.withdrawal, WITHDRAWAL, 'op', '').withdrawalAccountId).toBe(UUIDS.walletAccount);
  });

  it('does not change the value it reads', () => {
    const answer = structuredClone(TRADE);
    readV3(v3TradeSchema, answer, 'op', '');
    expect(answer).toStrictEqual(TRADE);
  });

  it('throws a V3ContractError naming the operation and every problem, where it is', () => {
    const error = contractError(() =>
      readV3(z.array(v3TradeSchema), [TRADE, { ...TRADE, id: 'trd_XYZ', sellAmount: 108.76 }], 'trades', 'trades.data'),
    );
    expect(error.code).toBe('FXGATE_V3_CONTRACT_VIOLATION');
    expect(error.operation).toBe('trades');
    expect(error.problems).toEqual([
      'trades.data[1].id: must be a trd_ id',
      'trades.data[1].sellAmount: Invalid input: expected string, received number',
    ]);
    expect(error.message).toBe(`the v3 answer for trades breaks the v3 contract: ${error.problems.join('; ')}`);
  });

  it('locates problems without a prefix, and at the root', () => {
    expect(() => readV3(v3TradeSchema, { ...TRADE, buyAmount: '1e3' }, 'op', '')).toThrow(
      'buyAmount: must be a decimal string',
    );
    expect(() => readV3(v3TradeSchema, null, 'op', '')).toThrow(
      '(answer): Invalid input: expected object, received null',
    );
    expect(problemsOf('trade', undefined)).toEqual(['answer.data: Invalid input: expected object, received undefined']);
  });
});

describe('the contract each kind holds v3 to', () => {
  it('amounts are decimal text: never a JS number, an exponent or a leading zero', () => {
    expect(problemsOf('balance', { ...BALANCE_EUR, amount: 50000 })).toEqual([
      'answer.data.amount: Invalid input: expected string, received number',
    ]);
    expect(problemsOf('quote', { ...QUOTE, sellAmount: '1.0876e2' })).toEqual([
      'answer.data.sellAmount: must be a decimal string',
    ]);
    expect(problemsOf('pair', { ...PAIR, minAmount: '01.00' })).toEqual([
      'answer.data.minAmount: must be a decimal string',
    ]);
    expect(readV3(V3_RECORDS.balance, { ...BALANCE_EUR, amount: '-12.50' }, 'op', '').amount).toBe('-12.50');
  });

  it("ids carry their own kind's prefix", () => {
    expect(problemsOf('trade', { ...TRADE, id: TRADE.quoteId })).toEqual(['answer.data.id: must be a trd_ id']);
    expect(problemsOf('trade', { ...TRADE, originalTradeId: 'usr_01a207ce44eb72028b2f43bbb9b9c176' })).toEqual([
      'answer.data.originalTradeId: must be a trd_ id',
    ]);
    expect(problemsOf('quote', { ...QUOTE, id: '01a207ce7e0e71e781eb30df52f9704b' })).toEqual([
      'answer.data.id: must be a qte_ id',
    ]);
    expect(problemsOf('balance', { ...BALANCE_EUR, id: 'wac_01a207ce45127c42ad47e31f2cea5c9a' })).toEqual([
      'answer.data.id: must be a bal_ id',
    ]);
    expect(problemsOf('withdrawal', { ...WITHDRAWAL, withdrawalAccountId: WITHDRAWAL.id })).toEqual([
      'answer.data.withdrawalAccountId: must be a wac_ id',
    ]);
    expect(problemsOf('withdrawalAccount', { ...FIAT_ACCOUNT, creatorId: 'key_1', verified: 'true' })).toEqual([
      'answer.data.verified: Invalid input: expected boolean, received string',
      'answer.data.creatorId: must be a usr_ id',
    ]);
  });

  it('currencies are upper-case codes and timestamps ISO 8601 UTC', () => {
    expect(problemsOf('deposit', { ...DEPOSIT_USDC, currency: 'usdc' })).toEqual([
      'answer.data.currency: must be a currency code',
    ]);
    expect(problemsOf('quote', { ...QUOTE, createdAt: 'yesterday' })).toEqual([
      'answer.data.createdAt: must be an ISO 8601 UTC timestamp',
    ]);
  });

  it("a trade's referenced currency and a quote's amount currency are one of its two sides", () => {
    expect(problemsOf('trade', { ...TRADE, referencedCurrency: 'GBP' })).toEqual([
      'answer.data.referencedCurrency: must be buyCurrency or sellCurrency',
    ]);
    expect(problemsOf('quote', { ...QUOTE, amountCurrency: 'GBP' })).toEqual([
      'answer.data.amountCurrency: must be buyCurrency or sellCurrency',
    ]);
  });

  it('a quote expires no earlier than it is created', () => {
    expect(problemsOf('quote', { ...QUOTE, expiresAt: '2026-11-23T09:48:00.000Z' })).toEqual([
      'answer.data.expiresAt: must not be before createdAt',
    ]);
    expect(readV3(V3_RECORDS.quote, { ...QUOTE, expiresAt: QUOTE.createdAt }, 'op', '').expiresAt).toBe(
      QUOTE.createdAt,
    );
  });

  it('a deposit has a network unless it is fiat, and both rails carry completedAt (null until completed)', () => {
    expect(problemsOf('deposit', { ...DEPOSIT_USDC, network: null })).toEqual([
      'answer.data.network: must be a network for a non-FIAT deposit',
    ]);
    expect(readV3(V3_RECORDS.deposit, DEPOSIT_USD, 'op', '')).toMatchObject({
      network: null,
      assetType: 'FIAT',
      completedAt: null,
    });
    const { completedAt: _deposit, ...withoutCompletedAt } = DEPOSIT_USDC;
    expect(problemsOf('deposit', withoutCompletedAt)).toEqual([
      'answer.data.completedAt: must be an ISO 8601 UTC timestamp',
    ]);
    const { completedAt: _withdrawal, assetType: _rail, ...bare } = FIAT_WITHDRAWAL;
    expect(problemsOf('withdrawal', bare)).toEqual([
      'answer.data.assetType: Invalid input: expected string, received undefined',
      'answer.data.completedAt: must be an ISO 8601 UTC timestamp',
    ]);
  });

  it('status words are text, not a closed list: v3 may add values', () => {
    expect(readV3(V3_RECORDS.trade, { ...TRADE, status: 'SOMETHING_NEW' }, 'op', '').status).toBe('SOMETHING_NEW');
    expect(problemsOf('trade', { ...TRADE, status: '' })).toEqual([expect.stringMatching(/^answer\.data\.status: /)]);
  });
});
