/**
 * Every request method Node's parser accepts is answered in the envelope of the generation its
 * path names. fastify routes only the methods it knows (GET, HEAD, TRACE, DELETE, OPTIONS, PATCH,
 * PUT, POST, QUERY); anything else (PROPFIND, MKCOL, LOCK, PURGE...) would fall to the app-wide
 * 404 whatever the path, so each app teaches fastify the rest before its first route, and its
 * catch-all routes cover them too. CONNECT is not a request to a route (connect-requests.ts).
 * Part of lib's HTTP edge.
 */
import { METHODS } from 'node:http';

import type { FastifyInstance } from 'fastify';

/** Node hands CONNECT to the server's 'connect' event, never to the request handler. */
export const CONNECT = 'CONNECT';

/** The methods a route can name, the common ones first (the order of an `Allow` header), then the rest of Node's list. */
const COMMON_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export const EVERY_METHOD: readonly string[] = [
  ...COMMON_METHODS,
  ...METHODS.filter((method) => method !== CONNECT && !(COMMON_METHODS as readonly string[]).includes(method)),
];

/**
 * Makes fastify route every method of EVERY_METHOD: those it does not know are added as methods
 * that may carry a body (Node frames any request's body by its headers, and a route may refuse
 * it). Call it before the app's first route: `all` and a route's method list are read then.
 */
export function routeEveryMethod(app: FastifyInstance): void {
  const known = new Set(app.supportedMethods);
  for (const method of EVERY_METHOD) if (!known.has(method)) app.addHttpMethod(method, { hasBody: true });
}
