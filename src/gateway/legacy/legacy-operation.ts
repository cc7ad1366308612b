/**
 * One legacy operation served on v3, as its endpoint mapping declares it (mappings/, DESIGN 4).
 * The steps, in order, each able to end the request with a legacy error:
 *
 *   1. auth: the legacy JWT, org, mode, IP allowlist and scope (legacy-auth.ts), before any
 *      upstream call and before the gateway's own v3 credential is touched (only a read's
 *      replay check may still be on its way, and its answer waits for it);
 *   2. idempotency: v2's own contract (legacy-idempotency.ts); the first answer is kept and
 *      replayed, and the v3 key is derived from the v2 key; v1 writes get a fresh v3 key;
 *   3. input: page/limit and filters of lists, the body read losslessly (amounts as decimal
 *      text), the request transform, and the legacy ids of the v3 path turned into v3 ids;
 *   4. the v3 calls, signed by the V3Client: the operation, a page walk for cursor lists, then
 *      the reads a composed answer needs (v2 trade = trade + balances + exposure);
 *   5. the response transform, pagination meta, and the body written with exact amounts.
 *
 * Every failure becomes a v3 error code, then the generation's table row (error-tables.ts), so
 * a legacy client never sees a v3 envelope, a stack trace or an upstream message.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError, isApiError } from '../../lib/errors/api-error.js';
import type { ErrorCode } from '../../lib/errors/catalog.js';
import { toIssues } from '../../lib/errors/validation-issues.js';
import { requestFingerprint } from '../../lib/idempotency-key.js';
import { legacyUuidToId } from '../../lib/ids.js';
import { randomHex } from '../../lib/random.js';
import type { StoredResponse } from '../../lib/store/ephemeral-store.js';
import { forwardedFor } from '../forwarded-for.js';
import { UpstreamCredentialError } from '../upstream/credentials.js';
import { UpstreamError, UpstreamUnreachableError, type V3CallResponse, type V3Client, type V3Error } from '../upstream/v3-client.js';
import type { EndpointMapping, V3Call } from './endpoint-mappings.js';
import { type LegacyErrorTables, legacyErrorBody, resolveLegacyError } from './error-tables.js';
import type { LegacyAuthenticator, LegacyAuthRefusal, LegacyPrincipal } from './legacy-auth.js';
import {
  type LegacyIdempotency,
  type LegacyIdempotencyScope,
  derivedV3Key,
  freshV3Key,
  isReplayable,
  readIdempotencyKey,
} from './legacy-idempotency.js';
import { type LegacyReplyOptions, forwardedHeaders, generationHeaders, sendLegacyError } from './legacy-reply.js';
import { LegacyJsonParseError, parseLegacyJson, stringifyLegacyJson } from './lossless-json.js';
import type { LegacyGeneration, LegacyOperation } from './operations.js';
import { CursorRejectedError, LEGACY_MAX_LIMIT, type CursorListPage, type FetchCursorPage, type PageWalker } from './page-walker.js';
import { type TransformSet, V3ContractError, type V3SuccessBody } from './transforms/transform-types.js';

export interface LegacyServices {
  readonly authenticate: LegacyAuthenticator;
  readonly client: V3Client;
  readonly idempotency: LegacyIdempotency;
  readonly pages: PageWalker;
  readonly transforms: TransformSet;
  readonly reply: LegacyReplyOptions;
}

/** Legacy list query (DESIGN 4): page at least 1 (default 1), limit 1 to 50 (default 10). */
export const LEGACY_PAGE_DEFAULTS = { page: 1, limit: 10, maxLimit: LEGACY_MAX_LIMIT } as const;

const LIMIT_RULE = `must be a whole number from 1 to ${LEGACY_PAGE_DEFAULTS.maxLimit}`;
/** Query values arrive as text (an array when repeated, which is refused). */
const pageQuerySchema = z.object({
  page: z.string().regex(/^[1-9][0-9]{0,8}$/, 'must be a whole number of at least 1').transform(Number),
  limit: z.string().regex(/^[1-9][0-9]?$/, LIMIT_RULE).transform(Number).pipe(z.number().max(LEGACY_PAGE_DEFAULTS.maxLimit, LIMIT_RULE)),
});
const filterValueSchema = z.string().min(1).max(64);

