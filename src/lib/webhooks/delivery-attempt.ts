/**
 * One attempt of a webhook delivery, as both outbox workers make it (the core's v3 deliveries,
 * the gateway's legacy ones): a POST of the signed bytes, bounded by a timeout and by the
 * worker's stop signal, told back as answered, failed or interrupted. The workers decide what an
 * answer means and what comes next. Part of lib; touches only the network, through its fetcher.
 *
 * With tracing on, each attempt is a CLIENT span of its own trace (a worker's attempt belongs to
 * no request: the event that caused it was committed earlier, in another trace), its
 * `traceparent` sent with the delivery; the receiver's URL is never recorded.
 */
import { performance } from 'node:perf_hooks';

import { type Dispatcher, request } from 'undici';

import type { Mode } from '../auth/credential-vocabulary.js';
import { DestinationRefusedError } from '../errors/internal-errors.js';
import { type DestinationPolicy } from '../net/destination-policy.js';
import { guardedAgent } from '../net/guarded-connector.js';
import { type HttpClientSpan, inHttpClientSpan } from '../tracing/http-client-span.js';
import { ATTR, TRACERS, tracingActive } from '../tracing/spans.js';

export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The exact bytes that were signed. */
  readonly body: Buffer;
  /** Aborted at the timeout or when the worker stops. */
  readonly signal: AbortSignal;
}

export interface WebhookResponse {
  readonly statusCode: number;
}

/** Sends one delivery; rejects when nothing usable came back (refused, reset, aborted). */
export type WebhookFetcher = (request: WebhookRequest) => Promise<WebhookResponse>;

/** How an attempt ended; durationMs is wall time (not the worker's injected clock). */
export type AttemptResult = { readonly durationMs: number } & (
  | { readonly kind: 'answered'; readonly statusCode: number }
  | { readonly kind: 'failed'; readonly error: string }
  /** The worker stopped during the attempt: it says nothing about the receiver. */
  | { readonly kind: 'interrupted'; readonly error: string }
);

/** A receiver's answer is read up to this much (so the connection can be reused) and dropped. */
const RESPONSE_DRAIN_LIMIT = 64 * 1024;
/** The most of an error's text an attempt records. */
const ERROR_TEXT_LIMIT = 500;

/** POSTs with undici; redirects are not followed (a 3xx is a failed attempt). */
export function undiciFetcher(dispatcher: Dispatcher): WebhookFetcher {
  return async ({ url, headers, body, signal }) => {
    const response = await request(url, { method: 'POST', headers: { ...headers }, body, signal, dispatcher });
    await response.body.dump({ limit: RESPONSE_DRAIN_LIMIT });
    return { statusCode: response.statusCode };
  };
}

/** Each mode's fetcher, as a delivery worker sends with, and what to close when it stops. */
export interface ModeFetchers {
  readonly fetchers: Readonly<Record<Mode, WebhookFetcher>>;
  close(): Promise<void>;
}

/**
 * One guarded undici Agent per mode, each connecting only where that mode's destination policy
 * allows, with `concurrency` connections and every wait bounded by `requestTimeoutMs`. A given
 * fetcher (tests) serves both modes and owns no connection.
 */
export function modeFetchers(
  destinations: Readonly<Record<Mode, DestinationPolicy>>,
  options: { readonly concurrency: number; readonly requestTimeoutMs: number },
  given?: WebhookFetcher,
): ModeFetchers {
  if (given !== undefined) return { fetchers: { sandbox: given, live: given }, close: () => Promise.resolve() };
  const timeout = options.requestTimeoutMs;
  const agentFor = (mode: Mode) =>
    guardedAgent(destinations[mode], {
      connections: options.concurrency,
      connect: { timeout },
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
  const agents = { sandbox: agentFor('sandbox'), live: agentFor('live') };
  return {
    fetchers: { sandbox: undiciFetcher(agents.sandbox), live: undiciFetcher(agents.live) },
    close: async () => {
      await Promise.all([agents.sandbox.close(), agents.live.close()]);
    },
  };
}

/** An error as an attempt records it: its code, message and cause, bounded. */
export function describeError(error: unknown): string {
  // Its message is the whole story: "refused: <host> resolved to <address>, <its kind>; <what is allowed>".
  if (error instanceof DestinationRefusedError) return error.message.slice(0, ERROR_TEXT_LIMIT);
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${typeof code === 'string' ? `${code}: ` : ''}${error.message}${cause}`.slice(0, ERROR_TEXT_LIMIT);
  }
  return String(error).slice(0, ERROR_TEXT_LIMIT);
}

/** Settles with the promise, or rejects when the signal aborts first (a fetcher that ignores it). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

export interface DeliveryPost {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** Which worker delivers: the core's v3 events, or the gateway's legacy webhooks. */
export type DeliveryKind = 'v3' | 'legacy';

/** POSTs one delivery within timeoutMs, or until stopSignal aborts, and says how it ended. */
export async function attemptDelivery(
  fetcher: WebhookFetcher,
  post: DeliveryPost,
  stopSignal: AbortSignal,
  timeoutMs: number,
  kind: DeliveryKind = 'v3',
): Promise<AttemptResult> {
  if (!tracingActive()) return attemptOnce(fetcher, post, stopSignal, timeoutMs);
  // The attempt's own copy of the headers carries its trace; the caller's stay as they were.
  const headers: Record<string, string> = { ...post.headers };
  return inHttpClientSpan(
    TRACERS.webhooks,
    // Named `POST webhook`: the receiver's URL is never recorded, so it has no template.
    { method: 'POST', target: 'webhook', attributes: { [ATTR.webhookKind]: kind }, root: true },
    headers,
    () => attemptOnce(fetcher, { ...post, headers }, stopSignal, timeoutMs),
    endAttemptSpan,
  );
}

/** An attempt's span ends with the receiver's status, or with why no answer came: the delivery failed (an error), or the worker stopped (given up, not failed). */
function endAttemptSpan(span: HttpClientSpan, result: AttemptResult): void {
  if (result.kind === 'answered') span.answered(result.statusCode);
  else if (result.kind === 'interrupted') span.abandoned('interrupted');
  else span.failedAs('delivery_failed');
}

async function attemptOnce(
  fetcher: WebhookFetcher,
  post: DeliveryPost,
  stopSignal: AbortSignal,
  timeoutMs: number,
): Promise<AttemptResult> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([stopSignal, timeout]);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await raceAbort(fetcher({ ...post, signal }), signal);
    return { kind: 'answered', statusCode: response.statusCode, durationMs: elapsed() };
  } catch (error) {
    const durationMs = elapsed();
    if (stopSignal.aborted)
      return { kind: 'interrupted', error: 'interrupted: the worker stopped during the attempt', durationMs };
    if (timeout.aborted)
      return { kind: 'failed', error: `timeout: no complete answer within ${timeoutMs} ms`, durationMs };
    return { kind: 'failed', error: describeError(error), durationMs };
  }
}
