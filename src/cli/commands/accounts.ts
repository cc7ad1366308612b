/**
 * `fxgate accounts list | verify | disable | withdrawals`: an operator's view and control of an
 * org's withdrawal accounts in the configured database. In the live book nothing else verifies
 * an account (the sandbox has its own endpoints), so these are how a live account goes ACTIVE,
 * is taken out of use, or has its withdrawals switched off.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { MODES, type Mode } from '../../lib/auth/credentials.js';
import type { Queryable } from '../../lib/db/database.js';
import { isId } from '../../lib/ids.js';
import {
  listWithdrawalAccounts,
  updateWithdrawalAccount,
  verifyWithdrawalAccount,
  type WithdrawalAccountRow,
} from '../../core/settlement/withdrawal-accounts.js';
import { readOrgBook } from '../../core/trading/org-books.js';
import { parseMode, parseOrgId } from '../arguments.js';
import { Closers } from '../closers.js';
import { cliConfig } from '../config.js';
import { CliError, usageError } from '../exit.js';
import { openRegistry } from '../runtime.js';

export function parseAccountId(value: string): string {
  const id = value.trim();
  if (!isId('withdrawalAccount', id)) throw new InvalidArgumentError('A withdrawal account id is wac_ and 32 lower-case hex digits, e.g. wac_0190c5a87d2e7c1a9f3b2a4d6e8f0b1c.');
  return id;
}

/** Runs fn on the migrated database, then closes it whatever happened. */
async function withDatabase<T>(fn: (db: Queryable) => Promise<T>): Promise<T> {
  const closers = new Closers();
  try {
    return await fn((await openRegistry(cliConfig(), closers)).db);
  } finally {
    await closers.closeAll();
  }
}

const NONE = '-';
const HEADER = ['ID', 'MODE', 'CURRENCY', 'RAIL', 'DESTINATION', 'STATUS', 'VERIFIED', 'WITHDRAWALS', 'NAME', 'CREATED'];

/** The rail an account is paid on: FEDWIRE or SWIFT for fiat, the chain for a stablecoin. */
function railOf(account: WithdrawalAccountRow): string {
  return account.transfer_type ?? account.network ?? NONE;
}

/** Where the money goes: the account number (with its routing number or BIC), or the address. */
function destinationOf(account: WithdrawalAccountRow): string {
  if (account.asset_type === 'STABLECOIN') return account.address ?? NONE;
  const bank = account.routing_number ?? account.swift_code;
  return `${account.account_number ?? NONE}${bank ? ` @ ${bank}` : ''}`;
}

function tableRow(account: WithdrawalAccountRow): string[] {
  return [
    account.id,
    account.environment,
    account.currency,
    railOf(account),
    destinationOf(account),
    account.status,
    account.verified ? 'yes' : 'no',
    account.withdrawals_enabled ? 'enabled' : 'disabled',
    account.account_name,
    account.created_at.toISOString(),
  ];
}

