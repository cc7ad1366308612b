/**
 * The last step of every legacy request that fails: any error, from any step, as the
 * generation's error answer. Each failure is first named by a v3 error code (the gateway's own
 * refusals use the catalog's codes too), then the generation's table row (error-tables.ts)
 * gives the status and body, so a legacy client never sees a v3 envelope, a stack trace or an
 * upstream message. The one exception is a retired generation's 410 (generation-lifecycle.ts),
 * the gateway's own answer, outside the tables.
 */
import type { FastifyRequest } from 'fastify';

import { isApiError } from '../../../lib/errors/api-error.js';
import {
  GenerationRetired,
  UpstreamCredentialError,
  UpstreamError,
  UpstreamUnreachableError,
  V3ContractError,
} from '../../../lib/errors/internal-errors.js';
import type { ErrorCode } from '../../../lib/errors/v3-error-catalog.js';
import type { OperationSeries } from '../../metrics/gateway-metrics.js';
import { upstreamFailureKind } from '../../upstream/upstream-failure.js';
import { type V3Error } from '../../upstream/v3-client.js';
import {
  isDeclaredDefect,
  legacyErrorBody,
  type LegacyErrorTables,
  resolveLegacyError,
} from '../declarations/error-tables.js';
import type { LegacyGeneration, LegacyOperation } from '../declarations/legacy-operations.js';
import type { LegacyAnswer, RequestState } from './answer.js';

/** The gateway refuses the request itself with a cataloged code (auth, mode, scope, rate limit). Only the code, and the headers it names (Retry-After), reach the client. */
export class GatewayRefusal extends Error {
  constructor(
    readonly code: ErrorCode,
    reason: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(reason);
    this.name = 'GatewayRefusal';
  }
}

/** v3 answered with its error envelope: carried to this step, where the table downgrades it. */
export class V3Refusal extends Error {
  constructor(
    readonly error: V3Error,
    readonly status: number,
    readonly headers: Record<string, string>,
  ) {
    super(`v3 answered ${status} ${error.code}`);
    this.name = 'V3Refusal';
  }
}

/**
 * v3 refused the gateway itself: its credential (401, any AUTH_ code, known or newer than the
 * catalog), or a code the tables declare a gateway defect (their `defect` rows).
 */
function isGatewayDefect(error: V3Error, status: number, tables: LegacyErrorTables<LegacyGeneration>): boolean {
  return status === 401 || error.code.startsWith('AUTH_') || isDeclaredDefect(tables, error.code);
}

function classify(
  error: unknown,
  tables: LegacyErrorTables<LegacyGeneration>,
  log: (level: 'warn' | 'error', message: string) => void,
): { code: string; type?: string; headers: Readonly<Record<string, string>> } {
  if (isApiError(error)) return { code: error.code, headers: error.headers };
  if (error instanceof GatewayRefusal) return { code: error.code, headers: error.headers };
  if (error instanceof V3Refusal) {
    if (isGatewayDefect(error.error, error.status, tables)) {
      log('error', 'v3 refused the gateway itself (credential or wiring)');
      return { code: 'INTERNAL_ERROR', headers: error.headers };
    }
    return {
      code: error.error.code,
      ...(error.error.rawType === undefined ? {} : { type: error.error.rawType }),
      headers: error.headers,
    };
  }
  if (error instanceof UpstreamUnreachableError) {
    log('warn', 'v3 unreachable');
    return { code: 'SERVICE_UNAVAILABLE', headers: {} };
  }
  if (error instanceof UpstreamError || error instanceof V3ContractError || error instanceof UpstreamCredentialError) {
    log('error', 'v3 call failed');
    return { code: 'INTERNAL_ERROR', headers: {} };
  }
  log('error', 'legacy operation failed');
  return { code: 'INTERNAL_ERROR', headers: {} };
}

/** Any failure of `operation` as the generation's error answer. Retry-After goes only with the answers that mean "wait". */
export function failureAnswer<G extends LegacyGeneration>(
  error: unknown,
  request: FastifyRequest,
  state: RequestState,
  where: {
    readonly generation: G;
    readonly operation: LegacyOperation<G>;
    readonly tables: LegacyErrorTables<G>;
    readonly metrics?: OperationSeries | undefined;
  },
): LegacyAnswer {
  if (error instanceof GenerationRetired) return { status: error.status, body: error.body, headers: {} };
  const log = (level: 'warn' | 'error', message: string) =>
    request.log[level]({ err: error, operation: where.operation, generation: where.generation }, message);
  const { code, type, headers } = classify(error, where.tables as LegacyErrorTables<LegacyGeneration>, log);
  const kind = upstreamFailureKind(error);
  if (kind !== null) where.metrics?.upstreamFailed(kind);
  const answer = resolveLegacyError(where.tables, { code, type }, where.operation);
  // v3's budget of the gateway's own credential, which the book's keys share: the key's own
  // budget (rate-limit-step.ts) is a GatewayRefusal, counted where it is charged.
  if (error instanceof V3Refusal && answer.status === 429) {
    where.metrics?.rateLimited('upstream');
    log('warn', "v3 rate-limited the gateway's credential for the book");
  }
  const legacyCode = 'error' in answer ? answer.error?.code : undefined;
  const retryAfter = headers['retry-after'] ?? state.upstreamHeaders['retry-after'];
  const waitHeaders: Record<string, string> =
    retryAfter !== undefined && [409, 429, 503].includes(answer.status) ? { 'retry-after': retryAfter } : {};
  return {
    status: answer.status,
    body: JSON.stringify(legacyErrorBody(answer)),
    headers: waitHeaders,
    ...(legacyCode === undefined ? {} : { legacyCode }),
    v3Error: { code, ...(type === undefined ? {} : { type }) },
  };
}
