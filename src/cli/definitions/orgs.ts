/** `fxgate orgs` as commander declares it; the books' work (commands/orgs.ts) is imported when a subcommand runs. */
import { type Command, InvalidArgumentError } from 'commander';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import { CREDIT_LINE, CURRENCY } from '../arguments.js';
import type { BookChange } from '../commands/orgs.js';
import type { CliRun } from '../io.js';
import {
  bookOption,
  enabledFrom,
  modeOption,
  orgCommand,
  orgReadCommand,
  type SwitchOptions,
  switchOptions,
} from './book-options.js';

export function parseCreditLineAmount(value: string): string {
  const amount = value.trim();
  if (!CREDIT_LINE.test(amount)) {
    throw new InvalidArgumentError(
      'A credit line is a plain unsigned decimal amount in USD, e.g. 250000 or 250000.50 (at most 20 integer and 18 fractional digits).',
    );
  }
  return amount;
}

export function parseCurrency(value: string): string {
  const code = value.trim().toUpperCase();
  if (!CURRENCY.test(code)) throw new InvalidArgumentError('A currency is its code, e.g. USD or USDC.');
  return code;
}

export function parsePair(value: string): { buyCurrency: string; sellCurrency: string } {
  const parts = value.split('/');
  const [buy, sell] = parts.map((part) => part.trim().toUpperCase());
  if (parts.length !== 2 || buy === undefined || sell === undefined || !CURRENCY.test(buy) || !CURRENCY.test(sell)) {
    throw new InvalidArgumentError('A pair is BUY/SELL, the currency bought then the one sold, e.g. EUR/USD.');
  }
  if (buy === sell) throw new InvalidArgumentError('A pair is two different currencies.');
  return { buyCurrency: buy, sellCurrency: sell };
}

/** The work, imported when a subcommand runs. */
const load = () => import('../commands/orgs.js');

export function registerOrgsCommand(program: Command, run: CliRun): void {
  const orgs = program
    .command('orgs')
    .description("Show and change an org's trading books (credit line, trading switches) in the configured database.");

  orgReadCommand(
    orgs,
    'show',
    'Show the books of an org: credit line, committed and available credit (USD), trading, disabled currencies and pairs.',
    async (orgId, mode) => (await load()).showBooks(run, orgId, mode),
  );

  orgCommand(
    orgs,
    'set-credit-line',
    'Set the credit line of a book, in USD; refused below what unsettled trades have committed now.',
  )
    .argument('<amount>', 'the credit line in USD, a plain decimal such as 250000 or 250000.50', parseCreditLineAmount)
    .addOption(modeOption('the book').default('live'))
    .action(async (orgId: string, amount: string, options: { mode: Mode }) =>
      (await load()).changeBook(run, orgId, options.mode, { kind: 'credit-line', amount }),
    );

  /** A switch of the book, turned as --enable/--disable says. */
  const switchCommand = (name: string, description: string) =>
    switchOptions(orgCommand(orgs, name, description).addOption(bookOption()), 'allow it', 'forbid it');
  /** The change a switch command makes, `change` naming what it turns. */
  const changeSwitch = async (orgId: string, options: SwitchOptions, change: (enabled: boolean) => BookChange) => {
    const enabled = enabledFrom(options);
    return (await load()).changeBook(run, orgId, options.mode, change(enabled));
  };

  switchCommand(
    'trading',
    'Enable or disable all trading in a book (quotes and trades answer TRADE_DISABLED while disabled).',
  ).action(async (orgId: string, options: SwitchOptions) =>
    changeSwitch(orgId, options, (enabled) => ({ kind: 'trading', enabled })),
  );

  switchCommand('currency', 'Enable or disable trading a currency, bought or sold, in a book.')
    .argument('<currency>', 'the currency code, e.g. USDC', parseCurrency)
    .action(async (orgId: string, currency: string, options: SwitchOptions) =>
      changeSwitch(orgId, options, (enabled) => ({ kind: 'currency', currency, enabled })),
    );

  switchCommand('pair', 'Enable or disable one direction of a pair in a book: BUY/SELL buys BUY and sells SELL.')
    .argument('<pair>', 'BUY/SELL, e.g. EUR/USD (buy EUR, sell USD)', parsePair)
    .action(async (orgId: string, pair: { buyCurrency: string; sellCurrency: string }, options: SwitchOptions) =>
      changeSwitch(orgId, options, (enabled) => ({ kind: 'pair', ...pair, enabled })),
    );
}
