/**
 * `fxgate orgs show | set-credit-line | trading | currency | pair`: an operator's view and
 * control of an org's books (sandbox and live) in the configured database.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { z } from 'zod';

import {
  CreditLineBelowCommittedError,
  InvalidCreditLineError,
  InvalidPairError,
  type OrgBook,
  OrgBookNotFoundError,
  readOrgBook,
  setCreditLine,
  setCurrencyEnabled,
  setPairEnabled,
  setTradingEnabled,
  UnknownCurrencyError,
} from '../../core/trading/org-books.js';
import { type Mode, MODES } from '../../lib/auth/credentials.js';
import { Decimal, formatDecimal } from '../../lib/money.js';
import { parseMode, parseOrgId } from '../arguments.js';
import { CliError, usageError } from '../exit.js';
import type { CliRun } from '../io.js';
import { dateCodec, decimalCodec, defineOperation } from '../state/operation.js';
import { withState } from '../state/session.js';

/**
 * A credit line as typed: unsigned plain decimal within the column's numeric(38, 18), checked as
 * text so that no digit passes through a JS number.
 */
const CREDIT_LINE = /^(0|[1-9][0-9]{0,19})(\.[0-9]{1,18})?$/;
const CURRENCY = /^[A-Z]{3,5}$/;

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

/** The repository's errors as the CLI reports them: bad input exits 2, a state conflict 1. */
function cliErrorOf(error: unknown): unknown {
  if (error instanceof OrgBookNotFoundError)
    return new CliError(
      `no org ${error.orgId} (with a ${error.environment} book) in the configured database`,
      undefined,
      { cause: error },
    );
  if (error instanceof CreditLineBelowCommittedError) return new CliError(error.message, undefined, { cause: error });
  if (
    error instanceof UnknownCurrencyError ||
    error instanceof InvalidPairError ||
    error instanceof InvalidCreditLineError
  )
    return usageError(error.message);
  return error;
}

const modeSchema = z.enum(MODES);
const currencySchema = z.string().regex(CURRENCY);

const orgBookSchema = z.object({
  orgId: z.string(),
  environment: modeSchema,
  creditLineUsd: decimalCodec,
  committedUsd: decimalCodec,
  tradingEnabled: z.boolean(),
  disabledCurrencies: z.array(z.string()).readonly(),
  disabledPairs: z.array(z.string()).readonly(),
  updatedAt: dateCodec,
});

/** One change to a book, as the subcommands make them. */
const bookChangeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('credit-line'), amount: z.string().regex(CREDIT_LINE) }),
  z.object({ kind: z.literal('trading'), enabled: z.boolean() }),
  z.object({ kind: z.literal('currency'), currency: currencySchema, enabled: z.boolean() }),
  z.object({
    kind: z.literal('pair'),
    buyCurrency: currencySchema,
    sellCurrency: currencySchema,
    enabled: z.boolean(),
  }),
]);
type BookChange = z.infer<typeof bookChangeSchema>;

/** What the orgs commands do with the database, directly or through a running fxgate's admin listener. */
export const orgOperations = {
  /** The books of an org that exist, of the modes asked for. */
  books: defineOperation({
    name: 'orgs/books',
    input: z.object({ orgId: z.uuid(), modes: z.array(modeSchema).min(1) }),
    output: z.array(orgBookSchema),
    run: async ({ db }, { orgId, modes }) => {
      const found: OrgBook[] = [];
      for (const mode of modes) {
        const book = await readOrgBook(db, orgId, mode);
        if (book) found.push(book);
      }
      return found;
    },
  }),
  change: defineOperation({
    name: 'orgs/change',
    input: z.object({ orgId: z.uuid(), mode: modeSchema, change: bookChangeSchema }),
    output: orgBookSchema,
    run: async ({ db }, { orgId, mode, change }) => {
      try {
        switch (change.kind) {
          case 'credit-line':
            return await setCreditLine(db, orgId, mode, new Decimal(change.amount));
          case 'trading':
            return await setTradingEnabled(db, orgId, mode, change.enabled);
          case 'currency':
            return await setCurrencyEnabled(db, orgId, mode, change.currency, change.enabled);
          case 'pair':
            return await setPairEnabled(
              db,
              orgId,
              mode,
              { buyCurrency: change.buyCurrency, sellCurrency: change.sellCurrency },
              change.enabled,
            );
        }
      } catch (error) {
        throw cliErrorOf(error);
      }
    },
  }),
};

