/**
 * The admin listener: operator routes (the gateway's shadow report, the metrics of the gateway
 * and the core) on an address and port of their own, apart from the data plane, so that they are
 * never reachable where clients are. It answers only the routes added to it: anything else is
 * a 404, and the data plane registers none of them.
 *
 * With a token (FXGATE_ADMIN_TOKEN, admin-token.ts), every request must carry it as `Authorization:
 * Bearer`, a route that checks a credential of its own excepted; without one it refuses to listen
 * anywhere but on loopback. Request bodies are read with the strict JSON parse.
 *
 * Routes are added while the servers are built, then the listener starts with all of them; the
 * parts' metrics (Prometheus registries) are served together on `GET /metrics`:
 *
 *   const admin = new AdminListener({ logLevel, token });
 *   admin.add({ method: 'GET', url: '/admin/shadow/report', handler: async () => ... });
 *   admin.addMetrics(registry);
 *   await admin.listen(host, port);
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';

import { StrictJsonError } from '../errors/internal-errors.js';
import type { RawAnswer } from '../http/client-errors.js';
import { answerConnectRequests, type ConnectRequest } from '../http/connect-requests.js';
import { ListenerDrain } from '../http/listener-drain.js';
import { routeEveryMethod } from '../http/methods.js';
import { parseStrictJson } from '../json/strict-json.js';
import { loggerOptions } from '../logger.js';
import { MetricsExposition } from '../metrics/exposition.js';
import { bearerTokenMatches, checkAdminExposure } from './admin-token.js';

export interface AdminRoute {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly url: string;
  /** Its resolved value is the answer (JSON for an object); it may reply itself. */
  readonly handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /** The largest request body it takes, in bytes; fastify's 1 MiB when unset. */
  readonly bodyLimit?: number;
  /**
   * The route checks a credential of its own (the CLI's state routes: the token published in the
   * data folder), so the admin token is neither asked for nor accepted there.
   */
  readonly ownCredential?: boolean;
}

/** Where the parts of a server add their operator routes. */
export interface AdminRoutes {
  add(route: AdminRoute): void;
  /** Adds a part's metrics to `GET /metrics`, one route for every part of the process (names must not collide). */
  addMetrics(registry: Registry): void;
}

export interface AdminListenerOptions {
  readonly logLevel?: string;
  /** FXGATE_ADMIN_TOKEN: the bearer token every request must carry; none is asked for without it. */
  readonly token?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An admin route that checks a credential of its own (AdminRoute.ownCredential). */
    adminOwnCredential?: boolean;
  }
}

const UNAUTHORIZED = {
  status: 401,
  error: 'unauthorized',
  message: 'The admin listener needs Authorization: Bearer <FXGATE_ADMIN_TOKEN>',
} as const;

function notFound(method: string, path: string): { status: 404; error: 'not_found'; message: string } {
  return { status: 404, error: 'not_found', message: `The admin listener has no route ${method} ${path}` };
}

export class AdminListener implements AdminRoutes {
  private readonly routes: AdminRoute[] = [];
  private app: FastifyInstance | null = null;
  /** Closes it without failing a scrape under way (a scraper keeps its connection alive). */
  private drain: ListenerDrain | null = null;
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
    this.drain = new ListenerDrain(app.server);
    // Any method Node accepts reaches the 404 below, not fastify's own answer.
    routeEveryMethod(app);
    const { token } = this.options;
    if (token !== undefined) {
      // onRequest: before the body is read, and for the routes it has not (404) as for the others.
      app.addHook('onRequest', async (request, reply) => {
        if (request.routeOptions.config.adminOwnCredential === true) return undefined;
        if (bearerTokenMatches(request.headers.authorization, token)) return undefined;
        return reply.code(401).header('www-authenticate', 'Bearer').send(UNAUTHORIZED);
      });
    }
    // One JSON, one meaning (lib/json/strict-json.ts), as on the public listeners.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      try {
        done(null, parseStrictJson(body as string));
      } catch (error) {
        const failure =
          error instanceof StrictJsonError ? error : new StrictJsonError('invalid_json', '', null, 'malformed JSON');
        done(
          Object.assign(new Error(`${failure.path === '' ? '' : `${failure.path}: `}${failure.message}`), {
            statusCode: 400,
          }),
        );
      }
    });
    for (const route of this.routes)
      app.route({
        method: route.method,
        url: route.url,
        handler: route.handler,
        config: { adminOwnCredential: route.ownCredential === true },
        ...(route.bodyLimit === undefined ? {} : { bodyLimit: route.bodyLimit }),
      });
    app.setNotFoundHandler(async (request, reply) =>
      reply.code(404).send(notFound(request.method, request.url.split('?', 1)[0]!)),
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
    answerConnectRequests(app.server, (request) => this.connectAnswer(request), app.log);
    return app;
  }

  /** CONNECT, which Node never routes: the 401 of a request without the token, else the 404 of any method no route has. */
  private connectAnswer(request: ConnectRequest): RawAnswer {
    const { token } = this.options;
    if (token !== undefined && !bearerTokenMatches(request.headers.authorization, token))
      return { status: 401, body: JSON.stringify(UNAUTHORIZED), headers: { 'www-authenticate': 'Bearer' } };
    return { status: 404, body: JSON.stringify(notFound('CONNECT', request.path ?? request.target)), headers: {} };
  }

  /** Builds and listens; returns its URL. Off loopback without a token, throws AdminTokenRequiredError before anything listens. */
  async listen(host: string, port: number): Promise<string> {
    checkAdminExposure(host, this.options.token);
    const app = await this.build();
    return app.listen({ host, port });
  }

  /** Stops accepting, answers what it received, and closes. */
  async close(): Promise<void> {
    const { app, drain } = this;
    if (app === null || drain === null) return;
    await drain.close(() => app.close());
  }

  /** The requests it has not answered yet, for a stop that overran (ListenerDrain.describeOpen). */
  describeOpen(): string[] {
    return this.drain?.describeOpen() ?? [];
  }
}
