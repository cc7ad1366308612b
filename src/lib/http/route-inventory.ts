/**
 * The routes an app registers, as fastify declared them: method, URL and route config, in the
 * order they were added. The OpenAPI tests hold each app's routes against its documents, so a
 * route cannot be served undocumented nor documented unserved; a CONNECT request, which reaches
 * no route, is answered from it (methodsAt). Part of lib's HTTP edge.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';

export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
  readonly config: Readonly<Record<string, unknown>>;
}

const INVENTORIES = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Starts recording; call it before the app's first route (scopes registered later inherit the hook). */
export function trackRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  INVENTORIES.set(app, routes);
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const config = (route.config ?? {}) as Record<string, unknown>;
    for (const method of methods) routes.push({ method: String(method), url: route.url, config });
  });
}

/** What the app registered since trackRoutes; empty for an app that never called it. */
export function routesOf(app: FastifyInstance): readonly RegisteredRoute[] {
  return INVENTORIES.get(app) ?? [];
}

/** Whether a route URL as fastify declares it (static segments, `:param` segments, a last `*`) names `path`. */
export function routeUrlMatches(url: string, path: string): boolean {
  const pattern = url.split('/');
  const segments = path.split('/');
  for (let index = 0; index < pattern.length; index += 1) {
    const part = pattern[index]!;
    // `*` takes the rest of the path, nothing included, but not the `/` before it.
    if (part === '*' && index === pattern.length - 1) return index < segments.length;
    if (index >= segments.length) return false;
    if (part.startsWith(':') ? segments[index] === '' : part !== segments[index]) return false;
  }
  return pattern.length === segments.length;
}

/**
 * The methods the app's routes serve at `path` (without its query), in the order of `order`; a
 * route `serves` says is only a refusal (a 405 catch-all) is left out. What a request with a
 * method fastify never routes would meet there: nothing, or a route for other methods.
 */
export function methodsAt(
  app: FastifyInstance,
  path: string,
  order: readonly string[],
  serves: (route: RegisteredRoute) => boolean = () => true,
): string[] {
  const methods = new Set(
    routesOf(app)
      .filter((route) => serves(route) && routeUrlMatches(route.url, path))
      .map((route) => route.method),
  );
  return order.filter((method) => methods.has(method));
}
