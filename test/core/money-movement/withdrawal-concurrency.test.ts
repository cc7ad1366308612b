/**
 * Withdrawals under concurrency and failure, on real PostgreSQL and Redis, in the sandbox and the
 * live book:
 * - 100 parallel withdrawals that together exceed the balance: the sum accepted never exceeds it,
 *   every refusal is one that no longer fitted, and the ledger balances;
 * - 100 parallel POSTs with one Idempotency-Key make one withdrawal;
 * - Redis losing the idempotency records between a withdrawal and its retry with the same key:
 *   still one withdrawal (the row's unique key is the second line), also for attempts racing
 *   in-process past the store;
 * - an operator's change to the account between the withdrawal's read of it and its statement:
 *   the statement refuses, the account is read again, and the rules see the change;
 * - a failure at each step of the write (failpoints) answers 500 WITHDRAWAL_INITIATION_FAILED
 *   with details.resourceId, leaves nothing half-written, and the retry with the same key works;
 *   a response lost after the commit answers the same 500 and GET finds the withdrawal.
 */
import { randomBytes, randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { postMovement } from '../../../src/core/ledger/ledger.js';
import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import {
  createWithdrawalAccount,
  verifyWithdrawalAccount,
  type WithdrawalAccountRow,
} from '../../../src/core/money-movement/withdrawal-accounts.js';
import { createWithdrawal } from '../../../src/core/money-movement/withdrawals.js';
import type { Principal } from '../../../src/core/principal.js';
import { DEFAULT_USD_PRICES, StaticRateSource } from '../../../src/core/trading/rate-source.js';
import { referenceData } from '../../../src/core/trading/reference-data.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { armFailpoint, disarmAllFailpoints } from '../../../src/lib/failpoints.js';
import { requestFingerprint } from '../../../src/lib/idempotency-key.js';
import { newId } from '../../../src/lib/ids.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { ForgetfulRedis, startParallelHarness } from '../../support/book-fixtures.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import type { TestResponse, V3Harness } from '../../support/v3-harness.js';

interface WithdrawalRecord {
  id: string;
  withdrawalAmount: string;
  status: string;
  metadata: Record<string, string>;
  [field: string]: unknown;
}

const WITHDRAWALS = '/v3/fx/withdrawals';
const PARALLEL = 100;
const IN_TRANSACTION = ['withdrawal.after-insert', 'withdrawal.after-ledger', 'withdrawal.after-event'];

let harness: V3Harness;
/** The harness store, with a second connection that can make it forget its idempotency records. */
const redis = new ForgetfulRedis();

beforeAll(async () => {
  harness = await startParallelHarness(redis);
});
afterAll(async () => {
  await redis.close();
  await harness?.close();
});
afterEach(async () => {
  disarmAllFailpoints();
  expect(await checkLedger(harness.db)).toEqual([]);
});

function context() {
  return {
    db: harness.db,
    reference: referenceData(harness.db),
    rates: new StaticRateSource(DEFAULT_USD_PRICES),
    now: () => new Date(),
  };
}

function principalOf(key: LoadedKey): Principal {
  return { keyName: key.file.name, orgId: key.file.orgId, scopes: key.file.scopes, environment: key.file.mode };
}

/** A funded book with a verified FEDWIRE USD account. */
async function fundedBook(mode: Mode, usd: string): Promise<{ key: LoadedKey; account: WithdrawalAccountRow }> {
  const key = await harness.createKey({ mode, scopes: ['view', 'withdraw'] });
  const value = new Decimal(usd);
  await harness.db.transaction((tx) =>
    postMovement(tx, {
      orgId: key.file.orgId,
      environment: mode,
      kind: 'deposit',
      referenceId: newId('deposit'),
      at: new Date(),
      postings: [
        { account: 'rail_in_transit', currency: 'USD', amount: value.negated() },
        { account: 'client', currency: 'USD', amount: value },
      ],
    }),
  );
  const created = await createWithdrawalAccount(
    context(),
    principalOf(key),
    {
      currency: 'USD',
      assetType: 'FIAT',
      transferType: 'FEDWIRE',
      accountName: 'Ops',
      bankName: 'JPMorgan Chase',
      accountNumber: '123456789',
      routingNumber: '021000021',
    },
    { key: randomUUID(), fingerprint: `sha256:${randomBytes(32).toString('hex')}` },
  );
  const account = (await verifyWithdrawalAccount(
    harness.db,
    { orgId: key.file.orgId, environment: mode },
    created.id,
  ))!;
  return { key, account };
}

const body = (account: WithdrawalAccountRow, amount: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ withdrawalAccountId: account.id, withdrawalAmount: amount, currency: 'USD', ...extra });

