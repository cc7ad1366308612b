/**
 * GET /v3/fx/balances: the org's balance in every currency it has moved, with USD values. A
 * bounded list (no cursor, no pagination object, no query parameters); `totals` sits next to
 * `data` because the v2 balances response carries the same three sums. The rules are in
 * trading/balances.ts.
 */
import { defineOperation } from '../http/operation.js';
import { balanceListSchema, readBalances } from '../trading/balances.js';
import type { TradingContext } from '../trading/trading-context.js';

export function balanceOperations(trading: TradingContext) {
  return [
    defineOperation({
      method: 'GET',
      path: '/v3/fx/balances',
      scope: 'view',
      summary: 'List balances with their USD values',
      response: balanceListSchema,
      async handle({ principal }) {
        const { data, totals } = await readBalances(trading, principal);
        return { body: { data, totals } };
      },
    }),
  ];
}
