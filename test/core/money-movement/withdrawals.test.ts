/**
 * Withdrawals end to end: POST /v3/fx/withdrawals with one test per rule of
 * docs/contract.md#v3-withdrawals-rules, in their order (each makes only its rule fail, every
 * earlier rule passing, and checks the code, status and details exactly); the record's and its
 * events' shape field by field against docs/contract.md#resources-withdrawal; metadata on
 * success only; the lifecycle (sandbox complete and fail, cancel, illegal moves)
 * with FEDWIRE paymentDetails; the ledger checked after every test; holds in GET /v3/fx/balances;
 * GET by id and the list; and the live processor over the simulated rail.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { postMovement } from '../../../src/core/ledger/ledger.js';
import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import {
  fedwireMessageIds,
  SIMULATED_FAILURE_REASON,
  SimulatedPaymentRail,
  simulatedTransactionHash,
} from '../../../src/core/money-movement/payment-rails.js';
import {
  createWithdrawalAccount,
  updateWithdrawalAccount,
  verifyWithdrawalAccount,
  type WithdrawalAccountCreateInput,
  type WithdrawalAccountRow,
} from '../../../src/core/money-movement/withdrawal-accounts.js';
import { createWithdrawalProcessor } from '../../../src/core/money-movement/withdrawal-processor.js';
import { transitionWithdrawal } from '../../../src/core/money-movement/withdrawals.js';
import type { Principal } from '../../../src/core/principal.js';
import { DEFAULT_USD_PRICES, StaticRateSource } from '../../../src/core/trading/rate-source.js';
import { referenceData } from '../../../src/core/trading/reference-data.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { ApiError } from '../../../src/lib/errors/api-error.js';
import { armFailpoint, disarmAllFailpoints } from '../../../src/lib/failpoints.js';
import { newId } from '../../../src/lib/ids.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { recordTestDeposit } from '../../support/book-fixtures.js';
import { expectPipelineHeaders, expectV3Error } from '../../support/v3-assertions.js';
import { type TestResponse, V3Harness } from '../../support/v3-harness.js';

interface WithdrawalRecord {
  object: 'withdrawal';
  id: string;
  currency: string;
  assetType: string;
  withdrawalAmount: string;
  status: string;
  network: string | null;
  withdrawalAccountId: string;
  estimatedCompletionAt: string | null;
  transactionHash: string | null;
  paymentDetails: Record<string, Record<string, string>>;
  actorId: string;
  actorEmail: string;
  comments: string;
  createdAt: string;
  metadata: Record<string, string>;
  updatedAt: string;
  completedAt: string | null;
  failureReason: string | null;
}

/** The record's fields in the order of docs/contract.md#resources-withdrawal. */
const RECORD_FIELDS = [
  'object',
  'id',
  'currency',
  'assetType',
  'withdrawalAmount',
  'status',
  'network',
  'withdrawalAccountId',
  'estimatedCompletionAt',
  'transactionHash',
  'paymentDetails',
  'actorId',
  'actorEmail',
  'comments',
  'createdAt',
  'metadata',
  'updatedAt',
  'completedAt',
  'failureReason',
];

const WITHDRAWALS = '/v3/fx/withdrawals';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const IMAD = /^\d{8}[A-Z0-9]{8}\d{6}$/;
const OMAD = /^\d{8}[A-Z0-9]{8}\d{6}\d{4}\d{4}[A-Z0-9]{4}$/;

// Published vectors: JPMorgan Chase's ABA routing number, an EIP-55 test vector, the IBAN
// registry's GB example with its bank's BIC.
const ABA = '021000021';
const ABA_BROKEN = '021000022';
const EIP55 = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const EIP55_CASE_BROKEN = '0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const IBAN = 'GB82WEST12345698765432';
const BIC = 'NWBKGB2L';

let harness: V3Harness;
/** The processor's clock: real time, moved forward by tests to pass the rail's delay. */
let clockOffsetMs = 0;
const now = () => new Date(Date.now() + clockOffsetMs);