/**
 * The gateway refuses the request itself with a cataloged code (auth, mode, scope): carried to
 * the top, where the table turns it into the legacy answer. Only the code matters there, so no
 * v3 details are invented for it.
 */
class GatewayRefusal extends Error {
  constructor(
    readonly code: ErrorCode,
    reason: string,
  ) {
    super(reason);
    this.name = 'GatewayRefusal';
  }
}

/** v3 answered with its error envelope: carried to the top, where the table downgrades it. */
class V3Refusal extends Error {
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
 * A v3 list page's pagination, checked before the walker trusts its cursors. The records are
 * checked by hand (cursorPageProblems): a zod object schema copies every record it passes, and the
 * response transform reads the page's records through their own schemas anyway.
 */
const cursorPaginationSchema = z.looseObject({ hasNext: z.boolean(), hasPrev: z.boolean(), nextCursor: z.string().nullable(), prevCursor: z.string().nullable() });

/** The problems of a v3 list page, as `<path>: <message>`; none when the walker may use it. */
function cursorPageProblems(answer: V3SuccessBody): string[] {
  const problems: string[] = [];
  const { data } = answer;
  if (!Array.isArray(data)) problems.push('data: must be an array');
  else {
    data.forEach((record: unknown, index) => {
      const id = isRecord(record) ? record.id : undefined;
      if (typeof id !== 'string' || id === '') problems.push(`data[${index}].id: must be a non-empty string`);
    });
  }
  const pagination = cursorPaginationSchema.safeParse((answer as Record<string, unknown>).pagination);
  if (!pagination.success) problems.push(...pagination.error.issues.map((issue) => `pagination${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}: ${issue.message}`));
  return problems;
}

/** The answer about to be sent, before it is sent (so that it can also be stored for replay). */
interface LegacyAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string>;
  /** v2's `error.code`, for the replay decision. */
  readonly v2Code?: string;
}

/** What v3 said about a code that only the gateway's own credential or wiring could cause. */
function upstreamCodeForLegacy(error: V3Error, status: number): { code: string; type?: string; defect: boolean } {
  const gatewayDefect =
    status === 401 ||
    error.code.startsWith('AUTH_') ||
    error.code === 'SANDBOX_MODE_REQUIRED' ||
    error.code === 'ROUTE_NOT_FOUND' ||
    error.code === 'METHOD_NOT_ALLOWED' ||
    error.code === 'IDEMPOTENCY_KEY_MISSING' ||
    error.code === 'IDEMPOTENCY_KEY_INVALID' ||
    error.code === 'VALIDATION_CONTENT_TYPE' ||
    error.code === 'VALIDATION_HEADER_FAILED';
  if (gatewayDefect) return { code: 'INTERNAL_ERROR', defect: true };
  return { code: error.code, type: error.rawType, defect: false };
}

export class LegacyOperationHandler<G extends LegacyGeneration> {
  private readonly write: boolean;
  private readonly tables: LegacyErrorTables<G>;

  constructor(
    private readonly services: LegacyServices,
    private readonly generation: G,
    private readonly operation: LegacyOperation<G>,
    private readonly mapping: EndpointMapping,
    tables: LegacyErrorTables<G>,
  ) {
    this.write = mapping.legacy.method === 'POST';
    this.tables = tables;
  }

