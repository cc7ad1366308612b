/**
 * The conventions every legacy operation of both generations shares: page defaults, the values
 * of the mode header, and the fields whose value moves between two answers to the same request
 * (the shadow mode reports them as noise). Format and validator: src/gateway/legacy/declarations/conventions.ts.
 * Pure data.
 */
import type { LegacyConventions } from '../src/gateway/legacy/declarations/conventions.js';

export const LEGACY_CONVENTIONS = {
  pagination: {
    page: { default: 1, min: 1 },
    limit: { default: 10, min: 1, max: 50 },
    source: 'doc',
    reason: 'The v1 documentation: page at least 1 (default 1), limit 1 to 50 (default 10).',
  },
  appModes: {
    values: { SANDBOX: 'sandbox', LIVE: 'live', PRODUCTION: 'live' },
    absent: 'live',
    source: 'client',
    reason: 'The v2 client sends x-app-mode on every request, sandbox or live in any case, or production for live.',
  },
  shadow: {
    volatile: [
      {
        paths: [
          'data[].totalBalanceInUSD',
          'data[].withdrawableBalanceInUSD',
          'netPositiveBalanceInUSD',
          'netNegativeBalanceInUSD',
          'netBalanceInUSD',
        ],
        operations: ['balances'],
        source: 'ours',
        reason:
          'Valued at the USD rate of the moment the answer is built, and each service reads its rates at its own moment.',
      },
    ],
  },
} as const satisfies LegacyConventions;