beforeAll(async () => {
  harness = await V3Harness.start({ keyCacheTtlMs: 60_000, core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
});
afterAll(async () => harness?.close());
afterEach(async () => {
  disarmAllFailpoints();
  expect(await checkLedger(harness.db)).toEqual([]);
});

/** The context the module functions run on in-process (the processor, cancel). */
function context() {
  return { db: harness.db, reference: referenceData(harness.db), rates: new StaticRateSource(DEFAULT_USD_PRICES), now };
}

function principalOf(key: LoadedKey): Principal {
  return { keyName: key.file.name, orgId: key.file.orgId, scopes: key.file.scopes, environment: key.file.mode };
}

async function newKey(mode: Mode = 'sandbox'): Promise<LoadedKey> {
  return harness.createKey({ mode, scopes: ['view', 'withdraw'] });
}

/** Money arriving as a deposit does on the ledger: rail in transit -> client. */
async function fund(key: LoadedKey, currency: string, amount: string): Promise<void> {
  await recordTestDeposit(harness.db, { orgId: key.file.orgId, environment: key.file.mode, currency, amount });
}

/** A debt as a trade on credit leaves it: the client account negative, the house's liquidity the other side. */
async function owe(key: LoadedKey, currency: string, amount: string): Promise<void> {
  const value = new Decimal(amount);
  await harness.db.transaction((tx) =>
    postMovement(tx, {
      orgId: key.file.orgId,
      environment: key.file.mode,
      kind: 'trade',
      referenceId: newId('trade'),
      at: new Date(),
      postings: [
        { account: 'client', currency, amount: value.negated() },
        { account: 'liquidity', currency, amount: value },
      ],
    }),
  );
}

const FEDWIRE_USD: WithdrawalAccountCreateInput = {
  currency: 'USD',
  assetType: 'FIAT',
  transferType: 'FEDWIRE',
  accountName: 'Operating account',
  bankName: 'JPMorgan Chase',
  accountNumber: '123456789',
  routingNumber: ABA,
};
const SWIFT_GBP: WithdrawalAccountCreateInput = {
  currency: 'GBP',
  assetType: 'FIAT',
  transferType: 'SWIFT',
  accountName: 'UK account',
  bankName: 'NatWest',
  accountNumber: IBAN,
  swiftCode: BIC,
};
const USDC_ETHEREUM: WithdrawalAccountCreateInput = {
  currency: 'USDC',
  assetType: 'STABLECOIN',
  accountName: 'Treasury wallet',
  network: 'ETHEREUM',
  address: EIP55,
};

/** A withdrawal account, verified (ACTIVE) unless told otherwise. */
async function account(
  key: LoadedKey,
  input: WithdrawalAccountCreateInput = FEDWIRE_USD,
  verify = true,
): Promise<WithdrawalAccountRow> {
  const row = await createWithdrawalAccount(context(), principalOf(key), input, {
    key: randomUUID(),
    fingerprint: `sha256:${randomBytes(32).toString('hex')}`,
  });
  return verify
    ? (await verifyWithdrawalAccount(harness.db, { orgId: key.file.orgId, environment: key.file.mode }, row.id))!
    : row;
}

function postWithdrawal(
  key: LoadedKey,
  body: Record<string, unknown>,
  idempotencyKey: string = randomUUID(),
): Promise<TestResponse> {
  return harness.signed({ key, method: 'POST', path: WITHDRAWALS, body: JSON.stringify(body), idempotencyKey });
}

const withdrawalOf = (response: TestResponse) => response.json<{ data: WithdrawalRecord }>().data;

async function withdraw(key: LoadedKey, body: Record<string, unknown>): Promise<WithdrawalRecord> {
  const response = await postWithdrawal(key, body);
  expect(response.status, response.text).toBe(200);
  return withdrawalOf(response);
}

function sandboxDrive(
  key: LoadedKey,
  id: string,
  action: 'complete' | 'fail',
  body?: Record<string, unknown>,
): Promise<TestResponse> {
  return harness.signed({
    key,
    method: 'POST',
    path: `/v3/fx/sandbox/withdrawals/${id}/${action}`,
    body: body && JSON.stringify(body),
    idempotencyKey: randomUUID(),
  });
}

/** The book's ledger balances by account kind and currency (only non-zero ones). */
async function ledger(key: LoadedKey): Promise<Record<string, string>> {
  const { rows } = await harness.db.query<{ kind: string; currency: string; balance: string }>(
    `SELECT kind, currency, balance::text AS balance FROM ledger_accounts WHERE org_id = $1 AND environment = $2 AND balance <> 0 ORDER BY kind, currency`,
    [key.file.orgId, key.file.mode],
  );
  return Object.fromEntries(rows.map((row) => [`${row.kind}:${row.currency}`, new Decimal(row.balance).toFixed()]));
}

async function withdrawalRows(key: LoadedKey): Promise<number> {
  const { rows } = await harness.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM withdrawals WHERE org_id = $1 AND environment = $2',
    [key.file.orgId, key.file.mode],
  );
  return Number(rows[0]!.n);
}

async function events(id: string): Promise<Array<{ type: string; eventType: string; data: WithdrawalRecord }>> {
  const { rows } = await harness.db.query<{ type: string; event_type: string; data: WithdrawalRecord }>(
    `SELECT type, event_type, data FROM events WHERE data->>'id' = $1 ORDER BY created_at, id`,
    [id],
  );
  return rows.map((row) => ({ type: row.type, eventType: row.event_type, data: row.data }));
}

/**
 * Every field of the withdrawal record with its type and format; returns the record. Responses
 * keep the contract's field order; event data comes back from jsonb, which keeps no order
 * (`ordered` false).
 */
function expectRecordShape(record: WithdrawalRecord, ordered = true): WithdrawalRecord {
  if (ordered) expect(Object.keys(record)).toEqual(RECORD_FIELDS);
  else expect(Object.keys(record).sort()).toEqual([...RECORD_FIELDS].sort());
  expect(record.object).toBe('withdrawal');
  expect(record.id).toMatch(/^wtd_[0-9a-f]{32}$/);
  expect(record.currency).toMatch(/^[A-Z]{3,5}$/);
  expect(['FIAT', 'STABLECOIN']).toContain(record.assetType);
  expect(record.withdrawalAmount).toMatch(/^[0-9]+(\.[0-9]+)?$/);
  expect(['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED']).toContain(record.status);
  if (record.assetType === 'FIAT') expect(record.network).toBeNull();
  else expect(record.network).toMatch(/^[A-Z]+$/);
  expect(record.withdrawalAccountId).toMatch(/^wac_[0-9a-f]{32}$/);
  if (record.estimatedCompletionAt !== null) expect(record.estimatedCompletionAt).toMatch(ISO_MS);
  if (record.transactionHash !== null) expect(record.transactionHash).toEqual(expect.any(String));
  expect(record.paymentDetails).toEqual(expect.any(Object));
  expect(record.actorId).toMatch(/^usr_[0-9a-f]{32}$/);
  expect(record.actorEmail).toMatch(/^[^@\s]+@[^@\s]+$/);
  expect(record.comments).toEqual(expect.any(String));
  expect(record.createdAt).toMatch(ISO_MS);
  expect(record.metadata).toEqual(expect.any(Object));
  expect(record.updatedAt).toMatch(ISO_MS);
  if (record.completedAt !== null) expect(record.completedAt).toMatch(ISO_MS);
  if (record.failureReason !== null) expect(record.failureReason).toEqual(expect.any(String));
  return record;
}

/** A refusal leaves nothing behind: no withdrawal, no ledger movement. */
async function expectNothingWritten(key: LoadedKey, ledgerBefore: Record<string, string>): Promise<void> {
  expect(await withdrawalRows(key)).toBe(0);
  expect(await ledger(key)).toEqual(ledgerBefore);
}

describe('POST /v3/fx/withdrawals: the ten withdrawal rules, in order', () => {
  /** A request that passes every rule: funded USD 1000, a verified FEDWIRE account. */
  async function passingSetup(): Promise<{
    key: LoadedKey;
    account: WithdrawalAccountRow;
    body: Record<string, unknown>;
  }> {
    const key = await newKey();
    await fund(key, 'USD', '1000');
    const wac = await account(key);
    return {
      key,
      account: wac,
      body: { withdrawalAccountId: wac.id, withdrawalAmount: '100.00', currency: 'USD', metadata: { order: 'o-1' } },
    };
  }

  it('the passing request passes (the baseline every rule test changes one thing of)', async () => {
    const { key, body } = await passingSetup();
    const response = await postWithdrawal(key, body);
    expect(response.status, response.text).toBe(200);
    expectPipelineHeaders(response);
    expect(response.headers['idempotency-replayed']).toBe('false');
  });

  it('rule 1: an account that does not exist in this book is 404 WITHDRAWAL_ADDRESS_NOT_FOUND {accountId}', async () => {
    const { key, body } = await passingSetup();
    const before = await ledger(key);
    const unknown = newId('withdrawalAccount');
    expectV3Error(
      await postWithdrawal(key, { ...body, withdrawalAccountId: unknown }),
      'WITHDRAWAL_ADDRESS_NOT_FOUND',
      { details: { accountId: unknown } },
    );
    // A malformed id names no account either: 404, not 400.
    expectV3Error(await postWithdrawal(key, { ...body, withdrawalAccountId: 'nope' }), 'WITHDRAWAL_ADDRESS_NOT_FOUND', {
      details: { accountId: 'nope' },
    });
    // Another org's account, and the same org's account in the other book, are not found.
    const other = await newKey();
    const foreign = await account(other);
    expectV3Error(
      await postWithdrawal(key, { ...body, withdrawalAccountId: foreign.id }),
      'WITHDRAWAL_ADDRESS_NOT_FOUND',
      { details: { accountId: foreign.id } },
    );
    const live = await harness.createKey({ orgId: key.file.orgId, mode: 'live', scopes: ['view', 'withdraw'] });
    const liveAccount = await account(live);
    expectV3Error(
      await postWithdrawal(key, { ...body, withdrawalAccountId: liveAccount.id }),
      'WITHDRAWAL_ADDRESS_NOT_FOUND',
      { details: { accountId: liveAccount.id } },
    );
    await expectNothingWritten(key, before);
  });

  it('rule 2: an account that is not ACTIVE is 403 WITHDRAWAL_ACCOUNT_NOT_LIVE {accountId, status}', async () => {
    const key = await newKey();
    await fund(key, 'USD', '1000');
    const before = await ledger(key);
    // New accounts are PENDING_VERIFICATION.
    const pending = await account(key, FEDWIRE_USD, false);
    const body = { withdrawalAccountId: pending.id, withdrawalAmount: '100.00', currency: 'USD' };
    expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_ACCOUNT_NOT_LIVE', {
      details: { accountId: pending.id, status: 'PENDING_VERIFICATION' },
    });
    // Verified once but disabled since.
    const disabled = await account(key);
    await updateWithdrawalAccount(harness.db, { orgId: key.file.orgId, environment: 'sandbox' }, disabled.id, {
      status: 'DISABLED',
    });
    expectV3Error(
      await postWithdrawal(key, { ...body, withdrawalAccountId: disabled.id }),
      'WITHDRAWAL_ACCOUNT_NOT_LIVE',
      { details: { accountId: disabled.id, status: 'DISABLED' } },
    );
    await expectNothingWritten(key, before);
  });

  it('rule 3: an ACTIVE account that is not verified is 409 WITHDRAWAL_ADDRESS_NOT_VERIFIED {accountId}', async () => {
    const { key, account: wac, body } = await passingSetup();
    const before = await ledger(key);
    await updateWithdrawalAccount(harness.db, { orgId: key.file.orgId, environment: 'sandbox' }, wac.id, {
      status: 'ACTIVE',
      verified: false,
    });
    expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_ADDRESS_NOT_VERIFIED', {
      details: { accountId: wac.id },
    });
    await expectNothingWritten(key, before);
  });

  it("rule 4: a currency other than the account's is 422 WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH {expected, received}", async () => {
    const { key, body } = await passingSetup();
    await fund(key, 'EUR', '1000');
    const before = await ledger(key);
    expectV3Error(await postWithdrawal(key, { ...body, currency: 'EUR' }), 'WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH', {
      details: { expected: 'USD', received: 'EUR' },
    });
    // A code that names no currency at all is a mismatch too (rule 4 comes before rule 5).
    expectV3Error(await postWithdrawal(key, { ...body, currency: 'XYZ' }), 'WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH', {
      details: { expected: 'USD', received: 'XYZ' },
    });
    await expectNothingWritten(key, before);
  });

  it('rule 5: a currency whose withdrawals are off (JPY) is 400 WITHDRAWAL_CURRENCY_NOT_SUPPORTED', async () => {
    const key = await newKey();
    await fund(key, 'JPY', '100000');
    const before = await ledger(key);
    const jpy = await account(key, {
      ...FEDWIRE_USD,
      currency: 'JPY',
      accountName: 'Tokyo',
    } as WithdrawalAccountCreateInput);
    const error = expectV3Error(
      await postWithdrawal(key, {
        withdrawalAccountId: jpy.id,
        withdrawalAmount: '1000',
        currency: 'JPY',
        metadata: { a: 'b' },
      }),
      'WITHDRAWAL_CURRENCY_NOT_SUPPORTED',
    );
    expect(error.details).toEqual({});
    await expectNothingWritten(key, before);
  });

  it("rule 6: more decimals than the currency's is 422 WITHDRAWAL_INVALID_AMOUNT_PRECISION {maxDecimals, currency}", async () => {
    const { key, body } = await passingSetup();
    await fund(key, 'USDC', '1000');
    const usdc = await account(key, USDC_ETHEREUM);
    const before = await ledger(key);
    expectV3Error(
      await postWithdrawal(key, { ...body, withdrawalAmount: '10.001' }),
      'WITHDRAWAL_INVALID_AMOUNT_PRECISION',
      { details: { maxDecimals: 2, currency: 'USD' } },
    );
    // Counted as written: a trailing zero is a decimal place asked for.
    expectV3Error(
      await postWithdrawal(key, { ...body, withdrawalAmount: '10.000' }),
      'WITHDRAWAL_INVALID_AMOUNT_PRECISION',
      { details: { maxDecimals: 2, currency: 'USD' } },
    );
    expectV3Error(
      await postWithdrawal(key, { withdrawalAccountId: usdc.id, withdrawalAmount: '1.1234567', currency: 'USDC' }),
      'WITHDRAWAL_INVALID_AMOUNT_PRECISION',
      { details: { maxDecimals: 6, currency: 'USDC' } },
    );
    await expectNothingWritten(key, before);
  });

  it('rule 7: more than the withdrawable balance is 409 WITHDRAWAL_INSUFFICIENT_BALANCE {requiredAmount, availableAmount, currency}', async () => {
    const { key, body } = await passingSetup();
    const before = await ledger(key);
    expectV3Error(
      await postWithdrawal(key, { ...body, withdrawalAmount: '1000.01' }),
      'WITHDRAWAL_INSUFFICIENT_BALANCE',
      {
        details: { requiredAmount: '1000.01', availableAmount: '1000.00', currency: 'USD' },
      },
    );
    await expectNothingWritten(key, before);

    // Pending withdrawals are not withdrawable twice.
    await withdraw(key, { ...body, withdrawalAmount: '600' });
    expectV3Error(
      await postWithdrawal(key, { ...body, withdrawalAmount: '400.5' }),
      'WITHDRAWAL_INSUFFICIENT_BALANCE',
      {
        details: { requiredAmount: '400.50', availableAmount: '400.00', currency: 'USD' },
      },
    );
    // Exactly the rest is fine.
    await withdraw(key, { ...body, withdrawalAmount: '400' });

    // No balance at all in the currency: nothing is available.
    const empty = await newKey();
    const wac = await account(empty);
    expectV3Error(
      await postWithdrawal(empty, { ...body, withdrawalAccountId: wac.id, withdrawalAmount: '0.01' }),
      'WITHDRAWAL_INSUFFICIENT_BALANCE',
      {
        details: { requiredAmount: '0.01', availableAmount: '0.00', currency: 'USD' },
      },
    );
  });

  it('rule 7 before rule 8: a negative balance in the currency itself has nothing available', async () => {
    const key = await newKey();
    await owe(key, 'USD', '50');
    const wac = await account(key);
    expectV3Error(
      await postWithdrawal(key, { withdrawalAccountId: wac.id, withdrawalAmount: '1.00', currency: 'USD' }),
      'WITHDRAWAL_INSUFFICIENT_BALANCE',
      {
        details: { requiredAmount: '1.00', availableAmount: '0.00', currency: 'USD' },
      },
    );
  });

  it('rule 8: owing money in any currency is 409 WITHDRAWAL_PENDING_DEPOSIT_REQUIRED {outstandingAmount, currency}, the largest debt in USD', async () => {
    const { key, body } = await passingSetup();
    await owe(key, 'GBP', '5.00');
    const before = await ledger(key);
    expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_PENDING_DEPOSIT_REQUIRED', {
      details: { outstandingAmount: '5.00', currency: 'GBP' },
    });
    // EUR 10 (10.80 USD) outweighs GBP 5 (6.35 USD); JPY 1000 (6.70 USD) is the most units but
    // not the largest debt.
    await owe(key, 'EUR', '10.00');
    await owe(key, 'JPY', '1000');
    expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_PENDING_DEPOSIT_REQUIRED', {
      details: { outstandingAmount: '10.00', currency: 'EUR' },
    });
    expect(await withdrawalRows(key)).toBe(0);
    expect(Object.keys(await ledger(key)).length).toBeGreaterThan(Object.keys(before).length);

    // Settling the debts (a deposit) lets the withdrawal through.
    await fund(key, 'GBP', '5');
    await fund(key, 'EUR', '10');
    await fund(key, 'JPY', '1000');
    await withdraw(key, body);
  });

  it('rule 9: an account with withdrawals turned off is 403 WITHDRAWAL_DISABLED_FOR_ACCOUNT', async () => {
    const { key, account: wac, body } = await passingSetup();
    const before = await ledger(key);
    await updateWithdrawalAccount(harness.db, { orgId: key.file.orgId, environment: 'sandbox' }, wac.id, {
      withdrawalsEnabled: false,
    });
    const error = expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_DISABLED_FOR_ACCOUNT');
    expect(error.details).toEqual({});
    await expectNothingWritten(key, before);
  });

  it('rule 10: an account whose checksum fails at withdrawal time is 422 WITHDRAWAL_ADDRESS_CHECKSUM_FAILED {address, network}', async () => {
    const { key, account: wac, body } = await passingSetup();
    await fund(key, 'USDC', '1000');
    await fund(key, 'GBP', '1000');
    const usdc = await account(key, USDC_ETHEREUM);
    const swift = await account(key, SWIFT_GBP);
    const before = await ledger(key);
    // Rows that reached the table some other way (an import, an old rule): checked again here.
    await harness.db.query('UPDATE withdrawal_accounts SET routing_number = $2 WHERE id = $1', [wac.id, ABA_BROKEN]);
    await harness.db.query('UPDATE withdrawal_accounts SET address = $2 WHERE id = $1', [usdc.id, EIP55_CASE_BROKEN]);
    await harness.db.query('UPDATE withdrawal_accounts SET account_number = $2 WHERE id = $1', [
      swift.id,
      'GB82WEST12345698765433',
    ]);

    expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', {
      details: { address: ABA_BROKEN, network: 'FEDWIRE' },
    });
    expectV3Error(
      await postWithdrawal(key, { withdrawalAccountId: usdc.id, withdrawalAmount: '1', currency: 'USDC' }),
      'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED',
      {
        details: { address: EIP55_CASE_BROKEN, network: 'ETHEREUM' },
      },
    );
    expectV3Error(
      await postWithdrawal(key, { withdrawalAccountId: swift.id, withdrawalAmount: '1', currency: 'GBP' }),
      'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED',
      {
        details: { address: 'GB82WEST12345698765433', network: 'SWIFT' },
      },
    );
    await expectNothingWritten(key, before);
  });

  it('answers the first failing rule when several fail: 7, then 8, then 9, then 10, as each is fixed', async () => {
    const key = await newKey();
    const wac = await account(key);
    await owe(key, 'EUR', '3');
    await updateWithdrawalAccount(harness.db, { orgId: key.file.orgId, environment: 'sandbox' }, wac.id, {
      withdrawalsEnabled: false,
    });
    await harness.db.query('UPDATE withdrawal_accounts SET routing_number = $2 WHERE id = $1', [wac.id, ABA_BROKEN]);
    const body = { withdrawalAccountId: wac.id, withdrawalAmount: '10.00', currency: 'USD' };

    expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_INSUFFICIENT_BALANCE');
    await fund(key, 'USD', '10');
    expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_PENDING_DEPOSIT_REQUIRED', {
      details: { outstandingAmount: '3.00', currency: 'EUR' },
    });
    await fund(key, 'EUR', '3');
    expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_DISABLED_FOR_ACCOUNT');
    await updateWithdrawalAccount(harness.db, { orgId: key.file.orgId, environment: 'sandbox' }, wac.id, {
      withdrawalsEnabled: true,
    });
    expectV3Error(await postWithdrawal(key, body), 'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', {
      details: { address: ABA_BROKEN, network: 'FEDWIRE' },
    });
    await harness.db.query('UPDATE withdrawal_accounts SET routing_number = $2 WHERE id = $1', [wac.id, ABA]);
    await withdraw(key, body);
    // 409s are not stored by the idempotency layer, so none of the refusals above stuck to a key.
  });
});

