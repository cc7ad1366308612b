/**
 * Deposits end to end: POST /v3/fx/sandbox/deposits (immediate and delayed), the deposit
 * completer, GET /v3/fx/deposits and GET /v3/fx/deposits/{id}. Each deposit is checked field by
 * field, on the ledger (credited exactly once, only on completion) and in the event outbox.
 * After every test the ledger balances.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { buildCoreApp } from '../../../src/core/app.js';
import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import { createDepositCompleter } from '../../../src/core/money-movement/deposit-completer.js';
import {
  createSandboxDeposit,
  type DepositContext,
  settlePendingDeposit,
} from '../../../src/core/money-movement/deposits.js';
import { referenceData } from '../../../src/core/trading/reference-data.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { ApiError } from '../../../src/lib/errors/api-error.js';
import { armFailpoint, disarmAllFailpoints } from '../../../src/lib/failpoints.js';
import { newId } from '../../../src/lib/ids.js';
import { livePollLoops } from '../../../src/lib/jobs/poll-loop.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

interface DepositRecord {
  object: 'deposit';
  id: string;
  currency: string;
  amount: string;
  network: string;
  assetType: string;
  status: string;
  transactionHash: string | null;
  referenceId: string | null;
  comments: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

interface Pagination {
  hasNext: boolean;
  hasPrev: boolean;
  nextCursor: string | null;
  prevCursor: string | null;
}

const DEPOSIT_FIELDS = [
  'object',
  'id',
  'currency',
  'amount',
  'network',
  'assetType',
  'status',
  'transactionHash',
  'referenceId',
  'comments',
  'createdAt',
  'updatedAt',
  'completedAt',
].sort();

const SANDBOX_DEPOSITS = '/v3/fx/sandbox/deposits';
const DEPOSITS = '/v3/fx/deposits';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const T0 = new Date('2031-03-04T05:06:07.008Z');

/** The book's clock: real time unless a test sets it. */
let clock: Date | null = null;
const now = () => clock ?? new Date();
let harness: V3Harness;
let context: DepositContext;

