/**
 * Deposits: GET /v3/fx/deposits (cursor list, newest first, filters currency and status),
 * GET /v3/fx/deposits/{id}, and POST /v3/fx/sandbox/deposits (sandbox only). The rules are in
 * money-movement/deposits.ts.
 *
 * The sandbox deposit needs scope `trade`: it is a test helper that funds a book for trading
 * and withdrawing, not a withdrawal (`withdraw`) and not a read (`view`).
 */
import { ApiError } from '../../lib/errors/api-error.js';
import { defineOperation } from '../http/operation.js';
import {
  createDeposit,
  DEPOSIT_STATUSES,
  type DepositContext,
  type DepositRecord,
  depositRecordSchema,
  type DepositRow,
  findDeposit,
  sandboxDepositSchema,
  toDepositRecord,
} from '../money-movement/deposits.js';
import type { CursorCodec } from '../pagination/cursor-codec.js';
import { dataOf } from '../wire-types.js';
import { type RecordKind, retrieveOperation, statusCurrencyListOperation } from './record-routes.js';

const DEPOSIT: RecordKind<DepositRow, DepositRecord> = {
  noun: 'deposit',
  schema: depositRecordSchema,
  find: findDeposit,
  toRecord: toDepositRecord,
};

export function depositOperations(context: DepositContext, cursors: CursorCodec) {
  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/sandbox/deposits',
      scope: 'trade',
      sandboxOnly: true,
      summary: 'Simulate an incoming deposit (sandbox)',
      response: dataOf(depositRecordSchema),
      body: sandboxDepositSchema,
      async handle({ principal, body, idempotency, setResourceId }) {
        const deposit = await createDeposit(context, principal, body, idempotency!).catch((error: unknown) => {
          if (
            error instanceof ApiError &&
            error.code === 'INTERNAL_ERROR' &&
            typeof error.details.resourceId === 'string'
          )
            setResourceId(error.details.resourceId);
          throw error;
        });
        // Committed from here: a failure while answering still names the deposit
        // (docs/contract.md#errors-recovery).
        setResourceId(deposit.id);
        const fresh = (await findDeposit(context.db, principal, deposit.id))!;
        return { body: { data: toDepositRecord(fresh, await context.reference()) } };
      },
    }),
    statusCurrencyListOperation(context, cursors, DEPOSIT, DEPOSIT_STATUSES),
    retrieveOperation(
      context,
      DEPOSIT,
      ['DEPOSIT_NOT_FOUND'],
      (id) => new ApiError('DEPOSIT_NOT_FOUND', { depositId: id }),
    ),
  ];
}