describe('POST /v3/fx/withdrawals: the body', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a negative amount', { withdrawalAmount: '-1.00' }, 'withdrawalAmount'],
    ['a zero amount', { withdrawalAmount: '0.00' }, 'withdrawalAmount'],
    ['9 fractional digits', { withdrawalAmount: '1.123456789' }, 'withdrawalAmount'],
    ['an amount as a number', { withdrawalAmount: 10 }, 'withdrawalAmount'],
    ['an exponent', { withdrawalAmount: '1e3' }, 'withdrawalAmount'],
    ['a missing account', { withdrawalAccountId: undefined }, 'withdrawalAccountId'],
    ['a missing currency', { currency: undefined }, 'currency'],
    ['an unknown field', { network: 'ETHEREUM' }, 'network'],
    ['metadata that is not strings', { metadata: { a: 1 } }, 'metadata.a'],
  ])('refuses %s with 400 VALIDATION_BODY_FAILED', async (_, change, path) => {
    const key = await newKey();
    const wac = await account(key);
    const body = {
      withdrawalAccountId: wac.id,
      withdrawalAmount: '1.00',
      currency: 'USD',
      metadata: { m: '1' },
      ...change,
    };
    const error = expectV3Error(await postWithdrawal(key, body), 'VALIDATION_BODY_FAILED');
    expect((error.details.issues as Array<{ path: string }>).map((issue) => issue.path)).toContain(path);
    expect(await withdrawalRows(key)).toBe(0);
  });

  it('needs the withdraw scope', async () => {
    const key = await harness.createKey({ scopes: ['view', 'trade'] });
    const response = await postWithdrawal(key, {
      withdrawalAccountId: newId('withdrawalAccount'),
      withdrawalAmount: '1.00',
      currency: 'USD',
    });
    expectV3Error(response, 'AUTH_INSUFFICIENT_SCOPE', { details: { requiredScope: 'withdraw' } });
  });
});

