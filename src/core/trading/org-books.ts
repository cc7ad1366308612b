/**
 * An org's book: the trading settings of one org in one environment (sandbox or live), kept in
 * `org_environments`. Quotes and trades read it to check permission and to reserve credit; the
 * operator CLI (`fxgate orgs`) changes it. Every change is one conditional UPDATE, so that two
 * operators, or an operator and a trade reserving credit, never lose each other's writes.
 */
import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Queryable } from '../../lib/db/database.js';
import { ApiError } from '../../lib/errors/api-error.js';
import {
  CreditLineBelowCommittedError,
  InvalidCreditLineError,
  InvalidPairError,
  OrgBookNotFoundError,
  UnknownCurrencyError,
} from '../../lib/errors/internal-errors.js';
import { type Decimal, formatDecimal, parseDecimal } from '../../lib/money.js';
import { pairKey } from './reference-data.js';

export interface OrgBook {
  readonly orgId: string;
  readonly environment: Mode;
  readonly creditLineUsd: Decimal;
  /** Credit held by executed, unsettled trades; never above the credit line (a table CHECK). */
  readonly committedUsd: Decimal;
  readonly tradingEnabled: boolean;
  /** Currency codes, sorted. */
  readonly disabledCurrencies: readonly string[];
  /** 'BUY/SELL' (the currency bought, then the one sold), sorted. */
  readonly disabledPairs: readonly string[];
  readonly updatedAt: Date;
}

/** The bounds of the column, numeric(38, 18): larger or finer values would fail or be rounded by PostgreSQL. */
const MAX_FRACTION_DIGITS = 18;
const MAX_INTEGER_DIGITS = 20;

interface BookRow {
  org_id: string;
  environment: Mode;
  credit_line_usd: string;
  committed_usd: string;
  trading_enabled: boolean;
  disabled_currencies: string[];
  disabled_pairs: string[];
  updated_at: Date;
}

const BOOK_COLUMNS =
  'org_id, environment, credit_line_usd, committed_usd, trading_enabled, disabled_currencies, disabled_pairs, updated_at';

function toBook(row: BookRow): OrgBook {
  return {
    orgId: row.org_id,
    environment: row.environment,
    creditLineUsd: parseDecimal(row.credit_line_usd),
    committedUsd: parseDecimal(row.committed_usd),
    tradingEnabled: row.trading_enabled,
    // Stored in the order they were disabled; sorted so that every reader sees one order.
    disabledCurrencies: [...row.disabled_currencies].sort(),
    disabledPairs: [...row.disabled_pairs].sort(),
    updatedAt: row.updated_at,
  };
}

/**
 * The book, or null when the org has none in this environment. forUpdate locks the row until the
 * caller's transaction ends (meaningful only inside one), for a caller that decides on its values.
 */
