/**
 * Withdrawal accounts end to end: POST /v3/fx/withdrawal-accounts (FEDWIRE, SWIFT, stablecoin),
 * every schema, reference-data and checksum refusal with published vectors, idempotent replay
 * and mismatch (also with the idempotency store's record lost), the list and its filters, 404s
 * across orgs and books, and the sandbox-only verify and update endpoints.
 */
import { createHash, randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  accountChecksumFailure,
  createWithdrawalAccount,
  findWithdrawalAccount,
  updateWithdrawalAccount,
  verifyWithdrawalAccount,
  type WithdrawalAccountCreateInput,
} from '../../../src/core/money-movement/withdrawal-accounts.js';
import type { Principal } from '../../../src/core/principal.js';
import { referenceData } from '../../../src/core/trading/reference-data.js';
import { ApiError } from '../../../src/lib/errors/api-error.js';
import { newId } from '../../../src/lib/ids.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

interface AccountRecord {
  object: 'withdrawal_account';
  id: string;
  currency: string;
  assetType: string;
  accountName: string;
  status: string;
  verified: boolean;
  withdrawalsEnabled: boolean;
  transferType: string | null;
  bankName: string | null;
  accountNumber: string | null;
  routingNumber: string | null;
  swiftCode: string | null;
  memo: string | null;
  network: string | null;
  address: string | null;
  comments: string | null;
  creatorId: string;
  createdAt: string;
  updatedAt: string;
}

const RECORD_FIELDS = [
  'object',
  'id',
  'currency',
  'assetType',
  'accountName',
  'status',
  'verified',
  'withdrawalsEnabled',
  'transferType',
  'bankName',
  'accountNumber',
  'routingNumber',
  'swiftCode',
  'memo',
  'network',
  'address',
  'comments',
  'creatorId',
  'createdAt',
  'updatedAt',
].sort();

const ACCOUNTS = '/v3/fx/withdrawal-accounts';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// Published vectors. EIP-55: the test vectors of the EIP. TRON: the USDT TRC-20 contract
// address. ABA: JPMorgan Chase's routing number. IBAN: the examples of the IBAN registry (GB)
// and of the ECBS/Wikipedia (DE). BIC: Deutsche Bank Frankfurt. Solana: the USDC mint.
const EIP55 = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const EIP55_CASE_BROKEN = '0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const TRON_USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const SOLANA_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const ABA = '021000021';
const IBAN_GB = 'GB82WEST12345698765432';
const IBAN_DE = 'DE89370400440532013000';
const BIC = 'DEUTDEFF';

const fedwire = (extra: Record<string, unknown> = {}) => ({
  currency: 'USD',
  assetType: 'FIAT',
  accountName: 'Acme Treasury',
  transferType: 'FEDWIRE',
  bankName: 'JPMorgan Chase',
  accountNumber: '000123456789',
  routingNumber: ABA,
  ...extra,
});
const swift = (extra: Record<string, unknown> = {}) => ({
  currency: 'EUR',
  assetType: 'FIAT',
  accountName: 'Acme GmbH',
  transferType: 'SWIFT',
  bankName: 'Deutsche Bank',
  accountNumber: IBAN_DE,
  swiftCode: BIC,
  ...extra,
});
const stablecoin = (extra: Record<string, unknown> = {}) => ({
  currency: 'USDC',
  assetType: 'STABLECOIN',
  accountName: 'Acme hot wallet',
  network: 'ETHEREUM',
  address: EIP55,
  ...extra,
});

let frozenAt: Date | null = null;
let harness: V3Harness;

beforeAll(async () => {
  harness = await V3Harness.start({
    now: () => frozenAt ?? new Date(),
    core: { rateLimits: { reads: 100_000, writes: 100_000 } },
  });
});
afterAll(async () => harness?.close());

function post(key: LoadedKey, path: string, body: unknown, idempotencyKey: string | null = randomUUID()) {
  return harness.signed({
    key,
    method: 'POST',
    path,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    idempotencyKey: idempotencyKey ?? undefined,
  });
}

async function created(key: LoadedKey, body: Record<string, unknown>): Promise<AccountRecord> {
  const response = await post(key, ACCOUNTS, body);
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: AccountRecord }>().data;
}

const get = (key: LoadedKey, path: string) => harness.signed({ key, path });