beforeAll(async () => {
  harness = await V3Harness.start({ now, core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
  context = { db: harness.db, reference: referenceData(harness.db), now };
});
afterAll(async () => harness?.close());
afterEach(async () => {
  clock = null;
  disarmAllFailpoints();
  expect(await checkLedger(harness.db)).toEqual([]);
});

function postDeposit(key: LoadedKey, body: unknown, idempotencyKey: string = randomUUID()) {
  return harness.signed({
    key,
    method: 'POST',
    path: SANDBOX_DEPOSITS,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    idempotencyKey,
  });
}

async function deposited(
  key: LoadedKey,
  body: Record<string, unknown>,
  idempotencyKey?: string,
): Promise<DepositRecord> {
  const response = await postDeposit(key, body, idempotencyKey);
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: DepositRecord }>().data;
}

function getDeposit(key: LoadedKey, id: string) {
  return harness.signed({ key, path: `${DEPOSITS}/${encodeURIComponent(id)}` });
}

async function listDeposits(key: LoadedKey, query = ''): Promise<{ data: DepositRecord[]; pagination: Pagination }> {
  const response = await harness.signed({ key, path: `${DEPOSITS}${query}` });
  expect(response.status, response.text).toBe(200);
  return response.json();
}

/** The org's balance of one ledger account, as the database prints it (absent: null). */
async function ledgerBalance(
  orgId: string,
  kind: string,
  currency: string,
  mode: Mode = 'sandbox',
): Promise<string | null> {
  const { rows } = await harness.db.query<{ balance: string }>(
    'SELECT balance::text AS balance FROM ledger_accounts WHERE org_id = $1 AND environment = $2 AND kind = $3 AND currency = $4',
    [orgId, mode, kind, currency],
  );
  return rows[0]?.balance ?? null;
}

async function ledgerTransactionsOf(depositId: string): Promise<Array<{ kind: string }>> {
  return (
    await harness.db.query<{ kind: string }>('SELECT kind FROM ledger_transactions WHERE reference_id = $1', [
      depositId,
    ])
  ).rows;
}

interface EventRow {
  id: string;
  org_id: string;
  environment: string;
  type: string;
  event_type: string;
  data: DepositRecord;
  created_at: Date;
}

async function eventsOf(depositId: string): Promise<EventRow[]> {
  const { rows } = await harness.db.query<EventRow>(
    "SELECT * FROM events WHERE data->>'id' = $1 ORDER BY created_at, event_type DESC",
    [depositId],
  );
  return rows;
}

async function depositCount(orgId: string): Promise<number> {
  const { rows } = await harness.db.query<{ n: string }>('SELECT count(*)::text AS n FROM deposits WHERE org_id = $1', [
    orgId,
  ]);
  return Number(rows[0]!.n);
}

const sandboxKey = (scopes: Array<'view' | 'trade' | 'withdraw'> = ['view', 'trade']) =>
  harness.createKey({ mode: 'sandbox', scopes });

describe('POST /v3/fx/sandbox/deposits, completing at once', () => {
  it('creates a fiat deposit: every field, COMPLETED, the ledger credited once, both events', async () => {
    const key = await sandboxKey();
    const orgId = key.file.orgId;
    clock = T0;
    const response = await postDeposit(key, {
      currency: 'USD',
      amount: '100.5',
      referenceId: 'wire-42',
      comments: 'first funding',
    });
    expect(response.status, response.text).toBe(200);
    expect(response.headers['idempotency-replayed']).toBe('false');
    const body = response.json<{ data: DepositRecord }>();
    expect(Object.keys(body)).toEqual(['data']);
    expect(Object.keys(body.data).sort()).toEqual(DEPOSIT_FIELDS);
    const deposit = body.data;
    expect(deposit).toEqual({
      object: 'deposit',
      id: expect.stringMatching(/^dep_[0-9a-f]{32}$/),
      currency: 'USD',
      amount: '100.50',
      network: 'FIAT',
      assetType: 'FIAT',
      status: 'COMPLETED',
      transactionHash: null,
      referenceId: 'wire-42',
      comments: 'first funding',
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
      completedAt: T0.toISOString(),
    });

    expect(await ledgerBalance(orgId, 'client', 'USD')).toBe('100.500000000000000000');
    expect(await ledgerBalance(orgId, 'rail_in_transit', 'USD')).toBe('-100.500000000000000000');
    expect(await ledgerTransactionsOf(deposit.id)).toEqual([{ kind: 'deposit' }]);

    const events = await eventsOf(deposit.id);
    expect(events.map((e) => [e.type, e.event_type])).toEqual([
      ['deposits', 'deposit.pending'],
      ['deposits', 'deposit.completed'],
    ]);
    for (const event of events) {
      expect(event.id).toMatch(/^evt_[0-9a-f]{32}$/);
      expect([event.org_id, event.environment, event.created_at.toISOString()]).toEqual([
        orgId,
        'sandbox',
        T0.toISOString(),
      ]);
    }
    expect(events[0]!.data).toEqual({ ...deposit, status: 'PENDING', completedAt: null });
    expect(events[1]!.data).toEqual(deposit);

    const fetched = await getDeposit(key, deposit.id);
    expect(fetched.status).toBe(200);
    expect(fetched.json<{ data: DepositRecord }>().data).toEqual(deposit);
  });

  it("creates stablecoin deposits: default network, a chain hash, the currency's decimals", async () => {
    const key = await sandboxKey();
    const usdc = await deposited(key, { currency: 'USDC', amount: '12.3456' });
    expect(usdc).toMatchObject({
      currency: 'USDC',
      amount: '12.345600',
      network: 'ETHEREUM',
      assetType: 'STABLECOIN',
      status: 'COMPLETED',
      referenceId: null,
      comments: null,
    });
    expect(usdc.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(usdc.createdAt).toMatch(ISO_MS);
    const usdt = await deposited(key, { currency: 'USDT', amount: '5', network: 'TRON' });
    expect(usdt).toMatchObject({ currency: 'USDT', amount: '5.000000', network: 'TRON', status: 'COMPLETED' });
    expect(usdt.transactionHash).not.toBe(usdc.transactionHash);
    const jpy = await deposited(key, { currency: 'JPY', amount: '1000', network: 'FIAT' });
    expect(jpy).toMatchObject({ amount: '1000', network: 'FIAT', transactionHash: null });
    expect(await ledgerBalance(key.file.orgId, 'client', 'USDC')).toBe('12.345600000000000000');
    expect(await ledgerBalance(key.file.orgId, 'client', 'USDT')).toBe('5.000000000000000000');
  });

  it('shows on GET /v3/fx/balances', async () => {
    const key = await sandboxKey();
    await deposited(key, { currency: 'EUR', amount: '250' });
    await deposited(key, { currency: 'EUR', amount: '0.75' });
    const response = await harness.signed({ key, path: '/v3/fx/balances' });
    expect(response.status, response.text).toBe(200);
    const { data } = response.json<{ data: Array<{ currency: string; amount: string; withdrawableAmount: string }> }>();
    expect(data).toEqual([
      expect.objectContaining({ currency: 'EUR', amount: '250.75', withdrawableAmount: '250.75' }),
    ]);
  });
});

describe('delayed deposits and the completer', () => {
  it('fails a deposit that asks for it: FAILED at once, nothing credited, deposit.pending then deposit.failed', async () => {
    const key = await sandboxKey();
    const orgId = key.file.orgId;
    clock = T0;
    const failed = await deposited(key, { currency: 'USD', amount: '75', outcome: 'FAILED' });
    expect(failed).toMatchObject({ status: 'FAILED', completedAt: null, updatedAt: T0.toISOString() });
    expect(await ledgerBalance(orgId, 'client', 'USD')).toBeNull();
    expect(await ledgerTransactionsOf(failed.id)).toEqual([]);
    const events = await eventsOf(failed.id);
    expect(events.map((e) => e.event_type)).toEqual(['deposit.pending', 'deposit.failed']);
    expect(events[1]!.data).toEqual(failed);
    const balances = await harness.signed({ key, path: '/v3/fx/balances' });
    expect(balances.json<{ data: Array<{ currency: string }> }>().data.map((b) => b.currency)).not.toContain('USD');
    // An outcome that is not one is the client's to fix.
    expectV3Error(
      await postDeposit(key, { currency: 'USD', amount: '1', outcome: 'PENDING' }),
      'VALIDATION_BODY_FAILED',
    );
  });

  it('stays PENDING until due, then fails once when it asked to, crediting nothing', async () => {
    const key = await sandboxKey();
    const orgId = key.file.orgId;
    const completer = createDepositCompleter(context);
    clock = T0;
    const pending = await deposited(key, {
      currency: 'EUR',
      amount: '12.5',
      completeAfterSeconds: 30,
      outcome: 'FAILED',
    });
    expect(pending).toMatchObject({ status: 'PENDING', completedAt: null });
    const due = new Date(T0.getTime() + 30_000);
    clock = due;
    expect(await completer.runOnce()).toBe(1);
    expect(await completer.runOnce()).toBe(0);
    const failed = (await getDeposit(key, pending.id)).json<{ data: DepositRecord }>().data;
    expect(failed).toEqual({ ...pending, status: 'FAILED', updatedAt: due.toISOString(), completedAt: null });
    expect(await ledgerBalance(orgId, 'client', 'EUR')).toBeNull();
    expect(await ledgerTransactionsOf(pending.id)).toEqual([]);
    expect((await eventsOf(pending.id)).map((e) => e.event_type)).toEqual(['deposit.pending', 'deposit.failed']);
  });

  it('stays PENDING, untouched on the ledger, until due; then completes once', async () => {
    const key = await sandboxKey();
    const orgId = key.file.orgId;
    const completer = createDepositCompleter(context);
    clock = T0;
    const pending = await deposited(key, { currency: 'GBP', amount: '40', completeAfterSeconds: 60 });
    expect(pending).toMatchObject({
      status: 'PENDING',
      completedAt: null,
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
    });
    expect(await ledgerBalance(orgId, 'client', 'GBP')).toBeNull();
    expect(await ledgerTransactionsOf(pending.id)).toEqual([]);
    expect((await eventsOf(pending.id)).map((e) => e.event_type)).toEqual(['deposit.pending']);
    expect((await eventsOf(pending.id))[0]!.data).toEqual(pending);

    expect(await completer.runOnce()).toBe(0);
    clock = new Date(T0.getTime() + 59_999);
    expect(await completer.runOnce()).toBe(0);
    expect((await getDeposit(key, pending.id)).json<{ data: DepositRecord }>().data.status).toBe('PENDING');

    const due = new Date(T0.getTime() + 60_000);
    clock = due;
    expect(await completer.runOnce()).toBe(1);
    expect(await completer.runOnce()).toBe(0);
    const completed = (await getDeposit(key, pending.id)).json<{ data: DepositRecord }>().data;
    expect(completed).toEqual({
      ...pending,
      status: 'COMPLETED',
      updatedAt: due.toISOString(),
      completedAt: due.toISOString(),
    });
    expect(await ledgerBalance(orgId, 'client', 'GBP')).toBe('40.000000000000000000');
    expect(await ledgerTransactionsOf(pending.id)).toEqual([{ kind: 'deposit' }]);
    const events = await eventsOf(pending.id);
    expect(events.map((e) => e.event_type)).toEqual(['deposit.pending', 'deposit.completed']);
    expect(events[1]!.data).toEqual(completed);
    expect(events[1]!.created_at.toISOString()).toBe(due.toISOString());
  });

  it('credits each deposit exactly once when completers run concurrently', async () => {
    const key = await sandboxKey();
    const orgId = key.file.orgId;
    clock = T0;
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1)
      ids.push((await deposited(key, { currency: 'USD', amount: '1.25', completeAfterSeconds: 5 + (i % 3) })).id);
    clock = new Date(T0.getTime() + 10_000);
    const completers = [
      createDepositCompleter(context),
      createDepositCompleter(context),
      createDepositCompleter(context, { batchSize: 2 }),
    ];
    const counts = await Promise.all([
      ...completers.map((c) => c.runOnce()),
      completers[0]!.runOnce(),
      completers[1]!.runOnce(),
    ]);
    // Other tests' deposits are all complete by now, so every completion counted is one of these.
    expect(counts.reduce((a, b) => a + b, 0)).toBe(12);
    expect(await completers[2]!.runOnce()).toBe(0);
    expect(await ledgerBalance(orgId, 'client', 'USD')).toBe('15.000000000000000000');
    for (const id of ids) {
      expect(await ledgerTransactionsOf(id)).toEqual([{ kind: 'deposit' }]);
      expect((await eventsOf(id)).map((e) => e.event_type)).toEqual(['deposit.pending', 'deposit.completed']);
    }
    expect((await listDeposits(key, '?status=PENDING')).data).toEqual([]);
  });

  it('completes a deposit once even when racing transactions all try it', async () => {
    const key = await sandboxKey();
    clock = T0;
    const pending = await deposited(key, { currency: 'USD', amount: '2', completeAfterSeconds: 30 });
    const reference = await context.reference();
    const at = new Date(T0.getTime() + 30_000);
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () => harness.db.transaction((tx) => settlePendingDeposit(tx, pending, reference, at))),
    );
    expect(outcomes.filter((row) => row !== null)).toHaveLength(1);
    expect(await ledgerBalance(key.file.orgId, 'client', 'USD')).toBe('2.000000000000000000');
    expect(await ledgerTransactionsOf(pending.id)).toEqual([{ kind: 'deposit' }]);
    expect((await eventsOf(pending.id)).map((e) => e.event_type)).toEqual(['deposit.pending', 'deposit.completed']);
  });

  it('runs by itself once started, and stops', async () => {
    const key = await sandboxKey();
    const completer = createDepositCompleter(context, { intervalMs: 10 });
    clock = T0;
    const first = await deposited(key, { currency: 'USD', amount: '3', completeAfterSeconds: 1 });
    completer.start();
    completer.start();
    clock = new Date(T0.getTime() + 1000);
    await expect
      .poll(async () => (await getDeposit(key, first.id)).json<{ data: DepositRecord }>().data.status, {
        timeout: 5000,
      })
      .toBe('COMPLETED');
    await completer.stop();
    // Stopped: its loop runs no tick any more, so the due deposit stays as it is.
    expect(livePollLoops()).not.toContain('deposit completer');
    const second = await deposited(key, { currency: 'USD', amount: '4', completeAfterSeconds: 1 });
    clock = new Date(T0.getTime() + 5000);
    expect((await getDeposit(key, second.id)).json<{ data: DepositRecord }>().data.status).toBe('PENDING');
    expect(await createDepositCompleter(context).runOnce()).toBe(1);
  });

  it('is started by buildCoreApp, and stopped when the app closes', async () => {
    const deps = { db: harness.db, store: harness.store, registry: harness.registry, keyring: harness.keyring, now };
    const key = await sandboxKey();
    const book = { orgId: key.file.orgId, environment: 'sandbox' as const };
    clock = T0;
    const app = await buildCoreApp(deps, { logLevel: 'silent', depositCompleter: { intervalMs: 10 } });
    try {
      const first = await createSandboxDeposit(context, book, {
        currency: 'EUR',
        amount: '1',
        completeAfterSeconds: 2,
      });
      clock = new Date(T0.getTime() + 2000);
      await expect
        .poll(async () => (await getDeposit(key, first.id)).json<{ data: DepositRecord }>().data.status, {
          timeout: 5000,
        })
        .toBe('COMPLETED');
    } finally {
      await app.close();
    }
    const second = await createSandboxDeposit(context, book, { currency: 'EUR', amount: '2', completeAfterSeconds: 1 });
    clock = new Date(T0.getTime() + 4000);
    expect(livePollLoops()).not.toContain('deposit completer');
    expect((await getDeposit(key, second.id)).json<{ data: DepositRecord }>().data.status).toBe('PENDING');

    const disabled = await buildCoreApp(deps, {
      logLevel: 'silent',
      depositCompleter: { enabled: false, intervalMs: 10 },
    });
    // Turned off: the app started no completer loop.
    expect(livePollLoops()).not.toContain('deposit completer');
    await disabled.close();
    expect((await getDeposit(key, second.id)).json<{ data: DepositRecord }>().data.status).toBe('PENDING');
    expect(await createDepositCompleter(context).runOnce()).toBe(1);
  });
});

