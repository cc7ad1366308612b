/**
 * What the code that makes spans uses: the attribute names, the tracers, and the few helpers
 * every boundary shares (a client span around a call, the W3C headers of a context, an error
 * recorded by its type only); an outbound HTTP call's span is http-client-span.ts's. Only
 * @opentelemetry/api is imported here, whose calls do nothing until an SDK registers (sdk.ts,
 * loaded only when tracing is on); `tracingActive()` lets the hot paths skip even that. Touches
 * nothing but the API's globals.
 *
 * What never goes into a span (docs/operations.md#tracing): org ids, key ids, names or tokens,
 * amounts, network addresses, raw paths, SQL parameters, error messages (they may name an
 * address). Helpers here take names and templates, never requests.
 */
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';

export const ATTR = {
  generation: 'fxgate.api.generation',
  operation: 'fxgate.operation',
  requestId: 'fxgate.request_id',
  webhookKind: 'fxgate.webhook.kind',
  method: 'http.request.method',
  route: 'http.route',
  urlTemplate: 'url.template',
  status: 'http.response.status_code',
  errorType: 'error.type',
  dbSystem: 'db.system.name',
  dbOperation: 'db.operation.name',
  dbSummary: 'db.query.summary',
} as const;

/** The instrumentation scopes, one per part: in `fxgate all` they tell the gateway's spans from the core's. */
export const TRACERS = {
  gateway: 'fxgate.gateway',
  core: 'fxgate.core',
  postgresql: 'fxgate.postgresql',
  redis: 'fxgate.redis',
  webhooks: 'fxgate.webhooks',
} as const;
export type TracerName = (typeof TRACERS)[keyof typeof TRACERS];

let active = false;

/** True while an SDK is registered (sdk.ts sets it): without one, hooks are not installed and spans not started. */
export function tracingActive(): boolean {
  return active;
}

/** For sdk.ts only. */
export function setTracingActive(on: boolean): void {
  active = on;
}

export function tracer(name: TracerName): Tracer {
  return trace.getTracer(name);
}

/** True when the active context has a span to be a child of: a database or store call outside a request (a worker's poll) makes none. */
export function insideSpan(): boolean {
  return trace.getSpan(context.active())?.isRecording() === true;
}

/** The W3C `traceparent` (and `tracestate`) of a context, written into headers. */
export function injectTraceHeaders(headers: Record<string, unknown>, ctx: Context = context.active()): void {
  propagation.inject(ctx, headers);
}

/** The context a request's `traceparent` and `tracestate` headers carry; the root one without them. */
export function extractTraceContext(headers: Readonly<Record<string, string | string[] | undefined>>): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/** Marks a span failed, typed by `errorType` (a code, a class name, a status, a caller's reason). */
export function recordFailure(span: Span, errorType: string): void {
  span.setAttribute(ATTR.errorType, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Marks a span failed by the error's type: its code when it has a string one (ECONNREFUSED,
 * FXGATE_UPSTREAM_TIMEOUT), else its class name. Never its message, which may carry an address.
 */
export function recordErrorType(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  recordFailure(
    span,
    typeof code === 'string' && /^[A-Za-z0-9_.]{1,64}$/.test(code)
      ? code
      : error instanceof Error
        ? error.name
        : '_OTHER',
  );
}

/** An HTTP status as a client or server span records it: 5xx (and 4xx on a client span) an error, typed by the status. */
export function recordStatus(span: Span, status: number, kind: SpanKind): void {
  span.setAttribute(ATTR.status, status);
  if (status >= 500 || (kind === SpanKind.CLIENT && status >= 400)) recordFailure(span, String(status));
}

export interface ClientSpanOptions {
  readonly attributes?: Attributes;
  /** A span with no parent (a worker's delivery attempt), rather than a child of the active context. */
  readonly root?: boolean;
}

/**
 * Runs fn inside a new CLIENT span (its context active, so a call it makes is a child and
 * `injectTraceHeaders()` writes its id); a rejection is recorded by type and rethrown. Without
 * tracing, fn runs as it is.
 */
export async function inClientSpan<T>(
  from: TracerName,
  name: string,
  options: ClientSpanOptions,
  fn: (span: Span | null) => Promise<T>,
): Promise<T> {
  if (!active) return fn(null);
  const span = tracer(from).startSpan(name, {
    kind: SpanKind.CLIENT,
    ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
    ...(options.root === true ? { root: true } : {}),
  });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => fn(span));
  } catch (error) {
    recordErrorType(span, error);
    throw error;
  } finally {
    span.end();
  }
}

export { SpanKind };