describe('the withdrawal record and its events', () => {
  it('answers 200 {data} with every field, PENDING, the amount held, and records withdrawal.pending with the same record', async () => {
    const key = await newKey();
    await fund(key, 'USD', '1000');
    const wac = await account(key);
    const response = await postWithdrawal(key, {
      withdrawalAccountId: wac.id,
      withdrawalAmount: '250.5',
      currency: 'USD',
      comments: 'rent',
      metadata: { invoice: 'inv-7' },
    });
    expect(response.status, response.text).toBe(200);
    expect(Object.keys(response.json())).toEqual(['data']);
    const record = expectRecordShape(withdrawalOf(response));
    const keyId = key.file.name.split('/').at(-1)!;
    expect(record).toEqual({
      object: 'withdrawal',
      id: record.id,
      currency: 'USD',
      assetType: 'FIAT',
      withdrawalAmount: '250.50',
      status: 'PENDING',
      network: null,
      withdrawalAccountId: wac.id,
      estimatedCompletionAt: null,
      transactionHash: null,
      paymentDetails: {},
      actorId: `usr_${keyId.replaceAll('-', '')}`,
      actorEmail: `${keyId}@api-keys.fxgate.invalid`,
      comments: 'rent',
      createdAt: record.createdAt,
      metadata: { invoice: 'inv-7' },
      updatedAt: record.createdAt,
      completedAt: null,
      failureReason: null,
    });
    expect(await ledger(key)).toEqual({
      'client:USD': '749.5',
      'rail_in_transit:USD': '-1000',
      'withdrawal_hold:USD': '250.5',
    });
    expect(await events(record.id)).toEqual([{ type: 'withdrawals', eventType: 'withdrawal.pending', data: record }]);

    // GET answers the same record.
    const fetched = await harness.signed({ key, path: `${WITHDRAWALS}/${record.id}` });
    expect(fetched.status).toBe(200);
    expect(withdrawalOf(fetched)).toEqual(record);
  });

  it("defaults comments to '' and metadata to {}; a stablecoin carries its network", async () => {
    const key = await newKey();
    await fund(key, 'USDC', '10');
    const wac = await account(key, USDC_ETHEREUM);
    const record = expectRecordShape(
      await withdraw(key, { withdrawalAccountId: wac.id, withdrawalAmount: '1.5', currency: 'USDC' }),
    );
    expect(record).toMatchObject({
      assetType: 'STABLECOIN',
      network: 'ETHEREUM',
      withdrawalAmount: '1.500000',
      comments: '',
      metadata: {},
      transactionHash: null,
    });
  });

  it('echoes metadata on success (and its replay) only, never on an error', async () => {
    const key = await newKey();
    await fund(key, 'USD', '100');
    const wac = await account(key);
    const body = JSON.stringify({
      withdrawalAccountId: wac.id,
      withdrawalAmount: '60',
      currency: 'USD',
      metadata: { secret: 'echo-me' },
    });
    const idem = randomUUID();
    const first = await harness.signed({ key, method: 'POST', path: WITHDRAWALS, body, idempotencyKey: idem });
    expect(withdrawalOf(first).metadata).toEqual({ secret: 'echo-me' });
    const replay = await harness.signed({ key, method: 'POST', path: WITHDRAWALS, body, idempotencyKey: idem });
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    // The same metadata on a refused request (insufficient balance) is nowhere in the error.
    const refused = await postWithdrawal(key, {
      withdrawalAccountId: wac.id,
      withdrawalAmount: '60',
      currency: 'USD',
      metadata: { secret: 'echo-me' },
    });
    expectV3Error(refused, 'WITHDRAWAL_INSUFFICIENT_BALANCE');
    expect(refused.text).not.toContain('echo-me');
    const invalid = await postWithdrawal(key, {
      withdrawalAccountId: wac.id,
      withdrawalAmount: '-1',
      currency: 'USD',
      metadata: { secret: 'echo-me' },
    });
    expectV3Error(invalid, 'VALIDATION_BODY_FAILED');
    expect(invalid.text).not.toContain('echo-me');
  });

  it('the same key with another body is 422 IDEMPOTENCY_MISMATCH', async () => {
    const key = await newKey();
    await fund(key, 'USD', '100');
    const wac = await account(key);
    const idem = randomUUID();
    const body = JSON.stringify({ withdrawalAccountId: wac.id, withdrawalAmount: '10', currency: 'USD' });
    await harness.signed({ key, method: 'POST', path: WITHDRAWALS, body, idempotencyKey: idem });
    const other = await postWithdrawal(
      key,
      { withdrawalAccountId: wac.id, withdrawalAmount: '11', currency: 'USD' },
      idem,
    );
    const hash = `sha256:${createHash('sha256').update(`POST\n${WITHDRAWALS}\n`).update(body).digest('hex')}`;
    expectV3Error(other, 'IDEMPOTENCY_MISMATCH', { details: { originalRequestHash: hash } });
    expect(await withdrawalRows(key)).toBe(1);
  });
});

