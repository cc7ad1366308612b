/**
 * An outbound HTTP call's CLIENT span, exported over http/json to a receiver on 127.0.0.1:
 * named by method and template (or target, or the method alone), with the method, the template
 * and the caller's attributes; its traceparent in place of the one the headers carried; ended
 * once, by the answer's status (4xx and 5xx errors), the failure's type or a reason without an
 * answer; a root span when asked; and, around a promise, its context active while the call runs.
 * Without tracing nothing is started and the headers are left alone.
 */
import { context, diag, DiagConsoleLogger, DiagLogLevel, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';

import {
  type HttpClientSpan,
  httpClientSpanName,
  inHttpClientSpan,
  startHttpClientSpan,
} from '../../../src/lib/tracing/http-client-span.js';
import { TRACERS } from '../../../src/lib/tracing/spans.js';
import { type ReceivedSpan, SPAN_KIND, traceToReceiver } from '../../support/otlp-receiver.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe('httpClientSpanName', () => {
  it.each([
    [{ method: 'GET', template: '/v3/fx/trades/:id' }, 'GET /v3/fx/trades/:id'],
    [{ method: 'POST', target: 'webhook' }, 'POST webhook'],
    [{ method: 'GET', template: '/a/:id', target: 'ignored' }, 'GET /a/:id'],
    [{ method: 'PATCH' }, 'PATCH'],
  ])('%j is named %s', (call, name) => {
    expect(httpClientSpanName(call)).toBe(name);
  });
});

describe('without tracing', () => {
  it('starts no span and leaves the headers as they were', async () => {
    const headers = { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, accept: 'application/json' };
    expect(startHttpClientSpan(TRACERS.gateway, { method: 'GET', template: '/x' }, headers)).toBeNull();
    let ended = false;
    const answer = await inHttpClientSpan(
      TRACERS.gateway,
      { method: 'GET' },
      headers,
      () => Promise.resolve(42),
      () => (ended = true),
    );
    expect(answer).toBe(42);
    expect(ended).toBe(false);
    expect(headers).toEqual({ traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, accept: 'application/json' });
  });
});

