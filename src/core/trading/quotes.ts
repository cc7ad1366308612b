/**
 * Quotes: a locked price for one trade. Creating one checks, in order: the org may trade
 * (TRADE_DISABLED, currency, pair settings), the pair exists (PAIR_NOT_SUPPORTED), the amount's
 * precision (QUOTE_INVALID_AMOUNT_PRECISION) and the pair's limits (QUOTE_AMOUNT_OUT_OF_RANGE).
 * The rate, both amounts and the USD value the trade will commit are fixed at creation.
 */
import { z } from 'zod';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Queryable } from '../../lib/db/database.js';
import { ApiError } from '../../lib/errors/api-error.js';
import { idToLegacyUuid, newId } from '../../lib/ids.js';
import { type Decimal, formatDecimal, formatToDecimals, fractionDigits, parseDecimal } from '../../lib/money.js';
import type { Principal } from '../principal.js';
import { currencyCode, decimalString, timestamp, v3Id } from '../wire-types.js';
import { assertTradingAllowed, readOrgBook } from './org-books.js';
import { priceQuote, usdValue } from './pricing.js';
import { type Currency, pairKey, type ReferenceSnapshot } from './reference-data.js';
import type { TradingContext } from './trading-context.js';

export interface QuoteRequest {
  readonly buyCurrency: string;
  readonly sellCurrency: string;
  /** Decimal text as the client sent it (its written precision matters). */
  readonly amount: string;
  readonly amountCurrency: string;
  readonly validForSeconds: number;
}

export interface QuoteRow {
  id: string;
  org_id: string;
  environment: Mode;
  buy_currency: string;
  sell_currency: string;
  buy_amount: string;
  sell_amount: string;
  amount_currency: string;
  rate: string;
  sell_usd_value: string;
  reverses_trade_id: string | null;
  /** The trade that executed it (trades.ts claims a quote as it inserts the trade). */
  used_by_trade_id: string | null;
  created_at: Date;
  expires_at: Date;
}

/** The quote record (docs/contract.md#resources-quote), as toQuoteRecord writes it. */
export const quoteRecordSchema = z
  .object({
    object: z.literal('quote'),
    id: v3Id('quote'),
    buyCurrency: currencyCode,
    sellCurrency: currencyCode,
    buyAmount: decimalString.meta({ description: "With the buy currency's decimals." }),
    sellAmount: decimalString.meta({ description: "With the sell currency's decimals." }),
    amountCurrency: currencyCode.meta({ description: 'The side the requested amount was given in.' }),
    rate: decimalString.meta({ description: 'Units of sellCurrency per unit of buyCurrency, spread included.' }),
    reversesTradeId: v3Id('trade').nullable().meta({ description: 'On a reverse quote: the trade it reverses.' }),
    createdAt: timestamp,
    expiresAt: timestamp.meta({ description: 'createdAt plus the requested validity.' }),
  })
  .meta({ id: 'Quote', description: 'A price for one trade, locked until expiresAt.' });

export type QuoteRecord = Readonly<z.output<typeof quoteRecordSchema>>;

export function toQuoteRecord(row: QuoteRow, reference: ReferenceSnapshot): QuoteRecord {
  return {
    object: 'quote',
    id: row.id,
    buyCurrency: row.buy_currency,
    sellCurrency: row.sell_currency,
    buyAmount: formatToDecimals(parseDecimal(row.buy_amount), reference.currencies.get(row.buy_currency)!.decimals),
    sellAmount: formatToDecimals(parseDecimal(row.sell_amount), reference.currencies.get(row.sell_currency)!.decimals),
    amountCurrency: row.amount_currency,
    rate: formatDecimal(parseDecimal(row.rate)),
    reversesTradeId: row.reverses_trade_id,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  };
}

/** One quote of the principal's book, used or not, expired or not; null when the book has none by that id. */
export async function findQuote(db: Queryable, principal: Principal, quoteId: string): Promise<QuoteRow | null> {
  // A malformed id names no quote; it is not a validation error (404 never reveals anything).
  if (idToLegacyUuid('quote', quoteId) === null) return null;
  const { rows } = await db.query<QuoteRow>('SELECT * FROM quotes WHERE id = $1 AND org_id = $2 AND environment = $3', [
    quoteId,
    principal.orgId,
    principal.environment,
  ]);
  return rows[0] ?? null;
}

function unsupported(buyCurrency: string, sellCurrency: string): ApiError {
  return new ApiError('PAIR_NOT_SUPPORTED', { buyCurrency, sellCurrency });
}

interface PricedTerms {
  readonly buy: Currency;
  readonly sell: Currency;
  readonly rate: Decimal;
  readonly midRate: Decimal;
  readonly buyAmount: Decimal;
  readonly sellAmount: Decimal;
  readonly sellUsdValue: Decimal;
}