const post = (key: LoadedKey, raw: string, idempotencyKey: string): Promise<TestResponse> =>
  harness.signed({ key, method: 'POST', path: WITHDRAWALS, body: raw, idempotencyKey });

const getWithdrawal = (key: LoadedKey, id: string) => harness.signed({ key, path: `${WITHDRAWALS}/${id}` });
const withdrawalOf = (response: TestResponse) => response.json<{ data: WithdrawalRecord }>().data;

interface BookState {
  client: string;
  held: string;
  withdrawals: Array<{ id: string; amount: string; idempotency_key: string }>;
  ledgerTransactions: number;
  events: number;
}

async function bookState(key: LoadedKey): Promise<BookState> {
  const params = [key.file.orgId, key.file.mode];
  const accounts = await harness.db.query<{ kind: string; balance: string }>(
    `SELECT kind, balance::text AS balance FROM ledger_accounts WHERE org_id = $1 AND environment = $2 AND currency = 'USD'`,
    params,
  );
  const balanceOf = (kind: string) =>
    new Decimal(accounts.rows.find((row) => row.kind === kind)?.balance ?? '0').toFixed();
  const withdrawals = await harness.db.query<{ id: string; amount: string; idempotency_key: string }>(
    'SELECT id, amount::text AS amount, idempotency_key FROM withdrawals WHERE org_id = $1 AND environment = $2 ORDER BY id',
    params,
  );
  const ledger = await harness.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM ledger_transactions WHERE org_id = $1 AND environment = $2',
    params,
  );
  const events = await harness.db.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM events WHERE org_id = $1 AND environment = $2 AND type = 'withdrawals'",
    params,
  );
  return {
    client: balanceOf('client'),
    held: balanceOf('withdrawal_hold'),
    withdrawals: withdrawals.rows.map((row) => ({ ...row, amount: new Decimal(row.amount).toFixed() })),
    ledgerTransactions: Number(ledger.rows[0]!.n),
    events: Number(events.rows[0]!.n),
  };
}

