/**
 * Step 4 of a legacy request: the v3 calls its mapping declares, signed by the V3Client with the
 * gateway's own credential for the caller's org and mode. The first call is the operation (for a
 * paginated cursor list, as many pages as the page walker needs); the later ones are reads the
 * answer composes, sent together. Every answer is checked to be a v3 success body; a v3 error
 * becomes a V3Refusal for the failure step to downgrade.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';

import { ApiError } from '../../../lib/errors/api-error.js';
import { CursorRejectedError, V3ContractError } from '../../../lib/errors/internal-errors.js';
import { legacyUuidToId } from '../../../lib/ids.js';
import { forwardedFor } from '../../forwarded-for.js';
import type { OperationSeries } from '../../metrics/gateway-metrics.js';
import type { V3CallResponse, V3Client } from '../../upstream/v3-client.js';
import type { V3Call } from '../declarations/endpoint-mappings.js';
import type { LegacyPrincipal } from '../runtime/auth.js';
import { type CursorListPage, type FetchCursorPage, type PageWalker } from '../runtime/page-walker.js';
import { forwardedHeaders } from '../runtime/reply.js';
import type { V3Answers, V3SuccessBody } from '../transforms/response-body.js';
import type { RequestState } from './answer.js';
import { V3Refusal } from './failure.js';
import type { PageQuery } from './query.js';

export interface V3CallContext {
  readonly request: FastifyRequest;
  readonly principal: LegacyPrincipal;
  readonly state: RequestState;
  readonly client: V3Client;
  readonly operation: string;
  /** Where each answered call's time is observed. */
  readonly metrics?: OperationSeries | undefined;
}

