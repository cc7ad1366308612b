/**
 * What the trading operations run on, built once per application: the database, reference
 * data, the rate source and the trading options. Handlers get it; nothing else is global.
 */
import { z } from 'zod';

import { DEFAULT_REVERSAL_WINDOW_SECONDS, DEFAULT_SPREAD_BPS } from '../../lib/config.js';
import type { Database, Queryable } from '../../lib/db/database.js';
import type { CoreEvents } from '../metrics/core-metrics.js';
import type { RateSource } from './rate-source.js';
import type { ReferenceSnapshot } from './reference-data.js';

export interface TradingOptions {
  /** The client's rate is the mid rate plus this, in basis points. */
  readonly spreadBps: number;
  /** How long after execution a trade may be reversed. */
  readonly reversalWindowMs: number;
}

/** FXGATE_SPREAD_BPS's and FXGATE_REVERSAL_WINDOW_SECONDS's defaults. */
export const TRADING_DEFAULTS: TradingOptions = {
  spreadBps: DEFAULT_SPREAD_BPS,
  reversalWindowMs: DEFAULT_REVERSAL_WINDOW_SECONDS * 1000,
};

export interface TradingContext extends TradingOptions {
  readonly db: Database;
  readonly reference: () => Promise<ReferenceSnapshot>;
  readonly rates: RateSource;
  readonly now: () => Date;
  /** Told of each trade and withdrawal status change once committed (the metrics); none without it. */
  readonly metrics?: CoreEvents;
}

/**
 * Runs work in one transaction with the reference data read before it opens: a refresh inside it
 * would wait for a second connection, which the embedded database (one connection) never has.
 */
export async function transactionWithReference<T>(
  context: Pick<TradingContext, 'db' | 'reference'>,
  work: (tx: Queryable, reference: ReferenceSnapshot) => Promise<T>,
): Promise<T> {
  const reference = await context.reference();
  return context.db.transaction((tx) => work(tx, reference));
}

/** Quote lifetimes a client may ask for (seconds), and the one it gets when it does not. */
export const QUOTE_VALIDITIES = [3, 15, 30, 45, 60] as const;
export const DEFAULT_QUOTE_VALIDITY = 30;

/** `validForSeconds` of a quote or reverse quote request: one of QUOTE_VALIDITIES, DEFAULT_QUOTE_VALIDITY when absent. */
export const quoteValiditySchema = z
  .number()
  .int()
  .refine((value) => (QUOTE_VALIDITIES as readonly number[]).includes(value), `one of ${QUOTE_VALIDITIES.join(', ')}`)
  .meta({
    description: 'How long the quote holds, in seconds.',
    // The refinement is code; the document states the values it allows.
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      delete jsonSchema.minimum;
      delete jsonSchema.maximum;
      jsonSchema.enum = [...QUOTE_VALIDITIES];
    },
  })
  .default(DEFAULT_QUOTE_VALIDITY);