describe.each<Mode>(['sandbox', 'live'])('withdrawals under concurrency in the %s book', (mode) => {
  it(`${PARALLEL} parallel withdrawals that together exceed the balance never overdraw it`, async () => {
    const balance = 500;
    const each = 7;
    const { key, account } = await fundedBook(mode, String(balance));
    const responses = await Promise.all(
      Array.from({ length: PARALLEL }, () => post(key, body(account, `${each}.00`), randomUUID())),
    );

    const accepted = responses.filter((r) => r.status === 200).map(withdrawalOf);
    const refused = responses.filter((r) => r.status !== 200);
    // Every request either fits or is refused for balance: exactly floor(500 / 7) = 71 fit.
    expect(accepted.length).toBe(Math.floor(balance / each));
    for (const response of refused) {
      const error = expectV3Error(response, 'WITHDRAWAL_INSUFFICIENT_BALANCE');
      expect(error.details).toMatchObject({ requiredAmount: '7.00', currency: 'USD' });
      expect(new Decimal(error.details.availableAmount as string).lt(each)).toBe(true);
    }
    const state = await bookState(key);
    const acceptedSum = accepted.length * each;
    expect(acceptedSum).toBeLessThanOrEqual(balance);
    expect(state.held).toBe(String(acceptedSum));
    expect(state.client).toBe(String(balance - acceptedSum));
    expect(new Set(state.withdrawals.map((row) => row.id))).toEqual(new Set(accepted.map((w) => w.id)));
    // The deposit, then one hold per withdrawal; one withdrawal.pending each.
    expect(state.ledgerTransactions).toBe(1 + accepted.length);
    expect(state.events).toBe(accepted.length);
  });

  it(`${PARALLEL} parallel withdrawals of mixed sizes: every refusal was one that no longer fitted`, async () => {
    const balance = new Decimal('1234.56');
    const { key, account } = await fundedBook(mode, balance.toFixed());
    const sizes = ['37.10', '53.25', '71.00', '5.01', '149.99'];
    const responses = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) => post(key, body(account, sizes[i % sizes.length]!), randomUUID())),
    );
    const state = await bookState(key);
    let acceptedSum = new Decimal(0);
    responses.forEach((response, i) => {
      const size = sizes[i % sizes.length]!;
      if (response.status === 200) {
        acceptedSum = acceptedSum.plus(size);
      } else {
        expectV3Error(response, 'WITHDRAWAL_INSUFFICIENT_BALANCE');
        // The held amount only grew, so what did not fit then does not fit now.
        expect(new Decimal(state.client).lt(size), `a refused ${size} fits the ${state.client} left`).toBe(true);
      }
    });
    expect(acceptedSum.lte(balance)).toBe(true);
    expect(new Decimal(state.held).eq(acceptedSum)).toBe(true);
    expect(new Decimal(state.client).eq(balance.minus(acceptedSum))).toBe(true);
  });

  it(`${PARALLEL} parallel POSTs with one Idempotency-Key make one withdrawal`, async () => {
    const { key, account } = await fundedBook(mode, '1000');
    const raw = body(account, '250.00', { metadata: { one: 'key' } });
    const idem = randomUUID();
    const responses = await Promise.all(Array.from({ length: PARALLEL }, () => post(key, raw, idem)));
    const ok = responses.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const response of ok) expect(response.text).toBe(ok[0]!.text);
    for (const response of responses.filter((r) => r.status !== 200)) expectV3Error(response, 'IDEMPOTENCY_IN_FLIGHT');

    const withdrawal = withdrawalOf(ok[0]!);
    const state = await bookState(key);
    expect(state.withdrawals).toEqual([{ id: withdrawal.id, amount: '250', idempotency_key: idem }]);
    expect(state).toMatchObject({ client: '750', held: '250', ledgerTransactions: 2, events: 1 });

    const replay = await post(key, raw, idem);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.text).toBe(ok[0]!.text);
  });

  it('a retry after Redis lost the idempotency records finds the same withdrawal, never a second one', async () => {
    const { key, account } = await fundedBook(mode, '100');
    // 30 requests of 5: 20 fit.
    const requests = Array.from({ length: 30 }, (_, i) => ({
      raw: body(account, '5', { metadata: { n: String(i) } }),
      idem: randomUUID(),
    }));
    const first = await Promise.all(requests.map((r) => post(key, r.raw, r.idem)));
    expect(first.filter((r) => r.status === 200)).toHaveLength(20);
    const before = await bookState(key);

    expect(await redis.loseIdempotencyRecords()).toBeGreaterThanOrEqual(20);
    const retried = await Promise.all(requests.map((r) => post(key, r.raw, r.idem)));
    retried.forEach((response, i) => {
      if (first[i]!.status === 200) {
        expect(response.status, response.text).toBe(200);
        // Not a replay from the store: the withdrawal found in the database by its key.
        expect(response.headers['idempotency-replayed']).toBe('false');
        expect(withdrawalOf(response)).toEqual(withdrawalOf(first[i]!));
      } else {
        // 409s are never stored: the refusal is worked out again, and the balance is still gone.
        expectV3Error(response, 'WITHDRAWAL_INSUFFICIENT_BALANCE');
      }
    });
    expect(await bookState(key)).toEqual(before);

    // With the record lost, the same key with another body is still a mismatch (from the row).
    const winner = requests[first.findIndex((r) => r.status === 200)]!;
    await redis.loseIdempotencyRecords();
    const mismatch = await post(key, body(account, '1'), winner.idem);
    expectV3Error(mismatch, 'IDEMPOTENCY_MISMATCH', {
      details: { originalRequestHash: requestFingerprint('POST', WITHDRAWALS, Buffer.from(winner.raw)) },
    });
    expect(await bookState(key)).toEqual(before);
  });

  it('attempts racing past a store that lost the key all return the one withdrawal, even when it took the whole balance', async () => {
    const { key, account } = await fundedBook(mode, '100');
    const principal = principalOf(key);
    const raw = body(account, '100');
    const idempotency = { key: randomUUID(), fingerprint: requestFingerprint('POST', WITHDRAWALS, Buffer.from(raw)) };
    const request = { withdrawalAccountId: account.id, withdrawalAmount: '100', currency: 'USD' };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () => createWithdrawal(context(), principal, request, idempotency)),
    );
    const errors = outcomes.flatMap((o) =>
      o.status === 'rejected' ? [String((o.reason as { code?: string }).code ?? o.reason)] : [],
    );
    expect(errors).toEqual([]);
    const ids = new Set(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.id : '')));
    expect(ids.size).toBe(1);
    expect(await bookState(key)).toMatchObject({ client: '0', held: '100', ledgerTransactions: 2, events: 1 });
  });

  describe('an account that changes between its read and the statement', () => {
    /**
     * The context's database, changing the account (through the harness's own connection)
     * just before each of the first `times` calls of fx_create_withdrawal: after the withdrawal
     * read it, before the statement locks it.
     */
    function changingAccount(account: WithdrawalAccountRow, change: string, times: number) {
      let left = times;
      const db = harness.db;
      const changing: typeof db = Object.create(db) as typeof db;
      changing.query = async (sql, params) => {
        if (left > 0 && sql.includes('fx_create_withdrawal(')) {
          left--;
          await db.query(`UPDATE withdrawal_accounts SET ${change} WHERE id = $1`, [account.id]);
        }
        return db.query(sql, params);
      };
      return { ...context(), db: changing };
    }

    it('is read again, and the withdrawal is judged on the account as it is now', async () => {
      const { key, account } = await fundedBook(mode, '100');
      const request = { withdrawalAccountId: account.id, withdrawalAmount: '10', currency: 'USD' };
      const idempotency = { key: randomUUID(), fingerprint: `sha256:${randomBytes(32).toString('hex')}` };
      const before = await bookState(key);
      await expect(
        createWithdrawal(changingAccount(account, "status = 'DISABLED'", 1), principalOf(key), request, idempotency),
      ).rejects.toMatchObject({ code: 'WITHDRAWAL_ACCOUNT_NOT_LIVE', details: { status: 'DISABLED' } });
      expect(await bookState(key)).toEqual(before);
    });

    it('a change that lifts a refusal lets the withdrawal through on the next read', async () => {
      const { key, account } = await fundedBook(mode, '100');
      await harness.db.query('UPDATE withdrawal_accounts SET withdrawals_enabled = false WHERE id = $1', [account.id]);
      const request = { withdrawalAccountId: account.id, withdrawalAmount: '10', currency: 'USD' };
      const idempotency = { key: randomUUID(), fingerprint: `sha256:${randomBytes(32).toString('hex')}` };
      const created = await createWithdrawal(
        changingAccount(account, 'withdrawals_enabled = true', 1),
        principalOf(key),
        request,
        idempotency,
      );
      expect(created).toMatchObject({ status: 'PENDING', withdrawal_account_id: account.id });
      expect(await bookState(key)).toMatchObject({ client: '90', held: '10', ledgerTransactions: 2, events: 1 });
    });

    it('gives up with WITHDRAWAL_INITIATION_FAILED, writing nothing, when it changes under every read', async () => {
      const { key, account } = await fundedBook(mode, '100');
      const request = { withdrawalAccountId: account.id, withdrawalAmount: '10', currency: 'USD' };
      const idempotency = { key: randomUUID(), fingerprint: `sha256:${randomBytes(32).toString('hex')}` };
      const before = await bookState(key);
      const failure = await createWithdrawal(
        changingAccount(account, 'verified = NOT verified', 3),
        principalOf(key),
        request,
        idempotency,
      ).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'WITHDRAWAL_INITIATION_FAILED' });
      expect((failure as Error).cause).toMatchObject({ code: 'FXGATE_WITHDRAWAL_ACCOUNT_CHANGING' });
      expect(await bookState(key)).toEqual(before);
    });
  });

  describe('crash safety', () => {
    it.each(IN_TRANSACTION)(
      'a failure at %s writes nothing; the retry with the same key withdraws once',
      async (point) => {
        const { key, account } = await fundedBook(mode, '100');
        const raw = body(account, '40', { metadata: { step: point } });
        const idem = randomUUID();
        const before = await bookState(key);

        armFailpoint(point);
        const failed = await post(key, raw, idem);
        const error = expectV3Error(failed, 'WITHDRAWAL_INITIATION_FAILED');
        const resourceId = error.details.resourceId as string;
        expect(resourceId).toMatch(/^wtd_[0-9a-f]{32}$/);
        // Recovery (docs/contract.md#errors-recovery): fetch by resourceId. Absent, and nothing
        // half-written anywhere.
        expectV3Error(await getWithdrawal(key, resourceId), 'WITHDRAWAL_NOT_FOUND');
        expect(await bookState(key)).toEqual(before);

        // ...so retry with the SAME key: a 500 was not stored.
        const retried = await post(key, raw, idem);
        expect(retried.status, retried.text).toBe(200);
        expect(retried.headers['idempotency-replayed']).toBe('false');
        const withdrawal = withdrawalOf(retried);
        expect(withdrawal).toMatchObject({ withdrawalAmount: '40.00', status: 'PENDING', metadata: { step: point } });
        expect(withdrawal.id).not.toBe(resourceId);
        const after = await bookState(key);
        expect(after).toMatchObject({ client: '60', held: '40', ledgerTransactions: 2, events: 1 });
        expect(after.withdrawals.map((row) => row.id)).toEqual([withdrawal.id]);
        expectV3Error(await getWithdrawal(key, resourceId), 'WITHDRAWAL_NOT_FOUND');
      },
    );

    it('a response lost after the commit: 500 with resourceId, GET finds the withdrawal, the retry returns it', async () => {
      const { key, account } = await fundedBook(mode, '100');
      const raw = body(account, '40', { metadata: { step: 'after-commit' } });
      const idem = randomUUID();

      armFailpoint('withdrawal.after-commit');
      const failed = await post(key, raw, idem);
      const resourceId = expectV3Error(failed, 'WITHDRAWAL_INITIATION_FAILED').details.resourceId as string;
      const fetched = await getWithdrawal(key, resourceId);
      expect(fetched.status, fetched.text).toBe(200);
      const withdrawal = withdrawalOf(fetched);
      expect(withdrawal).toMatchObject({ id: resourceId, status: 'PENDING', metadata: { step: 'after-commit' } });

      const retried = await post(key, raw, idem);
      expect(retried.status, retried.text).toBe(200);
      expect(withdrawalOf(retried)).toEqual(withdrawal);
      const replay = await post(key, raw, idem);
      expect(replay.headers['idempotency-replayed']).toBe('true');
      expect(replay.text).toBe(retried.text);
      expect(await bookState(key)).toMatchObject({ client: '60', held: '40', ledgerTransactions: 2, events: 1 });
    });

    it('fails only the armed attempt: parallel withdrawals around a failure stay whole', async () => {
      const { key, account } = await fundedBook(mode, '100');
      armFailpoint('withdrawal.after-ledger');
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => post(key, body(account, '5'), randomUUID())),
      );
      const failed = responses.filter((r) => r.status !== 200);
      expect(failed).toHaveLength(1);
      const resourceId = expectV3Error(failed[0]!, 'WITHDRAWAL_INITIATION_FAILED').details.resourceId as string;
      expectV3Error(await getWithdrawal(key, resourceId), 'WITHDRAWAL_NOT_FOUND');
      expect(await bookState(key)).toMatchObject({ client: '55', held: '45', ledgerTransactions: 10, events: 9 });
    });
  });
});
