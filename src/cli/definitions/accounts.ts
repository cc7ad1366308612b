/** `fxgate accounts` as commander declares it; the database's work (commands/accounts.ts) is imported when a subcommand runs. */
import { type Command, InvalidArgumentError, Option } from 'commander';

import { type Mode, MODES } from '../../lib/auth/credential-vocabulary.js';
import { isId } from '../../lib/ids.js';
import { parseMode, parseOrgId } from '../arguments.js';
import { usageError } from '../exit.js';
import type { CliRun } from '../io.js';

export function parseAccountId(value: string): string {
  const id = value.trim();
  if (!isId('withdrawalAccount', id))
    throw new InvalidArgumentError(
      'A withdrawal account id is wac_ and 32 lower-case hex digits, e.g. wac_0190c5a87d2e7c1a9f3b2a4d6e8f0b1c.',
    );
  return id;
}

function modeOption(): Option {
  return new Option('--mode <mode>', `the book: ${MODES.join(' or ')}`).argParser(parseMode).makeOptionMandatory();
}

/** The work, imported when a subcommand runs. */
const load = () => import('../commands/accounts.js');

export function registerAccountsCommand(program: Command, run: CliRun): void {
  const accounts = program
    .command('accounts')
    .description(
      "Show an org's withdrawal accounts, and verify, disable or switch off withdrawals for one (mainly for the live book).",
    );

  accounts
    .command('list')
    .description(
      'List the withdrawal accounts of an org, newest first: rail, destination, status, verification and withdrawals.',
    )
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .addOption(new Option('--mode <mode>', `only this book: ${MODES.join(' or ')}`).argParser(parseMode))
    .action(async (orgId: string, options: { mode?: Mode }) => (await load()).listAccounts(run, orgId, options.mode));

  accounts
    .command('verify')
    .description(
      'Verify an account: it becomes ACTIVE and verified (also from DISABLED: verifying is how a disable is lifted).',
    )
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .argument('<account>', 'withdrawal account id (wac_...)', parseAccountId)
    .addOption(modeOption())
    .action(async (orgId: string, accountId: string, options: { mode: Mode }) =>
      (await load()).changeAccount(run, orgId, options.mode, accountId, { kind: 'verify' }),
    );

  accounts
    .command('disable')
    .description(
      'Disable an account: withdrawals to it are refused (WITHDRAWAL_ACCOUNT_NOT_LIVE) until it is verified again.',
    )
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .argument('<account>', 'withdrawal account id (wac_...)', parseAccountId)
    .addOption(modeOption())
    .action(async (orgId: string, accountId: string, options: { mode: Mode }) =>
      (await load()).changeAccount(run, orgId, options.mode, accountId, { kind: 'disable' }),
    );

  accounts
    .command('withdrawals')
    .description(
      'Enable or disable withdrawals to one account, leaving its status alone (refused ones answer WITHDRAWAL_DISABLED_FOR_ACCOUNT).',
    )
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .argument('<account>', 'withdrawal account id (wac_...)', parseAccountId)
    .addOption(modeOption())
    .addOption(new Option('--enable', 'allow withdrawals').conflicts('disable'))
    .addOption(new Option('--disable', 'refuse withdrawals').conflicts('enable'))
    .action(async (orgId: string, accountId: string, options: { mode: Mode; enable?: boolean; disable?: boolean }) => {
      if (options.enable === options.disable) throw usageError('give exactly one of --enable and --disable');
      return (await load()).changeAccount(run, orgId, options.mode, accountId, {
        kind: 'withdrawals',
        enabled: options.enable === true,
      });
    });
}