describe('the lifecycle', () => {
  async function pending(
    input: WithdrawalAccountCreateInput = FEDWIRE_USD,
    amount = '100.00',
  ): Promise<{ key: LoadedKey; record: WithdrawalRecord }> {
    const key = await newKey();
    await fund(key, input.currency, '1000');
    const wac = await account(key, input);
    const record = await withdraw(key, {
      withdrawalAccountId: wac.id,
      withdrawalAmount: amount,
      currency: input.currency,
      metadata: { k: 'v' },
    });
    return { key, record };
  }

  it('sandbox complete (FEDWIRE): PENDING -> PROCESSING -> COMPLETED, imad and omad, the hold paid out to the rail', async () => {
    const { key, record } = await pending();
    const response = await sandboxDrive(key, record.id, 'complete');
    expect(response.status, response.text).toBe(200);
    const done = expectRecordShape(withdrawalOf(response));
    expect(done).toMatchObject({
      id: record.id,
      status: 'COMPLETED',
      metadata: { k: 'v' },
      transactionHash: null,
      failureReason: null,
      createdAt: record.createdAt,
    });
    expect(Object.keys(done.paymentDetails)).toEqual(['FEDWIRE']);
    expect(Object.keys(done.paymentDetails.FEDWIRE!)).toEqual(['imad', 'omad']);
    expect(done.paymentDetails.FEDWIRE!.imad).toMatch(IMAD);
    expect(done.paymentDetails.FEDWIRE!.omad).toMatch(OMAD);
    expect(done.completedAt).toMatch(ISO_MS);
    expect(done.estimatedCompletionAt).toMatch(ISO_MS);
    expect(await ledger(key)).toEqual({ 'client:USD': '900', 'rail_in_transit:USD': '-900' });

    const history = await events(record.id);
    expect(history.map((event) => event.eventType)).toEqual([
      'withdrawal.pending',
      'withdrawal.processing',
      'withdrawal.completed',
    ]);
    for (const event of history) {
      expect(event.type).toBe('withdrawals');
      expectRecordShape(event.data, false);
    }
    expect(history[1]!.data).toMatchObject({ status: 'PROCESSING', paymentDetails: {}, completedAt: null });
    expect(history[2]!.data).toEqual(done);
    expect(withdrawalOf(await harness.signed({ key, path: `${WITHDRAWALS}/${record.id}` }))).toEqual(done);

    // Final: completing or failing again is an illegal transition.
    expectV3Error(await sandboxDrive(key, record.id, 'complete'), 'WITHDRAWAL_INVALID_STATE_TRANSITION', {
      details: { withdrawalId: record.id, status: 'COMPLETED', requestedStatus: 'COMPLETED' },
    });
    expectV3Error(await sandboxDrive(key, record.id, 'fail'), 'WITHDRAWAL_INVALID_STATE_TRANSITION', {
      details: { withdrawalId: record.id, status: 'COMPLETED', requestedStatus: 'FAILED' },
    });
    expect(await events(record.id)).toHaveLength(3);
  });

  it('sandbox complete (SWIFT): a UETR; (stablecoin): a transaction hash and no paymentDetails', async () => {
    const swift = await pending(SWIFT_GBP);
    const swiftDone = withdrawalOf(await sandboxDrive(swift.key, swift.record.id, 'complete'));
    expect(swiftDone.paymentDetails).toEqual({
      SWIFT: { uetr: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/) },
    });

    const coin = await pending(USDC_ETHEREUM, '12.345678');
    const coinDone = expectRecordShape(withdrawalOf(await sandboxDrive(coin.key, coin.record.id, 'complete')));
    expect(coinDone).toMatchObject({
      status: 'COMPLETED',
      network: 'ETHEREUM',
      withdrawalAmount: '12.345678',
      paymentDetails: {},
    });
    expect(coinDone.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await ledger(coin.key)).toEqual({ 'client:USDC': '987.654322', 'rail_in_transit:USDC': '-987.654322' });
  });

  it('sandbox fail: PENDING -> FAILED, the hold released, the reason recorded; then final', async () => {
    const { key, record } = await pending();
    const response = await sandboxDrive(key, record.id, 'fail', { failureReason: 'Beneficiary bank closed' });
    expect(response.status, response.text).toBe(200);
    const failed = expectRecordShape(withdrawalOf(response));
    expect(failed).toMatchObject({
      status: 'FAILED',
      failureReason: 'Beneficiary bank closed',
      completedAt: null,
      paymentDetails: {},
    });
    expect(await ledger(key)).toEqual({ 'client:USD': '1000', 'rail_in_transit:USD': '-1000' });
    expect((await events(record.id)).map((event) => event.eventType)).toEqual([
      'withdrawal.pending',
      'withdrawal.failed',
    ]);
    expectV3Error(await sandboxDrive(key, record.id, 'complete'), 'WITHDRAWAL_INVALID_STATE_TRANSITION', {
      details: { withdrawalId: record.id, status: 'FAILED', requestedStatus: 'COMPLETED' },
    });

    // With no body, the default reason.
    const second = await pending();
    const defaulted = withdrawalOf(await sandboxDrive(second.key, second.record.id, 'fail'));
    expect(defaulted.failureReason).toMatch(/sandbox/);
  });

  it('PROCESSING -> FAILED releases the hold; PROCESSING -> CANCELLED is refused', async () => {
    const { key, record } = await pending();
    const principal = principalOf(key);
    const processing = await transitionWithdrawal(context(), principal, record.id, 'PROCESSING', {
      estimatedCompletionAt: new Date(Date.now() + 1000),
    });
    expect(processing.status).toBe('PROCESSING');
    await expect(transitionWithdrawal(context(), principal, record.id, 'CANCELLED')).rejects.toMatchObject({
      code: 'WITHDRAWAL_INVALID_STATE_TRANSITION',
      details: { withdrawalId: record.id, status: 'PROCESSING', requestedStatus: 'CANCELLED' },
    });
    expect(await ledger(key)).toEqual({
      'client:USD': '900',
      'rail_in_transit:USD': '-1000',
      'withdrawal_hold:USD': '100',
    });
    const failed = await transitionWithdrawal(context(), principal, record.id, 'FAILED', {
      failureReason: 'rail said no',
    });
    expect(failed).toMatchObject({ status: 'FAILED', failure_reason: 'rail said no' });
    expect(await ledger(key)).toEqual({ 'client:USD': '1000', 'rail_in_transit:USD': '-1000' });
  });

  it('PENDING -> CANCELLED releases the hold; nothing leaves CANCELLED', async () => {
    const { key, record } = await pending();
    const principal = principalOf(key);
    const cancelled = await transitionWithdrawal(context(), principal, record.id, 'CANCELLED');
    expect(cancelled.status).toBe('CANCELLED');
    expect(cancelled.failure_reason).toEqual(expect.any(String));
    expect(await ledger(key)).toEqual({ 'client:USD': '1000', 'rail_in_transit:USD': '-1000' });
    expect((await events(record.id)).map((event) => event.eventType)).toEqual([
      'withdrawal.pending',
      'withdrawal.cancelled',
    ]);
    for (const to of ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const) {
      const error = await transitionWithdrawal(context(), principal, record.id, to).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        code: 'WITHDRAWAL_INVALID_STATE_TRANSITION',
        details: { status: 'CANCELLED', requestedStatus: to },
      });
    }
    // PENDING -> COMPLETED skips the rail: refused too.
    const other = await pending();
    await expect(
      transitionWithdrawal(context(), principalOf(other.key), other.record.id, 'COMPLETED'),
    ).rejects.toMatchObject({
      details: { status: 'PENDING', requestedStatus: 'COMPLETED' },
    });
  });

  it('the sandbox drivers: 404 for an unknown id, 403 SANDBOX_MODE_REQUIRED in the live book', async () => {
    const key = await newKey();
    expectV3Error(await sandboxDrive(key, newId('withdrawal'), 'complete'), 'WITHDRAWAL_NOT_FOUND', { details: {} });
    expectV3Error(await sandboxDrive(key, 'wtd_nope', 'fail'), 'WITHDRAWAL_NOT_FOUND', { details: {} });
    const live = await newKey('live');
    expectV3Error(await sandboxDrive(live, newId('withdrawal'), 'complete'), 'SANDBOX_MODE_REQUIRED');
    expectV3Error(await sandboxDrive(live, newId('withdrawal'), 'fail'), 'SANDBOX_MODE_REQUIRED');
  });
});

