/**
 * The computed part of the legacy records (DERIVED_FIELDS, CONVERTERS): which side of a trade or
 * quote is the referenced one and what the other side is, the v1 trade's pair and direction, a
 * quote's real validity, an address still awaiting verification, the FIAT rail, a paid
 * withdrawal's rail reference, and the coin and network UUIDs, which must be the same on every call and instance. Each function is given what
 * readV3 makes of a real v3 record.
 */
import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { LEGACY_RECORDS } from '../../../../mappings/records.js';
import {
  CONVERTERS,
  DERIVED_FIELDS,
  derivedField,
  derivedFieldNames,
} from '../../../../src/gateway/legacy/transforms/derived-fields.js';
import { readV3, V3_RECORDS, type V3RecordKind } from '../../../../src/gateway/legacy/v3-contract/v3-records.js';
import {
  DEPOSIT_USD,
  DEPOSIT_USDC,
  FIAT_ACCOUNT,
  FIAT_WITHDRAWAL,
  QUOTE,
  REVERSAL,
  TRADE,
  WALLET_ACCOUNT,
  WITHDRAWAL,
} from '../v3-contract/v3-samples.js';

const trade = (changes: Partial<Record<keyof typeof TRADE, unknown>> = {}) =>
  readV3(V3_RECORDS.trade, { ...TRADE, ...changes }, 'test', '');
const quote = (changes: Partial<Record<keyof typeof QUOTE, unknown>> = {}) =>
  readV3(V3_RECORDS.quote, { ...QUOTE, ...changes }, 'test', '');
const account = (changes: Partial<Record<keyof typeof WALLET_ACCOUNT, unknown>> = {}) =>
  readV3(V3_RECORDS.withdrawalAccount, { ...WALLET_ACCOUNT, ...changes }, 'test', '');

