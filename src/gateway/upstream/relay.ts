/**
 * The passthrough's one request to the upstream: the client's method, path, query, headers and
 * body stream sent through undici's dispatch API, and the upstream's status, headers and body
 * chunks written straight to the client's socket as they arrive. @fastify/http-proxy still
 * routes, rewrites and vets the path (passthrough.ts); this replaces only its default handler,
 * `reply.from()` of @fastify/reply-from, through the proxy's documented `handler` option.
 *
 * Why: reply.from() wraps the answer in a Readable, pipes it through fastify's reply and copies
 * the headers on the way, CPU spent on a hop every /v3 call pays (the bench case
 * passthrough-relay compares the two).
 * Headers other than the hop-by-hop ones pass as the upstream sent them, Location included.
 *
 * It touches only the fastify request and reply it is given and the dispatcher; failures before
 * the answer starts go to `onFailure` (the v3 error envelope), failures after it cut the client
 * connection, since a half-sent answer cannot be turned into an error any more. Every answer must
 * be finished within `deadlineMs` of the dispatch; one that is not fails the same way. With
 * tracing on, the call is a CLIENT span whose `traceparent` replaces the client's
 * (docs/operations.md#tracing).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';

import { UpstreamDeadlineError } from '../../lib/errors/internal-errors.js';
import { type HttpClientSpan, startHttpClientSpan } from '../../lib/tracing/http-client-span.js';
import { TRACERS, tracingActive } from '../../lib/tracing/spans.js';
import { v3CallSpan } from './v3-client.js';

export interface UpstreamRelayOptions {
  /** Where requests go (scheme, host, port); its host is the Host the upstream sees. */
  readonly origin: string;
  readonly dispatcher: Dispatcher;
  /** The X-Forwarded-For value for a request (forwarded-for.ts). */
  readonly forwardedFor: (request: FastifyRequest) => string;
  /** The most one upstream answer may take, from the dispatch to its last byte. */
  readonly deadlineMs: number;
  /**
   * Answers a request the upstream did not answer; the reply has sent nothing yet.
   * `requestWritten`: whether the whole request had been handed to the upstream connection.
   */
  readonly onFailure: (reply: FastifyReply, error: Error, requestWritten: boolean) => void;
  /** Told of each answer relayed whole, with the time from the dispatch to its last byte, and of each that broke off after its headers (the metrics). */
  readonly observer?: RelayObserver;
}

export interface RelayObserver {
  answered(request: FastifyRequest, elapsedMs: number): void;
  brokeOff(request: FastifyRequest, error: Error): void;
}

export type RelayFailure = UpstreamRelayOptions['onFailure'];

/**
 * Hop-by-hop headers (RFC 9110 7.6.1) describe one connection, so neither direction forwards
 * them; Node and undici write their own. `expect` is answered by Node's server before the body
 * arrives (100 Continue), so the upstream must not be asked again; undici refuses it anyway.
 */
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'http2-settings',
  'expect',
]);

/** The header names a Connection header lists besides its usual `keep-alive` or `close`; null when it lists none. */
function connectionListed(connection: string | string[] | undefined): ReadonlySet<string> | null {
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return null;
  const names = new Set<string>();
  for (const token of String(connection).split(',')) names.add(token.trim().toLowerCase());
  return names;
}

/**
 * The end-to-end headers: a copy without the hop-by-hop ones and those Connection names. Copied
 * rather than deleted from, since deleting keys puts a V8 object in its slow dictionary mode, and
 * this runs twice on every request.
 */
export function endToEndHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const listed = connectionListed(headers.connection);
  const kept: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || (listed !== null && listed.has(name))) continue;
    kept[name] = headers[name];
  }
  return kept;
}

/**
 * The request body: the bytes of a write, read whole (and held to the v3 limit) by the
 * passthrough's parser, so undici writes them with the head at once. Fastify parses no body of
 * a GET or HEAD, so one sent anyway is streamed from the raw request, rather than announced by a
 * Content-Length and never sent.
 */
function bodyOf(request: FastifyRequest): Buffer | Readable | null {
  if (Buffer.isBuffer(request.body)) return request.body;
  const { headers } = request.raw;
  const announced =
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  return announced ? request.raw : null;
}

/**
 * Returns the http-proxy handler. It answers through the raw response once the upstream's status
 * line arrives (the reply is hijacked then), or through `onFailure` if the upstream fails first.
 */
export function createUpstreamRelay(
  options: UpstreamRelayOptions,
): (request: FastifyRequest, reply: FastifyReply, dest: string) => void {
  const { origin, dispatcher, forwardedFor, deadlineMs, onFailure, observer = null } = options;
  const host = new URL(origin).host;
  return function relayToUpstream(request, reply, dest) {
    const headers = endToEndHeaders(request.headers);
    headers.host = host;
    headers['x-forwarded-for'] = forwardedFor(request);
    const url = request.url;
    const query = url.indexOf('?');
    const body = bodyOf(request);
    // Its `traceparent` replaces the client's, whose trace goes on through the gateway's server span, this span's parent.
    const span = tracingActive()
      ? startHttpClientSpan(TRACERS.gateway, v3CallSpan(request.method, request.url), headers)
      : null;
    dispatcher.dispatch(
      {
        origin,
        method: request.method as Dispatcher.HttpMethod,
        // The proxy's destination is the path as sent (prefix and rewrite are both /v3); the query rides along as sent.
        path: query === -1 ? dest : dest + url.slice(query),
        headers,
        body,
      },
      new ResponseRelay(request, reply, onFailure, deadlineMs, body, observer, span),
    );
  };
}

