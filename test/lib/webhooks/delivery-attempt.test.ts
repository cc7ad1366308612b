/**
 * attemptDelivery: one POST of a webhook delivery, bounded by its timeout and the worker's stop
 * signal. Both outbox workers' suites drive it against real receivers; these pin its outcomes,
 * and its span with tracing on (exported to an OTLP receiver on 127.0.0.1).
 */
import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';

import { DestinationRefusedError } from '../../../src/lib/errors/internal-errors.js';
import { attemptDelivery, type WebhookFetcher } from '../../../src/lib/webhooks/delivery-attempt.js';
import { SPAN_KIND, traceToReceiver } from '../../support/otlp-receiver.js';

const POST = {
  url: 'http://127.0.0.1:9/hook',
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{}'),
};
/** Never settles, and ignores its signal: only the attempt's own race can end it. */
const hanging: WebhookFetcher = () => new Promise(() => {});

describe('attemptDelivery', () => {
  it('answers with the status the receiver gave, having sent the exact bytes', async () => {
    let sent: Buffer | null = null;
    const result = await attemptDelivery(
      async (request) => {
        sent = request.body;
        return { statusCode: 204 };
      },
      POST,
      new AbortController().signal,
      1_000,
    );
    expect(result).toMatchObject({ kind: 'answered', statusCode: 204 });
    expect(sent).toBe(POST.body);
  });

  it('fails at its timeout even when the fetcher ignores the signal', async () => {
    const result = await attemptDelivery(hanging, POST, new AbortController().signal, 50);
    expect(result).toMatchObject({ kind: 'failed', error: 'timeout: no complete answer within 50 ms' });
  });

  it('is interrupted, not failed, when the worker stops during it', async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 20);
    const result = await attemptDelivery(hanging, POST, stop.signal, 5_000);
    expect(result.kind).toBe('interrupted');
  });

  it('records a refused connection by its code and message', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const result = await attemptDelivery(() => Promise.reject(refused), POST, new AbortController().signal, 1_000);
    expect(result).toMatchObject({ kind: 'failed', error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9' });
  });

  it('records a destination the policy refused by its reason alone', async () => {
    const reason = 'rebind.example resolved to 10.0.0.1, a private address; live webhooks must reach a public address';
    const result = await attemptDelivery(
      () => Promise.reject(new DestinationRefusedError(reason)),
      POST,
      new AbortController().signal,
      1_000,
    );
    expect(result).toMatchObject({ kind: 'failed', error: `refused: ${reason}` });
  });
});

describe('attemptDelivery with tracing on', () => {
  const traced = traceToReceiver('core');

  it('is a root span of its own, whose traceparent the receiver gets, even when started inside another span', async () => {
    let sent: Readonly<Record<string, string>> = {};
    const outer = trace.getTracer('test').startSpan('poll');
    const result = await context.with(trace.setSpan(context.active(), outer), () =>
      attemptDelivery(
        async (request) => {
          sent = request.headers;
          return { statusCode: 503 };
        },
        POST,
        new AbortController().signal,
        1_000,
        'legacy',
      ),
    );
    outer.end();
    expect(result).toMatchObject({ kind: 'answered', statusCode: 503 });
    // The caller's headers are left as they were; the attempt's copy carries the trace.
    expect(POST.headers).not.toHaveProperty('traceparent');
    const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(sent.traceparent ?? '') ?? [];
    expect(traceId).toBeDefined();
    expect(traceId).not.toBe(outer.spanContext().traceId);
    await traced.flush();
    expect(traced.receiver.trace(traceId!)).toMatchObject([
      {
        spanId,
        parentSpanId: '',
        name: 'POST webhook',
        kind: SPAN_KIND.client,
        attributes: { 'fxgate.webhook.kind': 'legacy', 'http.response.status_code': 503, 'error.type': '503' },
      },
    ]);
    // Nothing of the receiver's URL is recorded.
    expect(JSON.stringify(traced.receiver.spans)).not.toContain('127.0.0.1');
  });

  it('an attempt that got no answer is an error; one its worker gave up is not', async () => {
    const traceIds: string[] = [];
    const recorded =
      (fail: () => Promise<never>): WebhookFetcher =>
      (request) => {
        traceIds.push(/^00-([0-9a-f]{32})-/.exec(request.headers.traceparent ?? '')?.[1] ?? '');
        return fail();
      };
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const failed = await attemptDelivery(
      recorded(() => Promise.reject(refused)),
      POST,
      new AbortController().signal,
      1_000,
    );
    const stop = new AbortController();
    const interrupted = attemptDelivery(
      recorded(() => new Promise(() => {})),
      POST,
      stop.signal,
      5_000,
    );
    stop.abort();
    expect([failed.kind, (await interrupted).kind]).toEqual(['failed', 'interrupted']);
    await traced.flush();
    const [failedTrace, interruptedTrace] = traceIds.map((traceId) => traced.receiver.trace(traceId));
    // Status 2 is ERROR, 0 unset.
    expect(failedTrace).toMatchObject([
      { name: 'POST webhook', statusCode: 2, attributes: { 'error.type': 'delivery_failed' } },
    ]);
    expect(interruptedTrace).toMatchObject([
      { name: 'POST webhook', statusCode: 0, attributes: { 'error.type': 'interrupted' } },
    ]);
  });
});