describe('GET /v3/fx/balances shows holds', () => {
  it('amount = client + held, withdrawableAmount = what is not held; completion takes it out, failure gives it back', async () => {
    const key = await newKey();
    await fund(key, 'USD', '1000');
    const wac = await account(key);
    const balance = async () => {
      const response = await harness.signed({ key, path: '/v3/fx/balances' });
      const usd = response
        .json<{ data: Array<Record<string, string>> }>()
        .data.find((record) => record.currency === 'USD')!;
      return {
        amount: usd.amount,
        withdrawableAmount: usd.withdrawableAmount,
        usdValue: usd.usdValue,
        withdrawableUsdValue: usd.withdrawableUsdValue,
      };
    };
    const first = await withdraw(key, { withdrawalAccountId: wac.id, withdrawalAmount: '600', currency: 'USD' });
    expect(await balance()).toEqual({
      amount: '1000.00',
      withdrawableAmount: '400.00',
      usdValue: '1000.00',
      withdrawableUsdValue: '400.00',
    });
    const second = await withdraw(key, { withdrawalAccountId: wac.id, withdrawalAmount: '100', currency: 'USD' });
    expect(await balance()).toMatchObject({ amount: '1000.00', withdrawableAmount: '300.00' });
    await sandboxDrive(key, first.id, 'complete');
    expect(await balance()).toMatchObject({ amount: '400.00', withdrawableAmount: '300.00' });
    await sandboxDrive(key, second.id, 'fail');
    expect(await balance()).toMatchObject({ amount: '400.00', withdrawableAmount: '400.00' });
  });
});

