/**
 * The passthrough's one request to the upstream: the client's method, path, query, headers and
 * body stream sent through undici's dispatch API, and the upstream's status, headers and body
 * chunks written straight to the client's socket as they arrive. @fastify/http-proxy still
 * routes, rewrites and vets the path (passthrough.ts); this replaces only its default handler,
 * `reply.from()` of @fastify/reply-from, through the proxy's documented `handler` option.
 *
 * Why: reply.from() wraps the answer in a Readable, pipes it through fastify's reply and copies
 * the headers on the way. In the bench's passthrough-relay case (the README's Benchmarks), it
 * cost the gateway 64 µs of CPU a GET against 51 µs for this relay, on a hop every /v3 call pays.
 * Headers other than the hop-by-hop ones pass as the upstream sent them, Location included.
 *
 * It touches only the fastify request and reply it is given and the dispatcher; failures before
 * the answer starts go to `onFailure` (the v3 error envelope), failures after it cut the client
 * connection, since a half-sent answer cannot be turned into an error any more.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';

export interface UpstreamRelayOptions {
  /** Where requests go (scheme, host, port); its host is the Host the upstream sees. */
  readonly origin: string;
  readonly dispatcher: Dispatcher;
  /** The X-Forwarded-For value for a request (forwarded-for.ts). */
  readonly forwardedFor: (request: FastifyRequest) => string;
  /** Answers a request the upstream did not answer; the reply has sent nothing yet. */
  readonly onFailure: (reply: FastifyReply, error: Error) => void;
}

/**
 * Hop-by-hop headers (RFC 9110 7.6.1) describe one connection, so neither direction forwards
 * them; Node and undici write their own. `expect` is answered by Node's server before the body
 * arrives (100 Continue), so the upstream must not be asked again; undici refuses it anyway.
 */
const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'http2-settings', 'expect']);

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
 * this runs twice on every request (measured: deleting was 3% of the gateway's CPU).
 */
function endToEndHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const listed = connectionListed(headers.connection);
  const kept: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || (listed !== null && listed.has(name))) continue;
    kept[name] = headers[name];
  }
  return kept;
}

/**
 * The request body as a stream of its bytes, unread. http-proxy's body parser hands over the
 * request stream itself; fastify parses no body of a GET or HEAD, so one sent anyway is read
 * from the raw request, rather than announced by a Content-Length and never sent.
 */
function bodyOf(request: FastifyRequest): Readable | null {
  if (request.body !== undefined && request.body !== null) return request.body as Readable;
  const { headers } = request.raw;
  const announced = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  return announced ? request.raw : null;
}

/**
 * Returns the http-proxy handler. It answers through the raw response once the upstream's status
 * line arrives (the reply is hijacked then), or through `onFailure` if the upstream fails first.
 */
export function createUpstreamRelay(options: UpstreamRelayOptions): (request: FastifyRequest, reply: FastifyReply, dest: string) => void {
  const { origin, dispatcher, forwardedFor, onFailure } = options;
  const host = new URL(origin).host;
  return function relayToUpstream(request, reply, dest) {
    const headers = endToEndHeaders(request.headers);
    headers.host = host;
    headers['x-forwarded-for'] = forwardedFor(request);
    const url = request.url;
    const query = url.indexOf('?');
    dispatcher.dispatch(
      {
        origin,
        method: request.method as Dispatcher.HttpMethod,
        // The proxy's destination is the path as sent (prefix and rewrite are both /v3); the query rides along as sent.
        path: query === -1 ? dest : dest + url.slice(query),
        headers,
        body: bodyOf(request),
      },
      new ResponseRelay(request, reply, onFailure),
    );
  };
}

/** undici's handler for one upstream answer, written to the client as it comes. */
class ResponseRelay implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private readonly resume = (): void => this.controller?.resume();

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly onFailure: (reply: FastifyReply, error: Error) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // An informational answer (103 Early Hints) comes before the real one; the client waits for that.
    if (statusCode < 200) return;
    const response = this.reply.raw;
    // A client that left before the answer gets nothing; the upstream still ran the request, as it would have without a gateway.
    if (response.destroyed) {
      controller.abort(new Error('the client closed the connection before the answer'));
      return;
    }
    this.reply.hijack();
    // Node's server adds Connection: close itself if the request body is not all read by now.
    response.writeHead(statusCode, endToEndHeaders(headers));
    response.on('close', () => {
      if (!response.writableFinished) controller.abort(new Error('the client closed the connection during the answer'));
    });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.reply.raw.write(chunk)) return;
    controller.pause();
    this.reply.raw.once('drain', this.resume);
  }

  onResponseEnd(): void {
    this.reply.raw.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const response = this.reply.raw;
    if (response.destroyed) return;
    if (!response.headersSent) {
      this.onFailure(this.reply, error);
      return;
    }
    this.request.log.warn({ err: error }, 'upstream answer broke off after its headers were sent');
    response.destroy(error);
  }
}