describe('GET /v3/fx/deposits', () => {
  let key: LoadedKey;
  let made: DepositRecord[];

  beforeAll(async () => {
    key = await sandboxKey();
    made = [];
    const bodies = [
      { currency: 'USD', amount: '10' },
      { currency: 'EUR', amount: '20' },
      { currency: 'USDC', amount: '30', network: 'SOLANA' },
      { currency: 'USD', amount: '40', completeAfterSeconds: 3600 },
      { currency: 'USD', amount: '50' },
    ];
    for (const [i, body] of bodies.entries()) {
      clock = new Date(T0.getTime() + i * 1000);
      made.push(await deposited(key, body));
    }
    clock = null;
    // Another org's deposit never shows.
    await deposited(await sandboxKey(), { currency: 'USD', amount: '99' });
  });
  afterAll(async () => {
    clock = new Date(T0.getTime() + 3_700_000);
    await createDepositCompleter(context).runOnce();
  });

  it("lists the book's deposits newest first, whole when they fit", async () => {
    const page = await listDeposits(key);
    expect(page.data).toEqual([...made].reverse());
    expect(page.pagination).toEqual({ hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null });
  });

  it('filters by currency and by status', async () => {
    expect((await listDeposits(key, '?currency=USD')).data.map((d) => d.amount)).toEqual(['50.00', '40.00', '10.00']);
    expect((await listDeposits(key, '?status=PENDING')).data.map((d) => d.id)).toEqual([made[3]!.id]);
    expect((await listDeposits(key, '?status=COMPLETED&currency=USD')).data.map((d) => d.amount)).toEqual([
      '50.00',
      '10.00',
    ]);
    expect((await listDeposits(key, '?status=FAILED')).data).toEqual([]);
    expect((await listDeposits(key, '?currency=GBP')).data).toEqual([]);
  });

  it('pages with cursors', async () => {
    const first = await listDeposits(key, '?limit=2');
    expect(first.data.map((d) => d.id)).toEqual([made[4]!.id, made[3]!.id]);
    expect(first.pagination).toMatchObject({ hasNext: true, hasPrev: false, prevCursor: null });
    const second = await listDeposits(
      key,
      `?limit=2&startingAfter=${encodeURIComponent(first.pagination.nextCursor!)}`,
    );
    expect(second.data.map((d) => d.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(second.pagination).toMatchObject({ hasNext: true, hasPrev: true });
    const third = await listDeposits(
      key,
      `?limit=2&startingAfter=${encodeURIComponent(second.pagination.nextCursor!)}`,
    );
    expect(third.data.map((d) => d.id)).toEqual([made[0]!.id]);
    expect(third.pagination).toMatchObject({ hasNext: false, hasPrev: true, nextCursor: null });
    const back = await listDeposits(key, `?limit=2&endingBefore=${encodeURIComponent(second.pagination.prevCursor!)}`);
    expect(back.data.map((d) => d.id)).toEqual([made[4]!.id, made[3]!.id]);
    // A cursor is bound to its filters.
    const filtered = await harness.signed({
      key,
      path: `${DEPOSITS}?currency=USD&startingAfter=${encodeURIComponent(first.pagination.nextCursor!)}`,
    });
    expectV3Error(filtered, 'VALIDATION_QUERY_FAILED');
  });

  it('shows nothing of the sandbox book to the live book of the same org', async () => {
    const live = await harness.createKey({ mode: 'live', scopes: ['view'], orgId: key.file.orgId });
    expect((await listDeposits(live)).data).toEqual([]);
  });

  it('refuses malformed filters with VALIDATION_QUERY_FAILED', async () => {
    for (const query of ['?status=DONE', '?currency=usd', '?limit=0', '?limit=101', '?network=FIAT']) {
      const response = await harness.signed({ key, path: `${DEPOSITS}${query}` });
      const error = expectV3Error(response, 'VALIDATION_QUERY_FAILED');
      expect((error.details.issues as Array<{ path: string }>).length, query).toBeGreaterThan(0);
    }
  });
});

describe('GET /v3/fx/deposits/{id}', () => {
  it('is DEPOSIT_NOT_FOUND for unknown, malformed, other-org and other-book ids', async () => {
    const key = await sandboxKey();
    const deposit = await deposited(key, { currency: 'USD', amount: '1' });
    const stranger = await sandboxKey();
    const live = await harness.createKey({ mode: 'live', scopes: ['view'], orgId: key.file.orgId });
    const cases: Array<[LoadedKey, string]> = [
      [key, newId('deposit')],
      [key, 'dep_123'],
      [key, newId('trade')],
      [key, deposit.id.toUpperCase()],
      [stranger, deposit.id],
      [live, deposit.id],
    ];
    for (const [as, id] of cases)
      expectV3Error(await getDeposit(as, id), 'DEPOSIT_NOT_FOUND', { details: { depositId: id } });
  });
});

describe('refusals', () => {
  it('is SANDBOX_MODE_REQUIRED in the live book, and nothing is written', async () => {
    const live = await harness.createKey({ mode: 'live', scopes: ['view', 'trade', 'withdraw', 'webhooks'] });
    expectV3Error(await postDeposit(live, { currency: 'USD', amount: '10' }), 'SANDBOX_MODE_REQUIRED', { details: {} });
    expect(await depositCount(live.file.orgId)).toBe(0);
    await expect(
      createSandboxDeposit(context, { orgId: live.file.orgId, environment: 'live' }, { currency: 'USD', amount: '1' }),
    ).rejects.toMatchObject({
      code: 'SANDBOX_MODE_REQUIRED',
    });
  });

  it('needs scope trade', async () => {
    const viewer = await sandboxKey(['view', 'withdraw']);
    expectV3Error(await postDeposit(viewer, { currency: 'USD', amount: '10' }), 'AUTH_INSUFFICIENT_SCOPE', {
      details: { requiredScope: 'trade' },
    });
  });

  it('refuses invalid bodies with VALIDATION_BODY_FAILED, naming each fault, and writes nothing', async () => {
    const key = await sandboxKey();
    const cases: Array<[unknown, Array<[string, string]>]> = [
      [{ currency: 'USD', amount: '-1' }, [['amount', 'invalid_format']]],
      [{ currency: 'USD', amount: 10 }, [['amount', 'invalid_type']]],
      [{ currency: 'USD', amount: '1e3' }, [['amount', 'invalid_format']]],
      [{ currency: 'USD', amount: '1.123456789' }, [['amount', 'invalid_format']]],
      [{ currency: 'USD' }, [['amount', 'invalid_type']]],
      [{ currency: 'USD', amount: '1.001' }, [['amount', 'too_many_decimals']]],
      [{ currency: 'JPY', amount: '1.5' }, [['amount', 'too_many_decimals']]],
      [{ currency: 'USD', amount: '0.00' }, [['amount', 'too_small']]],
      [{ currency: 'USD', amount: '1000000000000.01' }, [['amount', 'too_big']]],
      [{ currency: 'XYZ', amount: '1' }, [['currency', 'unknown_currency']]],
      [{ currency: 'usd', amount: '1' }, [['currency', 'invalid_format']]],
      [{ currency: 'USD', amount: '1', network: 'ETHEREUM' }, [['network', 'unsupported_network']]],
      [{ currency: 'USDC', amount: '1', network: 'TRON' }, [['network', 'unsupported_network']]],
      [{ currency: 'USDC', amount: '1', network: 'FIAT' }, [['network', 'unsupported_network']]],
      [
        { currency: 'USD', amount: '1.001', network: 'ETHEREUM' },
        [
          ['amount', 'too_many_decimals'],
          ['network', 'unsupported_network'],
        ],
      ],
      [{ currency: 'USD', amount: '1', completeAfterSeconds: 3601 }, [['completeAfterSeconds', 'too_big']]],
      [{ currency: 'USD', amount: '1', completeAfterSeconds: -1 }, [['completeAfterSeconds', 'too_small']]],
      [{ currency: 'USD', amount: '1', completeAfterSeconds: 1.5 }, [['completeAfterSeconds', 'invalid_type']]],
      [{ currency: 'USD', amount: '1', referenceId: '' }, [['referenceId', 'too_small']]],
      [{ currency: 'USD', amount: '1', orgId: 'x' }, [['orgId', 'unrecognized_keys']]],
      ['{"currency":', [['', 'invalid_json']]],
    ];
    for (const [body, expected] of cases) {
      const error = expectV3Error(await postDeposit(key, body), 'VALIDATION_BODY_FAILED');
      const issues = (error.details.issues as Array<{ path: string; code: string }>).map((issue) => [
        issue.path,
        issue.code,
      ]);
      expect(issues, JSON.stringify(body)).toEqual(expected);
    }
    expect(await depositCount(key.file.orgId)).toBe(0);
  });
});

describe('idempotency', () => {
  it('replays the same request and refuses the key with another body', async () => {
    const key = await sandboxKey();
    const idempotencyKey = randomUUID();
    const body = JSON.stringify({ currency: 'USD', amount: '10' });
    const first = await postDeposit(key, body, idempotencyKey);
    expect(first.status).toBe(200);
    const replay = await postDeposit(key, body, idempotencyKey);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    const mismatch = await postDeposit(key, { currency: 'USD', amount: '11' }, idempotencyKey);
    expectV3Error(mismatch, 'IDEMPOTENCY_MISMATCH');
    expect(await depositCount(key.file.orgId)).toBe(1);
    expect(await ledgerBalance(key.file.orgId, 'client', 'USD')).toBe('10.000000000000000000');
  });

  it('holds by the unique key on the row when the idempotency store has lost the key', async () => {
    const key = await sandboxKey();
    const book = { orgId: key.file.orgId, environment: 'sandbox' as const };
    const idempotencyKey = `seed-${randomUUID()}`;
    const input = { currency: 'USDC', amount: '25', network: 'BASE', idempotencyKey };
    const results = await Promise.all(Array.from({ length: 8 }, () => createSandboxDeposit(context, book, input)));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    const again = await createSandboxDeposit(context, book, { ...input });
    expect(again).toEqual(results[0]);
    await expect(createSandboxDeposit(context, book, { ...input, amount: '26' })).rejects.toSatisfy(
      (error) =>
        error instanceof ApiError &&
        error.code === 'IDEMPOTENCY_MISMATCH' &&
        /^sha256:[0-9a-f]{64}$/.test(String(error.details.originalRequestHash)),
    );
    expect(await depositCount(book.orgId)).toBe(1);
    expect(await ledgerBalance(book.orgId, 'client', 'USDC')).toBe('25.000000000000000000');
  });

  it('validates in-process input like the HTTP body', async () => {
    const book = { orgId: (await sandboxKey()).file.orgId, environment: 'sandbox' as const };
    await expect(createSandboxDeposit(context, book, { currency: 'USD', amount: '-5' })).rejects.toMatchObject({
      code: 'VALIDATION_BODY_FAILED',
    });
    await expect(createSandboxDeposit(context, book, { currency: 'USD', amount: '5.555' })).rejects.toMatchObject({
      code: 'VALIDATION_BODY_FAILED',
      details: { issues: [expect.objectContaining({ path: 'amount', code: 'too_many_decimals' })] },
    });
  });

  it('is a 500 naming the deposit when the write fails midway, and the retry with the same key succeeds once', async () => {
    const key = await sandboxKey();
    const idempotencyKey = randomUUID();
    const body = { currency: 'EUR', amount: '7.5' };
    armFailpoint('deposit.after-ledger');
    const failed = await postDeposit(key, body, idempotencyKey);
    const error = expectV3Error(failed, 'INTERNAL_ERROR', { write: true });
    const resourceId = String(error.details.resourceId);
    expect(resourceId).toMatch(/^dep_[0-9a-f]{32}$/);
    expectV3Error(await getDeposit(key, resourceId), 'DEPOSIT_NOT_FOUND');
    expect(await ledgerBalance(key.file.orgId, 'client', 'EUR')).toBeNull();
    expect(await eventsOf(resourceId)).toEqual([]);

    const retry = await deposited(key, body, idempotencyKey);
    expect(retry.status).toBe('COMPLETED');
    expect(await depositCount(key.file.orgId)).toBe(1);
    expect(await ledgerBalance(key.file.orgId, 'client', 'EUR')).toBe('7.500000000000000000');
  });
});

describe('on the embedded database (PGlite), as `npm start` runs by default', () => {
  it('creates, delays, completes and lists deposits', async () => {
    let embeddedClock = T0;
    const embedded = await V3Harness.start({ driver: 'pglite', storeKind: 'memory', now: () => embeddedClock });
    try {
      const key = await embedded.createKey({ mode: 'sandbox', scopes: ['view', 'trade'] });
      const post = (body: Record<string, unknown>) =>
        embedded.signed({
          key,
          method: 'POST',
          path: SANDBOX_DEPOSITS,
          body: JSON.stringify(body),
          idempotencyKey: randomUUID(),
        });
      const first = await post({ currency: 'USDT', amount: '9.5', network: 'SOLANA' });
      expect(first.status, first.text).toBe(200);
      expect(first.json<{ data: DepositRecord }>().data.status).toBe('COMPLETED');
      embeddedClock = new Date(T0.getTime() + 1);
      const later = await post({ currency: 'USD', amount: '3', completeAfterSeconds: 10 });
      expect(later.json<{ data: DepositRecord }>().data.status).toBe('PENDING');

      const completer = createDepositCompleter({
        db: embedded.db,
        reference: referenceData(embedded.db),
        now: () => embeddedClock,
      });
      embeddedClock = new Date(T0.getTime() + 10_001);
      expect(await Promise.all([completer.runOnce(), completer.runOnce()])).toSatisfy(
        (counts: number[]) => counts[0]! + counts[1]! === 1,
      );
      const list = await embedded.signed({ key, path: DEPOSITS });
      expect(list.json<{ data: DepositRecord[] }>().data.map((d) => [d.currency, d.status])).toEqual([
        ['USD', 'COMPLETED'],
        ['USDT', 'COMPLETED'],
      ]);
      expect(await checkLedger(embedded.db)).toEqual([]);
    } finally {
      await embedded.close();
    }
  });
});