describe('GET /v3/fx/withdrawals and /v3/fx/withdrawals/{id}', () => {
  it('404 WITHDRAWAL_NOT_FOUND without details for an unknown, malformed or foreign id', async () => {
    const key = await newKey();
    await fund(key, 'USD', '10');
    const wac = await account(key);
    const mine = await withdraw(key, { withdrawalAccountId: wac.id, withdrawalAmount: '1', currency: 'USD' });
    for (const id of [newId('withdrawal'), 'wtd_123', 'x']) {
      expectV3Error(await harness.signed({ key, path: `${WITHDRAWALS}/${id}` }), 'WITHDRAWAL_NOT_FOUND', {
        details: {},
      });
    }
    const other = await newKey();
    expectV3Error(await harness.signed({ key: other, path: `${WITHDRAWALS}/${mine.id}` }), 'WITHDRAWAL_NOT_FOUND', {
      details: {},
    });
  });

  it('lists newest first with cursors, filtered by status and currency', async () => {
    const key = await newKey();
    await fund(key, 'USD', '100');
    await fund(key, 'USDC', '100');
    const usd = await account(key);
    const usdc = await account(key, USDC_ETHEREUM);
    const made: WithdrawalRecord[] = [];
    for (let i = 0; i < 5; i += 1) {
      made.push(
        await withdraw(
          key,
          i % 2 === 0
            ? { withdrawalAccountId: usd.id, withdrawalAmount: `${i + 1}`, currency: 'USD' }
            : { withdrawalAccountId: usdc.id, withdrawalAmount: `${i + 1}`, currency: 'USDC' },
        ),
      );
    }
    await sandboxDrive(key, made[0]!.id, 'complete');
    const list = async (query: string) => {
      const response = await harness.signed({ key, path: `${WITHDRAWALS}${query}` });
      expect(response.status, response.text).toBe(200);
      return response.json<{
        data: WithdrawalRecord[];
        pagination: { hasNext: boolean; hasPrev: boolean; nextCursor: string | null; prevCursor: string | null };
      }>();
    };
    const all = await list('');
    expect(all.data.map((record) => record.id)).toEqual(made.map((record) => record.id).reverse());
    expect(all.pagination).toEqual({ hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null });
    for (const record of all.data) expectRecordShape(record);

    const page1 = await list('?limit=2');
    expect(page1.data.map((record) => record.id)).toEqual([made[4]!.id, made[3]!.id]);
    expect(page1.pagination.hasNext).toBe(true);
    const page2 = await list(`?limit=2&startingAfter=${encodeURIComponent(page1.pagination.nextCursor!)}`);
    expect(page2.data.map((record) => record.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(page2.pagination.hasPrev).toBe(true);

    expect((await list('?currency=USDC')).data.map((record) => record.id)).toEqual([made[3]!.id, made[1]!.id]);
    expect((await list('?status=COMPLETED')).data.map((record) => record.id)).toEqual([made[0]!.id]);
    expect((await list('?status=PENDING&currency=USD')).data.map((record) => record.id)).toEqual([
      made[4]!.id,
      made[2]!.id,
    ]);
    expectV3Error(await harness.signed({ key, path: `${WITHDRAWALS}?status=DONE` }), 'VALIDATION_QUERY_FAILED');
    // Another org sees none of them.
    expect((await harness.signed({ key: await newKey(), path: WITHDRAWALS })).json<{ data: unknown[] }>().data).toEqual(
      [],
    );
  });
});

describe('the live withdrawal processor over the simulated rail', () => {
  it('submits PENDING (-> PROCESSING with an estimate), completes once the delay passed; never touches sandbox withdrawals', async () => {
    const live = await newKey('live');
    await fund(live, 'USD', '500');
    const wac = await account(live);
    const record = await withdraw(live, { withdrawalAccountId: wac.id, withdrawalAmount: '200', currency: 'USD' });
    const sandbox = await newKey();
    await fund(sandbox, 'USD', '500');
    const sandboxRecord = await withdraw(sandbox, {
      withdrawalAccountId: (await account(sandbox)).id,
      withdrawalAmount: '200',
      currency: 'USD',
    });

    const processor = createWithdrawalProcessor(context(), new SimulatedPaymentRail({ delayMs: 2000 }));
    const get = async (key: LoadedKey, id: string) =>
      withdrawalOf(await harness.signed({ key, path: `${WITHDRAWALS}/${id}` }));
    // Other tests' live withdrawals may be claimed too; only this one's state is asserted.
    const submittedFrom = now().getTime();
    await processor.runOnce();
    const submittedBy = now().getTime();
    const processing = await get(live, record.id);
    expect(processing).toMatchObject({ status: 'PROCESSING', paymentDetails: {}, completedAt: null });
    const estimate = Date.parse(processing.estimatedCompletionAt!);
    expect(estimate).toBeGreaterThanOrEqual(submittedFrom + 2000);
    expect(estimate).toBeLessThanOrEqual(submittedBy + 2000);
    await processor.runOnce();
    expect((await get(live, record.id)).status).toBe('PROCESSING');

    clockOffsetMs += 2000;
    await processor.runOnce();
    const done = expectRecordShape(await get(live, record.id));
    expect(done.status).toBe('COMPLETED');
    expect(done.paymentDetails.FEDWIRE!.imad).toMatch(IMAD);
    expect(await ledger(live)).toEqual({ 'client:USD': '300', 'rail_in_transit:USD': '-300' });
    expect((await events(record.id)).map((event) => event.eventType)).toEqual([
      'withdrawal.pending',
      'withdrawal.processing',
      'withdrawal.completed',
    ]);
    expect((await get(sandbox, sandboxRecord.id)).status).toBe('PENDING');
  });

  it('with failure rate 1 every payment fails and the hold comes back; with no delay a round takes a withdrawal to its end', async () => {
    const live = await newKey('live');
    await fund(live, 'USDC', '50');
    const wac = await account(live, USDC_ETHEREUM);
    const record = await withdraw(live, { withdrawalAccountId: wac.id, withdrawalAmount: '20', currency: 'USDC' });
    await createWithdrawalProcessor(context(), new SimulatedPaymentRail({ delayMs: 0, failureRate: 1 })).runOnce();
    const failed = withdrawalOf(await harness.signed({ key: live, path: `${WITHDRAWALS}/${record.id}` }));
    expect(failed).toMatchObject({ status: 'FAILED', failureReason: SIMULATED_FAILURE_REASON });
    // The hash of the broadcast transaction stays on record.
    expect(failed.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await ledger(live)).toEqual({ 'client:USDC': '50', 'rail_in_transit:USDC': '-50' });
  });

  it('a step that fails midway is rolled back whole and retried on the next round', async () => {
    const live = await newKey('live');
    await fund(live, 'USD', '100');
    const wac = await account(live);
    const record = await withdraw(live, { withdrawalAccountId: wac.id, withdrawalAmount: '30', currency: 'USD' });
    const processor = createWithdrawalProcessor(context(), new SimulatedPaymentRail({ delayMs: 0 }));
    const status = async () =>
      withdrawalOf(await harness.signed({ key: live, path: `${WITHDRAWALS}/${record.id}` })).status;

    // Submission fails after its status update: nothing of it stays.
    armFailpoint('withdrawal.transition-after-update');
    await processor.runOnce();
    expect(await status()).toBe('PENDING');
    expect((await events(record.id)).map((event) => event.eventType)).toEqual(['withdrawal.pending']);

    // Submitted, then completion fails after its ledger movement: PROCESSING, the hold intact.
    armFailpoint('withdrawal.transition-after-ledger');
    await processor.runOnce();
    expect(await status()).toBe('PROCESSING');
    expect(await ledger(live)).toEqual({
      'client:USD': '70',
      'rail_in_transit:USD': '-100',
      'withdrawal_hold:USD': '30',
    });

    await processor.runOnce();
    expect(await status()).toBe('COMPLETED');
    expect((await events(record.id)).map((event) => event.eventType)).toEqual([
      'withdrawal.pending',
      'withdrawal.processing',
      'withdrawal.completed',
    ]);
    expect(await ledger(live)).toEqual({ 'client:USD': '70', 'rail_in_transit:USD': '-70' });
  });

  it('two processors at once move each withdrawal once', async () => {
    const live = await newKey('live');
    await fund(live, 'USD', '100');
    const wac = await account(live);
    const records = await Promise.all(
      Array.from({ length: 10 }, () =>
        withdraw(live, { withdrawalAccountId: wac.id, withdrawalAmount: '10', currency: 'USD' }),
      ),
    );
    const rail = new SimulatedPaymentRail({ delayMs: 0 });
    await Promise.all([
      createWithdrawalProcessor(context(), rail).runOnce(),
      createWithdrawalProcessor(context(), rail).runOnce(),
    ]);
    for (const record of records) {
      expect((await events(record.id)).map((event) => event.eventType)).toEqual([
        'withdrawal.pending',
        'withdrawal.processing',
        'withdrawal.completed',
      ]);
    }
    // All 100 USD funded went out: every account is back to 0.
    expect(await ledger(live)).toEqual({});
  });
});

describe('the simulated rail artefacts', () => {
  it('formats IMAD and OMAD as Fedwire does, and hashes per chain', () => {
    const ids = fedwireMessageIds(new Date('2025-03-04T05:06:07.000Z'));
    expect(ids.imad).toMatch(/^20250304[A-Z0-9]{8}\d{6}$/);
    expect(ids.omad).toMatch(/^20250304[A-Z0-9]{8}\d{6}03040506[A-Z0-9]{4}$/);
    expect(simulatedTransactionHash('ETHEREUM')).toMatch(/^0x[0-9a-f]{64}$/);
    expect(simulatedTransactionHash('TRON')).toMatch(/^[0-9a-f]{64}$/);
    expect(simulatedTransactionHash('SOLANA')).toMatch(/^[1-9A-HJ-NP-Za-km-z]{80,88}$/);
  });
});