async function list(key: LoadedKey, query = ''): Promise<AccountRecord[]> {
  const response = await get(key, `${ACCOUNTS}${query}`);
  expect(response.status, response.text).toBe(200);
  const body = response.json<{ data: AccountRecord[] }>();
  expect(Object.keys(body)).toEqual(['data']);
  return body.data;
}

async function accountCount(orgId: string): Promise<number> {
  const { rows } = await harness.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM withdrawal_accounts WHERE org_id = $1',
    [orgId],
  );
  return Number(rows[0]!.n);
}

/** Expects the refusal and proves no account was written by it. */
async function expectRefused(
  key: LoadedKey,
  body: unknown,
  code: Parameters<typeof expectV3Error>[1],
  details?: Record<string, unknown>,
) {
  const before = await accountCount(key.file.orgId);
  const error = expectV3Error(await post(key, ACCOUNTS, body), code, details === undefined ? {} : { details });
  expect(await accountCount(key.file.orgId)).toBe(before);
  return error;
}

const issuesOf = (error: { details: Record<string, unknown> }) =>
  error.details.issues as { path: string; code: string; message: string }[];
const pathsOf = (error: { details: Record<string, unknown> }) => issuesOf(error).map((issue) => issue.path);

function actorIdOf(key: LoadedKey): string {
  return `usr_${key.file.name.split('/').at(-1)!.replaceAll('-', '')}`;
}

function fingerprintOf(body: string): string {
  return `sha256:${createHash('sha256').update(`POST\n${ACCOUNTS}\n`).update(body).digest('hex')}`;
}

