/**
 * The routes an app registers, as fastify declared them: method, URL and route config, in the
 * order they were added. The OpenAPI tests hold each app's routes against its documents, so a
 * route cannot be served undocumented nor documented unserved. Part of lib's HTTP edge.
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
