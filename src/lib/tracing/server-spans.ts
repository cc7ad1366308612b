/**
 * A SERVER span for every request a fastify app answers, continued from the client's W3C
 * `traceparent`: named `<METHOD> <route template>` (the method alone when no route took it),
 * with the generation, the operation (the name the metrics use), the route template, the
 * status and the request id. Its context is active for the rest of the request (the hooks, the
 * body's parsing, the handler), so the calls the request makes are its children. The app's
 * describe() names the request; nothing of the URL itself is recorded. Touches only the app's
 * hooks.
 */
import { context, type Span, SpanKind, trace } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';

import { ATTR, extractTraceContext, recordStatus, tracer, type TracerName } from './spans.js';

/** How a request is named in its span. */
export interface RequestNames {
  /** The API generation the request is under; none for health, the reference, the webhook receiver. */
  readonly generation?: 'v1' | 'v2' | 'v3';
  /** The operation as the metrics label it. */
  readonly operation: string;
  /** The route template (`/v3/fx/trades/:id`); none when no route took the request. */
  readonly route?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span while it is open (lib/tracing/server-spans.ts). */
    fxgateServerSpan: Span | null;
  }
}

/** Adds the hooks; call before any other onRequest hook and any route, and only with tracing on. */
export function traceServerRequests(
  app: FastifyInstance,
  from: TracerName,
  describe: (request: FastifyRequest) => RequestNames,
): void {
  const spans = tracer(from);
  app.decorateRequest('fxgateServerSpan', null);
  app.addHook('onRequest', (request, _reply, done) => {
    const names = describe(request);
    const parent = extractTraceContext(request.headers);
    const span = spans.startSpan(
      names.route === undefined ? request.method : `${request.method} ${names.route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR.method]: request.method,
          [ATTR.operation]: names.operation,
          [ATTR.requestId]: request.id,
          ...(names.generation === undefined ? {} : { [ATTR.generation]: names.generation }),
          ...(names.route === undefined ? {} : { [ATTR.route]: names.route }),
        },
      },
      parent,
    );
    request.fxgateServerSpan = span;
    const active = trace.setSpan(parent, span);
    // The rest of the request runs from here: fastify carries the async context across the body's events.
    context.with(active, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = request.fxgateServerSpan;
    if (span !== null) {
      request.fxgateServerSpan = null;
      recordStatus(span, reply.statusCode, SpanKind.SERVER);
      span.end();
    }
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    const span = request.fxgateServerSpan;
    if (span !== null) {
      request.fxgateServerSpan = null;
      // The client left before its answer: no status was sent.
      span.setAttribute(ATTR.errorType, 'client_aborted');
      span.end();
    }
    done();
  });
}
