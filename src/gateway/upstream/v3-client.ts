/**
 * The gateway's client for its own calls to v3 (as opposed to the verbatim /v3 passthrough):
 * each call is signed with a fresh token and X-Request-Signature from the org's upstream
 * credential, sent over the shared undici Pool of `./pool.js` (bounded connect, headers
 * and body times) or the dispatcher the gateway was given instead, each call within a total
 * deadline of its own, and every failure comes back as a typed error with a stable code:
 *
 * - UpstreamUnreachableError: nothing reached v3 (refused, DNS, unroutable, connect timeout);
 *   any request, write or not, is safe to retry. Legacy answer: 503.
 * - UpstreamTimeoutError: sent, then no answer in time (headers or body timeout, or the
 *   answer not finished by the deadline) or the connection was lost; a write may have taken
 *   effect. Legacy answer: 500.
 * - UpstreamProtocolError: an answer that is not v3: a non-2xx whose body is not the v3 error
 *   envelope, or a body over the size limit. Legacy answer: 500.
 *
 * A non-2xx with a well-formed envelope is not an error here: it is returned with `error` set,
 * for the mappings to downgrade. Credential failures (UpstreamCredentialError) pass through. One
 * refusal is answered here instead: a token v3 takes for one signed before its replay store was
 * reset is signed again and the call sent once more. With tracing on, each call is a CLIENT span
 * named by the declared operation, its `traceparent` sent (docs/operations.md#tracing).
 */
import type { Dispatcher } from 'undici';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import { SINGLE_USE_REFUSAL_MESSAGES } from '../../lib/auth/single-use.js';
import { DEFAULT_UPSTREAM_DEADLINE_MS } from '../../lib/config.js';
import {
  UpstreamError,
  UpstreamProtocolError,
  UpstreamTimeoutError,
  UpstreamUnreachableError,
} from '../../lib/errors/internal-errors.js';
import {
  ERROR_TYPES,
  type ErrorType,
  RETRY_STRATEGIES,
  type RetryStrategy,
} from '../../lib/errors/v3-error-catalog.js';
import { type HttpClientCall, type HttpClientSpan, inHttpClientSpan } from '../../lib/tracing/http-client-span.js';
import { ATTR, TRACERS, tracingActive } from '../../lib/tracing/spans.js';
import { v3OperationLabel, V3OperationMatcher } from '../metrics/v3-routes.js';
import { errorCodesOf, NOT_SENT_CODES } from './error-codes.js';
import type { UpstreamCredentials } from './signing-credentials.js';

/**
 * A v3 error as a client must read it (docs/contract.md#errors-client-handling): code, type and
 * retryStrategy are open vocabularies. An unknown type counts as INTERNAL_ERROR and an unknown
 * retryStrategy as TERMINAL; the values as sent are kept in rawType / rawRetryStrategy.
 */