/** Prices a request against the current reference data and rates, with every check but the org's. */
export async function priceRequest(context: TradingContext, request: QuoteRequest): Promise<PricedTerms> {
  const reference = await context.reference();
  const buy = reference.currencies.get(request.buyCurrency);
  const sell = reference.currencies.get(request.sellCurrency);
  const pair = reference.pairs.get(pairKey(request.buyCurrency, request.sellCurrency));
  if (!buy || !sell || !pair) throw unsupported(request.buyCurrency, request.sellCurrency);
  const amountCurrency = request.amountCurrency === buy.code ? buy : sell;
  if (fractionDigits(request.amount) > amountCurrency.decimals) {
    throw new ApiError('QUOTE_INVALID_AMOUNT_PRECISION', {
      maxDecimals: amountCurrency.decimals,
      currency: amountCurrency.code,
    });
  }
  const midRate = await context.rates.midRate(buy.code, sell.code);
  const priced = priceQuote({
    buyCurrency: buy.code,
    sellCurrency: sell.code,
    amount: parseDecimal(request.amount),
    amountCurrency: amountCurrency.code,
    buyDecimals: buy.decimals,
    sellDecimals: sell.decimals,
    midRate,
    spreadBps: context.spreadBps,
  });
  if (priced.buyAmount.lt(pair.minBaseAmount) || priced.buyAmount.gt(pair.maxBaseAmount)) {
    throw new ApiError('QUOTE_AMOUNT_OUT_OF_RANGE', {
      minAmount: formatToDecimals(pair.minBaseAmount, buy.decimals),
      maxAmount: formatToDecimals(pair.maxBaseAmount, buy.decimals),
      currency: buy.code,
    });
  }
  const sellUsdValue = usdValue(priced.sellAmount, await context.rates.usdPrice(sell.code));
  return {
    buy,
    sell,
    rate: priced.rate,
    midRate,
    buyAmount: priced.buyAmount,
    sellAmount: priced.sellAmount,
    sellUsdValue,
  };
}

/** Refuses the request as the book's settings do (the first of a quote's checks); throws when the book does not exist. */
async function assertBookMayTrade(db: Queryable, principal: Principal, request: QuoteRequest): Promise<void> {
  const book = await readOrgBook(db, principal.orgId, principal.environment);
  if (!book) throw new Error(`no ${principal.environment} book for org ${principal.orgId}`);
  assertTradingAllowed(book, request.buyCurrency, request.sellCurrency);
}

/**
 * Creates a quote (or, with reversesTradeId, a reverse quote) in the principal's book, in one
 * round trip: the INSERT takes the book's permission from the book row itself
 * (fx_trading_allowed, migration 0005). The book is read only when something refuses, so that
 * its refusal still comes first, as the order of checks says.
 */
export async function createQuote(
  context: TradingContext,
  principal: Principal,
  request: QuoteRequest,
  options: { readonly reversesTradeId?: string; readonly tx?: Queryable } = {},
): Promise<QuoteRecord> {
  const db = options.tx ?? context.db;
  const terms = await priceRequest(context, request).catch(async (error: unknown) => {
    await assertBookMayTrade(db, principal, request);
    throw error;
  });
  const createdAt = context.now();
  const expiresAt = new Date(createdAt.getTime() + request.validForSeconds * 1000);
  const { rows } = await db.query<QuoteRow>(
    `INSERT INTO quotes (id, org_id, environment, buy_currency, sell_currency, buy_amount, sell_amount, amount_currency,
                         rate, mid_rate, spread_bps, sell_usd_value, reverses_trade_id, actor_key, created_at, expires_at)
     SELECT $1, b.org_id, b.environment, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16
       FROM org_environments b
      WHERE b.org_id = $2 AND b.environment = $3
        AND fx_trading_allowed(b.trading_enabled, b.disabled_currencies, b.disabled_pairs, $4, $5)
     RETURNING *`,
    [
      newId('quote', createdAt.getTime()),
      principal.orgId,
      principal.environment,
      terms.buy.code,
      terms.sell.code,
      formatDecimal(terms.buyAmount),
      formatDecimal(terms.sellAmount),
      request.amountCurrency,
      formatDecimal(terms.rate),
      formatDecimal(terms.midRate),
      context.spreadBps,
      formatDecimal(terms.sellUsdValue),
      options.reversesTradeId ?? null,
      principal.keyName,
      createdAt,
      expiresAt,
    ],
  );
  const row = rows[0];
  if (row) return toQuoteRecord(row, await context.reference());
  await assertBookMayTrade(db, principal, request);
  // The book allowed the pair again between the INSERT and the read: an operator's change
  // raced this request. Nothing was written; the client may simply retry.
  throw new Error(
    `the ${principal.environment} book of org ${principal.orgId} changed its trading settings during the quote`,
  );
}