/** One signed v3 call; the parsed success body, or a V3Refusal / V3ContractError. */
export async function callV3(
  context: V3CallContext,
  call: {
    readonly method: 'GET' | 'POST';
    readonly pathAndQuery: string;
    readonly body?: Buffer | undefined;
    readonly idempotencyKey?: string | undefined;
  },
): Promise<V3SuccessBody> {
  const { request, principal, state } = context;
  const response: V3CallResponse = await context.client.request({
    orgId: principal.orgId,
    mode: principal.mode,
    method: call.method,
    pathAndQuery: call.pathAndQuery,
    body: call.body,
    idempotencyKey: call.idempotencyKey,
    headers: { 'x-request-id': request.id, 'x-forwarded-for': forwardedFor(request) },
    deadline: state.upstreamDeadline,
  });
  state.upstreamMs += response.elapsedMs;
  context.metrics?.upstream.observe(response.elapsedMs / 1000);
  const forwarded = forwardedHeaders(response.headers);
  // The trace id of the first call names the operation; Retry-After is the latest call's.
  state.upstreamHeaders = {
    ...forwarded,
    ...(state.upstreamHeaders['x-trace-id'] ? { 'x-trace-id': state.upstreamHeaders['x-trace-id'] } : {}),
  };
  if (response.error) throw new V3Refusal(response.error, response.status, forwarded);
  // Worded only for a contract error, not on every call.
  const where = (): string => `${call.method} ${call.pathAndQuery.split('?')[0]}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.body.toString('utf8'));
  } catch {
    throw new V3ContractError(context.operation, [
      `${where()} answered ${response.status} with a body that is not JSON`,
    ]);
  }
  if (
    parsed === null ||
    typeof parsed !== 'object' ||
    Array.isArray(parsed) ||
    (parsed as { data?: unknown }).data === undefined
  ) {
    throw new V3ContractError(context.operation, [`${where()} answered without data`]);
  }
  return parsed as V3SuccessBody;
}

/** Fills the v3 path's `:params` from the legacy path or the body's ids (already v3 ids); a malformed legacy id never reaches v3. */
export function resolvePath(
  call: V3Call,
  pathParams: Readonly<Record<string, unknown>>,
  bodyFields: Readonly<Record<string, unknown>>,
): string {
  let path = call.path;
  for (const [param, source] of Object.entries(call.params ?? {})) {
    let id: string | null;
    if (source.from === 'body') {
      id = bodyFields[source.field] as string;
    } else {
      const value = pathParams[source.field];
      id = typeof value === 'string' ? legacyUuidToId(source.idKind, value) : null;
      if (id === null)
        throw new ApiError('VALIDATION_QUERY_FAILED', {
          issues: [{ path: source.field, code: 'invalid_format', message: `${source.field} must be a UUID` }],
        });
    }
    path = path.replace(`:${param}`, encodeURIComponent(id));
  }
  return path;
}

export function withQuery(path: string, query: Readonly<Record<string, string>>): string {
  const entries = Object.entries(query);
  return entries.length === 0 ? path : `${path}?${new URLSearchParams(entries).toString()}`;
}

/**
 * A v3 list page's pagination, checked before the walker trusts its cursors. The records are
 * checked by hand: a zod object schema would copy every record it passes, and the response
 * builder reads the records through their own schemas anyway.
 */
const cursorPaginationSchema = z.looseObject({
  hasNext: z.boolean(),
  hasPrev: z.boolean(),
  nextCursor: z.string().nullable(),
  prevCursor: z.string().nullable(),
});

function cursorPageProblems(answer: V3SuccessBody): string[] {
  const problems: string[] = [];
  const { data } = answer;
  if (!Array.isArray(data)) problems.push('data: must be an array');
  else {
    data.forEach((record: unknown, index) => {
      const id = record !== null && typeof record === 'object' ? (record as { id?: unknown }).id : undefined;
      if (typeof id !== 'string' || id === '') problems.push(`data[${index}].id: must be a non-empty string`);
    });
  }
  const pagination = cursorPaginationSchema.safeParse(answer.pagination);
  if (!pagination.success)
    problems.push(
      ...pagination.error.issues.map(
        (issue) => `pagination${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}: ${issue.message}`,
      ),
    );
  return problems;
}

/** The requested page of a v3 cursor list, `{data: records}`, and the list's total as the walker knows it. */
export async function walkCursorList(
  context: V3CallContext,
  pages: PageWalker,
  list: { readonly path: string; readonly query: Readonly<Record<string, string>> },
  paging: PageQuery,
): Promise<{ answer: V3SuccessBody; total: number }> {
  const fetch: FetchCursorPage = async ({ limit, startingAfter }) => {
    const query: Record<string, string> = { ...list.query, limit: String(limit) };
    if (startingAfter !== undefined) query.startingAfter = startingAfter;
    let answer: V3SuccessBody;
    try {
      answer = await callV3(context, { method: 'GET', pathAndQuery: withQuery(list.path, query) });
    } catch (error) {
      if (startingAfter !== undefined && error instanceof V3Refusal && error.error.code === 'VALIDATION_QUERY_FAILED')
        throw new CursorRejectedError(undefined, { cause: error });
      throw error;
    }
    const problems = cursorPageProblems(answer);
    if (problems.length > 0) throw new V3ContractError(context.operation, problems);
    return answer as unknown as CursorListPage;
  };
  const { orgId, mode } = context.principal;
  const walked = await pages.page(`lpages:{${orgId}:${mode}}:${withQuery(list.path, list.query)}`, paging, fetch);
  return { answer: { data: walked.records }, total: walked.total };
}

/** The reads after the operation, sent together: their answers by call name. */
export async function readAll(
  context: V3CallContext,
  reads: readonly (readonly [string, string])[],
): Promise<V3Answers> {
  const { state } = context;
  const before = state.upstreamMs;
  const startedAt = performance.now();
  const answers = await Promise.all(reads.map(([, pathAndQuery]) => callV3(context, { method: 'GET', pathAndQuery })));
  // The reads overlap: their wait is the group's wall time, not the sum of theirs.
  state.upstreamMs = before + (performance.now() - startedAt);
  return Object.fromEntries(reads.map(([name], index) => [name, answers[index]!]));
}
