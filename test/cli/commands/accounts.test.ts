import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createWithdrawalAccount,
  findWithdrawalAccount,
  type WithdrawalAccountCreateInput,
  type WithdrawalAccountRow,
} from '../../../src/core/money-movement/withdrawal-accounts.js';
import { referenceData } from '../../../src/core/trading/reference-data.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import { newId } from '../../../src/lib/ids.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { fxgate } from '../in-process-cli.js';

const ORG = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';
const UNKNOWN_ORG = '0190c5a8-0000-7c1a-9f3b-2a4d6e8f0b1c';

const FEDWIRE = {
  currency: 'USD',
  assetType: 'FIAT',
  accountName: 'Acme Treasury',
  transferType: 'FEDWIRE',
  bankName: 'JPMorgan Chase',
  accountNumber: '000123456789',
  routingNumber: '021000021',
} as const satisfies WithdrawalAccountCreateInput;
const TRON = {
  currency: 'USDT',
  assetType: 'STABLECOIN',
  accountName: 'Acme wallet',
  network: 'TRON',
  address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
} as const satisfies WithdrawalAccountCreateInput;

/** The `label: value` lines of `formatAccount` output. */
function accountFields(stdout: string): Record<string, string> {
  return Object.fromEntries(
    stdout
      .split('\n')
      .slice(1)
      .filter((line) => line !== '')
      .map((line) => /^ {2}([a-z ]+):\s+(.*)$/.exec(line)!)
      .map((match) => [match[1]!, match[2]!]),
  );
}