export interface V3Error {
  readonly code: string;
  readonly type: ErrorType;
  readonly rawType: string;
  readonly message: string;
  readonly retryStrategy: RetryStrategy;
  readonly rawRetryStrategy: string;
  readonly details: Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a v3 error body `{error:{code, type, message, retryStrategy, details}}` loosely: the
 * code must be a non-empty string; type and retryStrategy, when present, strings (unknown
 * values allowed); message a string (default ''); details an object (default {}). Anything
 * else, or a body that is not JSON, is an UpstreamProtocolError.
 */
export function parseV3Error(body: Buffer | string, status?: number): V3Error {
  const fail = (reason: string, cause?: unknown): never => {
    throw new UpstreamProtocolError(
      `v3 answered ${status ?? 'an error'} with ${reason}`,
      status,
      cause === undefined ? undefined : { cause },
    );
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch (error) {
    return fail('a body that is not JSON', error);
  }
  const error = isRecord(parsed) ? parsed.error : undefined;
  if (!isRecord(error)) return fail('no v3 error envelope');
  const { code, type, message, retryStrategy, details } = error;
  if (typeof code !== 'string' || code === '') return fail('an error without a code');
  if (type !== undefined && typeof type !== 'string') return fail('an error type that is not a string');
  if (retryStrategy !== undefined && typeof retryStrategy !== 'string')
    return fail('a retryStrategy that is not a string');
  if (message !== undefined && typeof message !== 'string') return fail('an error message that is not a string');
  if (details !== undefined && !isRecord(details)) return fail('error details that are not an object');
  const rawType = type ?? '';
  const rawRetryStrategy = retryStrategy ?? '';
  return {
    code,
    type: (ERROR_TYPES as readonly string[]).includes(rawType) ? (rawType as ErrorType) : 'INTERNAL_ERROR',
    rawType,
    message: message ?? '',
    retryStrategy: (RETRY_STRATEGIES as readonly string[]).includes(rawRetryStrategy)
      ? (rawRetryStrategy as RetryStrategy)
      : 'TERMINAL',
    rawRetryStrategy,
    details: details ?? {},
  };
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Turns what undici threw into one of the typed errors. */
export function classifyUpstreamFailure(error: unknown, what: string): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const codes = errorCodesOf(error);
  const detail = codes[0] ?? (error instanceof Error ? error.message : String(error));
  if (codes.some((code) => NOT_SENT_CODES.has(code)))
    return new UpstreamUnreachableError(`v3 is unreachable for ${what} (${detail})`, { cause: error });
  if (codes.some((code) => TIMEOUT_CODES.has(code)))
    return new UpstreamTimeoutError(`v3 did not answer ${what} in time (${detail})`, { cause: error });
  // A reset or a closed socket after sending: as unknown an outcome as a timeout.
  return new UpstreamTimeoutError(`v3 connection lost during ${what} (${detail})`, { cause: error });
}

export interface V3CallRequest {
  readonly orgId: string;
  readonly mode: Mode;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query exactly as sent (and signed). */
  readonly pathAndQuery: string;
  readonly body?: Buffer;
  readonly idempotencyKey?: string;
  /** Extra headers (e.g. x-request-id); the signing headers always win. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The deadline this call shares with others (a legacy request's calls); its own when absent. */
  readonly deadline?: SharedDeadline;
}

/**
 * One deadline for several calls, so that a request making many of them (a page walk, a write
 * and the reads composing its answer) is bounded as a whole rather than per call. It starts
 * when the first call is sent; each later call gets what is left of it.
 */
export class SharedDeadline {
  private signal: AbortSignal | null = null;

  signalFor(deadlineMs: number): AbortSignal {
    this.signal ??= AbortSignal.timeout(deadlineMs);
    return this.signal;
  }
}

export interface V3CallResponse {
  readonly status: number;
  readonly headers: Dispatcher.ResponseData['headers'];
  readonly body: Buffer;
  /** The parsed v3 error of a non-2xx answer. */
  readonly error?: V3Error;
  /** Milliseconds from sending the request to the last byte of the answer (signing excluded). */
  readonly elapsedMs: number;
}

export const V3_CLIENT_DEFAULTS = { maxBodyBytes: 10 * 1024 * 1024, deadlineMs: DEFAULT_UPSTREAM_DEADLINE_MS } as const;

export interface V3ClientOptions {
  /**
   * What carries the calls: the gateway's Pool from createUpstreamPool, whose connect, headers
   * and body timeouts bound every call, or the dispatcher a caller gave the gateway.
   */
  readonly dispatcher: Dispatcher;
  readonly credentials: UpstreamCredentials;
  /** A larger body is an UpstreamProtocolError rather than unbounded memory. */
  readonly maxBodyBytes?: number;
  /**
   * The most one call may take, from sending to the last byte of the answer. The dispatcher's
   * body timeout is per chunk, so an answer trickling in a byte at a time would meet no other bound.
   */
  readonly deadlineMs?: number;
}

/**
 * v3 refused the call's own token as signed before its replay store was reset (a Redis restart or
 * failover made a new epoch marker between the signing and the check). The refusal comes before
 * v3 does anything, and the token was this client's: a token signed now is the answer.
 */
function signedBeforeStoreReset(response: V3CallResponse): boolean {
  return (
    response.status === 401 &&
    response.error?.code === 'AUTH_TOKEN_INVALID' &&
    response.error.message === SINGLE_USE_REFUSAL_MESSAGES.SIGNED_BEFORE_STORE_RESET
  );
}

/** The declared v3 operations, to name a call's span by its template. */
const templates = new V3OperationMatcher();

/**
 * How a call to v3 is named in its span, this client's and the passthrough's alike: by the
 * declared operation its method and target name (never the path, which carries ids), the
 * method alone when none does.
 */
export function v3CallSpan(method: string, pathAndQuery: string): HttpClientCall {
  const operation = templates.match(method, pathAndQuery);
  return operation === null
    ? { method, attributes: { [ATTR.generation]: 'v3' } }
    : {
        method,
        template: operation.path,
        attributes: { [ATTR.generation]: 'v3', [ATTR.operation]: v3OperationLabel(operation) },
      };
}

function answeredWith(span: HttpClientSpan, response: V3CallResponse): void {
  span.answered(response.status);
}

export class V3Client {
  constructor(private readonly options: V3ClientOptions) {}

  /** Signs and sends the call; once more, signed again, when v3 took its token for one signed before its store's reset. */
  async request(call: V3CallRequest): Promise<V3CallResponse> {
    const response = await this.send(call);
    return signedBeforeStoreReset(response) ? this.send(call) : response;
  }

  private async send(call: V3CallRequest): Promise<V3CallResponse> {
    const signer = await this.options.credentials.signerFor(call.orgId, call.mode);
    const signed = await signer.headers({
      method: call.method,
      pathAndQuery: call.pathAndQuery,
      body: call.body,
      idempotencyKey: call.idempotencyKey,
    });
    const headers: Record<string, string> = { accept: 'application/json', ...call.headers, ...signed };
    if (!tracingActive()) return this.exchange(call, headers);
    // A CLIENT span per call; v3's server span is its child.
    return inHttpClientSpan(
      TRACERS.gateway,
      v3CallSpan(call.method, call.pathAndQuery),
      headers,
      () => this.exchange(call, headers),
      answeredWith,
    );
  }

  private async exchange(call: V3CallRequest, headers: Record<string, string>): Promise<V3CallResponse> {
    const what = `${call.method} ${call.pathAndQuery.split('?')[0]}`;
    let status: number;
    let responseHeaders: Dispatcher.ResponseData['headers'];
    let body: Buffer;
    const deadlineMs = this.options.deadlineMs ?? V3_CLIENT_DEFAULTS.deadlineMs;
    const signal = call.deadline ? call.deadline.signalFor(deadlineMs) : AbortSignal.timeout(deadlineMs);
    const sent = performance.now();
    try {
      const response = await this.options.dispatcher.request({
        method: call.method,
        path: call.pathAndQuery,
        headers,
        body: call.body,
        signal,
      });
      status = response.statusCode;
      responseHeaders = response.headers;
      body = await this.readBody(response.body, status, what);
    } catch (error) {
      // Whatever undici reports once the deadline has aborted the call, the deadline is the cause.
      if (signal.aborted)
        throw new UpstreamTimeoutError(
          `v3 did not finish answering ${what} within the ${deadlineMs} ms deadline${call.deadline ? ' of the request' : ''}`,
          { cause: error, deadline: true },
        );
      throw classifyUpstreamFailure(error, what);
    }
    const elapsedMs = performance.now() - sent;
    if (status >= 200 && status < 300) return { status, headers: responseHeaders, body, elapsedMs };
    return { status, headers: responseHeaders, body, error: parseV3Error(body, status), elapsedMs };
  }

  /**
   * The whole body, refused past maxBodyBytes. Read from 'data' events rather than an async
   * iterator: the iterator's promise and end-of-stream machinery per chunk had been a few per
   * cent of all the gateway allocated for a legacy read.
   */
  private readBody(stream: Dispatcher.ResponseData['body'], status: number, what: string): Promise<Buffer> {
    const limit = this.options.maxBodyBytes ?? V3_CLIENT_DEFAULTS.maxBodyBytes;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) {
          stream.destroy();
          reject(new UpstreamProtocolError(`v3 answered ${what} with a body over ${limit} bytes`, status));
          return;
        }
        chunks.push(chunk);
      });
      stream.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
      stream.once('error', reject);
    });
  }
}
