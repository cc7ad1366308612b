/**
 * GET /v3/fx/exposure: the book's credit line, what its open trades commit of it, what is
 * available, and a breakdown by sell currency and settlement stage. One record, no query
 * parameters. The rules are in trading/exposure.ts.
 */
import { defineOperation } from '../http/operation.js';
import { exposureRecordSchema, readExposure } from '../trading/exposure.js';
import type { TradingContext } from '../trading/trading-context.js';
import { dataOf } from '../wire-types.js';

export function exposureOperations(trading: TradingContext) {
  return [
    defineOperation({
      method: 'GET',
      path: '/v3/fx/exposure',
      scope: 'view',
      summary: "Retrieve the book's exposure",
      response: dataOf(exposureRecordSchema),
      async handle({ principal }) {
        return { body: { data: await readExposure(trading, principal) } };
      },
    }),
  ];
}
