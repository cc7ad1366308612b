import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { fxgate } from '../in-process-cli.js';

const ORG = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';
const UNKNOWN_ORG = '0190c5a8-0000-7c1a-9f3b-2a4d6e8f0b1c';

/** The `label: value` lines of one book's block in `orgs show` output. */
function bookFields(stdout: string, mode: 'sandbox' | 'live'): Record<string, string> {
  const block = stdout.split('\n\n').find((part) => part.startsWith(`org ${ORG} ${mode}\n`));
  if (block === undefined) throw new Error(`no ${mode} book in:\n${stdout}`);
  return Object.fromEntries(
    block
      .split('\n')
      .slice(1)
      .filter((line) => line !== '')
      .map((line) => /^ {2}([a-z ]+):\s+(.*)$/.exec(line)!)
      .map((match) => [match[1]!, match[2]!]),
  );
}

describe('fxgate orgs on PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestPostgres();
    await new KeyRegistry(database.db).ensureOrg(ORG);
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-orgs-'));
    env = { DATABASE_URL: database.url!, FXGATE_DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('sets the live credit line, then shows both books', async () => {
    const set = await fxgate(['orgs', 'set-credit-line', ORG, '250000.50'], env);
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(bookFields(set.stdout, 'live')['credit line']).toBe('250000.5 USD');

    await database.db.query(
      `UPDATE org_environments SET committed_usd = 1000.25 WHERE org_id = $1 AND environment = 'live'`,
      [ORG],
    );
    const shown = await fxgate(['orgs', 'show', ORG.toUpperCase()], env);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    expect(bookFields(shown.stdout, 'live')).toMatchObject({
      'credit line': '250000.5 USD',
      committed: '1000.25 USD',
      available: '249000.25 USD',
      trading: 'enabled',
      'disabled currencies': 'none',
      'disabled pairs': 'none',
    });
    expect(bookFields(shown.stdout, 'sandbox')).toMatchObject({
      'credit line': '1000000 USD',
      committed: '0 USD',
      available: '1000000 USD',
    });

    const onlySandbox = await fxgate(['orgs', 'show', ORG, '--mode', 'sandbox'], env);
    expect(onlySandbox.code).toBe(0);
    expect(onlySandbox.stdout).not.toContain(`org ${ORG} live`);
    expect(onlySandbox.stdout).toContain(`org ${ORG} sandbox`);

    const { rows } = await database.db.query<{ credit_line_usd: string }>(
      `SELECT credit_line_usd FROM org_environments WHERE org_id = $1 AND environment = 'live'`,
      [ORG],
    );
    expect(rows[0]!.credit_line_usd).toMatch(/^250000\.50*$/);
  });

  it('refuses a credit line below what is committed with exit 1', async () => {
    const result = await fxgate(['orgs', 'set-credit-line', ORG, '1000', '--mode', 'live'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/1000\.25 USD is committed/);
  });

  it('disables and enables trading, currencies and pairs', async () => {
    const off = await fxgate(['orgs', 'trading', ORG, '--mode', 'sandbox', '--disable'], env);
    expect(off.stderr).toBe('');
    expect(off.code).toBe(0);
    expect(bookFields(off.stdout, 'sandbox').trading).toBe('disabled');
    const { rows } = await database.db.query<{ trading_enabled: boolean }>(
      'SELECT trading_enabled FROM org_environments WHERE org_id = $1 ORDER BY environment',
      [ORG],
    );
    expect(rows.map((row) => row.trading_enabled)).toEqual([true, false]);

    const currency = await fxgate(['orgs', 'currency', ORG, 'usdc', '--mode', 'sandbox', '--disable'], env);
    expect(currency.code).toBe(0);
    expect(bookFields(currency.stdout, 'sandbox')['disabled currencies']).toBe('USDC');

    const pair = await fxgate(['orgs', 'pair', ORG, 'EUR/USD', '--mode', 'sandbox', '--disable'], env);
    expect(pair.code).toBe(0);
    expect(bookFields(pair.stdout, 'sandbox')['disabled pairs']).toBe('EUR/USD');

    const on = await fxgate(['orgs', 'trading', ORG, '--mode', 'sandbox', '--enable'], env);
    expect(on.code).toBe(0);
    expect(bookFields(on.stdout, 'sandbox').trading).toBe('enabled');
  });

  it.each([
    [
      ['set-credit-line', ORG, '12abc'],
      /'12abc' is invalid for argument 'amount'\. A credit line is a plain unsigned decimal/,
    ],
    [['set-credit-line', ORG, '1e6'], /'1e6' is invalid/],
    [['set-credit-line', ORG, '0.0000000000000000001'], /is invalid/],
    [['set-credit-line', ORG, '100', '--mode', 'prod'], /The mode is one of sandbox, live/],
    [['set-credit-line', 'not-a-uuid', '100'], /An org id is a UUID/],
    [['trading', ORG, '--mode', 'live'], /give exactly one of --enable and --disable/],
    [['trading', ORG, '--disable'], /required option '--mode <mode>' not specified/],
    [['trading', ORG, '--mode', 'live', '--enable', '--disable'], /cannot be used with/],
    [['currency', ORG, 'XYZ', '--mode', 'live', '--disable'], /unknown currency "XYZ"/],
    [['pair', ORG, 'EUR-USD', '--mode', 'live', '--disable'], /A pair is BUY\/SELL/],
    [['pair', ORG, 'EUR/EUR', '--mode', 'live', '--disable'], /two different currencies/],
  ])('refuses bad input with exit 2: %j', async (args, message) => {
    const result = await fxgate(['orgs', ...args], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it.each([
    [['show', UNKNOWN_ORG]],
    [['show', UNKNOWN_ORG, '--mode', 'live']],
    [['set-credit-line', UNKNOWN_ORG, '100']],
    [['trading', UNKNOWN_ORG, '--mode', 'live', '--disable']],
    [['currency', UNKNOWN_ORG, 'EUR', '--mode', 'live', '--disable']],
  ])('reports an unknown org with exit 1: %j', async (args) => {
    const result = await fxgate(['orgs', ...args], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`no org ${UNKNOWN_ORG}`);
    expect(result.stdout).toBe('');
  });

  it('explains every subcommand with --help', async () => {
    const [top, setLine] = await Promise.all([
      fxgate(['orgs', '--help'], env),
      fxgate(['orgs', 'set-credit-line', '--help'], env),
    ]);
    expect(top.code).toBe(0);
    for (const name of ['show', 'set-credit-line', 'trading', 'currency', 'pair']) expect(top.stdout).toContain(name);
    expect(setLine.code).toBe(0);
    expect(setLine.stdout).toMatch(/--mode <mode>.*\(default: "live"\)/s);
  });
});
