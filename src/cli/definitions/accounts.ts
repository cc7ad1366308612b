/** `fxgate accounts` as commander declares it; the database's work (commands/accounts.ts) is imported when a subcommand runs. */
import { type Command, InvalidArgumentError } from 'commander';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import { isId } from '../../lib/ids.js';
import type { CliRun } from '../io.js';
import {
  bookOption,
  enabledFrom,
  orgCommand,
  orgReadCommand,
  type SwitchOptions,
  switchOptions,
} from './book-options.js';

export function parseAccountId(value: string): string {
  const id = value.trim();
  if (!isId('withdrawalAccount', id))
    throw new InvalidArgumentError(
      'A withdrawal account id is wac_ and 32 lower-case hex digits, e.g. wac_0190c5a87d2e7c1a9f3b2a4d6e8f0b1c.',
    );
  return id;
}

/** A change to one account of a book: the org, the account and the book. */
function accountCommand(accounts: Command, name: string, description: string): Command {
  return orgCommand(accounts, name, description)
    .argument('<account>', 'withdrawal account id (wac_...)', parseAccountId)
    .addOption(bookOption());
}

/** The changes that take nothing but the account, in the order help lists them. */
const STATUS_CHANGES = [
  {
    kind: 'verify',
    description:
      'Verify an account: it becomes ACTIVE and verified (also from DISABLED: verifying is how a disable is lifted).',
  },
  {
    kind: 'disable',
    description:
      'Disable an account: withdrawals to it are refused (WITHDRAWAL_ACCOUNT_NOT_LIVE) until it is verified again.',
  },
] as const;

/** The work, imported when a subcommand runs. */
const load = () => import('../commands/accounts.js');

export function registerAccountsCommand(program: Command, run: CliRun): void {
  const accounts = program
    .command('accounts')
    .description(
      "Show an org's withdrawal accounts, and verify, disable or switch off withdrawals for one (mainly for the live book).",
    );

  orgReadCommand(
    accounts,
    'list',
    'List the withdrawal accounts of an org, newest first: rail, destination, status, verification and withdrawals.',
    async (orgId, mode) => (await load()).listAccounts(run, orgId, mode),
  );

  for (const { kind, description } of STATUS_CHANGES) {
    accountCommand(accounts, kind, description).action(
      async (orgId: string, accountId: string, options: { mode: Mode }) =>
        (await load()).changeAccount(run, orgId, options.mode, accountId, { kind }),
    );
  }

  switchOptions(
    accountCommand(
      accounts,
      'withdrawals',
      'Enable or disable withdrawals to one account, leaving its status alone (refused ones answer WITHDRAWAL_DISABLED_FOR_ACCOUNT).',
    ),
    'allow withdrawals',
    'refuse withdrawals',
  ).action(async (orgId: string, accountId: string, options: SwitchOptions) => {
    const enabled = enabledFrom(options);
    return (await load()).changeAccount(run, orgId, options.mode, accountId, { kind: 'withdrawals', enabled });
  });
}