async function changeBook(run: CliRun, orgId: string, mode: Mode, change: BookChange): Promise<void> {
  run.out(formatBook(await withState(run, (state) => state.run(orgOperations.change, { orgId, mode, change }))));
}

function formatList(values: readonly string[]): string {
  return values.length > 0 ? values.join(', ') : 'none';
}

export function formatBook(book: OrgBook): string {
  const available = book.creditLineUsd.minus(book.committedUsd);
  const lines: [string, string][] = [
    ['credit line', `${formatDecimal(book.creditLineUsd)} USD`],
    ['committed', `${formatDecimal(book.committedUsd)} USD`],
    ['available', `${formatDecimal(available)} USD`],
    ['trading', book.tradingEnabled ? 'enabled' : 'disabled'],
    ['disabled currencies', formatList(book.disabledCurrencies)],
    ['disabled pairs', formatList(book.disabledPairs)],
    ['updated', book.updatedAt.toISOString()],
  ];
  const width = Math.max(...lines.map(([label]) => label.length)) + 2;
  return [
    `org ${book.orgId} ${book.environment}`,
    ...lines.map(([label, value]) => `  ${`${label}:`.padEnd(width)}${value}`),
  ].join('\n');
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
    .action(async (orgId: string, options: { mode?: Mode }) => {
      const modes = options.mode ? [options.mode] : MODES;
      const books = await withState(run, (state) => state.run(orgOperations.books, { orgId, modes: [...modes] }));
      if (books.length === 0)
        throw new CliError(
          `no org ${orgId}${options.mode ? ` (with a ${options.mode} book)` : ''} in the configured database`,
        );
      run.out(books.map(formatBook).join('\n\n'));
    });

  orgs
    .command('set-credit-line')
    .description('Set the credit line of a book, in USD; refused below what unsettled trades have committed now.')
    .argument('<org>', 'org id (a UUID)', parseOrgId)
    .argument('<amount>', 'the credit line in USD, a plain decimal such as 250000 or 250000.50', parseCreditLineAmount)
    .addOption(new Option('--mode <mode>', `the book: ${MODES.join(' or ')}`).argParser(parseMode).default('live'))
    .action((orgId: string, amount: string, options: { mode: Mode }) =>
      changeBook(run, orgId, options.mode, { kind: 'credit-line', amount }),
    );

  switchOptions(
    orgs
      .command('trading')
      .description('Enable or disable all trading in a book (quotes and trades answer TRADE_DISABLED while disabled).')
      .argument('<org>', 'org id (a UUID)', parseOrgId),
  ).action((orgId: string, options: SwitchOptions) => {
    const enabled = enabledFrom(options);
    return changeBook(run, orgId, options.mode, { kind: 'trading', enabled });
  });

  switchOptions(
    orgs
      .command('currency')
      .description('Enable or disable trading a currency, bought or sold, in a book.')
      .argument('<org>', 'org id (a UUID)', parseOrgId)
      .argument('<currency>', 'the currency code, e.g. USDC', parseCurrency),
  ).action((orgId: string, currency: string, options: SwitchOptions) => {
    const enabled = enabledFrom(options);
    return changeBook(run, orgId, options.mode, { kind: 'currency', currency, enabled });
  });

  switchOptions(
    orgs
      .command('pair')
      .description('Enable or disable one direction of a pair in a book: BUY/SELL buys BUY and sells SELL.')
      .argument('<org>', 'org id (a UUID)', parseOrgId)
      .argument('<pair>', 'BUY/SELL, e.g. EUR/USD (buy EUR, sell USD)', parsePair),
  ).action((orgId: string, pair: { buyCurrency: string; sellCurrency: string }, options: SwitchOptions) => {
    const enabled = enabledFrom(options);
    return changeBook(run, orgId, options.mode, { kind: 'pair', ...pair, enabled });
  });
}