  /** The fastify handler. Never throws: every outcome is a legacy answer. */
  readonly handle = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const fixed = { 'x-request-id': request.id, ...generationHeaders(this.generation, this.services.reply) };
    const state: RequestState = { upstreamHeaders: {}, upstreamMs: 0, startedAt: performance.now() };
    let answer: LegacyAnswer;
    try {
      answer = await this.serve(request, state);
    } catch (error) {
      answer = this.failure(error, request, state);
    }
    // Retry-After goes only with the answers that mean "wait" (failure() decides): v3 sends it
    // on every 409, and a v3 409 may become a legacy 400.
    const passOn = Object.fromEntries(Object.entries(state.upstreamHeaders).filter(([name]) => name !== 'retry-after'));
    reply.headers({ 'x-trace-id': randomHex(16), ...passOn, ...answer.headers, ...fixed, 'server-timing': serverTiming(state) });
    return reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(answer.body);
  };

  private async serve(request: FastifyRequest, state: RequestState): Promise<LegacyAnswer> {
    // A read without an idempotency key may be sent while its token's replay check is still on
    // its way (legacy-auth.ts); anything that keeps or replays an answer waits for the check.
    const deferReplayCheck = !this.write && request.headers['idempotency-key'] === undefined;
    const { principal, replayCheck } = await this.authenticate(request, deferReplayCheck);
    const key = this.idempotencyKeyOf(request);
    if (key === undefined) {
      const answer = this.run(request, principal, state, this.write ? freshV3Key() : undefined);
      return deferReplayCheck ? this.afterReplayCheck(request, state, answer, replayCheck) : answer;
    }

    const scope: LegacyIdempotencyScope = { orgId: principal.orgId, mode: principal.mode, operation: this.operation, key };
    const fingerprint = requestFingerprint(request.method, request.url, this.write ? rawBodyOf(request) : Buffer.alloc(0));
    const begun = await this.services.idempotency.begin(scope, fingerprint);
    if (begun.kind === 'replay') return replayed(begun.response);

    let answer: LegacyAnswer;
    try {
      answer = await this.run(request, principal, state, this.write ? derivedV3Key(scope) : undefined);
    } catch (error) {
      answer = this.failure(error, request, state);
    }
    await this.settle(request, scope, begun.owner, answer);
    return answer;
  }

  /** Keeps a final answer for the key's lifetime; anything else frees the key for a retry. */
  private async settle(request: FastifyRequest, scope: LegacyIdempotencyScope, owner: string, answer: LegacyAnswer): Promise<void> {
    const rule = this.mapping.idempotency;
    const lifetimeSeconds = rule.kind === 'required' || rule.kind === 'honoured-if-sent' ? rule.lifetimeSeconds : 0;
    try {
      if (isReplayable(answer.status, answer.v2Code) && lifetimeSeconds > 0) {
        const stored: StoredResponse = { statusCode: answer.status, headers: { 'content-type': 'application/json; charset=utf-8' }, bodyBase64: Buffer.from(answer.body).toString('base64') };
        await this.services.idempotency.complete(scope, owner, stored, lifetimeSeconds);
      } else {
        await this.services.idempotency.release(scope, owner);
      }
    } catch (error) {
      // The answer stands: without the record a retry reaches v3 with the same derived key,
      // which replays instead of executing again.
      request.log.warn({ err: error, operation: this.operation }, 'legacy idempotency record not written');
    }
  }

  private idempotencyKeyOf(request: FastifyRequest): string | undefined {
    const rule = this.mapping.idempotency;
    if (rule.kind === 'none' || rule.kind === 'fresh-v3-key') return undefined;
    const key = readIdempotencyKey(request.headers['idempotency-key']);
    if (key === undefined && rule.kind === 'required') throw new ApiError('IDEMPOTENCY_KEY_MISSING', { endpoint: `${this.mapping.legacy.method} ${this.mapping.legacy.path}` });
    return key;
  }

  private async authenticate(request: FastifyRequest, deferReplayCheck: boolean): Promise<{ principal: LegacyPrincipal; replayCheck: Promise<LegacyAuthRefusal | null> }> {
    const result = await this.services.authenticate({
      generation: this.generation,
      authorization: request.headers.authorization,
      appMode: request.headers['x-app-mode'],
      clientIp: request.ip,
      pathOrgId: (request.params as Record<string, string>).orgId ?? '',
      requiredScope: this.mapping.scope,
      write: this.write,
      deferReplayCheck,
    });
    if (!result.ok) throw this.refused(request, result);
    return result;
  }

  private refused(request: FastifyRequest, refusal: LegacyAuthRefusal): GatewayRefusal {
    request.log.info({ operation: this.operation, code: refusal.code, reason: refusal.reason }, 'legacy request refused');
    return new GatewayRefusal(refusal.code, refusal.reason);
  }

  /**
   * The read's answer once its token's replay check has settled. A replay's answer, success or
   * failure, is dropped unseen, with whatever v3 headers it brought: the client gets the refusal.
   */
  private async afterReplayCheck(
    request: FastifyRequest,
    state: RequestState,
    answer: Promise<LegacyAnswer>,
    replayCheck: Promise<LegacyAuthRefusal | null>,
  ): Promise<LegacyAnswer> {
    const [settled, check] = await Promise.allSettled([answer, replayCheck]);
    if (check.status === 'rejected' || check.value !== null) state.upstreamHeaders = {};
    if (check.status === 'rejected') throw check.reason;
    if (check.value !== null) throw this.refused(request, check.value);
    if (settled.status === 'rejected') throw settled.reason;
    return settled.value;
  }

  /** Steps 3 to 5. */
  private async run(request: FastifyRequest, principal: LegacyPrincipal, state: RequestState, v3Key: string | undefined): Promise<LegacyAnswer> {
    const { mapping } = this;
    const paging = mapping.pagination === 'none' ? null : this.pageQuery(request);
    const filters = this.filters(request);

    let body: unknown;
    let v3Body: Buffer | undefined;
    if (this.write) {
      body = readBody(rawBodyOf(request), mapping.amounts.request);
      const transform = this.services.transforms.request[mapping.transforms.request ?? ''];
      const built = transform ? transform({ generation: this.generation, operation: this.operation, body, principal }) : null;
      v3Body = built === null ? undefined : Buffer.from(JSON.stringify(built));
    }

    const call = (method: 'GET' | 'POST', pathAndQuery: string, payload?: Buffer, idempotencyKey?: string) =>
      this.callV3(request, principal, state, { method, pathAndQuery, payload, idempotencyKey });

    const [first, ...rest] = mapping.v3;
    const answers: V3SuccessBody[] = [];
    let total: number | null = null;
    if (mapping.pagination === 'page-limit/cursor') {
      const walked = await this.walk(principal, first, filters, paging!, call);
      answers.push({ data: walked.records });
      total = walked.total;
    } else {
      const path = withQuery(resolvePath(first, request, body), { ...first.query, ...filters });
      answers.push(await call(first.method, path, v3Body, first.method === 'POST' ? v3Key : undefined));
    }
    for (const next of rest) answers.push(await call('GET', withQuery(resolvePath(next, request, body), next.query ?? {})));

    const transform = this.services.transforms.response[mapping.transforms.response]!;
    const legacy = transform({ generation: this.generation, operation: this.operation, answers, principal });
    if (paging) Object.assign(legacy, paginate(legacy, paging, total));
    return { status: 200, body: stringifyLegacyJson(legacy, mapping.amounts.response), headers: {} };
  }

  private pageQuery(request: FastifyRequest): { page: number; limit: number } {
    const query = request.query as Record<string, unknown>;
    const parsed = pageQuerySchema.safeParse({
      page: query.page ?? String(LEGACY_PAGE_DEFAULTS.page),
      limit: query.limit ?? String(LEGACY_PAGE_DEFAULTS.limit),
    });
    if (!parsed.success) throw new ApiError('VALIDATION_QUERY_FAILED', { issues: toIssues(parsed.error) });
    return parsed.data;
  }

  private filters(request: FastifyRequest): Record<string, string> {
    const query = request.query as Record<string, unknown>;
    const filters: Record<string, string> = {};
    for (const [legacyName, v3Name] of Object.entries(this.mapping.filters)) {
      if (query[legacyName] === undefined) continue;
      const parsed = filterValueSchema.safeParse(query[legacyName]);
      if (!parsed.success) throw new ApiError('VALIDATION_QUERY_FAILED', { issues: toIssues(parsed.error).map((issue) => ({ ...issue, path: legacyName })) });
      filters[v3Name] = parsed.data;
    }
    return filters;
  }

  private async walk(
    principal: LegacyPrincipal,
    target: V3Call,
    filters: Record<string, string>,
    paging: { page: number; limit: number },
    call: (method: 'GET', pathAndQuery: string) => Promise<V3SuccessBody>,
  ) {
    const fixedQuery = { ...target.query, ...filters };
    const fetch: FetchCursorPage = async ({ limit, startingAfter }) => {
      const query: Record<string, string> = { ...fixedQuery, limit: String(limit) };
      if (startingAfter !== undefined) query.startingAfter = startingAfter;
      let answer: V3SuccessBody;
      try {
        answer = await call('GET', withQuery(target.path, query));
      } catch (error) {
        if (startingAfter !== undefined && error instanceof V3Refusal && error.error.code === 'VALIDATION_QUERY_FAILED') throw new CursorRejectedError(undefined, { cause: error });
        throw error;
      }
      const problems = cursorPageProblems(answer);
      if (problems.length > 0) throw new V3ContractError(this.operation, problems);
      return answer as unknown as CursorListPage;
    };
    const listKey = `lpages:{${principal.orgId}:${principal.mode}}:${withQuery(target.path, fixedQuery)}`;
    return this.services.pages.page(listKey, paging, fetch);
  }

  private async callV3(
    request: FastifyRequest,
    principal: LegacyPrincipal,
    state: RequestState,
    call: { method: 'GET' | 'POST'; pathAndQuery: string; payload?: Buffer | undefined; idempotencyKey?: string | undefined },
  ): Promise<V3SuccessBody> {
    const response: V3CallResponse = await this.services.client.request({
      orgId: principal.orgId,
      mode: principal.mode,
      method: call.method,
      pathAndQuery: call.pathAndQuery,
      body: call.payload,
      idempotencyKey: call.idempotencyKey,
      headers: { 'x-request-id': request.id, 'x-forwarded-for': forwardedFor(request) },
    });
    state.upstreamMs += response.elapsedMs;
    const forwarded = forwardedHeaders(response.headers);
    // The trace id of the first call names the operation; rate-limit headers are the latest.
    state.upstreamHeaders = { ...forwarded, ...(state.upstreamHeaders['x-trace-id'] ? { 'x-trace-id': state.upstreamHeaders['x-trace-id'] } : {}) };
    if (response.error) throw new V3Refusal(response.error, response.status, forwarded);
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new V3ContractError(this.operation, [`${call.method} ${call.pathAndQuery.split('?')[0]} answered ${response.status} with a body that is not JSON`]);
    }
    if (!isRecord(parsed) || parsed.data === undefined) throw new V3ContractError(this.operation, [`${call.method} ${call.pathAndQuery.split('?')[0]} answered without data`]);
    return parsed as V3SuccessBody;
  }

  /** Any failure as the generation's error answer. */
  private failure(error: unknown, request: FastifyRequest, state: RequestState): LegacyAnswer {
    const { code, type, headers } = this.classify(error, request);
    const answer = resolveLegacyError(this.tables, { code, type }, this.operation);
    const v2Code = 'error' in answer ? answer.error?.code : undefined;
    const retryAfter = headers['retry-after'] ?? state.upstreamHeaders['retry-after'];
    const legacyHeaders: Record<string, string> = retryAfter !== undefined && (answer.status === 409 || answer.status === 429 || answer.status === 503) ? { 'retry-after': retryAfter } : {};
    return { status: answer.status, body: JSON.stringify(legacyErrorBody(answer)), headers: legacyHeaders, ...(v2Code === undefined ? {} : { v2Code }) };
  }

  private classify(error: unknown, request: FastifyRequest): { code: string; type?: string; headers: Readonly<Record<string, string>> } {
    const log = (level: 'warn' | 'error', message: string) => request.log[level]({ err: error, operation: this.operation, generation: this.generation }, message);
    if (isApiError(error)) return { code: error.code, headers: error.headers };
    if (error instanceof GatewayRefusal) return { code: error.code, headers: {} };
    if (error instanceof V3Refusal) {
      const mapped = upstreamCodeForLegacy(error.error, error.status);
      if (mapped.defect) log('error', 'v3 refused the gateway itself (credential or wiring)');
      return { code: mapped.code, ...(mapped.type === undefined ? {} : { type: mapped.type }), headers: error.headers };
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
}

/** What one request learned from v3 so far: the headers to pass on, even on failure. */
interface RequestState {
  upstreamHeaders: Record<string, string>;
  /** Time spent waiting on v3 answers, summed over this request's calls (they run one after another). */
  upstreamMs: number;
  /** When the handler took the request (performance.now()). */
  readonly startedAt: number;
}

/**
 * `Server-Timing: upstream;dur=..., gateway;dur=...` (W3C Server Timing) on every legacy answer:
 * how long the request waited on v3, and the handler's own time besides (authentication, the
 * idempotency record, signing, translation). What the client measures beyond their sum is the
 * hop to the gateway and any wait before the handler ran. Operators can watch both per request.
 */
function serverTiming(state: RequestState): string {
  const own = Math.max(0, performance.now() - state.startedAt - state.upstreamMs);
  return `upstream;dur=${state.upstreamMs.toFixed(3)}, gateway;dur=${own.toFixed(3)}`;
}

function rawBodyOf(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

function readBody(raw: Buffer, amountPaths: readonly string[]): unknown {
  if (raw.length === 0) {
    throw new ApiError('VALIDATION_BODY_FAILED', { issues: [{ path: '', code: 'invalid_json', message: 'a JSON object body is required' }] });
  }
  try {
    return parseLegacyJson(raw.toString('utf8'), amountPaths);
  } catch (error) {
    if (error instanceof LegacyJsonParseError) {
      throw new ApiError('VALIDATION_BODY_FAILED', { issues: [{ path: error.location, code: error.reason.toLowerCase(), message: error.message }] }, { cause: error });
    }
    throw error;
  }
}

/** Fills the v3 path's `:params` from the legacy path or body; a malformed legacy id never reaches v3. */
function resolvePath(call: V3Call, request: FastifyRequest, body: unknown): string {
  let path = call.path;
  for (const [param, source] of Object.entries(call.params ?? {})) {
    const container = source.from === 'path' ? (request.params as Record<string, unknown>) : isRecord(body) ? body : {};
    const value = container[source.field];
    const id = typeof value === 'string' ? legacyUuidToId(source.idKind, value) : null;
    if (id === null) {
      const issues = [{ path: source.field, code: 'invalid_format', message: `${source.field} must be a UUID` }];
      throw source.from === 'path' ? new ApiError('VALIDATION_QUERY_FAILED', { issues }) : new ApiError('VALIDATION_BODY_FAILED', { issues });
    }
    path = path.replace(`:${param}`, encodeURIComponent(id));
  }
  return path;
}

function withQuery(path: string, query: Readonly<Record<string, string>>): string {
  const entries = Object.entries(query);
  return entries.length === 0 ? path : `${path}?${new URLSearchParams(entries).toString()}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `meta.pagination` (spec 4.6) and, for a bounded list, the page's slice of `data`. start is the
 * 0-based offset of the page's first record and end the offset after its last (end - start is
 * the number of records on the page). A cursor list's total is the walker's: in its 'bounded'
 * totals mode, a lower bound above end until the list's end has been walked (page-walker.ts).
 */
function paginate(legacy: Record<string, unknown>, paging: { page: number; limit: number }, cursorTotal: number | null): Record<string, unknown> {
  const start = (paging.page - 1) * paging.limit;
  let data = Array.isArray(legacy.data) ? (legacy.data as unknown[]) : [];
  let total = cursorTotal;
  if (total === null) {
    total = data.length;
    data = data.slice(start, start + paging.limit);
  }
  return { data, meta: { pagination: { total, start: Math.min(start, total), end: Math.min(start, total) + data.length, page: paging.page, limit: paging.limit } } };
}

function replayed(response: StoredResponse): LegacyAnswer {
  return { status: response.statusCode, body: Buffer.from(response.bodyBase64, 'base64').toString('utf8'), headers: { ...response.headers, 'idempotency-replayed': 'true' } };
}

/** For the route layer: answers raised before an operation is known (unknown path, wrong method, bad body framing). */
export function legacyErrorReply<G extends LegacyGeneration>(reply: FastifyReply, tables: LegacyErrorTables<G>, code: ErrorCode, extraHeaders: Readonly<Record<string, string>>): FastifyReply {
  const answer = resolveLegacyError(tables, { code });
  return sendLegacyError(reply, answer, { 'x-trace-id': randomHex(16), 'x-request-id': reply.request.id, ...extraHeaders });
}
