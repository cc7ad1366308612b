/**
 * Operations that exist only in tests, to drive every branch of the v3 pipeline (writes,
 * sandbox-only, slow, failing) before the domain endpoints that will use them exist. They are
 * served next to the core's own operations on the same pipeline.
 */
import { z } from 'zod';

import { type CoreDependencies, coreOperations } from '../../src/core/app.js';
import { defineOperation, type Operation } from '../../src/core/http/operation.js';
import { ApiError } from '../../src/lib/errors/api-error.js';
import { V3_AMOUNT_PATTERN } from '../../src/lib/money.js';

/** What the test operations did, so tests can tell a replay from a second execution. */
export class OperationLog {
  readonly calls: Array<{ operation: string; orgId: string; body: unknown }> = [];
  /** Release for the `slow` operation: resolves every waiting call. */
  private gate: { promise: Promise<void>; open: () => void } = OperationLog.newGate();
  private failures = new Map<string, number>();

  private static newGate() {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { promise, open };
  }

  count(operation: string): number {
    return this.calls.filter((call) => call.operation === operation).length;
  }

  openGate(): void {
    this.gate.open();
    this.gate = OperationLog.newGate();
  }

  waitAtGate(): Promise<void> {
    return this.gate.promise;
  }

  /** Makes the next `times` calls of a failing operation fail. */
  failNext(operation: string, times: number): void {
    this.failures.set(operation, times);
  }

  shouldFail(operation: string): boolean {
    const left = this.failures.get(operation) ?? 0;
    if (left > 0) this.failures.set(operation, left - 1);
    return left > 0;
  }
}

const echoBody = z
  .object({
    amount: z.string().regex(V3_AMOUNT_PATTERN),
    currency: z.string().length(3),
    metadata: z.record(z.string(), z.string()).optional(),
  })
  .strict();

const OK = z.object({ data: z.object({ ok: z.boolean() }) });

export function testOperations(log: OperationLog): Operation[] {
  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/test/echo',
      scope: 'trade',
      summary: 'Echo the body',
      response: z.object({ data: echoBody.extend({ call: z.number(), environment: z.enum(['sandbox', 'live']) }) }),
      body: echoBody,
      async handle({ principal, body }) {
        log.calls.push({ operation: 'echo', orgId: principal.orgId, body });
        return { body: { data: { ...body, call: log.count('echo'), environment: principal.environment } } };
      },
    }),
    defineOperation({
      method: 'GET',
      path: '/v3/fx/test/items/:id',
      scope: 'view',
      summary: 'Echo the path and query',
      response: z.object({ data: z.object({ id: z.string().optional(), expand: z.enum(['none', 'all']) }) }),
      query: z.object({ expand: z.enum(['none', 'all']).optional() }).strict(),
      async handle({ params, query }) {
        return { body: { data: { id: params.id, expand: query.expand ?? 'none' } } };
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/test/slow',
      scope: 'trade',
      summary: 'Wait at the gate',
      response: z.object({ data: z.object({ done: z.boolean() }) }),
      async handle({ principal }) {
        log.calls.push({ operation: 'slow', orgId: principal.orgId, body: null });
        await log.waitAtGate();
        return { body: { data: { done: true } } };
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/test/flaky',
      scope: 'trade',
      summary: 'Fail when told to',
      response: z.object({ data: z.object({ ok: z.boolean(), call: z.number() }) }),
      async handle({ principal, setResourceId }) {
        log.calls.push({ operation: 'flaky', orgId: principal.orgId, body: null });
        setResourceId('trd_0190b5a0c0de7000800000000000abcd');
        if (log.shouldFail('flaky')) throw new Error('database went away mid-write');
        return { body: { data: { ok: true, call: log.count('flaky') } } };
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/test/conflict',
      scope: 'withdraw',
      summary: 'Conflict when told to',
      response: OK,
      async handle({ principal }) {
        log.calls.push({ operation: 'conflict', orgId: principal.orgId, body: null });
        if (log.shouldFail('conflict')) {
          throw new ApiError('WITHDRAWAL_INSUFFICIENT_BALANCE', {
            requiredAmount: '10.00',
            availableAmount: '5.00',
            currency: 'USD',
          });
        }
        return { body: { data: { ok: true } } };
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/test/rejected',
      scope: 'withdraw',
      summary: 'Always refuse',
      response: OK,
      async handle({ principal }) {
        log.calls.push({ operation: 'rejected', orgId: principal.orgId, body: null });
        throw new ApiError('WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH', { expected: 'USD', received: 'EUR' });
      },
    }),
    defineOperation({
      method: 'GET',
      path: '/v3/fx/test/boom',
      scope: 'view',
      summary: 'Always fail',
      response: OK,
      async handle() {
        throw new Error('unexpected failure with a secret stack');
      },
    }),
    defineOperation({
      method: 'POST',
      path: '/v3/fx/test/sandbox-only',
      scope: 'trade',
      sandboxOnly: true,
      summary: 'Answer in sandbox mode only',
      response: OK,
      async handle() {
        return { body: { data: { ok: true } } };
      },
    }),
  ];
}

/** The core's own operations plus the test ones, for V3Harness `operations`. */
export function withTestOperations(log: OperationLog): (deps: CoreDependencies) => Promise<Operation[]> {
  return async (deps) => [...(await coreOperations(deps)), ...testOperations(log)];
}
