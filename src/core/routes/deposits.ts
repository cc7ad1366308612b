/**
 * Deposits: GET /v3/fx/deposits (cursor list, newest first, filters currency and status),
 * GET /v3/fx/deposits/{id}, and POST /v3/fx/sandbox/deposits (sandbox only). The rules are in
 * money-movement/deposits.ts.
 *
 * The sandbox deposit needs scope `trade`: it is a test helper that funds a book for trading
 * and withdrawing, not a withdrawal (`withdraw`) and not a read (`view`).
 */
import { z } from 'zod';

import { ApiError } from '../../lib/errors/api-error.js';
import { defineOperation } from '../http/operation.js';
import {
  createDeposit,
  DEPOSIT_STATUSES,
  type DepositContext,
  depositRecordSchema,
  type DepositRow,
  findDeposit,
  sandboxDepositSchema,
  toDepositRecord,
} from '../money-movement/deposits.js';
import type { CursorCodec } from '../pagination/cursor-codec.js';
import { cursorScope } from '../pagination/cursor-codec.js';
import { cursorQuerySchema } from '../pagination/cursor-query.js';
import { cursorPageOf, paginate } from '../pagination/paginate.js';
import { dataOf } from '../wire-types.js';

const listQuerySchema = cursorQuerySchema({
  status: z.enum(DEPOSIT_STATUSES).optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3,5}$/)
    .optional(),
});

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
    defineOperation({
      method: 'GET',
      path: '/v3/fx/deposits',
      scope: 'view',
      summary: 'List deposits, newest first',
      response: cursorPageOf(depositRecordSchema),
      query: listQuerySchema,
      async handle({ principal, query }) {
        const reference = await context.reference();
        const page = await paginate<DepositRow, ReturnType<typeof toDepositRecord>>(context.db, {
          from: 'deposits',
          where: {
            sql: 'org_id = $1 AND environment = $2 AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR currency = $4)',
            params: [principal.orgId, principal.environment, query.status ?? null, query.currency ?? null],
          },
          scope: cursorScope('deposits', principal.orgId, principal.environment, {
            status: query.status,
            currency: query.currency,
          }),
          query,
          codec: cursors,
          toRecord: (row) => toDepositRecord(row, reference),
        });
        return { body: { data: page.data, pagination: page.pagination } };
      },
    }),
    defineOperation({
      method: 'GET',
      path: '/v3/fx/deposits/:id',
      scope: 'view',
      summary: 'Retrieve a deposit',
      response: dataOf(depositRecordSchema),
      errors: ['DEPOSIT_NOT_FOUND'],
      async handle({ principal, params }) {
        const deposit = await findDeposit(context.db, principal, params.id!);
        if (!deposit) throw new ApiError('DEPOSIT_NOT_FOUND', { depositId: params.id! });
        return { body: { data: toDepositRecord(deposit, await context.reference()) } };
      },
    }),
  ];
}
