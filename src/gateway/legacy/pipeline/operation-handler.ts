/**
 * One legacy operation served on v3, its steps assembled in order, the way the core's v3
 * pipeline assembles its own. Each step lives in its own module and may end the request with a
 * legacy error:
 *
 *   1 auth (auth.ts) and the rate limit (rate-limit-step.ts)  2 idempotency
 *   (idempotency-step.ts)  3 query and body (query.ts, body.ts)  4 the v3 calls (v3-calls.ts)
 *   5 the legacy body (transforms/response-body.ts), filtered and paginated (pagination.ts)
 *   and on any failure, the error answer (failure.ts).
 *
 * Auth runs before any upstream call and before the gateway's own v3 credential is touched
 * (only a read's replay check may still be on its way, and its answer waits for it). The rate
 * limit is charged to the key from the moment its token proves it (else to the client address)
 * and settled before any v3 call; every answer carries that cell's `RateLimit-Limit` and
 * `RateLimit-Reset`. Then a retired or browned-out generation is refused with 410
 * (generation-lifecycle.ts).
 * The operation is compiled from its declarations once, at start-up (compiled-operation.ts).
 * Every request answered is counted in the usage report (usage/usage-recorder.ts), against the
 * key its token named when one was verified; what such a request would meet on the next
 * generation (blockers.ts) goes to the readiness report (usage/readiness-recorder.ts).
 *
 * In shadow mode (src/gateway/shadow/) a read's answer is handed on once the client has it, with
 * a way to translate the same request again; and a read the legacy service answered is
 * translated here too (`translate`), without replying, for the comparison.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

import { GenerationRetired } from '../../../lib/errors/internal-errors.js';
import { randomHex } from '../../../lib/random.js';
import type { GatewayMetrics, OperationSeries } from '../../metrics/gateway-metrics.js';
import type { V3Client } from '../../upstream/v3-client.js';
import type { ReadinessObserver } from '../../usage/readiness-recorder.js';
import type { UsageCaller, UsageEvent, UsageObserver } from '../../usage/usage-recorder.js';
import type { LegacyGeneration } from '../declarations/legacy-operations.js';
import type { LegacyAuthenticator, LegacyAuthRefusal, LegacyPrincipal } from '../runtime/auth.js';
import { type GenerationLifecycle } from '../runtime/generation-lifecycle.js';
import type { LegacyIdempotency } from '../runtime/legacy-idempotency.js';
import {
  type LegacyRateLimitCharge,
  type LegacyRateLimiter,
  legacyRateLimitHeaders,
} from '../runtime/legacy-rate-limits.js';
import { stringifyLegacyJson } from '../runtime/lossless-json.js';
import type { PageWalker } from '../runtime/page-walker.js';
import { generationHeaders, type LegacyReplyOptions } from '../runtime/reply.js';
import type { ReadBody } from '../transforms/request-body.js';
import type { V3SuccessBody } from '../transforms/response-body.js';
import { type LegacyAnswer, newRequestState, type RequestState, serverTiming } from './answer.js';
import { rawBodyOf, readLegacyBody } from './body-step.js';
import type { CompiledOperation } from './compiled-operation.js';
import { failureAnswer, GatewayRefusal } from './failure.js';
import { withIdempotency } from './idempotency-step.js';
import { applyListQuery } from './pagination.js';
import { rateClassOf, RateLimitRefusal, settleCharge } from './rate-limit-step.js';
import { callV3, readAll, resolvePath, type V3CallContext, walkCursorList, withQuery } from './v3-calls.js';

export interface LegacyServices {
  readonly authenticate: LegacyAuthenticator;
  readonly client: V3Client;
  readonly idempotency: LegacyIdempotency;
  /** Each key's (or client address's) budget per class, charged after the token and before any v3 call. */
  readonly rateLimiter: LegacyRateLimiter;
  readonly pages: PageWalker;
  readonly reply: LegacyReplyOptions;
  /** Shadow mode: told of every read the gateway answered. */
  readonly shadow?: ShadowObserver;
  /** Brownouts and the sunset: without it, no generation is refused. */
  readonly lifecycle?: GenerationLifecycle;
  /** The usage report: told of every request answered. */
  readonly usage?: UsageObserver;
  /** The readiness report: told what each request of a known key would meet on the next generation. */
  readonly readiness?: ReadinessObserver;
  /** The metrics: each v3 call's time and each upstream failure. */
  readonly metrics?: GatewayMetrics;
}