/** One aligned row per account, for people; ISO times so it also sorts. */
export function formatAccountTable(accounts: readonly WithdrawalAccountRow[]): string {
  const rows = [HEADER, ...accounts.map(tableRow)];
  const widths = HEADER.map((_, column) => Math.max(...rows.map((cells) => cells[column]!.length)));
  return rows.map((cells) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}

/** One account as `label: value` lines, after a change. */
export function formatAccount(account: WithdrawalAccountRow): string {
  const lines: [string, string][] = [
    ['currency', account.currency],
    ['rail', railOf(account)],
    ['destination', destinationOf(account)],
    ['name', account.account_name],
    ['status', account.status],
    ['verified', account.verified ? 'yes' : 'no'],
    ['withdrawals', account.withdrawals_enabled ? 'enabled' : 'disabled'],
    ['updated', account.updated_at.toISOString()],
  ];
  const width = Math.max(...lines.map(([label]) => label.length)) + 2;
  return [`withdrawal account ${account.id} (org ${account.org_id} ${account.environment})`, ...lines.map(([label, value]) => `  ${`${label}:`.padEnd(width)}${value}`)].join('\n');
}

/** Applies a change to one account and prints it; an unknown org or account exits 1. */
async function changeAccount(
  orgId: string,
  mode: Mode,
  accountId: string,
  change: (db: Queryable) => Promise<WithdrawalAccountRow | null>,
): Promise<void> {
  const account = await withDatabase(async (db) => {
    if (!(await readOrgBook(db, orgId, mode))) throw new CliError(`no org ${orgId} (with a ${mode} book) in the configured database`);
    return change(db);
  });
  if (!account) throw new CliError(`no withdrawal account ${accountId} in the ${mode} book of org ${orgId}`);
  console.log(formatAccount(account));
}

function modeOption(): Option {
  return new Option('--mode <mode>', `the book: ${MODES.join(' or ')}`).argParser(parseMode).makeOptionMandatory();
}

export function registerAccountsCommand(program: Command): void {
  const accounts = program
    .command('accounts')
    .description("Show an org's withdrawal accounts, and verify, disable or switch off withdrawals for one (mainly for the live book).");

  accounts
    .command('list')
    .description('List the withdrawal accounts of an org, newest first: rail, destination, status, verification and withdrawals.')
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .addOption(new Option('--mode <mode>', `only this book: ${MODES.join(' or ')}`).argParser(parseMode))
    .action(async (orgId: string, options: { mode?: Mode }) => {
      const modes = options.mode ? [options.mode] : MODES;
      const listed = await withDatabase(async (db) => {
        let books = 0;
        const rows: WithdrawalAccountRow[] = [];
        for (const mode of modes) {
          if (!(await readOrgBook(db, orgId, mode))) continue;
          books += 1;
          rows.push(...(await listWithdrawalAccounts(db, { orgId, environment: mode })));
        }
        return { books, rows };
      });
      if (listed.books === 0) throw new CliError(`no org ${orgId}${options.mode ? ` (with a ${options.mode} book)` : ''} in the configured database`);
      console.log(listed.rows.length > 0 ? formatAccountTable(listed.rows) : `org ${orgId} has no withdrawal accounts${options.mode ? ` in its ${options.mode} book` : ''}`);
    });

  accounts
    .command('verify')
    .description('Verify an account: it becomes ACTIVE and verified (also from DISABLED: verifying is how a disable is lifted).')
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .argument('<account>', 'withdrawal account id (wac_...)', parseAccountId)
    .addOption(modeOption())
    .action((orgId: string, accountId: string, options: { mode: Mode }) =>
      changeAccount(orgId, options.mode, accountId, (db) => verifyWithdrawalAccount(db, orgId, options.mode, accountId)),
    );

  accounts
    .command('disable')
    .description('Disable an account: withdrawals to it are refused (WITHDRAWAL_ACCOUNT_NOT_LIVE) until it is verified again.')
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .argument('<account>', 'withdrawal account id (wac_...)', parseAccountId)
    .addOption(modeOption())
    .action((orgId: string, accountId: string, options: { mode: Mode }) =>
      changeAccount(orgId, options.mode, accountId, (db) => updateWithdrawalAccount(db, orgId, options.mode, accountId, { status: 'DISABLED' })),
    );

  accounts
    .command('withdrawals')
    .description('Enable or disable withdrawals to one account, leaving its status alone (refused ones answer WITHDRAWAL_DISABLED_FOR_ACCOUNT).')
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .argument('<account>', 'withdrawal account id (wac_...)', parseAccountId)
    .addOption(modeOption())
    .addOption(new Option('--enable', 'allow withdrawals').conflicts('disable'))
    .addOption(new Option('--disable', 'refuse withdrawals').conflicts('enable'))
    .action((orgId: string, accountId: string, options: { mode: Mode; enable?: boolean; disable?: boolean }) => {
      if (options.enable === options.disable) throw usageError('give exactly one of --enable and --disable');
      const withdrawalsEnabled = options.enable === true;
      return changeAccount(orgId, options.mode, accountId, (db) => updateWithdrawalAccount(db, orgId, options.mode, accountId, { withdrawalsEnabled }));
    });
}
