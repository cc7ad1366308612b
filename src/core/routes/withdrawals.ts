/**
 * Withdrawals: POST /v3/fx/withdrawals (docs/contract.md#v3-withdrawals), GET /v3/fx/withdrawals
 * (cursor list, newest first, filters status and currency), GET /v3/fx/withdrawals/{id}, and the
 * sandbox drivers POST /v3/fx/sandbox/withdrawals/{id}/complete and /fail. Rules and lifecycle live
 * in money-movement/withdrawals.ts.
 */
import { z } from 'zod';

import { ApiError } from '../../lib/errors/api-error.js';
import { failpoint } from '../../lib/failpoints.js';
import { parseDecimal, V3_AMOUNT_PATTERN } from '../../lib/money.js';
import { defineOperation } from '../http/operation.js';
import { SimulatedPaymentRail } from '../money-movement/payment-rails.js';
import { WITHDRAWAL_STATUSES } from '../money-movement/withdrawal-status.js';
import {
  completeSandboxWithdrawal,
  createWithdrawal,
  findWithdrawal,
  toWithdrawalRecord,
  transitionWithdrawal,
  type WithdrawalContext,
  type WithdrawalRecord,
  withdrawalRecordSchema,
  type WithdrawalRow,
} from '../money-movement/withdrawals.js';
import type { CursorCodec } from '../pagination/cursor-codec.js';
import { dataOf } from '../wire-types.js';
import {
  namingFailedResource,
  type RecordKind,
  retrieveOperation,
  statusCurrencyListOperation,
} from './record-routes.js';
import { metadataSchema } from './trades.js';

const CURRENCY_CODE = /^[A-Z]{3,5}$/;

/**
 * The create body of docs/contract.md#v3-withdrawals-create. Zero passes the amount pattern but is
 * no withdrawal: refused with the schema's 400.
 */
export const withdrawalCreateSchema = z.strictObject({
  withdrawalAccountId: z.string().min(1).max(64),
  withdrawalAmount: z
    .string()
    .max(40)
    .regex(
      V3_AMOUNT_PATTERN,
      'withdrawalAmount must be a decimal string such as "100.00", unsigned, with at most 8 decimals',
    )
    .refine((value) => !V3_AMOUNT_PATTERN.test(value) || parseDecimal(value).isGreaterThan(0), {
      message: 'withdrawalAmount must be greater than 0',
      params: { code: 'too_small' },
    }),
  currency: z.string().regex(CURRENCY_CODE, 'currency must be a currency code such as USD or USDC'),
  comments: z.string().max(500).optional(),
  metadata: metadataSchema.optional(),
});

const WITHDRAWAL: RecordKind<WithdrawalRow, WithdrawalRecord> = {
  noun: 'withdrawal',
  schema: withdrawalRecordSchema,
  find: findWithdrawal,
  toRecord: toWithdrawalRecord,
};

/** The sandbox failure's body is optional: no body (or `{}`) fails with the default reason. */
const sandboxFailSchema = z.strictObject({ failureReason: z.string().min(1).max(500).optional() }).optional();

const SANDBOX_FAILURE_REASON = 'Failed by the sandbox (POST /v3/fx/sandbox/withdrawals/{id}/fail).';

/** Sandbox completions run through the simulation with no delay: the integrator decides when. */
const SANDBOX_RAIL = new SimulatedPaymentRail({ delayMs: 0, failureRate: 0 });

export function withdrawalOperations(context: WithdrawalContext, cursors: CursorCodec) {
  const record = async (row: WithdrawalRow) => ({ body: { data: toWithdrawalRecord(row, await context.reference()) } });

  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/withdrawals',
      scope: 'withdraw',
      summary: 'Withdraw to a withdrawal account',
      response: dataOf(withdrawalRecordSchema),
      errors: [
        'WITHDRAWAL_ADDRESS_NOT_FOUND',
        'WITHDRAWAL_ACCOUNT_NOT_LIVE',
        'WITHDRAWAL_ADDRESS_NOT_VERIFIED',
        'WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH',
        'WITHDRAWAL_CURRENCY_NOT_SUPPORTED',
        'WITHDRAWAL_INVALID_AMOUNT_PRECISION',
        'WITHDRAWAL_INSUFFICIENT_BALANCE',
        'WITHDRAWAL_PENDING_DEPOSIT_REQUIRED',
        'WITHDRAWAL_DISABLED_FOR_ACCOUNT',
        'WITHDRAWAL_ADDRESS_CHECKSUM_FAILED',
        'WITHDRAWAL_INITIATION_FAILED',
      ],
      body: withdrawalCreateSchema,
      async handle({ principal, body, idempotency, setResourceId }) {
        const withdrawal = await namingFailedResource(
          createWithdrawal(context, principal, body, idempotency!),
          'WITHDRAWAL_INITIATION_FAILED',
          setResourceId,
        );
        setResourceId(withdrawal.id);
        try {
          failpoint('withdrawal.after-commit');
          // A replay's row was read as it is now (createWithdrawal): no second read is needed.
          return await record(withdrawal);
        } catch (error) {
          // The withdrawal is committed; a failure while answering is still this write's 500,
          // with the id to fetch it by (docs/contract.md#errors-recovery).
          throw new ApiError('WITHDRAWAL_INITIATION_FAILED', { resourceId: withdrawal.id }, { cause: error });
        }
      },
    }),
    statusCurrencyListOperation(context, cursors, WITHDRAWAL, WITHDRAWAL_STATUSES),
    retrieveOperation(context, WITHDRAWAL, ['WITHDRAWAL_NOT_FOUND'], () => new ApiError('WITHDRAWAL_NOT_FOUND')),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/sandbox/withdrawals/:id/complete',
      scope: 'withdraw',
      sandboxOnly: true,
      summary: 'Complete a pending withdrawal (sandbox)',
      response: dataOf(withdrawalRecordSchema),
      errors: ['WITHDRAWAL_NOT_FOUND', 'WITHDRAWAL_INVALID_STATE_TRANSITION'],
      async handle({ principal, params, setResourceId }) {
        setResourceId(params.id!);
        return record(await completeSandboxWithdrawal(context, principal, params.id!, SANDBOX_RAIL));
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/sandbox/withdrawals/:id/fail',
      scope: 'withdraw',
      sandboxOnly: true,
      summary: 'Fail a withdrawal (sandbox)',
      response: dataOf(withdrawalRecordSchema),
      errors: ['WITHDRAWAL_NOT_FOUND', 'WITHDRAWAL_INVALID_STATE_TRANSITION'],
      body: sandboxFailSchema,
      async handle({ principal, params, body, setResourceId }) {
        setResourceId(params.id!);
        const failureReason = body?.failureReason ?? SANDBOX_FAILURE_REASON;
        return record(await transitionWithdrawal(context, principal, params.id!, 'FAILED', { failureReason }));
      },
    }),
  ];
}