/** The translation of a request, and how to make it again (null when the request was refused before it named a principal). */
export interface LegacyTranslation {
  readonly answer: LegacyAnswer;
  readonly retranslate: (() => Promise<LegacyAnswer>) | null;
}

export interface ShadowObserver {
  /** Called after the client has the answer; must not throw or wait. */
  gatewayAnswered(
    operation: { readonly generation: LegacyGeneration; readonly name: string },
    request: FastifyRequest,
    translation: LegacyTranslation,
  ): void;
}

const NO_BODY: ReadBody = { fields: {}, v3Body: null };

/** Step 1's outcome: who the request acts for, and its token's single-use check (pending only for a deferred read). */
interface Authenticated {
  readonly principal: LegacyPrincipal;
  readonly replayCheck: Promise<LegacyAuthRefusal | null>;
}

/** An authentication refusal, with the key when the token named a valid one (a refusal of its mode, address, org or scope). */
class AuthRefusal extends GatewayRefusal {
  constructor(
    refusal: LegacyAuthRefusal,
    readonly caller: UsageCaller | null,
  ) {
    super(refusal.code, refusal.reason);
  }
}

export class LegacyOperationHandler<G extends LegacyGeneration> {
  /** This operation's series, made once. */
  private readonly metrics: OperationSeries | undefined;

  constructor(
    private readonly services: LegacyServices,
    private readonly operation: CompiledOperation<G>,
  ) {
    this.metrics = services.metrics?.of(operation.generation, operation.name);
  }

  get name(): string {
    return this.operation.name;
  }

