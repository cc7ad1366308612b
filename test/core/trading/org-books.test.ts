import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  assertTradingAllowed,
  type OrgBook,
  readOrgBook,
  setCreditLine,
  setCurrencyEnabled,
  setPairEnabled,
  setTradingEnabled,
} from '../../../src/core/trading/org-books.js';
import { ApiError } from '../../../src/lib/errors/api-error.js';
import {
  CreditLineBelowCommittedError,
  InvalidCreditLineError,
  InvalidPairError,
  OrgBookNotFoundError,
  UnknownCurrencyError,
} from '../../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../../src/lib/ids.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { Decimal, formatDecimal } from '../../../src/lib/money.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';

function book(overrides: Partial<OrgBook> = {}): OrgBook {
  return {
    orgId: '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c',
    environment: 'live',
    creditLineUsd: new Decimal(1000),
    committedUsd: new Decimal(0),
    tradingEnabled: true,
    disabledCurrencies: [],
    disabledPairs: [],
    updatedAt: new Date(),
    ...overrides,
  };
}

function apiErrorOf(fn: () => void): { code: string; details: Record<string, unknown> } | null {
  try {
    fn();
    return null;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { code: error.code, details: error.details };
  }
}

describe('assertTradingAllowed', () => {
  it('allows a trade when nothing is disabled', () => {
    expect(apiErrorOf(() => assertTradingAllowed(book(), 'EUR', 'USD'))).toBeNull();
  });

  it('checks trading first, then either currency (bought first), then the pair', () => {
    const all = { tradingEnabled: false, disabledCurrencies: ['EUR', 'USD'], disabledPairs: ['EUR/USD'] };
    expect(apiErrorOf(() => assertTradingAllowed(book(all), 'EUR', 'USD'))).toEqual({
      code: 'TRADE_DISABLED',
      details: {},
    });
    expect(apiErrorOf(() => assertTradingAllowed(book({ ...all, tradingEnabled: true }), 'EUR', 'USD'))).toEqual({
      code: 'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT',
      details: { currency: 'EUR' },
    });
    expect(
      apiErrorOf(() =>
        assertTradingAllowed(book({ ...all, tradingEnabled: true, disabledCurrencies: ['USD'] }), 'EUR', 'USD'),
      ),
    ).toEqual({
      code: 'TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT',
      details: { currency: 'USD' },
    });
    expect(
      apiErrorOf(() =>
        assertTradingAllowed(book({ ...all, tradingEnabled: true, disabledCurrencies: [] }), 'EUR', 'USD'),
      ),
    ).toEqual({
      code: 'TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT',
      details: { buyCurrency: 'EUR', sellCurrency: 'USD' },
    });
  });

  it('treats a disabled pair as one direction only', () => {
    const disabled = book({ disabledPairs: ['EUR/USD'] });
    expect(apiErrorOf(() => assertTradingAllowed(disabled, 'USD', 'EUR'))).toBeNull();
    expect(apiErrorOf(() => assertTradingAllowed(disabled, 'EUR', 'GBP'))).toBeNull();
  });

  it('answers 403 with the catalog codes', () => {
    try {
      assertTradingAllowed(book({ tradingEnabled: false }), 'EUR', 'USD');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).statusCode).toBe(403);
    }
  });
});

