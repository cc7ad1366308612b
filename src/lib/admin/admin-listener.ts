/**
 * The admin listener: operator routes (the gateway's shadow report, the metrics of the gateway
 * and the core) on an address and port of their own, apart from the data plane, so that they are
 * never reachable where clients are. It answers only the routes added to it: anything else is
 * a 404, and the data plane registers none of them.
 *
 * Routes are added while the servers are built, then the listener starts with all of them; the
 * parts' metrics (Prometheus registries) are served together on `GET /metrics`:
 *
 *   const admin = new AdminListener({ logLevel });
 *   admin.add({ method: 'GET', url: '/admin/shadow/report', handler: async () => ... });
 *   admin.addMetrics(registry);
 *   await admin.listen(host, port);
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';

import { loggerOptions } from '../logger.js';
import { MetricsExposition } from '../metrics/exposition.js';

export interface AdminRoute {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly url: string;
  /** Its resolved value is the answer (JSON for an object); it may reply itself. */
  readonly handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /** The largest request body it takes, in bytes; fastify's 1 MiB when unset. */
  readonly bodyLimit?: number;
}

/** Where the parts of a server add their operator routes. */
export interface AdminRoutes {
  add(route: AdminRoute): void;
  /** Adds a part's metrics to `GET /metrics`, one route for every part of the process (names must not collide). */
  addMetrics(registry: Registry): void;
}

export interface AdminListenerOptions {
  readonly logLevel?: string;
}

export class AdminListener implements AdminRoutes {
  private readonly routes: AdminRoute[] = [];
  private app: FastifyInstance | null = null;
  private metrics: MetricsExposition | null = null;

  constructor(private readonly options: AdminListenerOptions = {}) {}

  add(route: AdminRoute): void {
    if (this.app !== null)
      throw new Error(`admin route ${route.method} ${route.url} added after the admin listener was built`);
    if (this.routes.some((known) => known.method === route.method && known.url === route.url))
      throw new Error(`admin route ${route.method} ${route.url} added twice`);
    this.routes.push(route);
  }

  addMetrics(registry: Registry): void {
    if (this.metrics === null) {
      const exposition = new MetricsExposition();
      this.add({
        method: 'GET',
        url: '/metrics',
        handler: async (_request, reply) => reply.type(exposition.contentType).send(await exposition.text()),
      });
      this.metrics = exposition;
    }
    this.metrics.add(registry);
  }

  /** The routes added so far, `METHOD url`. */
  get routeNames(): string[] {
    return this.routes.map((route) => `${route.method} ${route.url}`);
  }

  /** The fastify application with every route added so far; built once. */
  async build(): Promise<FastifyInstance> {
    if (this.app !== null) return this.app;
    const app = Fastify({
      logger: loggerOptions(this.options.logLevel ?? 'info'),
      return503OnClosing: true,
      exposeHeadRoutes: false,
    });
    this.app = app;
    for (const route of this.routes)
      app.route({
        method: route.method,
        url: route.url,
        handler: route.handler,
        ...(route.bodyLimit === undefined ? {} : { bodyLimit: route.bodyLimit }),
      });
    app.setNotFoundHandler(async (request, reply) =>
      reply.code(404).send({
        status: 404,
        error: 'not_found',
        message: `The admin listener has no route ${request.method} ${request.url.split('?', 1)[0]!}`,
      }),
    );
    app.setErrorHandler(async (error, request, reply) => {
      request.log.error({ err: error }, 'admin route failed');
      const status =
        typeof (error as { statusCode?: unknown }).statusCode === 'number' &&
        (error as { statusCode: number }).statusCode < 500
          ? (error as { statusCode: number }).statusCode
          : 500;
      return reply.code(status).send({
        status,
        error: status === 500 ? 'internal_error' : 'bad_request',
        message: status === 500 ? 'The admin route failed; see the server log.' : (error as Error).message,
      });
    });
    await app.ready();
    return app;
  }

  /** Builds and listens; returns its URL. */
  async listen(host: string, port: number): Promise<string> {
    const app = await this.build();
    return app.listen({ host, port });
  }

  async close(): Promise<void> {
    await this.app?.close();
  }
}