describe('POST /v3/fx/withdrawal-accounts', () => {
  let key: LoadedKey;
  beforeAll(async () => {
    key = await harness.createKey();
  });

  it('registers a FEDWIRE account: every field of the record, PENDING_VERIFICATION and unverified', async () => {
    frozenAt = new Date('2025-03-04T05:06:07.089Z');
    try {
      const response = await post(key, ACCOUNTS, fedwire({ memo: 'invoice 42', comments: 'main USD account' }));
      expect(response.status, response.text).toBe(200);
      expect(response.headers['idempotency-replayed']).toBe('false');
      const body = response.json<{ data: AccountRecord }>();
      expect(Object.keys(body)).toEqual(['data']);
      expect(Object.keys(body.data).sort()).toEqual(RECORD_FIELDS);
      expect(body.data).toEqual({
        object: 'withdrawal_account',
        id: expect.stringMatching(/^wac_[0-9a-f]{32}$/) as string,
        currency: 'USD',
        assetType: 'FIAT',
        accountName: 'Acme Treasury',
        status: 'PENDING_VERIFICATION',
        verified: false,
        withdrawalsEnabled: true,
        transferType: 'FEDWIRE',
        bankName: 'JPMorgan Chase',
        // In full, as the v1 account shows it.
        accountNumber: '000123456789',
        routingNumber: ABA,
        swiftCode: null,
        memo: 'invoice 42',
        network: null,
        address: null,
        comments: 'main USD account',
        creatorId: actorIdOf(key),
        createdAt: '2025-03-04T05:06:07.089Z',
        updatedAt: '2025-03-04T05:06:07.089Z',
      });
      const fetched = await get(key, `${ACCOUNTS}/${body.data.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.json<{ data: AccountRecord }>().data).toEqual(body.data);
    } finally {
      frozenAt = null;
    }
  });

  it('registers a SWIFT account with an IBAN, stored in electronic form, and a BIC in upper case', async () => {
    const account = await created(
      key,
      swift({ accountNumber: ' gb82 west 1234 5698 7654 32 ', swiftCode: ' deutdeff500 ', currency: 'GBP' }),
    );
    expect(account).toMatchObject({
      assetType: 'FIAT',
      transferType: 'SWIFT',
      accountNumber: IBAN_GB,
      swiftCode: 'DEUTDEFF500',
      routingNumber: null,
      memo: null,
      comments: null,
      network: null,
      address: null,
    });
    expect((await created(key, swift())).accountNumber).toBe(IBAN_DE);
  });

  it('registers a SWIFT account with a plain (non-IBAN) account number', async () => {
    const account = await created(key, swift({ currency: 'USD', accountNumber: '1234567890' }));
    expect(account).toMatchObject({ accountNumber: '1234567890', swiftCode: BIC });
  });

  it.each([
    ['USDC', 'ETHEREUM', EIP55],
    ['USDC', 'POLYGON', EIP55],
    ['EURC', 'BASE', EIP55],
    ['USDT', 'TRON', TRON_USDT],
    ['USDC', 'SOLANA', SOLANA_USDC],
    // No hex letters, so no case to check: valid as it is.
    ['USDT', 'ETHEREUM', '0x1234567890123456789012345678901234567890'],
  ])('registers a %s account on %s', async (currency, network, address) => {
    const account = await created(key, stablecoin({ currency, network, address }));
    expect(account).toMatchObject({
      currency,
      assetType: 'STABLECOIN',
      network,
      address,
      transferType: null,
      bankName: null,
      accountNumber: null,
      routingNumber: null,
      swiftCode: null,
      memo: null,
      status: 'PENDING_VERIFICATION',
      verified: false,
      withdrawalsEnabled: true,
    });
    expect(account.createdAt).toMatch(ISO_MS);
  });

  it('registers an account in a currency whose withdrawals are off (JPY): that is refused at withdrawal time', async () => {
    const account = await created(key, swift({ currency: 'JPY', accountNumber: '9876543' }));
    expect(account.currency).toBe('JPY');
  });

  describe('400 VALIDATION_BODY_FAILED: the shape', () => {
    it.each([
      ['no assetType', { currency: 'USD', accountName: 'x' }, ['assetType']],
      ['an unknown assetType', fedwire({ assetType: 'CRYPTO' }), ['assetType']],
      ['FIAT without transferType', fedwire({ transferType: undefined }), ['transferType']],
      ['an unknown transferType', fedwire({ transferType: 'ACH' }), ['transferType']],
      ['FEDWIRE without routingNumber', fedwire({ routingNumber: undefined }), ['routingNumber']],
      ['FEDWIRE with a swiftCode', fedwire({ swiftCode: BIC }), ['swiftCode']],
      ['FEDWIRE with a network', fedwire({ network: 'ETHEREUM' }), ['network']],
      ['FEDWIRE with a non-numeric account number', fedwire({ accountNumber: '12AB3456' }), ['accountNumber']],
      ['FEDWIRE with a too long account number', fedwire({ accountNumber: '1'.repeat(18) }), ['accountNumber']],
      ['FEDWIRE without bankName', fedwire({ bankName: undefined }), ['bankName']],
      ['SWIFT without swiftCode', swift({ swiftCode: undefined }), ['swiftCode']],
      ['SWIFT with a routingNumber', swift({ routingNumber: ABA }), ['routingNumber']],
      ['SWIFT with punctuation in the account number', swift({ accountNumber: '12/34' }), ['accountNumber']],
      ['STABLECOIN without address', stablecoin({ address: undefined }), ['address']],
      ['STABLECOIN with a bankName', stablecoin({ bankName: 'x' }), ['bankName']],
      ['STABLECOIN on an unknown network', stablecoin({ network: 'BITCOIN' }), ['network']],
      ['a lower-case currency', fedwire({ currency: 'usd' }), ['currency']],
      ['an empty accountName', fedwire({ accountName: '   ' }), ['accountName']],
      ['an unknown field', fedwire({ nickname: 'x' }), ['nickname']],
      ['a number for a string', fedwire({ accountName: 7 }), ['accountName']],
      ['a too long memo', fedwire({ memo: 'm'.repeat(141) }), ['memo']],
    ])('%s', async (_name, body, paths) => {
      expect(pathsOf(await expectRefused(key, body, 'VALIDATION_BODY_FAILED'))).toEqual(paths);
    });

    it('refuses malformed JSON and a body that is not an object', async () => {
      expect(issuesOf(await expectRefused(key, '{"currency":', 'VALIDATION_BODY_FAILED'))[0]!.code).toBe(
        'invalid_json',
      );
      expect(pathsOf(await expectRefused(key, '[]', 'VALIDATION_BODY_FAILED'))).toEqual(['']);
    });
  });

  describe('400 VALIDATION_BODY_FAILED: reference data', () => {
    it.each([
      ['an unknown currency', fedwire({ currency: 'XYZ' }), 'currency', 'unknown_currency'],
      ['a fiat account in a stablecoin', fedwire({ currency: 'USDC' }), 'assetType', 'asset_type_mismatch'],
      ['a stablecoin account in a fiat currency', stablecoin({ currency: 'USD' }), 'assetType', 'asset_type_mismatch'],
      ['USDC on TRON', stablecoin({ network: 'TRON', address: TRON_USDT }), 'network', 'network_not_supported'],
      ['EURC on POLYGON', stablecoin({ currency: 'EURC', network: 'POLYGON' }), 'network', 'network_not_supported'],
      ['USDT on BASE', stablecoin({ currency: 'USDT', network: 'BASE' }), 'network', 'network_not_supported'],
    ])('%s', async (_name, body, path, code) => {
      const issues = issuesOf(await expectRefused(key, body, 'VALIDATION_BODY_FAILED'));
      expect(issues.map(({ path, code }) => ({ path, code }))).toEqual([{ path, code }]);
    });

    it('comes before the checksum: an unknown currency with a bad routing number is a 400', async () => {
      expect(
        pathsOf(
          await expectRefused(key, fedwire({ currency: 'XYZ', routingNumber: '021000022' }), 'VALIDATION_BODY_FAILED'),
        ),
      ).toEqual(['currency']);
    });
  });

  describe('422 WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', () => {
    it.each([
      ['an EIP-55 address with one letter re-cased', 'USDC', 'ETHEREUM', EIP55_CASE_BROKEN],
      ['an all lower-case EVM address that has letters', 'USDC', 'ETHEREUM', EIP55.toLowerCase()],
      ['an all upper-case EVM address', 'USDC', 'POLYGON', `0x${EIP55.slice(2).toUpperCase()}`],
      ['a case-broken address on BASE', 'EURC', 'BASE', EIP55_CASE_BROKEN],
      ['an EVM address one digit short', 'USDC', 'ETHEREUM', EIP55.slice(0, -1)],
      ['a TRON address with one character changed', 'USDT', 'TRON', `${TRON_USDT.slice(0, -1)}7`],
      ['an EVM address on TRON', 'USDT', 'TRON', EIP55],
      ['a TRON address on SOLANA', 'USDT', 'SOLANA', TRON_USDT],
      ['a non-base58 SOLANA address', 'USDC', 'SOLANA', `0${SOLANA_USDC.slice(1)}`],
    ])('%s', async (_name, currency, network, address) => {
      await expectRefused(key, stablecoin({ currency, network, address }), 'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', {
        address,
        network,
      });
    });

    it.each([
      ['a routing number with a wrong check digit', '021000022'],
      ['a routing number with two digits swapped', '201000021'],
      ['a routing number of 8 digits', '02100002'],
      ['a routing number with a letter', '02100002A'],
      ['the all-zero routing number', '000000000'],
    ])('FEDWIRE: %s', async (_name, routingNumber) => {
      await expectRefused(key, fedwire({ routingNumber }), 'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', {
        address: routingNumber,
        network: 'FEDWIRE',
      });
    });

    it.each([
      ['a GB IBAN with its last digit changed', 'GB82WEST12345698765431', 'GB82WEST12345698765431'],
      ['a DE IBAN with its check digits changed', 'DE88370400440532013000', 'DE88370400440532013000'],
      ['a DE IBAN one digit short', 'DE8937040044053201300', 'DE8937040044053201300'],
      [
        'a printed IBAN with a typo, reported in electronic form',
        'de89 3704 0044 0532 0130 01',
        'DE89370400440532013001',
      ],
    ])('SWIFT: %s', async (_name, accountNumber, reported) => {
      await expectRefused(key, swift({ accountNumber }), 'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', {
        address: reported,
        network: 'SWIFT',
      });
    });

    it.each([
      ['a BIC of 6 characters', 'DEUTDE', 'DEUTDE'],
      ['a BIC with a digit in the institution code', 'D3UTDEFF', 'D3UTDEFF'],
      ['a BIC of 9 characters', 'DEUTDEFF5', 'DEUTDEFF5'],
      ['a BIC with an inner space', 'DEUT DEFF', 'DEUT DEFF'],
    ])('SWIFT: %s', async (_name, swiftCode, reported) => {
      await expectRefused(key, swift({ swiftCode }), 'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', {
        address: reported,
        network: 'SWIFT',
      });
    });

    it('SWIFT: checks the BIC before the IBAN', async () => {
      await expectRefused(
        key,
        swift({ swiftCode: 'DEUTDE', accountNumber: 'DE88370400440532013000' }),
        'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED',
        {
          address: 'DEUTDE',
          network: 'SWIFT',
        },
      );
    });
  });

  describe('idempotency', () => {
    it('replays the same account for the same key and body, without a second row', async () => {
      const org = await harness.createKey();
      const body = JSON.stringify(stablecoin());
      const idem = randomUUID();
      const first = await post(org, ACCOUNTS, body, idem);
      expect(first.status, first.text).toBe(200);
      const second = await post(org, ACCOUNTS, body, idem);
      expect(second.status).toBe(200);
      expect(second.headers['idempotency-replayed']).toBe('true');
      expect(second.text).toBe(first.text);
      expect(await accountCount(org.file.orgId)).toBe(1);
    });

    it('422 IDEMPOTENCY_MISMATCH for the same key with another body', async () => {
      const org = await harness.createKey();
      const body = JSON.stringify(fedwire());
      const idem = randomUUID();
      expect((await post(org, ACCOUNTS, body, idem)).status).toBe(200);
      expectV3Error(await post(org, ACCOUNTS, fedwire({ accountName: 'other' }), idem), 'IDEMPOTENCY_MISMATCH', {
        details: { originalRequestHash: fingerprintOf(body) },
      });
      expect(await accountCount(org.file.orgId)).toBe(1);
    });

    it('428 IDEMPOTENCY_KEY_MISSING without a key', async () => {
      const before = await accountCount(key.file.orgId);
      expectV3Error(await post(key, ACCOUNTS, fedwire(), null), 'IDEMPOTENCY_KEY_MISSING', {
        details: { endpoint: `POST ${ACCOUNTS}` },
      });
      expect(await accountCount(key.file.orgId)).toBe(before);
    });

    it('holds by the unique key when the store has lost the record: replay, mismatch, and racing attempts make one account', async () => {
      const org = await harness.createKey();
      const principal: Principal = {
        orgId: org.file.orgId,
        environment: 'sandbox',
        keyName: org.file.name,
        scopes: ['withdraw'],
      };
      const context = { db: harness.db, reference: referenceData(harness.db), now: () => new Date() };
      const input = {
        currency: 'USDT',
        assetType: 'STABLECOIN',
        accountName: 'race',
        network: 'TRON',
        address: TRON_USDT,
      } as WithdrawalAccountCreateInput;
      const idempotency = { key: randomUUID(), fingerprint: `sha256:${'a'.repeat(64)}` };

      const raced = await Promise.all(
        Array.from({ length: 8 }, () => createWithdrawalAccount(context, principal, input, idempotency)),
      );
      expect(new Set(raced.map((row) => row.id)).size).toBe(1);
      expect(await accountCount(org.file.orgId)).toBe(1);

      const again = await createWithdrawalAccount(context, principal, input, idempotency);
      expect(again.id).toBe(raced[0]!.id);
      const mismatch = await createWithdrawalAccount(context, principal, input, {
        ...idempotency,
        fingerprint: `sha256:${'b'.repeat(64)}`,
      }).catch((error: unknown) => error);
      expect(mismatch).toBeInstanceOf(ApiError);
      expect(mismatch).toMatchObject({
        code: 'IDEMPOTENCY_MISMATCH',
        details: { originalRequestHash: idempotency.fingerprint },
      });
      expect(await accountCount(org.file.orgId)).toBe(1);
    });
  });

  it('403 AUTH_INSUFFICIENT_SCOPE without the withdraw scope', async () => {
    const viewer = await harness.createKey({ scopes: ['view', 'trade'] });
    await expectRefused(viewer, fedwire(), 'AUTH_INSUFFICIENT_SCOPE', { requiredScope: 'withdraw' });
  });

  it('registers in the live book too, separately from the sandbox', async () => {
    const sandbox = await harness.createKey();
    const live = await harness.createKey({ mode: 'live', orgId: sandbox.file.orgId });
    const account = await created(live, fedwire());
    expect(account.status).toBe('PENDING_VERIFICATION');
    expect((await list(live)).map((a) => a.id)).toEqual([account.id]);
    expect(await list(sandbox)).toEqual([]);
  });
});

describe('GET /v3/fx/withdrawal-accounts', () => {
  let key: LoadedKey;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    key = await harness.createKey();
    // Created in this order, a millisecond apart, so newest first is the reverse.
    const bodies: [string, Record<string, unknown>][] = [
      ['usdFedwire', fedwire()],
      ['eurSwift', swift()],
      ['usdcEth', stablecoin()],
      ['usdtTron', stablecoin({ currency: 'USDT', network: 'TRON', address: TRON_USDT })],
      ['usdcSol', stablecoin({ network: 'SOLANA', address: SOLANA_USDC })],
    ];
    for (const [name, body] of bodies) {
      ids[name] = (await created(key, body)).id;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect((await post(key, `/v3/fx/sandbox/withdrawal-accounts/${ids.eurSwift}/verify`, undefined)).status).toBe(200);
    expect((await post(key, `/v3/fx/sandbox/withdrawal-accounts/${ids.usdtTron}/verify`, undefined)).status).toBe(200);
    expect((await post(key, `/v3/fx/sandbox/withdrawal-accounts/${ids.usdcSol}`, { status: 'DISABLED' })).status).toBe(
      200,
    );
  });

  const idsOf = (accounts: AccountRecord[]) => accounts.map((account) => account.id);

  it('lists every account of the book, newest first, complete records, no pagination object', async () => {
    const accounts = await list(key);
    expect(idsOf(accounts)).toEqual([ids.usdcSol, ids.usdtTron, ids.usdcEth, ids.eurSwift, ids.usdFedwire]);
    for (const account of accounts) expect(Object.keys(account).sort()).toEqual(RECORD_FIELDS);
  });

  it.each([
    ['?assetType=FIAT', ['eurSwift', 'usdFedwire']],
    ['?assetType=STABLECOIN', ['usdcSol', 'usdtTron', 'usdcEth']],
    ['?network=ETHEREUM', ['usdcEth']],
    ['?network=POLYGON', []],
    ['?currency=USDC', ['usdcSol', 'usdcEth']],
    ['?currency=JPY', []],
    ['?status=ACTIVE', ['usdtTron', 'eurSwift']],
    ['?status=PENDING_VERIFICATION', ['usdcEth', 'usdFedwire']],
    ['?status=DISABLED', ['usdcSol']],
    ['?verified=true', ['usdtTron', 'eurSwift']],
    ['?verified=false', ['usdcSol', 'usdcEth', 'usdFedwire']],
    ['?assetType=STABLECOIN&verified=false&currency=USDC', ['usdcSol', 'usdcEth']],
    ['?assetType=FIAT&network=TRON', []],
  ])('filters %s', async (query, names) => {
    expect(idsOf(await list(key, query))).toEqual(names.map((name) => ids[name]));
  });

  it.each([
    ['?assetType=CRYPTO', ['assetType']],
    ['?assetType=fiat', ['assetType']],
    ['?network=BITCOIN', ['network']],
    ['?currency=usd', ['currency']],
    ['?status=active', ['status']],
    ['?verified=yes', ['verified']],
    ['?verified=1', ['verified']],
    ['?verified=', ['verified']],
    ['?assetType=FIAT&assetType=STABLECOIN', ['assetType']],
    ['?limit=10', ['limit']],
    ['?foo=bar&status=NOPE', ['foo', 'status']],
  ])('400 VALIDATION_QUERY_FAILED for %s', async (query, paths) => {
    const error = expectV3Error(await get(key, `${ACCOUNTS}${query}`), 'VALIDATION_QUERY_FAILED');
    expect(pathsOf(error).sort()).toEqual(paths);
  });

  it("never lists another org's accounts", async () => {
    const other = await harness.createKey();
    expect(await list(other)).toEqual([]);
    await created(other, fedwire());
    expect(idsOf(await list(key))).toHaveLength(5);
  });
});

describe('GET /v3/fx/withdrawal-accounts/{id}', () => {
  it('404 WITHDRAWAL_ADDRESS_NOT_FOUND for an unknown, malformed, other-org or other-book id', async () => {
    const key = await harness.createKey();
    const otherOrg = await harness.createKey();
    const live = await harness.createKey({ mode: 'live', orgId: key.file.orgId });
    const theirs = await created(otherOrg, fedwire());
    const liveAccount = await created(live, fedwire());
    for (const id of [
      newId('withdrawalAccount'),
      'wac_nothex',
      'trd_0190c5a87d2e7c1a9f3b2a4d6e8f0b1c',
      theirs.id,
      liveAccount.id,
    ]) {
      expectV3Error(await get(key, `${ACCOUNTS}/${encodeURIComponent(id)}`), 'WITHDRAWAL_ADDRESS_NOT_FOUND', {
        details: { accountId: id },
      });
    }
    expect((await get(otherOrg, `${ACCOUNTS}/${theirs.id}`)).status).toBe(200);
    expect((await get(live, `${ACCOUNTS}/${liveAccount.id}`)).status).toBe(200);
  });

  it('takes no query parameters', async () => {
    const key = await harness.createKey();
    const account = await created(key, fedwire());
    expectV3Error(await get(key, `${ACCOUNTS}/${account.id}?expand=1`), 'VALIDATION_QUERY_FAILED');
  });
});

describe('sandbox endpoints', () => {
  const verifyPath = (id: string) => `/v3/fx/sandbox/withdrawal-accounts/${id}/verify`;
  const updatePath = (id: string) => `/v3/fx/sandbox/withdrawal-accounts/${id}`;

  it('verify makes the account ACTIVE and verified, and moves updatedAt', async () => {
    const key = await harness.createKey();
    frozenAt = new Date('2025-01-01T00:00:00.000Z');
    try {
      const account = await created(key, fedwire());
      frozenAt = new Date('2025-01-01T00:00:05.250Z');
      const response = await post(key, verifyPath(account.id), undefined);
      expect(response.status, response.text).toBe(200);
      const verified = response.json<{ data: AccountRecord }>().data;
      expect(verified).toEqual({ ...account, status: 'ACTIVE', verified: true, updatedAt: '2025-01-01T00:00:05.250Z' });
      expect((await get(key, `${ACCOUNTS}/${account.id}`)).json<{ data: AccountRecord }>().data).toEqual(verified);
    } finally {
      frozenAt = null;
    }
  });

  it('update sets any of status, verified and withdrawalsEnabled, leaving the rest alone', async () => {
    const key = await harness.createKey();
    const account = await created(key, stablecoin());
    const update = async (body: Record<string, unknown>) => {
      const response = await post(key, updatePath(account.id), body);
      expect(response.status, response.text).toBe(200);
      return response.json<{ data: AccountRecord }>().data;
    };
    expect(await update({ status: 'ACTIVE' })).toMatchObject({
      status: 'ACTIVE',
      verified: false,
      withdrawalsEnabled: true,
    });
    expect(await update({ verified: true })).toMatchObject({
      status: 'ACTIVE',
      verified: true,
      withdrawalsEnabled: true,
    });
    expect(await update({ withdrawalsEnabled: false })).toMatchObject({
      status: 'ACTIVE',
      verified: true,
      withdrawalsEnabled: false,
    });
    expect(await update({ status: 'DISABLED', verified: false, withdrawalsEnabled: true })).toMatchObject({
      status: 'DISABLED',
      verified: false,
      withdrawalsEnabled: true,
    });
    // Verify lifts a disable.
    const verified = await post(key, verifyPath(account.id), undefined);
    expect(verified.json<{ data: AccountRecord }>().data).toMatchObject({
      status: 'ACTIVE',
      verified: true,
      withdrawalsEnabled: true,
    });
    expect(await update({ status: 'PENDING_VERIFICATION' })).toMatchObject({
      status: 'PENDING_VERIFICATION',
      verified: true,
    });
  });

  it.each([
    ['an empty body', {}, ['']],
    ['an unknown status', { status: 'LIVE' }, ['status']],
    ['a lower-case status', { status: 'active' }, ['status']],
    ['a string for a boolean', { verified: 'true' }, ['verified']],
    ['an unknown field', { verified: true, network: 'TRON' }, ['network']],
  ])('update: 400 VALIDATION_BODY_FAILED for %s', async (_name, body, paths) => {
    const key = await harness.createKey();
    const account = await created(key, fedwire());
    const error = expectV3Error(await post(key, updatePath(account.id), body), 'VALIDATION_BODY_FAILED');
    expect(pathsOf(error)).toEqual(paths);
    if (paths[0] === '') expect(issuesOf(error)[0]!.code).toBe('empty_update');
    expect((await get(key, `${ACCOUNTS}/${account.id}`)).json<{ data: AccountRecord }>().data).toEqual(account);
  });

  it('verify takes no body', async () => {
    const key = await harness.createKey();
    const account = await created(key, fedwire());
    expectV3Error(await post(key, verifyPath(account.id), { verified: true }), 'VALIDATION_BODY_FAILED');
  });

  it("404 WITHDRAWAL_ADDRESS_NOT_FOUND for an unknown or another org's account", async () => {
    const key = await harness.createKey();
    const other = await harness.createKey();
    const theirs = await created(other, fedwire());
    for (const id of [newId('withdrawalAccount'), 'nope', theirs.id]) {
      expectV3Error(await post(key, verifyPath(id), undefined), 'WITHDRAWAL_ADDRESS_NOT_FOUND', {
        details: { accountId: id },
      });
      expectV3Error(await post(key, updatePath(id), { verified: true }), 'WITHDRAWAL_ADDRESS_NOT_FOUND', {
        details: { accountId: id },
      });
    }
    expect((await get(other, `${ACCOUNTS}/${theirs.id}`)).json<{ data: AccountRecord }>().data).toEqual(theirs);
  });

  it('403 SANDBOX_MODE_REQUIRED from a live key; the live account is unchanged', async () => {
    const live = await harness.createKey({ mode: 'live' });
    const account = await created(live, fedwire());
    expectV3Error(await post(live, verifyPath(account.id), undefined), 'SANDBOX_MODE_REQUIRED');
    expectV3Error(await post(live, updatePath(account.id), { status: 'ACTIVE' }), 'SANDBOX_MODE_REQUIRED');
    expect((await get(live, `${ACCOUNTS}/${account.id}`)).json<{ data: AccountRecord }>().data).toEqual(account);
  });

  it('403 AUTH_INSUFFICIENT_SCOPE without the withdraw scope', async () => {
    const owner = await harness.createKey();
    const account = await created(owner, fedwire());
    const viewer = await harness.createKey({ orgId: owner.file.orgId, scopes: ['view'] });
    expectV3Error(await post(viewer, verifyPath(account.id), undefined), 'AUTH_INSUFFICIENT_SCOPE', {
      details: { requiredScope: 'withdraw' },
    });
  });
});

describe('in-process helpers', () => {
  it('verify and update answer null for an account outside the book, and change only their own', async () => {
    const key = await harness.createKey();
    const account = await created(key, fedwire());
    const { orgId } = key.file;
    const at = new Date('2025-06-01T12:00:00.000Z');
    expect(await verifyWithdrawalAccount(harness.db, { orgId, environment: 'live' }, account.id, at)).toBeNull();
    expect(
      await verifyWithdrawalAccount(
        harness.db,
        { orgId: '0190c5a8-0000-7c1a-9f3b-2a4d6e8f0b1c', environment: 'sandbox' },
        account.id,
        at,
      ),
    ).toBeNull();
    expect(
      await updateWithdrawalAccount(harness.db, { orgId, environment: 'sandbox' }, 'garbage', { verified: true }, at),
    ).toBeNull();
    const verified = await verifyWithdrawalAccount(harness.db, { orgId, environment: 'sandbox' }, account.id, at);
    expect(verified).toMatchObject({ status: 'ACTIVE', verified: true, withdrawals_enabled: true, updated_at: at });
    const off = await updateWithdrawalAccount(
      harness.db,
      { orgId, environment: 'sandbox' },
      account.id,
      { withdrawalsEnabled: false },
      at,
    );
    expect(off).toMatchObject({ status: 'ACTIVE', verified: true, withdrawals_enabled: false });
    const row = await findWithdrawalAccount(harness.db, { orgId, environment: 'sandbox' }, account.id);
    expect(row?.withdrawals_enabled).toBe(false);
    expect(await findWithdrawalAccount(harness.db, { orgId, environment: 'live' }, account.id)).toBeNull();
  });

  it('accountChecksumFailure re-checks a stored row (as withdrawals do at rule 10)', async () => {
    const key = await harness.createKey();
    const account = await created(key, stablecoin());
    // A row that reached the table without the API's checks.
    await harness.db.query('UPDATE withdrawal_accounts SET address = $2 WHERE id = $1', [
      account.id,
      EIP55_CASE_BROKEN,
    ]);
    const row = (await findWithdrawalAccount(
      harness.db,
      { orgId: key.file.orgId, environment: 'sandbox' },
      account.id,
    ))!;
    expect(accountChecksumFailure(row)).toEqual({ address: EIP55_CASE_BROKEN, network: 'ETHEREUM' });
    const fiat = {
      asset_type: 'FIAT',
      transfer_type: 'SWIFT',
      account_number: IBAN_GB,
      routing_number: null,
      swift_code: BIC,
      network: null,
      address: null,
    } as const;
    expect(accountChecksumFailure(fiat)).toBeNull();
    expect(accountChecksumFailure({ ...fiat, account_number: 'GB82WEST12345698765431' })).toEqual({
      address: 'GB82WEST12345698765431',
      network: 'SWIFT',
    });
    expect(
      accountChecksumFailure({ ...fiat, transfer_type: 'FEDWIRE', routing_number: ABA, swift_code: null }),
    ).toBeNull();
    expect(
      accountChecksumFailure({ ...fiat, transfer_type: 'FEDWIRE', routing_number: '021000022', swift_code: null }),
    ).toEqual({ address: '021000022', network: 'FEDWIRE' });
  });
});