  /** The fastify handler. Never throws: every outcome is a legacy answer. */
  readonly handle = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const { generation, name, tables } = this.operation;
    const state = newRequestState();
    const seen: { principal?: LegacyPrincipal } = {};
    let answer: LegacyAnswer;
    // Who the usage report counts the request against, and whether the gateway itself refused it
    // (a brownout's or the sunset's 410, the key's or the address's 429).
    let caller: UsageCaller | null = null;
    let refused: UsageEvent['refused'];
    // The key's scopes, once it was admitted: the readiness check compares them with v3's.
    let scopes: LegacyPrincipal['scopes'] | null = null;
    try {
      answer = await this.serve(request, state, seen);
      caller = seen.principal ?? null;
      scopes = seen.principal?.scopes ?? null;
    } catch (error) {
      caller =
        error instanceof AuthRefusal || error instanceof RateLimitRefusal ? error.caller : (seen.principal ?? null);
      scopes = error instanceof AuthRefusal ? null : (seen.principal?.scopes ?? null);
      if (error instanceof GenerationRetired) refused = error.kind;
      if (error instanceof RateLimitRefusal) refused = 'rate_limit';
      // A refused request (a replayed token among them) is never translated again.
      seen.principal = undefined;
      answer = failureAnswer(error, request, state, { generation, operation: name, tables, metrics: this.metrics });
    }
    this.services.usage?.seen({
      generation,
      operation: name,
      caller,
      address: request.ip,
      ...(refused === undefined ? {} : { refused }),
    });
    if (caller !== null && this.services.readiness !== undefined) {
      const hits = this.operation.blockers({
        headers: request.headers,
        query: request.query,
        scopes,
        success: answer.status < 400,
        error: answer.v3Error ?? null,
      });
      if (hits.length > 0) this.services.readiness.met({ generation, operation: name, caller, hits });
    }
    // Retry-After goes only with the answers that mean "wait" (failure.ts decides): v3 sends it
    // on every 409, and a v3 409 may become a legacy 400.
    const passOn: Record<string, string> = {};
    for (const header in state.upstreamHeaders) {
      if (header !== 'retry-after') passOn[header] = state.upstreamHeaders[header]!;
    }
    reply.headers({
      'x-trace-id': randomHex(16),
      ...passOn,
      ...answer.headers,
      // The cell this request was charged to, on every answer after the charge (a replay's too).
      ...(state.rateLimit === null ? {} : legacyRateLimitHeaders(state.rateLimit)),
      'x-request-id': request.id,
      ...generationHeaders(generation, this.services.reply),
      'server-timing': serverTiming(state),
    });
    const sent = reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(answer.body);
    // A 410 or a 429 of the gateway's own is no translation to compare.
    if (this.services.shadow !== undefined && !this.operation.write && refused === undefined) {
      const { principal } = seen;
      this.services.shadow.gatewayAnswered(this.operation, request, {
        answer,
        retranslate: principal === undefined ? null : () => this.answerFor(request, principal),
      });
    }
    return sent;
  };

  /**
   * The translation of a read as it would be answered, without replying: for the shadow mode,
   * when the legacy service answered the client. Authenticates with the gateway's own nonce
   * store; keeps no idempotency record.
   */
  readonly translate = async (request: FastifyRequest): Promise<LegacyTranslation> => {
    let principal: LegacyPrincipal;
    try {
      ({ principal } = await this.authenticate(request, false));
    } catch (error) {
      return { answer: this.failure(error, request, newRequestState()), retranslate: null };
    }
    return { answer: await this.answerFor(request, principal), retranslate: () => this.answerFor(request, principal) };
  };

  /** Steps 3 to 5 of a read for an authenticated principal, any failure as its legacy answer. */
  private async answerFor(request: FastifyRequest, principal: LegacyPrincipal): Promise<LegacyAnswer> {
    const state = newRequestState();
    try {
      return await this.run(request, principal, state, undefined);
    } catch (error) {
      return this.failure(error, request, state);
    }
  }

  private failure(error: unknown, request: FastifyRequest, state: RequestState): LegacyAnswer {
    const { generation, name, tables } = this.operation;
    return failureAnswer(error, request, state, { generation, operation: name, tables, metrics: this.metrics });
  }

  private async serve(
    request: FastifyRequest,
    state: RequestState,
    seen: { principal?: LegacyPrincipal },
  ): Promise<LegacyAnswer> {
    const { operation } = this;
    // A read that keeps no answer may be sent while its token's replay check is still on its
    // way (auth.ts); anything that keeps or replays an answer waits for the check.
    const keyed = operation.mapping.idempotency.kind !== 'none' && request.headers['idempotency-key'] !== undefined;
    const deferReplayCheck = !operation.write && !keyed;
    const { principal, replayCheck } = await this.authenticateAndCharge(request, state, deferReplayCheck);
    seen.principal = principal;
    // After the token (so the refusal is counted against its key), before anything is kept or sent upstream.
    const retired = this.services.lifecycle?.refusal(operation.generation, principal.orgId) ?? null;
    if (retired !== null) {
      const refused = Promise.reject(retired);
      return deferReplayCheck ? this.afterReplayCheck(request, state, refused, replayCheck) : refused;
    }
    const answer = withIdempotency(
      request,
      operation,
      principal,
      this.services.idempotency,
      (v3Key) => this.run(request, principal, state, v3Key),
      (error) =>
        failureAnswer(error, request, state, {
          generation: operation.generation,
          operation: operation.name,
          tables: operation.tables,
          metrics: this.metrics,
        }),
    );
    return deferReplayCheck ? this.afterReplayCheck(request, state, answer, replayCheck) : answer;
  }

  /**
   * Step 1 with its rate limit (rate-limit-step.ts): the key's charge is sent when the token
   * proves the key, beside its nonce claim; a request whose token proves none is charged to its
   * client address once refused. Either charge is settled before the outcome is answered, so
   * 429 comes first; a read's pending replay check is then left to settle unheard.
   */
  private async authenticateAndCharge(
    request: FastifyRequest,
    state: RequestState,
    deferReplayCheck: boolean,
  ): Promise<Authenticated> {
    const rateClass = rateClassOf(this.operation.write);
    const { rateLimiter } = this.services;
    const proven: { charge?: Promise<LegacyRateLimitCharge>; caller?: UsageCaller } = {};
    const chargeOf = () => proven.charge ?? rateLimiter.charge({ kind: 'address', address: request.ip }, rateClass);
    let authenticated: Authenticated;
    try {
      authenticated = await this.authenticate(request, deferReplayCheck, (caller) => {
        proven.caller = caller;
        proven.charge = rateLimiter.charge({ kind: 'key', keyName: caller.keyName }, rateClass);
        // Settled below; until then a failure of the store must not count as an unhandled rejection.
        proven.charge.catch(() => {});
      });
    } catch (error) {
      if (error instanceof AuthRefusal) await settleCharge(chargeOf(), state, proven.caller ?? null, this.metrics);
      throw error;
    }
    try {
      await settleCharge(chargeOf(), state, proven.caller ?? null, this.metrics);
    } catch (error) {
      authenticated.replayCheck.catch(() => {});
      throw error;
    }
    return authenticated;
  }

  private async authenticate(
    request: FastifyRequest,
    deferReplayCheck: boolean,
    onProven?: (caller: UsageCaller) => void,
  ): Promise<Authenticated> {
    const result = await this.services.authenticate({
      generation: this.operation.generation,
      authorization: request.headers.authorization,
      appMode: request.headers['x-app-mode'],
      // Fastify's host: the Host header, or X-Forwarded-Host from a trusted proxy only (FXGATE_TRUSTED_PROXIES).
      host: request.host,
      clientIp: request.ip,
      pathOrgId: (request.params as Record<string, string>).orgId ?? '',
      requiredScope: this.operation.mapping.scope,
      write: this.operation.write,
      deferReplayCheck,
      ...(onProven === undefined ? {} : { onProven }),
    });
    if (!result.ok) throw this.refused(request, result);
    return result;
  }

  private refused(request: FastifyRequest, refusal: LegacyAuthRefusal): GatewayRefusal {
    request.log.info(
      { operation: this.operation.name, code: refusal.code, reason: refusal.reason },
      'legacy request refused',
    );
    return new AuthRefusal(refusal, refusal.caller ?? null);
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

  /** Steps 3 to 5: the v3 key is the one the idempotency step chose for a write. */
  private async run(
    request: FastifyRequest,
    principal: LegacyPrincipal,
    state: RequestState,
    v3Key: string | undefined,
  ): Promise<LegacyAnswer> {
    const { operation } = this;
    const query = operation.readQuery(request.query);
    const body = operation.readBody
      ? readLegacyBody(rawBodyOf(request), operation.amountPaths, operation.readBody)
      : NO_BODY;
    const context: V3CallContext = {
      request,
      principal,
      state,
      client: this.services.client,
      operation: operation.name,
      metrics: this.metrics,
    };
    const params = request.params as Record<string, unknown>;
    const [firstName, first] = operation.first;
    const firstQuery = { ...first.query, ...query.v3Query };

    let firstAnswer: V3SuccessBody;
    let cursorTotal: number | null = null;
    if (query.paging && operation.listKind === 'cursor') {
      const walked = await walkCursorList(
        context,
        this.services.pages,
        { path: first.path, query: firstQuery },
        query.paging,
      );
      firstAnswer = walked.answer;
      cursorTotal = walked.total;
    } else {
      const v3Body = body.v3Body === null ? undefined : Buffer.from(JSON.stringify(body.v3Body));
      firstAnswer = await callV3(context, {
        method: first.method,
        pathAndQuery: withQuery(resolvePath(first, params, body.fields), firstQuery),
        body: v3Body,
        idempotencyKey: first.method === 'POST' ? v3Key : undefined,
      });
    }
    const reads = await readAll(
      context,
      operation.reads.map(
        ([readName, call]) => [readName, withQuery(resolvePath(call, params, body.fields), call.query ?? {})] as const,
      ),
    );

    const legacy = operation.buildBody(
      { ...reads, [firstName]: firstAnswer },
      { orgId: principal.orgId, keyId: operation.keyIdOf(principal) },
    );
    applyListQuery(legacy, query, cursorTotal);
    return { status: 200, body: stringifyLegacyJson(legacy), headers: {} };
  }
}