describe.each(DATABASE_DRIVERS)('org books on $driver', ({ driver, create }) => {
  // One database per driver for the file: PGlite takes seconds to start.
  let database: TestDatabase;
  beforeAll(async () => {
    database = await create();
  });
  afterAll(async () => database?.drop());

  async function newOrg(): Promise<string> {
    const orgId = newUuid();
    await new KeyRegistry(database.db).ensureOrg(orgId);
    return orgId;
  }

  async function setCommitted(orgId: string, environment: 'sandbox' | 'live', amount: string): Promise<void> {
    await database.db.query('UPDATE org_environments SET committed_usd = $3 WHERE org_id = $1 AND environment = $2', [
      orgId,
      environment,
      amount,
    ]);
  }

  it('reads both books of a new org, and null for an unknown org', async () => {
    const orgId = await newOrg();
    const sandbox = await readOrgBook(database.db, orgId, 'sandbox');
    expect(sandbox).toMatchObject({
      orgId,
      environment: 'sandbox',
      tradingEnabled: true,
      disabledCurrencies: [],
      disabledPairs: [],
    });
    expect(formatDecimal(sandbox!.creditLineUsd)).toBe('1000000');
    expect(formatDecimal(sandbox!.committedUsd)).toBe('0');
    expect(sandbox!.updatedAt).toBeInstanceOf(Date);
    const live = await readOrgBook(database.db, orgId, 'live');
    expect(formatDecimal(live!.creditLineUsd)).toBe('0');
    expect(await readOrgBook(database.db, newUuid(), 'live')).toBeNull();
  });

  it('reads a book for update inside a transaction', async () => {
    const orgId = await newOrg();
    const read = await database.db.transaction((tx) => readOrgBook(tx, orgId, 'live', { forUpdate: true }));
    expect(read).toMatchObject({ orgId, environment: 'live' });
  });

  it('sets the credit line exactly, as decimal text', async () => {
    const orgId = await newOrg();
    const updated = await setCreditLine(database.db, orgId, 'live', new Decimal('250000.123456789012345678'));
    expect(formatDecimal(updated.creditLineUsd)).toBe('250000.123456789012345678');
    const read = await readOrgBook(database.db, orgId, 'live');
    expect(formatDecimal(read!.creditLineUsd)).toBe('250000.123456789012345678');
    // The other book is untouched.
    expect(formatDecimal((await readOrgBook(database.db, orgId, 'sandbox'))!.creditLineUsd)).toBe('1000000');
    expect(formatDecimal((await setCreditLine(database.db, orgId, 'live', new Decimal(0))).creditLineUsd)).toBe('0');
  });

  it('refuses a credit line below what is committed, and accepts one equal to it', async () => {
    const orgId = await newOrg();
    await setCreditLine(database.db, orgId, 'live', new Decimal(1000));
    await setCommitted(orgId, 'live', '400.5');
    const refused = await setCreditLine(database.db, orgId, 'live', new Decimal('400.49')).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(CreditLineBelowCommittedError);
    expect(refused).toMatchObject({ code: 'FXGATE_CREDIT_LINE_BELOW_COMMITTED', orgId, environment: 'live' });
    expect(formatDecimal((refused as CreditLineBelowCommittedError).committedUsd)).toBe('400.5');
    expect(formatDecimal((await readOrgBook(database.db, orgId, 'live'))!.creditLineUsd)).toBe('1000');

    const equal = await setCreditLine(database.db, orgId, 'live', new Decimal('400.5'));
    expect(formatDecimal(equal.creditLineUsd)).toBe('400.5');
    expect(formatDecimal(equal.committedUsd)).toBe('400.5');
  });

  it('refuses a negative, non-finite or too precise credit line before touching the database', async () => {
    const orgId = await newOrg();
    for (const bad of [
      new Decimal(-1),
      new Decimal(NaN),
      new Decimal(Infinity),
      new Decimal('0.0000000000000000001'),
      new Decimal('1e20'),
    ]) {
      await expect(setCreditLine(database.db, orgId, 'live', bad), String(bad)).rejects.toMatchObject({
        code: 'FXGATE_INVALID_CREDIT_LINE',
      });
    }
    await expect(setCreditLine(database.db, orgId, 'live', new Decimal(-1))).rejects.toBeInstanceOf(
      InvalidCreditLineError,
    );
    expect(formatDecimal((await readOrgBook(database.db, orgId, 'live'))!.creditLineUsd)).toBe('0');
  });

  it('reports an unknown org as not found for every change', async () => {
    const orgId = newUuid();
    const changes = [
      () => setCreditLine(database.db, orgId, 'live', new Decimal(1)),
      () => setTradingEnabled(database.db, orgId, 'live', false),
      () => setCurrencyEnabled(database.db, orgId, 'live', 'EUR', false),
      () => setPairEnabled(database.db, orgId, 'live', { buyCurrency: 'EUR', sellCurrency: 'USD' }, false),
    ];
    for (const change of changes) {
      const error = await change().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OrgBookNotFoundError);
      expect(error).toMatchObject({ code: 'FXGATE_ORG_BOOK_NOT_FOUND', orgId, environment: 'live' });
    }
  });

  it('switches trading off and on, idempotently', async () => {
    const orgId = await newOrg();
    const off = await setTradingEnabled(database.db, orgId, 'live', false);
    expect(off.tradingEnabled).toBe(false);
    const again = await setTradingEnabled(database.db, orgId, 'live', false);
    expect(again.tradingEnabled).toBe(false);
    // Repeating a change is no change.
    expect(again.updatedAt).toEqual(off.updatedAt);
    expect((await readOrgBook(database.db, orgId, 'sandbox'))!.tradingEnabled).toBe(true);
    expect((await setTradingEnabled(database.db, orgId, 'live', true)).tradingEnabled).toBe(true);
    expect((await setTradingEnabled(database.db, orgId, 'live', true)).tradingEnabled).toBe(true);
  });

  it('disables and enables currencies, idempotently', async () => {
    const orgId = await newOrg();
    await setCurrencyEnabled(database.db, orgId, 'live', 'USDC', false);
    await setCurrencyEnabled(database.db, orgId, 'live', 'EUR', false);
    const twice = await setCurrencyEnabled(database.db, orgId, 'live', 'EUR', false);
    expect(twice.disabledCurrencies).toEqual(['EUR', 'USDC']);
    expect((await readOrgBook(database.db, orgId, 'sandbox'))!.disabledCurrencies).toEqual([]);

    expect((await setCurrencyEnabled(database.db, orgId, 'live', 'EUR', true)).disabledCurrencies).toEqual(['USDC']);
    expect((await setCurrencyEnabled(database.db, orgId, 'live', 'EUR', true)).disabledCurrencies).toEqual(['USDC']);
    expect((await setCurrencyEnabled(database.db, orgId, 'live', 'GBP', true)).disabledCurrencies).toEqual(['USDC']);
  });

  it('refuses a currency that does not exist', async () => {
    const orgId = await newOrg();
    const error = await setCurrencyEnabled(database.db, orgId, 'live', 'XYZ', false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownCurrencyError);
    expect(error).toMatchObject({ code: 'FXGATE_UNKNOWN_CURRENCY', currency: 'XYZ' });
    // Codes are exact: the CLI upper-cases what an operator types, the repository does not guess.
    await expect(setCurrencyEnabled(database.db, orgId, 'live', 'eur', false)).rejects.toBeInstanceOf(
      UnknownCurrencyError,
    );
  });

  it('disables and enables one direction of a pair, idempotently', async () => {
    const orgId = await newOrg();
    const eurUsd = { buyCurrency: 'EUR', sellCurrency: 'USD' };
    await setPairEnabled(database.db, orgId, 'sandbox', eurUsd, false);
    const twice = await setPairEnabled(database.db, orgId, 'sandbox', eurUsd, false);
    expect(twice.disabledPairs).toEqual(['EUR/USD']);
    const both = await setPairEnabled(
      database.db,
      orgId,
      'sandbox',
      { buyCurrency: 'USD', sellCurrency: 'EUR' },
      false,
    );
    expect(both.disabledPairs).toEqual(['EUR/USD', 'USD/EUR']);
    expect(apiErrorOf(() => assertTradingAllowed(both, 'EUR', 'USD'))?.code).toBe('TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT');
    expect(apiErrorOf(() => assertTradingAllowed(both, 'EUR', 'GBP'))).toBeNull();

    expect((await setPairEnabled(database.db, orgId, 'sandbox', eurUsd, true)).disabledPairs).toEqual(['USD/EUR']);
    expect((await setPairEnabled(database.db, orgId, 'sandbox', eurUsd, true)).disabledPairs).toEqual(['USD/EUR']);
    expect((await readOrgBook(database.db, orgId, 'live'))!.disabledPairs).toEqual([]);
  });

  it('refuses a pair of one currency or of an unknown currency', async () => {
    const orgId = await newOrg();
    const same = await setPairEnabled(
      database.db,
      orgId,
      'live',
      { buyCurrency: 'EUR', sellCurrency: 'EUR' },
      false,
    ).catch((e: unknown) => e);
    expect(same).toBeInstanceOf(InvalidPairError);
    expect(same).toMatchObject({ code: 'FXGATE_INVALID_PAIR' });
    await expect(
      setPairEnabled(database.db, orgId, 'live', { buyCurrency: 'EUR', sellCurrency: 'ABC' }, false),
    ).rejects.toMatchObject({
      code: 'FXGATE_UNKNOWN_CURRENCY',
      currency: 'ABC',
    });
    await expect(
      setPairEnabled(database.db, orgId, 'live', { buyCurrency: 'ABC', sellCurrency: 'USD' }, false),
    ).rejects.toMatchObject({ currency: 'ABC' });
    expect((await readOrgBook(database.db, orgId, 'live'))!.disabledPairs).toEqual([]);
  });

  it('keeps every concurrent change of different currencies and pairs', async () => {
    const orgId = await newOrg();
    // 20 in parallel on PostgreSQL (a pool of 30 connections); PGlite serialises them anyway.
    const parallel = driver === 'postgres' ? 20 : 5;
    // The catalog has 7 currencies; extra ones make 20 different codes to disable at once.
    const currencies = Array.from({ length: parallel }, (_, i) => `QQ${String.fromCharCode(65 + i)}`);
    for (const code of currencies) {
      await database.db.query(
        `INSERT INTO currencies (code, name, asset_type, decimals, withdrawals_enabled) VALUES ($1, $1, 'FIAT', 2, true) ON CONFLICT (code) DO NOTHING`,
        [code],
      );
    }
    const pairs = currencies.map((code, i) => ({
      buyCurrency: code,
      sellCurrency: currencies[(i + 1) % currencies.length]!,
    }));
    await Promise.all([
      ...currencies.map((currency) => setCurrencyEnabled(database.db, orgId, 'live', currency, false)),
      ...pairs.map((pair) => setPairEnabled(database.db, orgId, 'live', pair, false)),
    ]);
    const after = (await readOrgBook(database.db, orgId, 'live'))!;
    expect(after.disabledCurrencies).toEqual([...currencies].sort());
    expect(after.disabledPairs).toEqual(pairs.map((pair) => `${pair.buyCurrency}/${pair.sellCurrency}`).sort());

    // Enabling concurrently, some of them twice, leaves none behind.
    await Promise.all(
      [...currencies, ...currencies.slice(0, 5)].map((currency) =>
        setCurrencyEnabled(database.db, orgId, 'live', currency, true),
      ),
    );
    expect((await readOrgBook(database.db, orgId, 'live'))!.disabledCurrencies).toEqual([]);
  });

  // Quotes and trades ask the database function whether the book may trade (one round trip);
  // assertTradingAllowed then says which refusal it is. The two must never disagree.
  it('fx_trading_allowed answers as assertTradingAllowed does, for any settings and pair', async () => {
    const codes = ['EUR', 'USD', 'GBP', 'JPY'];
    const code = fc.constantFrom(...codes);
    const pairKeyArb = fc
      .tuple(code, code)
      .filter(([a, b]) => a !== b)
      .map(([a, b]) => `${a}/${b}`);
    const settings = fc.record({
      tradingEnabled: fc.boolean(),
      disabledCurrencies: fc.uniqueArray(code, { maxLength: 3 }),
      disabledPairs: fc.uniqueArray(pairKeyArb, { maxLength: 6 }),
    });
    await fc.assert(
      fc.asyncProperty(
        settings,
        fc.tuple(code, code).filter(([a, b]) => a !== b),
        async (permissions, [buy, sell]) => {
          const { rows } = await database.db.query<{ allowed: boolean }>(
            'SELECT fx_trading_allowed($1, $2::text[], $3::text[], $4, $5) AS allowed',
            [permissions.tradingEnabled, permissions.disabledCurrencies, permissions.disabledPairs, buy, sell],
          );
          expect(rows[0]!.allowed).toBe(apiErrorOf(() => assertTradingAllowed(book(permissions), buy, sell)) === null);
        },
      ),
      { numRuns: 300 },
    );
  });
});