export async function readOrgBook(
  db: Queryable,
  orgId: string,
  environment: Mode,
  options: { forUpdate?: boolean } = {},
): Promise<OrgBook | null> {
  const { rows } = await db.query<BookRow>(
    `SELECT ${BOOK_COLUMNS} FROM org_environments WHERE org_id = $1 AND environment = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [orgId, environment],
  );
  const row = rows[0];
  return row ? toBook(row) : null;
}

function validateCreditLine(amountUsd: Decimal): void {
  const text = amountUsd.isFinite() ? formatDecimal(amountUsd) : String(amountUsd);
  if (!amountUsd.isFinite()) throw new InvalidCreditLineError(text, 'not a finite amount');
  if (amountUsd.isNegative() && !amountUsd.isZero())
    throw new InvalidCreditLineError(text, 'a credit line is not negative');
  if ((amountUsd.decimalPlaces() ?? 0) > MAX_FRACTION_DIGITS)
    throw new InvalidCreditLineError(text, `at most ${MAX_FRACTION_DIGITS} fractional digits`);
  if (amountUsd.integerValue().abs().toFixed().length > MAX_INTEGER_DIGITS)
    throw new InvalidCreditLineError(text, `at most ${MAX_INTEGER_DIGITS} integer digits`);
}

/**
 * Sets the credit line. Refuses a line below what is committed at the moment of the update: the
 * check and the write are one statement on the locked row, so a trade reserving credit at the
 * same time is either counted or waits, never slips under the new line.
 */
export async function setCreditLine(
  db: Queryable,
  orgId: string,
  environment: Mode,
  amountUsd: Decimal,
): Promise<OrgBook> {
  validateCreditLine(amountUsd);
  // A refused change still returns the row (unchanged) so that one round trip tells "no such
  // book" from "below committed", and reports the committed amount that was in the way.
  const { rows } = await db.query<BookRow & { applied: boolean }>(
    `UPDATE org_environments
        SET credit_line_usd = CASE WHEN committed_usd <= $3::numeric THEN $3::numeric ELSE credit_line_usd END,
            updated_at = CASE WHEN committed_usd <= $3::numeric AND credit_line_usd <> $3::numeric THEN now() ELSE updated_at END
      WHERE org_id = $1 AND environment = $2
      RETURNING ${BOOK_COLUMNS}, committed_usd <= $3::numeric AS applied`,
    [orgId, environment, formatDecimal(amountUsd)],
  );
  const row = rows[0];
  if (!row) throw new OrgBookNotFoundError(orgId, environment);
  const book = toBook(row);
  if (!row.applied) throw new CreditLineBelowCommittedError(orgId, environment, amountUsd, book.committedUsd);
  return book;
}

/** Runs one UPDATE of the book that returns it, or throws when the book does not exist. */
async function updateBook(
  db: Queryable,
  orgId: string,
  environment: Mode,
  set: string,
  params: readonly unknown[],
): Promise<OrgBook> {
  const { rows } = await db.query<BookRow>(
    `UPDATE org_environments SET ${set} WHERE org_id = $1 AND environment = $2 RETURNING ${BOOK_COLUMNS}`,
    [orgId, environment, ...params],
  );
  const row = rows[0];
  if (!row) throw new OrgBookNotFoundError(orgId, environment);
  return toBook(row);
}

export function setTradingEnabled(db: Queryable, orgId: string, environment: Mode, enabled: boolean): Promise<OrgBook> {
  // updated_at moves only on a real change, so repeating a command leaves the book as it was.
  return updateBook(
    db,
    orgId,
    environment,
    `trading_enabled = $3::boolean,
     updated_at = CASE WHEN trading_enabled = $3::boolean THEN updated_at ELSE now() END`,
    [enabled],
  );
}

/**
 * The SET clause that adds ($4 false) or removes ($4 true) the text $3 in an array column.
 * Computed from the row in the UPDATE itself: PostgreSQL re-evaluates it on the latest version
 * of a row that a concurrent UPDATE changed, so parallel changes of different values all stick,
 * which a read-modify-write from the application would not guarantee.
 */
function toggleInArray(column: 'disabled_currencies' | 'disabled_pairs'): string {
  const present = `($3::text = ANY(${column}))`;
  return `${column} = CASE
       WHEN $4::boolean THEN array_remove(${column}, $3::text)
       WHEN ${present} THEN ${column}
       ELSE array_append(${column}, $3::text)
     END,
     updated_at = CASE WHEN $4::boolean = ${present} THEN now() ELSE updated_at END`;
}

async function assertCurrenciesExist(db: Queryable, codes: readonly string[]): Promise<void> {
  const { rows } = await db.query<{ code: string }>('SELECT code FROM currencies WHERE code = ANY($1::text[])', [
    codes,
  ]);
  const known = new Set(rows.map((row) => row.code));
  const missing = codes.find((code) => !known.has(code));
  if (missing !== undefined) throw new UnknownCurrencyError(missing);
}

/** Enables or disables trading in one currency (either side of a trade). Idempotent. */
export async function setCurrencyEnabled(
  db: Queryable,
  orgId: string,
  environment: Mode,
  currency: string,
  enabled: boolean,
): Promise<OrgBook> {
  await assertCurrenciesExist(db, [currency]);
  return updateBook(db, orgId, environment, toggleInArray('disabled_currencies'), [currency, enabled]);
}

/** Enables or disables one direction of a pair (buying buyCurrency with sellCurrency). Idempotent. */
export async function setPairEnabled(
  db: Queryable,
  orgId: string,
  environment: Mode,
  pair: { buyCurrency: string; sellCurrency: string },
  enabled: boolean,
): Promise<OrgBook> {
  if (pair.buyCurrency === pair.sellCurrency) throw new InvalidPairError(pair.buyCurrency, pair.sellCurrency);
  await assertCurrenciesExist(db, [pair.buyCurrency, pair.sellCurrency]);
  return updateBook(db, orgId, environment, toggleInArray('disabled_pairs'), [
    pairKey(pair.buyCurrency, pair.sellCurrency),
    enabled,
  ]);
}

/** What of a book decides whether it may trade a pair. */
export type TradingPermissions = Pick<OrgBook, 'tradingEnabled' | 'disabledCurrencies' | 'disabledPairs'>;

/**
 * The trading permission check a quote and a trade both make, in this order: trading disabled →
 * TRADE_DISABLED; either currency disabled (the bought one checked first) →
 * TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT; the pair disabled → TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT.
 */
export function assertTradingAllowed(book: TradingPermissions, buyCurrency: string, sellCurrency: string): void {
  if (!book.tradingEnabled) throw new ApiError('TRADE_DISABLED');
  for (const currency of [buyCurrency, sellCurrency]) {
    if (book.disabledCurrencies.includes(currency))
      throw new ApiError('TRADE_CURRENCY_NOT_ENABLED_FOR_ACCOUNT', { currency });
  }
  if (book.disabledPairs.includes(pairKey(buyCurrency, sellCurrency)))
    throw new ApiError('TRADE_PAIR_NOT_ENABLED_FOR_ACCOUNT', { buyCurrency, sellCurrency });
}
