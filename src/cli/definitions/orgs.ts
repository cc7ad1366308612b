/** `fxgate orgs` as commander declares it; the books' work (commands/orgs.ts) is imported when a subcommand runs. */
import { type Command, InvalidArgumentError, Option } from 'commander';

import { type Mode, MODES } from '../../lib/auth/credential-vocabulary.js';
import { parseMode, parseOrgId } from '../arguments.js';
import { usageError } from '../exit.js';
import type { CliRun } from '../io.js';

/**
 * A credit line as typed: unsigned plain decimal within the column's numeric(38, 18), checked as
 * text so that no digit passes through a JS number.
 */
export const CREDIT_LINE = /^(0|[1-9][0-9]{0,19})(\.[0-9]{1,18})?$/;
export const CURRENCY = /^[A-Z]{3,5}$/;

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

/** The --enable/--disable choice; exactly one is required. */
function enabledFrom(options: { enable?: boolean; disable?: boolean }): boolean {
  if (options.enable === options.disable) throw usageError('give exactly one of --enable and --disable');
  return options.enable === true;
}

function switchOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--mode <mode>', `the book: ${MODES.join(' or ')}`).argParser(parseMode).makeOptionMandatory(),
    )
    .addOption(new Option('--enable', 'allow it').conflicts('disable'))
    .addOption(new Option('--disable', 'forbid it').conflicts('enable'));
}

interface SwitchOptions {
  readonly mode: Mode;
  readonly enable?: boolean;
  readonly disable?: boolean;
}

/** The work, imported when a subcommand runs. */
const load = () => import('../commands/orgs.js');

export function registerOrgsCommand(program: Command, run: CliRun): void {
  const orgs = program
    .command('orgs')
    .description("Show and change an org's trading books (credit line, trading switches) in the configured database.");

  orgs
    .command('show')
    .description(
      'Show the books of an org: credit line, committed and available credit (USD), trading, disabled currencies and pairs.',
    )
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .addOption(new Option('--mode <mode>', `only this book: ${MODES.join(' or ')}`).argParser(parseMode))
    .action(async (orgId: string, options: { mode?: Mode }) => (await load()).showBooks(run, orgId, options.mode));

  orgs
    .command('set-credit-line')
    .description('Set the credit line of a book, in USD; refused below what unsettled trades have committed now.')
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .argument('<amount>', 'the credit line in USD, a plain decimal such as 250000 or 250000.50', parseCreditLineAmount)
    .addOption(new Option('--mode <mode>', `the book: ${MODES.join(' or ')}`).argParser(parseMode).default('live'))
    .action(async (orgId: string, amount: string, options: { mode: Mode }) =>
      (await load()).changeBook(run, orgId, options.mode, { kind: 'credit-line', amount }),
    );

  switchOptions(
    orgs
      .command('trading')
      .description('Enable or disable all trading in a book (quotes and trades answer TRADE_DISABLED while disabled).')
      .argument('<org>', 'org id (a UUID)', parseOrgId),
  ).action(async (orgId: string, options: SwitchOptions) => {
    const enabled = enabledFrom(options);
    return (await load()).changeBook(run, orgId, options.mode, { kind: 'trading', enabled });
  });

  switchOptions(
    orgs
      .command('currency')
      .description('Enable or disable trading a currency, bought or sold, in a book.')
      .argument('<org>', 'org id (a UUID)', parseOrgId)
      .argument('<currency>', 'the currency code, e.g. USDC', parseCurrency),
  ).action(async (orgId: string, currency: string, options: SwitchOptions) => {
    const enabled = enabledFrom(options);
    return (await load()).changeBook(run, orgId, options.mode, { kind: 'currency', currency, enabled });
  });

  switchOptions(
    orgs
      .command('pair')
      .description('Enable or disable one direction of a pair in a book: BUY/SELL buys BUY and sells SELL.')
      .argument('<org>', 'org id (a UUID)', parseOrgId)
      .argument('<pair>', 'BUY/SELL, e.g. EUR/USD (buy EUR, sell USD)', parsePair),
  ).action(async (orgId: string, pair: { buyCurrency: string; sellCurrency: string }, options: SwitchOptions) => {
    const enabled = enabledFrom(options);
    return (await load()).changeBook(run, orgId, options.mode, { kind: 'pair', ...pair, enabled });
  });
}