describe('with tracing', () => {
  const traced = traceToReceiver('gateway');

  /** The exported span whose id the headers' traceparent names, with that traceparent's trace id. */
  async function sentSpan(headers: Record<string, unknown>): Promise<ReceivedSpan & { readonly sentTraceId: string }> {
    const [, traceId, spanId] = TRACEPARENT.exec(String(headers.traceparent)) ?? [];
    expect(spanId).toBeDefined();
    await traced.flush();
    const span = traced.receiver.spans.find((received) => received.spanId === spanId);
    expect(span).toBeDefined();
    return { ...span!, sentTraceId: traceId! };
  }

  /** Runs fn inside a test parent span, which it ends. */
  function underParent<T>(fn: () => T): { readonly result: T; readonly traceId: string; readonly spanId: string } {
    const parent = trace.getTracer('test').startSpan('parent');
    const result = context.with(trace.setSpan(context.active(), parent), fn);
    parent.end();
    return { result, ...parent.spanContext() };
  }

  it("is the active span's child, named by its template, its traceparent in place of the client's", async () => {
    const headers: Record<string, unknown> = {
      traceparent: `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01`,
      tracestate: 'client=opaque',
      accept: 'application/json',
    };
    const parent = underParent(() =>
      startHttpClientSpan(
        TRACERS.gateway,
        { method: 'GET', template: '/v3/fx/trades/:id', attributes: { 'fxgate.api.generation': 'v3' } },
        headers,
      ),
    );
    parent.result!.answered(200);
    expect(headers.tracestate).toBeUndefined();
    expect(headers.accept).toBe('application/json');
    const span = await sentSpan(headers);
    expect(span.sentTraceId).toBe(parent.traceId);
    expect(span).toMatchObject({
      parentSpanId: parent.spanId,
      name: 'GET /v3/fx/trades/:id',
      kind: SPAN_KIND.client,
      scope: 'fxgate.gateway',
      statusCode: 0,
      attributes: {
        'http.request.method': 'GET',
        'url.template': '/v3/fx/trades/:id',
        'fxgate.api.generation': 'v3',
        'http.response.status_code': 200,
      },
    });
    expect(span.attributes).not.toHaveProperty('error.type');
  });

  it('names a call without a template by its target or its method, and records no url.template', async () => {
    const byTarget: Record<string, unknown> = {};
    startHttpClientSpan(TRACERS.webhooks, { method: 'POST', target: 'webhook' }, byTarget)!.answered(204);
    const byMethod: Record<string, unknown> = {};
    startHttpClientSpan(TRACERS.gateway, { method: 'DELETE' }, byMethod)!.answered(204);
    const [target, method] = [await sentSpan(byTarget), await sentSpan(byMethod)];
    expect(target).toMatchObject({ name: 'POST webhook', scope: 'fxgate.webhooks' });
    expect(method).toMatchObject({ name: 'DELETE', attributes: { 'http.request.method': 'DELETE' } });
    expect(target.attributes).not.toHaveProperty('url.template');
    expect(method.attributes).not.toHaveProperty('url.template');
  });

  it.each([404, 503])('an answer of %i is an error typed by its status', async (status) => {
    const headers: Record<string, unknown> = {};
    startHttpClientSpan(TRACERS.gateway, { method: 'GET', template: '/x' }, headers)!.answered(status);
    expect(await sentSpan(headers)).toMatchObject({
      statusCode: 2,
      attributes: { 'http.response.status_code': status, 'error.type': String(status) },
    });
  });

  it('a failure is an error typed by its code, never its message, and the first ending is the one kept', async () => {
    const headers: Record<string, unknown> = {};
    const traced = startHttpClientSpan(TRACERS.gateway, { method: 'GET', template: '/x' }, headers)!;
    // The SDK warns on stderr of any call on an ended span: the later endings must make none.
    const warnings: string[] = [];
    const keep = (message: string): void => void warnings.push(message);
    diag.setLogger(
      { error: keep, warn: keep, info: keep, debug: keep, verbose: keep },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
    try {
      traced.failed(Object.assign(new Error('connect ECONNREFUSED 10.9.8.7:443'), { code: 'ECONNREFUSED' }));
      traced.failed(new TypeError('later'));
      traced.answered(200);
      traced.failedAs('later');
      traced.abandoned('later');
    } finally {
      // Back to what the SDK's start set.
      diag.setLogger(new DiagConsoleLogger(), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
    }
    expect(warnings).toEqual([]);
    const span = await sentSpan(headers);
    expect(span).toMatchObject({ statusCode: 2, attributes: { 'error.type': 'ECONNREFUSED' } });
    expect(span.attributes).not.toHaveProperty('http.response.status_code');
    expect(JSON.stringify(span)).not.toContain('10.9.8.7');
  });

  // Status 2 is ERROR, 0 unset: a call that failed without an answer is an error, one its caller gave up is not.
  it.each([
    ['failedAs', 'delivery_failed', 2],
    ['abandoned', 'interrupted', 0],
  ] as const)(
    'a call ended by %s records the reason given, its status as the ending says',
    async (ending, reason, statusCode) => {
      const headers: Record<string, unknown> = {};
      startHttpClientSpan(TRACERS.webhooks, { method: 'POST', target: 'webhook' }, headers)![ending](reason);
      const span = await sentSpan(headers);
      expect(span).toMatchObject({ statusCode, attributes: { 'error.type': reason } });
      expect(span.attributes).not.toHaveProperty('http.response.status_code');
    },
  );

  it('a root call starts a trace of its own even inside another span', async () => {
    const headers: Record<string, unknown> = {};
    const parent = underParent(() =>
      startHttpClientSpan(TRACERS.webhooks, { method: 'POST', target: 'webhook', root: true }, headers),
    );
    parent.result!.answered(200);
    const span = await sentSpan(headers);
    expect(span.parentSpanId).toBe('');
    expect(span.sentTraceId).not.toBe(parent.traceId);
  });

  it('around a promise: its context active while the call runs, ended by the answer', async () => {
    const headers: Record<string, unknown> = {};
    let active: string | undefined;
    let endedWith: number | null = null;
    const answer = await inHttpClientSpan(
      TRACERS.gateway,
      { method: 'GET', template: '/y' },
      headers,
      async () => {
        active = trace.getSpan(context.active())?.spanContext().spanId;
        return { status: 201 };
      },
      (span: HttpClientSpan, result) => {
        endedWith = result.status;
        span.answered(result.status);
      },
    );
    expect(answer).toEqual({ status: 201 });
    expect(endedWith).toBe(201);
    const span = await sentSpan(headers);
    expect(active).toBe(span.spanId);
    expect(span.attributes['http.response.status_code']).toBe(201);
  });

  it('around a promise: a rejection is recorded by its type and rethrown, without the end callback', async () => {
    const headers: Record<string, unknown> = {};
    const failure = Object.assign(new Error('reset by 10.9.8.7'), { code: 'UND_ERR_SOCKET' });
    let ended = false;
    await expect(
      inHttpClientSpan(
        TRACERS.gateway,
        { method: 'GET', template: '/z' },
        headers,
        () => Promise.reject(failure),
        () => (ended = true),
      ),
    ).rejects.toBe(failure);
    expect(ended).toBe(false);
    const span = await sentSpan(headers);
    expect(span).toMatchObject({ name: 'GET /z', statusCode: 2, attributes: { 'error.type': 'UND_ERR_SOCKET' } });
    expect(JSON.stringify(span)).not.toContain('10.9.8.7');
  });
});