/** undici's handler for one upstream answer, written to the client as it comes. */
class ResponseRelay implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private timer: NodeJS.Timeout | null;
  /** Set when the deadline passed before undici took the request up; it is aborted when it does. */
  private expired: Error | null = null;
  /** A streamed body (a GET's) is written whole only once undici has read it to its end. */
  private bodyRead: boolean;
  private started = false;
  /** The client has had its envelope from `fail`; later reports of the aborted call change nothing. */
  private failed = false;
  private readonly dispatchedAt: number;
  /** The upstream's final status, once its answer started. */
  private status = 0;

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly onFailure: RelayFailure,
    deadlineMs: number,
    body: Buffer | Readable | null,
    private readonly observer: RelayObserver | null,
    /** The upstream call's span, ended with its outcome; null without tracing. */
    private readonly span: HttpClientSpan | null = null,
  ) {
    // Read only for the observer's elapsed time.
    this.dispatchedAt = observer === null ? 0 : performance.now();
    // A static callback with the relay as its argument: no closure made per request.
    this.timer = setTimeout(ResponseRelay.deadlinePassed, deadlineMs, this, deadlineMs);
    this.bodyRead = body === null || Buffer.isBuffer(body);
    if (!this.bodyRead) (body as Readable).once('end', () => (this.bodyRead = true));
  }

  /** undici writes the head, and a buffered body with it, right after it takes a request up. */
  private get requestWritten(): boolean {
    return this.started && this.bodyRead;
  }

  private static deadlinePassed(relay: ResponseRelay, deadlineMs: number): void {
    relay.expire(deadlineMs);
  }

  private expire(deadlineMs: number): void {
    this.timer = null;
    const error = new UpstreamDeadlineError(deadlineMs);
    // Aborting reports the error to onResponseError at once, which answers or cuts the client.
    if (this.controller !== null) {
      this.controller.abort(error);
      return;
    }
    // Not taken up yet (waiting for a connection): answer now, and abort it when it is.
    this.expired = error;
    this.fail(error);
  }

  private settle(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The envelope for a request the upstream did not answer; the client's connection closes after it if its body was not all read. */
  private fail(error: Error): void {
    const response = this.reply.raw;
    if (response.destroyed || response.headersSent) return;
    this.failed = true;
    this.span?.failed(error);
    if (!this.request.raw.complete) this.reply.header('connection', 'close');
    this.onFailure(this.reply, error, this.requestWritten);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.expired !== null) {
      controller.abort(this.expired);
      return;
    }
    this.started = true;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // An informational answer (103 Early Hints) comes before the real one; the client waits for that.
    if (statusCode < 200) return;
    this.status = statusCode;
    const response = this.reply.raw;
    // A client that left before the answer gets nothing; the upstream still ran the request, as it would have without a gateway.
    if (response.destroyed) {
      controller.abort(new Error('the client closed the connection before the answer'));
      return;
    }
    this.reply.hijack();
    const relayed = endToEndHeaders(headers);
    // A client still sending a body the upstream did not wait for would be left writing into a connection nobody reads.
    if (!this.request.raw.complete) relayed.connection = 'close';
    try {
      response.writeHead(statusCode, relayed);
    } catch (error) {
      // A head this server cannot write (a status outside 100 to 999): the reply is hijacked, so no envelope can follow; cut the client rather than leave it waiting.
      this.brokeOff(error as Error, 'upstream answer has a head this server cannot write');
      controller.abort(error as Error);
      return;
    }
    response.on('close', () => {
      if (!response.writableFinished) controller.abort(new Error('the client closed the connection during the answer'));
    });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.reply.raw.write(chunk)) return;
    controller.pause();
    this.reply.raw.once('drain', () => controller.resume());
  }

  onResponseEnd(): void {
    this.settle();
    this.span?.answered(this.status);
    this.observer?.answered(this.request, performance.now() - this.dispatchedAt);
    this.reply.raw.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.settle();
    this.span?.failed(error);
    const response = this.reply.raw;
    if (response.destroyed || this.failed) return;
    if (!response.headersSent) {
      this.fail(error);
      return;
    }
    this.brokeOff(error, 'upstream answer broke off after its headers were sent');
  }

  /** The answer started but cannot be relayed whole: the client is cut, so a truncated answer never looks whole. */
  private brokeOff(error: Error, message: string): void {
    this.request.log.warn({ err: error }, message);
    this.observer?.brokeOff(this.request, error);
    this.reply.raw.destroy(error);
  }
}
