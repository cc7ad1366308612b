/**
 * `/v3/*` passed through verbatim to the upstream with @fastify/http-proxy: method (any but
 * CONNECT), path and query exactly as sent, the body as its bytes (never parsed, so never re-encoded), and the
 * upstream's status, headers and body bytes back. v3 signs the path, the query and a hash of the
 * body, so anything less than verbatim would break every signature. A write's body is held to
 * v3's own limit here, so an oversized one is refused before anything is sent upstream.
 */
import proxy from '@fastify/http-proxy';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RouteHandlerMethod,
  RouteOptions,
} from 'fastify';
import type { Dispatcher } from 'undici';

import { ApiError } from '../../lib/errors/api-error.js';
import { EVERY_METHOD } from '../../lib/http/methods.js';
import { forwardedFor } from '../forwarded-for.js';
import type { PassthroughObserver } from '../metrics/gateway-metrics.js';
import { createUpstreamRelay, type RelayObserver } from '../upstream/relay.js';
import { upstreamFailure, upstreamFailureKind } from '../upstream/upstream-failure.js';
import { handleGatewayError, sendV3Error } from './errors.js';

export const V3_PREFIX = '/v3';

/** v3's limit on a write's body (VALIDATION_PAYLOAD_TOO_LARGE past it). */
export const V3_BODY_LIMIT_BYTES = 8 * 1024;

export interface PassthroughOptions {
  readonly origin: string;
  readonly dispatcher: Dispatcher;
  /** The most one upstream answer may take, from the dispatch to its last byte. */
  readonly deadlineMs: number;
  /** The metrics of each upstream call. */
  readonly observer?: PassthroughObserver;
}

/** The relay's reports as the metrics count them: a break after the headers is a failure too. */
function relayObserver(observer: PassthroughObserver): RelayObserver {
  return {
    answered: (request, elapsedMs) => observer.answered(request, elapsedMs),
    brokeOff: (request, error) => observer.failed(request, upstreamFailureKind(error, { requestWritten: true })),
  };
}

/**
 * A path the parsers leave as it is: letters, digits, `-`, `_`, `~` and `/` only (so no dot
 * segment and no escape), not starting with `//` (which a URL parser reads as a host).
 */
export const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9_~/-]*$/;

/** Any base works: only the path is compared. */
const PATH_BASE = 'http://upstream.invalid';

/** An escaped `/` or backslash: the proxy decodes both to look for traversal (and throws), and no v3 path has either. */
const ESCAPED_SEPARATOR = /%(?:2f|5c)/i;

/**
 * The proxy rebuilds the upstream path through the WHATWG URL parser, which resolves dot
 * segments and escapes some characters. A path it would change cannot be forwarded exactly, so
 * it is refused here; no v3 route has such a path, so the upstream would have answered 404 too.
 */
export function pathSurvivesForwarding(url: string): boolean {
  const path = url.split('?', 1)[0]!;
  // Nearly every v3 path is plain, and a plain path needs no URL parse on this hot path.
  if (PLAIN_PATH.test(path)) return true;
  if (ESCAPED_SEPARATOR.test(path)) return false;
  try {
    // The proxy also decodes the path to look for traversal, which throws on malformed escapes,
    // and refuses any `..` segment itself: refused here whatever the URL parser makes of it
    // (some resolve `/v3/fx/.a/..`, Node 20's left it), so the proxy never answers its own 400.
    if (decodeURIComponent(path).split('/').includes('..')) return false;
    return new URL(path, PATH_BASE).pathname === path;
  } catch {
    return false;
  }
}

/** Answers a path the proxy would change, before its body is read; a callback hook, so no promise per request. */
function refuseInexactPaths(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (pathSurvivesForwarding(request.url)) {
    done();
    return;
  }
  sendV3Error(reply, new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: request.url.split('?', 1)[0]! }));
}

type Relay = (request: FastifyRequest, reply: FastifyReply, dest: string) => void;

/**
 * The proxy's route handler with a fast path for a plain path (PLAIN_PATH): the proxy's prefix
 * rewrite (/v3 to /v3) and its traversal checks leave such a path as it is, so it goes to the
 * relay as its own destination without them; any other path still takes the proxy's handler.
 */
function relayPlainPaths(route: RouteOptions, relay: Relay): void {
  const proxied = route.handler;
  const handler: RouteHandlerMethod = function (request, reply) {
    const url = request.url;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (PLAIN_PATH.test(path)) {
      relay(request, reply, path);
      return;
    }
    return proxied.call(this, request, reply);
  };
  route.handler = handler;
}

/**
 * An oversized body, as v3 itself words it. Fastify has already asked for the connection to be
 * closed after the answer, so a client still sending is not left writing; said here again all the same.
 */
async function handlePassthroughError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    request.log.info({ code: 'VALIDATION_PAYLOAD_TOO_LARGE' }, 'request rejected');
    return sendV3Error(reply.header('connection', 'close'), new ApiError('VALIDATION_PAYLOAD_TOO_LARGE'));
  }
  return handleGatewayError(error, request, reply);
}

export async function registerV3Passthrough(app: FastifyInstance, options: PassthroughOptions): Promise<void> {
  // The request itself goes through the relay, not reply.from() (upstream/relay.ts says why); it never retries.
  const relay = createUpstreamRelay({
    origin: options.origin,
    dispatcher: options.dispatcher,
    forwardedFor,
    deadlineMs: options.deadlineMs,
    onFailure: (reply, error, requestWritten) => {
      reply.request.log.warn({ err: error, requestWritten }, 'upstream request failed');
      options.observer?.failed(reply.request, upstreamFailureKind(error, { requestWritten }));
      sendV3Error(reply, upstreamFailure(error, reply.request.method, requestWritten));
    },
    ...(options.observer === undefined ? {} : { observer: relayObserver(options.observer) }),
  });
  await app.register(async (scope) => {
    scope.addHook('onRequest', refuseInexactPaths);
    // The proxy's routes are the only ones of this scope.
    scope.addHook('onRoute', (route) => relayPlainPaths(route, relay));
    // A write's body is read whole, up to v3's limit: past a Content-Length over it nothing is read, and a chunked body stops at it.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: V3_BODY_LIMIT_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler(handlePassthroughError);
    await scope.register(proxy, {
      upstream: options.origin,
      prefix: V3_PREFIX,
      rewritePrefix: V3_PREFIX,
      // Every method but CONNECT goes on: v3 answers one it does not serve (405 or 404), as it answers the rest.
      httpMethods: [...EVERY_METHOD],
      // The body parser above stands instead of the proxy's own, which would hand over the unread stream.
      proxyPayloads: false,
      // The proxy registers @fastify/reply-from too; given the same dispatcher, it opens no pool of its own.
      undici: options.dispatcher,
      // The relay in place of reply.from(), for the paths the fast path above does not take.
      handler: relay,
    });
  });
}
