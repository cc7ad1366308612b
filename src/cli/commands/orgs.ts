/**
 * `fxgate orgs show | set-credit-line | trading | currency | pair`: an operator's view and
 * control of an org's books (sandbox and live) in the configured database. Declared in
 * definitions/orgs.ts.
 */
import { z } from 'zod';

import {
  type OrgBook,
  readOrgBook,
  setCreditLine,
  setCurrencyEnabled,
  setPairEnabled,
  setTradingEnabled,
} from '../../core/trading/org-books.js';
import { type Mode, MODES } from '../../lib/auth/credential-vocabulary.js';
import {
  CliError,
  CreditLineBelowCommittedError,
  OrgBookError,
  OrgBookNotFoundError,
} from '../../lib/errors/internal-errors.js';
import { Decimal, formatDecimal } from '../../lib/money.js';
import { CREDIT_LINE, CURRENCY } from '../arguments.js';
import { usageError } from '../exit.js';
import type { CliRun } from '../io.js';
import { dateCodec, decimalCodec, defineOperation, modeSchema } from '../state/operation.js';
import { withState } from '../state/session.js';

/** The repository's errors as the CLI reports them: bad input exits 2, a state conflict 1. */
function cliErrorOf(error: unknown): unknown {
  if (error instanceof OrgBookNotFoundError)
    return new CliError(
      `no org ${error.orgId} (with a ${error.environment} book) in the configured database`,
      undefined,
      { cause: error },
    );
  if (error instanceof CreditLineBelowCommittedError) return new CliError(error.message, undefined, { cause: error });
  // The books' other errors are bad input: an unknown currency, a one-currency pair, an invalid line.
  if (error instanceof OrgBookError) return usageError(error.message);
  return error;
}

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
export type BookChange = z.infer<typeof bookChangeSchema>;

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

export async function changeBook(run: CliRun, orgId: string, mode: Mode, change: BookChange): Promise<void> {
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

/** The books of an org, of one mode or both; an org without such a book exits 1. */
export async function showBooks(run: CliRun, orgId: string, mode: Mode | undefined): Promise<void> {
  const modes = mode ? [mode] : MODES;
  const books = await withState(run, (state) => state.run(orgOperations.books, { orgId, modes: [...modes] }));
  if (books.length === 0)
    throw new CliError(`no org ${orgId}${mode ? ` (with a ${mode} book)` : ''} in the configured database`);
  run.out(books.map(formatBook).join('\n\n'));
}