describe('fxgate accounts on PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let live: WithdrawalAccountRow;
  let liveWallet: WithdrawalAccountRow;
  let sandbox: WithdrawalAccountRow;
  let registered = 0;

  async function register(mode: Mode, input: WithdrawalAccountCreateInput): Promise<WithdrawalAccountRow> {
    const principal = {
      orgId: ORG,
      environment: mode,
      keyName: `org/${ORG}/apiKey/${randomUUID()}`,
      scopes: ['withdraw' as const],
    };
    // A second apart, so that newest first is a fixed order.
    registered += 1;
    const context = {
      db: database.db,
      reference: referenceData(database.db),
      now: () => new Date(Date.UTC(2025, 0, 1, 0, 0, registered)),
    };
    return createWithdrawalAccount(context, principal, input, {
      key: randomUUID(),
      fingerprint: `sha256:${'0'.repeat(64)}`,
    });
  }

  const reread = async (row: WithdrawalAccountRow) =>
    (await findWithdrawalAccount(database.db, { orgId: ORG, environment: row.environment }, row.id))!;

  beforeAll(async () => {
    database = await createTestPostgres();
    await new KeyRegistry(database.db).ensureOrg(ORG);
    live = await register('live', FEDWIRE);
    liveWallet = await register('live', TRON);
    sandbox = await register('sandbox', TRON);
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-accounts-'));
    env = { DATABASE_URL: database.url!, FXGATE_DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('lists the accounts of both books, or of one', async () => {
    const [both, onlyLive] = await Promise.all([
      fxgate(['accounts', 'list', ORG.toUpperCase()], env),
      fxgate(['accounts', 'list', ORG, '--mode', 'live'], env),
    ]);
    expect(both.stderr).toBe('');
    expect(both.code).toBe(0);
    const lines = both.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^ID\s+MODE\s+CURRENCY\s+RAIL\s+DESTINATION\s+STATUS\s+VERIFIED\s+WITHDRAWALS\s+NAME\s+CREATED$/,
    );
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(
      new RegExp(
        `^${sandbox.id}\\s+sandbox\\s+USDT\\s+TRON\\s+${TRON.address}\\s+PENDING_VERIFICATION\\s+no\\s+enabled\\s+Acme wallet\\s+\\d{4}-`,
      ),
    );
    expect(lines[2]).toMatch(new RegExp(`^${liveWallet.id}\\s+live\\s+USDT\\s+TRON\\s+`));
    expect(lines[3]).toMatch(
      new RegExp(
        `^${live.id}\\s+live\\s+USD\\s+FEDWIRE\\s+000123456789 @ 021000021\\s+PENDING_VERIFICATION\\s+no\\s+enabled\\s+Acme Treasury`,
      ),
    );

    expect(onlyLive.code).toBe(0);
    expect(onlyLive.stdout).toContain(live.id);
    expect(onlyLive.stdout).not.toContain(sandbox.id);
  });

  it('says so when a book has no accounts', async () => {
    const other = '0190c5a8-1111-7c1a-9f3b-2a4d6e8f0b1c';
    await new KeyRegistry(database.db).ensureOrg(other);
    const result = await fxgate(['accounts', 'list', other, '--mode', 'sandbox'], env);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(`org ${other} has no withdrawal accounts in its sandbox book`);
  });

  it('verifies a live account: ACTIVE and verified', async () => {
    const result = await fxgate(['accounts', 'verify', ORG, live.id, '--mode', 'live'], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(`withdrawal account ${live.id} (org ${ORG} live)`);
    expect(accountFields(result.stdout)).toMatchObject({
      currency: 'USD',
      rail: 'FEDWIRE',
      status: 'ACTIVE',
      verified: 'yes',
      withdrawals: 'enabled',
    });
    expect(await reread(live)).toMatchObject({ status: 'ACTIVE', verified: true, withdrawals_enabled: true });
    expect(await reread(sandbox)).toMatchObject({ status: 'PENDING_VERIFICATION', verified: false });
  });

  it('switches withdrawals off and on, leaving the status alone, and disables an account', async () => {
    const off = await fxgate(['accounts', 'withdrawals', ORG, liveWallet.id, '--mode', 'live', '--disable'], env);
    expect(off.stderr).toBe('');
    expect(off.code).toBe(0);
    expect(accountFields(off.stdout)).toMatchObject({ status: 'PENDING_VERIFICATION', withdrawals: 'disabled' });
    expect(await reread(liveWallet)).toMatchObject({ status: 'PENDING_VERIFICATION', withdrawals_enabled: false });

    const on = await fxgate(['accounts', 'withdrawals', ORG, liveWallet.id, '--mode', 'live', '--enable'], env);
    expect(on.code).toBe(0);
    expect(accountFields(on.stdout).withdrawals).toBe('enabled');

    const disabled = await fxgate(['accounts', 'disable', ORG, liveWallet.id, '--mode', 'live'], env);
    expect(disabled.code).toBe(0);
    expect(accountFields(disabled.stdout)).toMatchObject({ status: 'DISABLED', withdrawals: 'enabled' });
    expect(await reread(liveWallet)).toMatchObject({ status: 'DISABLED', verified: false, withdrawals_enabled: true });
  });

  it('refuses bad input with exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['verify', ORG, 'wac_123', '--mode', 'live'], /A withdrawal account id is wac_/],
      [['verify', ORG, newId('withdrawalAccount')], /required option '--mode <mode>' not specified/],
      [
        ['withdrawals', ORG, newId('withdrawalAccount'), '--mode', 'live'],
        /give exactly one of --enable and --disable/,
      ],
      [
        ['withdrawals', ORG, newId('withdrawalAccount'), '--mode', 'live', '--enable', '--disable'],
        /cannot be used with/,
      ],
      [['list', 'nope'], /An org id is a UUID/],
    ];
    // Parse errors end before any database work; the runs share nothing, so they go side by side.
    const results = await Promise.all(cases.map(([args]) => fxgate(['accounts', ...args], env)));
    results.forEach((result, i) => {
      const [args, message] = cases[i]!;
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stdout, args.join(' ')).toBe('');
    });
  });

  it('reports an unknown org, or an account outside the book, with exit 1', async () => {
    const unknownAccount = newId('withdrawalAccount');
    const [org, list, account, otherBook] = await Promise.all([
      fxgate(['accounts', 'verify', UNKNOWN_ORG, live.id, '--mode', 'live'], env),
      fxgate(['accounts', 'list', UNKNOWN_ORG], env),
      fxgate(['accounts', 'disable', ORG, unknownAccount, '--mode', 'live'], env),
      fxgate(['accounts', 'verify', ORG, sandbox.id, '--mode', 'live'], env),
    ]);
    for (const result of [org, list]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`no org ${UNKNOWN_ORG}`);
      expect(result.stdout).toBe('');
    }
    expect(account.code).toBe(1);
    expect(account.stderr).toContain(`no withdrawal account ${unknownAccount} in the live book of org ${ORG}`);
    expect(otherBook.code).toBe(1);
    expect(otherBook.stderr).toContain(`no withdrawal account ${sandbox.id} in the live book`);
    expect(await reread(sandbox)).toMatchObject({ status: 'PENDING_VERIFICATION', verified: false });
  });

  it('names every subcommand in --help', async () => {
    const top = await fxgate(['accounts', '--help'], env);
    expect(top.code).toBe(0);
    for (const name of ['list', 'verify', 'disable', 'withdrawals']) expect(top.stdout).toContain(name);
  });
});
