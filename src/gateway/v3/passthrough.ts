/**
 * `/v3/*` passed through verbatim to the upstream with @fastify/http-proxy: method, path and
 * query exactly as sent, the body as a byte stream (never parsed, so never re-encoded), and the
 * upstream's status, headers and body bytes back. v3 signs the path, the query and a hash of the
 * body, so anything less than verbatim would break every signature.
 */
import proxy from '@fastify/http-proxy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { ApiError } from '../../lib/errors/api-error.js';
import { forwardedFor } from '../forwarded-for.js';
import { sendV3Error } from './errors.js';
import { upstreamFailure } from './upstream-failure.js';
import { createUpstreamRelay } from './upstream-relay.js';

export const V3_PREFIX = '/v3';

export interface PassthroughOptions {
  readonly origin: string;
  readonly dispatcher: Dispatcher;
}

/**
 * A path the parsers leave as it is: letters, digits, `-`, `_`, `~` and `/` only (so no dot
 * segment and no escape), not starting with `//` (which a URL parser reads as a host).
 */
export const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9_~/-]*$/;

/** Any base works: only the path is compared. */
const PATH_BASE = 'http://upstream.invalid';

/**
 * The proxy rebuilds the upstream path through the WHATWG URL parser, which resolves dot
 * segments and escapes some characters. A path it would change cannot be forwarded exactly, so
 * it is refused here; no v3 route has such a path, so the upstream would have answered 404 too.
 */
export function pathSurvivesForwarding(url: string): boolean {
  const path = url.split('?', 1)[0]!;
  // Nearly every v3 path is plain; parsing it as a URL was a few per cent of the passthrough's CPU.
  if (PLAIN_PATH.test(path)) return true;
  try {
    // The proxy also decodes the path to look for traversal, which throws on malformed escapes.
    decodeURIComponent(path);
    return new URL(path, PATH_BASE).pathname === path;
  } catch {
    return false;
  }
}

/** An async hook that answers early must return the reply, so fastify stops the request there. */
async function refuseInexactPaths(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  if (pathSurvivesForwarding(request.url)) return undefined;
  return sendV3Error(reply, new ApiError('ROUTE_NOT_FOUND', { method: request.method, path: request.url.split('?', 1)[0]! }));
}

export async function registerV3Passthrough(app: FastifyInstance, options: PassthroughOptions): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook('onRequest', refuseInexactPaths);
    await scope.register(proxy, {
      upstream: options.origin,
      prefix: V3_PREFIX,
      rewritePrefix: V3_PREFIX,
      // The proxy registers @fastify/reply-from too; given the same dispatcher, it opens no pool of its own.
      undici: options.dispatcher,
      // The request itself goes through the relay, not reply.from() (upstream-relay.ts says why); it never retries.
      handler: createUpstreamRelay({
        origin: options.origin,
        dispatcher: options.dispatcher,
        forwardedFor,
        onFailure: (reply, error) => {
          reply.request.log.warn({ err: error }, 'upstream request failed');
          sendV3Error(reply, upstreamFailure(error, reply.request.method));
        },
      }),
    });
  });
}