/** RFC 9562 version 5 (SHA-1 of namespace bytes and name), written out here as the oracle. */
function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name)
    .digest();
  const bytes = Buffer.from(hash.subarray(0, 16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
/** The namespace the legacy coin and network UUIDs were first published under; it must never change. */
const VOCABULARY_NAMESPACE = '5a3c2f0e-8d1b-4c6a-9e7f-0b2d4f6a8c1e';

describe('trade', () => {
  const { tradingPair, tradeDirection, counterAmount } = DERIVED_FIELDS.trade;

  it('bought the referenced currency: BUY, the pair is referenced/other and the counter amount is the sold one', () => {
    const bought = trade();
    expect([tradingPair(bought), tradeDirection(bought), counterAmount(bought)]).toEqual(['EUR/USD', 'BUY', '108.76']);
  });

  it('sold the referenced currency: SELL, and the counter amount is the bought one', () => {
    const sold = trade({
      buyCurrency: 'USD',
      sellCurrency: 'EUR',
      buyAmount: '13.35',
      sellAmount: '12.34',
      referencedCurrency: 'EUR',
      referencedAmount: '12.34',
    });
    expect([tradingPair(sold), tradeDirection(sold), counterAmount(sold)]).toEqual(['EUR/USD', 'SELL', '13.35']);
    const reversal = readV3(V3_RECORDS.trade, REVERSAL.trade, 'test', '');
    expect([tradingPair(reversal), tradeDirection(reversal), counterAmount(reversal)]).toEqual([
      'EUR/USD',
      'SELL',
      '108.32',
    ]);
  });

  it('the referenced side decides, whichever currency is bought: USD referenced on a USD sale is USD/EUR SELL', () => {
    const usd = trade({ referencedCurrency: 'USD', referencedAmount: '108.76' });
    expect([tradingPair(usd), tradeDirection(usd), counterAmount(usd)]).toEqual(['USD/EUR', 'SELL', '100.50']);
  });

  it('returns the amounts as v3 wrote them, digit for digit', () => {
    expect(counterAmount(trade({ sellAmount: '12345678901234567890.12' }))).toBe('12345678901234567890.12');
  });
});

describe('quote', () => {
  const { referencedAmount, counterAmount, validitySeconds } = DERIVED_FIELDS.quote;

  it('the amount currency bought: referencedAmount is the bought amount and the counter amount the sold one', () => {
    expect([referencedAmount(quote()), counterAmount(quote())]).toEqual(['100.50', '108.76']);
  });

  it('the amount currency sold: the two swap', () => {
    const sellSide = quote({ amountCurrency: 'USD' });
    expect([referencedAmount(sellSide), counterAmount(sellSide)]).toEqual(['108.76', '100.50']);
  });

  it('validitySeconds is the real validity, in whole seconds', () => {
    expect(validitySeconds(quote())).toBe(30);
    expect(
      validitySeconds(quote({ createdAt: '2026-11-23T09:48:00.000Z', expiresAt: '2026-11-23T09:49:00.000Z' })),
    ).toBe(60);
    expect(
      validitySeconds(quote({ createdAt: '2026-11-23T09:48:00.000Z', expiresAt: '2026-11-23T09:48:03.000Z' })),
    ).toBe(3);
    expect(
      validitySeconds(quote({ createdAt: '2026-11-23T09:48:00.000Z', expiresAt: '2026-11-23T09:48:00.000Z' })),
    ).toBe(0);
  });

  it("validitySeconds absorbs a clock's sub-second jitter", () => {
    expect(
      validitySeconds(quote({ createdAt: '2026-11-23T09:48:00.000Z', expiresAt: '2026-11-23T09:48:29.998Z' })),
    ).toBe(30);
    expect(
      validitySeconds(quote({ createdAt: '2026-11-23T09:48:00.004Z', expiresAt: '2026-11-23T09:48:15.000Z' })),
    ).toBe(15);
  });
});

describe('withdrawalAccount', () => {
  const { verificationStatus } = DERIVED_FIELDS.withdrawalAccount;

  it('an active, verified account keeps its status; an active one not yet verified is pending verification', () => {
    expect(verificationStatus(account())).toBe('ACTIVE');
    expect(verificationStatus(account({ verified: false }))).toBe('PENDING_VERIFICATION');
  });

  it('any other status passes through, verified or not', () => {
    expect(verificationStatus(account({ status: 'DISABLED', verified: true }))).toBe('DISABLED');
    expect(verificationStatus(account({ status: 'PENDING_VERIFICATION', verified: false }))).toBe(
      'PENDING_VERIFICATION',
    );
    expect(verificationStatus(account({ status: 'SUSPENDED', verified: false }))).toBe('SUSPENDED');
  });
});

describe('networkOrFiat', () => {
  it('is FIAT for a fiat deposit or withdrawal, whatever v3 wrote as its network', () => {
    expect(DERIVED_FIELDS.deposit.networkOrFiat(readV3(V3_RECORDS.deposit, DEPOSIT_USD, 'test', ''))).toBe('FIAT');
    expect(DERIVED_FIELDS.withdrawal.networkOrFiat(readV3(V3_RECORDS.withdrawal, FIAT_WITHDRAWAL, 'test', ''))).toBe(
      'FIAT',
    );
    expect(
      DERIVED_FIELDS.withdrawal.networkOrFiat(
        readV3(V3_RECORDS.withdrawal, { ...FIAT_WITHDRAWAL, network: 'SWIFT' }, 'test', ''),
      ),
    ).toBe('FIAT');
  });

  it('is the chain for a stablecoin one', () => {
    expect(DERIVED_FIELDS.deposit.networkOrFiat(readV3(V3_RECORDS.deposit, DEPOSIT_USDC, 'test', ''))).toBe('ETHEREUM');
    expect(
      DERIVED_FIELDS.withdrawal.networkOrFiat(
        readV3(V3_RECORDS.withdrawal, { ...WITHDRAWAL, network: 'POLYGON' }, 'test', ''),
      ),
    ).toBe('POLYGON');
  });
});

describe('railReference', () => {
  const railReference = (changes: Partial<Record<keyof typeof FIAT_WITHDRAWAL, unknown>>) =>
    DERIVED_FIELDS.withdrawal.railReference(
      readV3(V3_RECORDS.withdrawal, { ...FIAT_WITHDRAWAL, ...changes }, 'test', ''),
    );

  it('is the reference the rail gave a paid fiat withdrawal: the FEDWIRE IMAD, the SWIFT UETR', () => {
    expect(railReference({})).toBe('20261123MMQFMP2L000001');
    expect(railReference({ paymentDetails: { SWIFT: { uetr: '8a562c67-ca16-48ba-b074-65581be6f011' } } })).toBe(
      '8a562c67-ca16-48ba-b074-65581be6f011',
    );
  });

  it('is null before payment, for a stablecoin, and for a rail it does not know', () => {
    expect(railReference({ paymentDetails: {} })).toBeNull();
    expect(DERIVED_FIELDS.withdrawal.railReference(readV3(V3_RECORDS.withdrawal, WITHDRAWAL, 'test', ''))).toBeNull();
    expect(railReference({ paymentDetails: { ACH: { trace: '1' } } })).toBeNull();
    expect(railReference({ paymentDetails: { FEDWIRE: { imad: 42 } } })).toBeNull();
    expect(railReference({ paymentDetails: { FEDWIRE: null } })).toBeNull();
  });
});

describe('CONVERTERS', () => {
  const { coinUuid, networkUuid } = CONVERTERS as Record<'coinUuid' | 'networkUuid', (value: unknown) => unknown>;

  it('give each coin and network a name-based (version 5) UUID, fixed forever', () => {
    expect(coinUuid('USDC')).toBe(uuidV5(VOCABULARY_NAMESPACE, 'coin:USDC'));
    expect(networkUuid('ETHEREUM')).toBe(uuidV5(VOCABULARY_NAMESPACE, 'network:ETHEREUM'));
    expect(coinUuid('USDC')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('are the same on every call and differ between names, and between a coin and a network of the same code', () => {
    expect(coinUuid('USDC')).toBe(coinUuid('USDC'));
    expect(coinUuid('USDC')).not.toBe(coinUuid('USDT'));
    expect(networkUuid('BASE')).not.toBe(coinUuid('BASE'));
  });

  it('turn a missing value into null, for the type check to refuse', () => {
    expect(coinUuid(null)).toBeNull();
    expect(networkUuid(undefined)).toBeNull();
    expect(networkUuid(42)).toBeNull();
  });
});

describe('the registry', () => {
  it('derivedField finds a function by v3 kind and name, and refuses a name it does not have', () => {
    expect(derivedField('trade', 'tradingPair')).toBe(DERIVED_FIELDS.trade.tradingPair);
    expect(() => derivedField('trade', 'validitySeconds')).toThrow(
      'no derived field validitySeconds for the v3 trade record',
    );
    expect(() => derivedField('pair', 'anything')).toThrow('no derived field anything for the v3 pair record');
  });

  it('derivedFieldNames lists every registered name by kind', () => {
    expect(derivedFieldNames()).toEqual({
      trade: ['tradingPair', 'tradeDirection', 'counterAmount'],
      quote: ['referencedAmount', 'counterAmount', 'validitySeconds'],
      withdrawalAccount: ['verificationStatus'],
      deposit: ['networkOrFiat'],
      withdrawal: ['networkOrFiat', 'railReference'],
    });
  });

  it('has every derived field and converter the shipped records name', () => {
    for (const shape of Object.values(LEGACY_RECORDS)) {
      for (const field of Object.values(shape.fields) as Record<string, unknown>[]) {
        if (typeof field.derived === 'string')
          expect(typeof derivedField(shape.v3 as V3RecordKind, field.derived)).toBe('function');
        if (typeof field.convert === 'string') expect(typeof CONVERTERS[field.convert]).toBe('function');
      }
    }
  });

  it('is pure: the v3 records it is given are not changed', () => {
    const read = readV3(V3_RECORDS.withdrawalAccount, FIAT_ACCOUNT, 'test', '');
    const before = structuredClone(read);
    DERIVED_FIELDS.withdrawalAccount.verificationStatus(read);
    expect(read).toStrictEqual(before);
  });
});
