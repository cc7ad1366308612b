/**
 * The CLIENT span of one outbound HTTP call, the one way every HTTP client of fxgate records it
 * (the OpenTelemetry HTTP client conventions, docs/operations.md#tracing): named
 * `<METHOD> <template>` (the method alone without one), with `http.request.method`,
 * `url.template` and the caller's own attributes; its `traceparent` (and `tracestate`) written
 * into the headers sent, in place of any they carried; ended once, with the answer's status (a
 * 4xx or 5xx an error typed by it), the failure's type, or the caller's word for a call that
 * failed without an answer or that it gave up. Callers name calls by templates, never by their
 * URL, path or address. Touches only the API's globals and the headers it is given.
 */
import { type Attributes, type Context, context, type Span, SpanKind, trace } from '@opentelemetry/api';

import {
  ATTR,
  injectTraceHeaders,
  recordErrorType,
  recordFailure,
  recordStatus,
  tracer,
  type TracerName,
  tracingActive,
} from './spans.js';

/** What names an outbound call in its span. */
export interface HttpClientCall {
  /** The request method, as sent. */
  readonly method: string;
  /** The route template the call is for (`/v3/fx/trades/:id`): it names the span after the method, and is its `url.template`. */
  readonly template?: string | undefined;
  /** Names the span after the method for a call that has no template (a webhook's receiver), without being recorded as one. */
  readonly target?: string | undefined;
  /** The caller's own attributes: the generation, the operation, what the call is for. */
  readonly attributes?: Attributes;
  /** A span with no parent (a worker's delivery attempt), rather than a child of the active context. */
  readonly root?: boolean;
}

/** The span's name: the method, then the template or the target when there is one. */
export function httpClientSpanName(call: HttpClientCall): string {
  const after = call.template ?? call.target;
  return after === undefined ? call.method : `${call.method} ${after}`;
}

/** An outbound call's open span. Whichever ending comes first ends it; later ones change nothing, as a call can be reported failed twice (its deadline, then the abort it causes). */
export class HttpClientSpan {
  private open = true;

  constructor(
    private readonly span: Span,
    /** The span's context, which the headers sent carry; active around a call through `inHttpClientSpan`. */
    readonly context: Context,
  ) {}

  /** The call was answered with this status: a 4xx or 5xx marks the span failed, typed by the status. */
  answered(status: number): void {
    if (!this.close()) return;
    recordStatus(this.span, status, SpanKind.CLIENT);
    this.span.end();
  }

  /** The call failed with this error: the span is marked failed by its type (code or class), never its message. */
  failed(error: unknown): void {
    if (!this.close()) return;
    recordErrorType(this.span, error);
    this.span.end();
  }

  /**
   * The call came to no answer for a reason its caller names (`delivery_failed`: a timeout, a
   * refused destination, a dropped connection): marked failed and typed by that reason, as the
   * HTTP client conventions mark a call that failed before any status.
   */
  failedAs(errorType: string): void {
    if (!this.close()) return;
    recordFailure(this.span, errorType);
    this.span.end();
  }

  /**
   * The caller gave the call up for a reason it names (`interrupted`: its worker stopped): the
   * reason recorded as the error type, the status left unset, since nothing of the call failed.
   */
  abandoned(errorType: string): void {
    if (!this.close()) return;
    this.span.setAttribute(ATTR.errorType, errorType);
    this.span.end();
  }

  /** True the first time: the ending that may record. */
  private close(): boolean {
    if (!this.open) return false;
    this.open = false;
    return true;
  }
}

/**
 * Starts a call's span and writes its `traceparent` into the headers about to be sent, in place
 * of any `traceparent` or `tracestate` they carried (a client's, which continues through the
 * caller's server span instead); the caller ends it. Null without tracing: a hot path checks
 * `tracingActive()` first, so that it builds no HttpClientCall either.
 */
export function startHttpClientSpan(
  from: TracerName,
  call: HttpClientCall,
  headers: Record<string, unknown>,
): HttpClientSpan | null {
  if (!tracingActive()) return null;
  const parent = context.active();
  const attributes: Attributes = { [ATTR.method]: call.method };
  if (call.template !== undefined) attributes[ATTR.urlTemplate] = call.template;
  const span = tracer(from).startSpan(
    httpClientSpanName(call),
    {
      kind: SpanKind.CLIENT,
      attributes: call.attributes === undefined ? attributes : { ...attributes, ...call.attributes },
      ...(call.root === true ? { root: true } : {}),
    },
    parent,
  );
  const traced = new HttpClientSpan(span, trace.setSpan(parent, span));
  delete headers.traceparent;
  delete headers.tracestate;
  injectTraceHeaders(headers, traced.context);
  return traced;
}

/**
 * Runs `send` inside a call's span (its context active, as for any client span), the span's
 * `traceparent` in the headers first; `end` ends it by the answer, a rejection is recorded by
 * its type and rethrown. Without tracing, `send` runs as it is.
 */
export async function inHttpClientSpan<T>(
  from: TracerName,
  call: HttpClientCall,
  headers: Record<string, unknown>,
  send: () => Promise<T>,
  end: (span: HttpClientSpan, answer: T) => void,
): Promise<T> {
  const traced = startHttpClientSpan(from, call, headers);
  if (traced === null) return send();
  let answer: T;
  try {
    answer = await context.with(traced.context, send);
  } catch (error) {
    traced.failed(error);
    throw error;
  }
  end(traced, answer);
  return answer;
}
