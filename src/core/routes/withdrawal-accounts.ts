/**
 * Withdrawal accounts: POST /v3/fx/withdrawal-accounts (register, idempotent), GET
 * /v3/fx/withdrawal-accounts (bounded list with filters) and GET .../{id}; in sandbox mode only,
 * POST /v3/fx/sandbox/withdrawal-accounts/{id}/verify and POST /v3/fx/sandbox/withdrawal-accounts/{id}
 * (set status, verified, withdrawalsEnabled), so integrators can reach every withdrawal rule.
 * The rules are in money-movement/withdrawal-accounts.ts.
 */
import { z } from 'zod';

import { ApiError } from '../../lib/errors/api-error.js';
import { defineOperation } from '../http/operation.js';
import { STABLECOIN_NETWORKS } from '../money-movement/checksums.js';
import {
  ASSET_TYPES,
  createWithdrawalAccount,
  findWithdrawalAccount,
  listWithdrawalAccounts,
  toWithdrawalAccountRecord,
  updateWithdrawalAccount,
  verifyWithdrawalAccount,
  WITHDRAWAL_ACCOUNT_STATUSES,
  withdrawalAccountCreateSchema,
  withdrawalAccountRecordSchema,
  type WithdrawalAccountRow,
  withdrawalAccountUpdateSchema,
} from '../money-movement/withdrawal-accounts.js';
import type { TradingContext } from '../trading/trading-context.js';
import { dataOf, listOf } from '../wire-types.js';

/**
 * The list's filters (docs/contract.md#v3-withdrawal-accounts); unknown parameters are refused, so
 * a misspelt filter never returns the unfiltered list.
 */
const listQuerySchema = z.strictObject({
  assetType: z.enum(ASSET_TYPES).optional(),
  network: z.enum(STABLECOIN_NETWORKS).optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3,5}$/, 'a currency code such as USD or USDC')
    .optional(),
  status: z.enum(WITHDRAWAL_ACCOUNT_STATUSES).optional(),
  verified: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional(),
});

function found(row: WithdrawalAccountRow | null, id: string): WithdrawalAccountRow {
  if (!row) throw new ApiError('WITHDRAWAL_ADDRESS_NOT_FOUND', { accountId: id });
  return row;
}

/** A sandbox change to one account: named first, so a 500 says which; answered with the account as it now is. */
async function sandboxChange(
  id: string,
  setResourceId: (id: string) => void,
  change: (id: string) => Promise<WithdrawalAccountRow | null>,
) {
  setResourceId(id);
  return { body: { data: toWithdrawalAccountRecord(found(await change(id), id)) } };
}

export function withdrawalAccountOperations(context: TradingContext) {
  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/withdrawal-accounts',
      scope: 'withdraw',
      summary: 'Register a withdrawal account',
      response: dataOf(withdrawalAccountRecordSchema),
      errors: ['WITHDRAWAL_ADDRESS_CHECKSUM_FAILED'],
      body: withdrawalAccountCreateSchema,
      async handle({ principal, body, idempotency, setResourceId }) {
        const row = await createWithdrawalAccount(context, principal, body, idempotency!, setResourceId);
        setResourceId(row.id);
        return { body: { data: toWithdrawalAccountRecord(row) } };
      },
    }),
    defineOperation({
      method: 'GET',
      path: '/v3/fx/withdrawal-accounts',
      scope: 'view',
      summary: 'List withdrawal accounts, newest first',
      response: listOf(withdrawalAccountRecordSchema),
      query: listQuerySchema,
      async handle({ principal, query }) {
        const rows = await listWithdrawalAccounts(context.db, principal, query);
        return { body: { data: rows.map(toWithdrawalAccountRecord) } };
      },
    }),
    defineOperation({
      method: 'GET',
      path: '/v3/fx/withdrawal-accounts/:id',
      scope: 'view',
      summary: 'Retrieve a withdrawal account',
      response: dataOf(withdrawalAccountRecordSchema),
      errors: ['WITHDRAWAL_ADDRESS_NOT_FOUND'],
      async handle({ principal, params }) {
        const id = params.id!;
        return {
          body: { data: toWithdrawalAccountRecord(found(await findWithdrawalAccount(context.db, principal, id), id)) },
        };
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/sandbox/withdrawal-accounts/:id/verify',
      scope: 'withdraw',
      sandboxOnly: true,
      summary: 'Verify a withdrawal account (sandbox)',
      response: dataOf(withdrawalAccountRecordSchema),
      errors: ['WITHDRAWAL_ADDRESS_NOT_FOUND'],
      async handle({ principal, params, setResourceId }) {
        return sandboxChange(params.id!, setResourceId, (id) =>
          verifyWithdrawalAccount(context.db, principal, id, context.now()),
        );
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/sandbox/withdrawal-accounts/:id',
      scope: 'withdraw',
      sandboxOnly: true,
      summary: "Set a withdrawal account's status and flags (sandbox)",
      response: dataOf(withdrawalAccountRecordSchema),
      errors: ['WITHDRAWAL_ADDRESS_NOT_FOUND'],
      body: withdrawalAccountUpdateSchema,
      async handle({ principal, params, body, setResourceId }) {
        return sandboxChange(params.id!, setResourceId, (id) =>
          updateWithdrawalAccount(context.db, principal, id, body, context.now()),
        );
      },
    }),
  ];
}
