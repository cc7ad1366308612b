/**
 * An HTTP proxy on 127.0.0.1 in front of a server under test, which records every request it
 * receives (method, path, headers, body bytes) and does to each what the test's plan says:
 * forward it unchanged, answer for the server without forwarding, forward it and lose the
 * answer (the client gets a 503 instead), or cut the connection. Talks to loopback only.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { request as upstreamRequest } from 'undici';

export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** What the proxy answers in place of the server. */
export interface CannedAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

export type ProxyAction =
  | { readonly kind: 'forward' }
  | { readonly kind: 'answer'; readonly answer: CannedAnswer }
  /** The server runs the request; its answer is dropped and this one sent instead. */
  | { readonly kind: 'forward-then-answer'; readonly answer: CannedAnswer }
  | { readonly kind: 'cut' };

/** The v3 envelope of SERVICE_UNAVAILABLE, as a server that could not run the request sends it. */
export const SERVICE_UNAVAILABLE: CannedAnswer = {
  status: 503,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify({
    error: {
      code: 'SERVICE_UNAVAILABLE',
      type: 'INTERNAL_ERROR',
      message: 'The service is temporarily unavailable.',
      retryStrategy: 'RETRY_WITH_BACKOFF',
      details: {},
    },
  }),
};

/** Hop-by-hop headers, which a proxy does not pass on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

export class FaultProxy {
  /** Every request received, in order, with the upstream answers the forwarded ones got. */
  readonly received: ProxiedRequest[] = [];
  readonly upstreamAnswers: { status: number; retryAfter: string | null; body: string }[] = [];
  /** Decides per request; the nth request received is `index` n - 1. */
  plan: (request: ProxiedRequest, index: number) => ProxyAction = () => ({ kind: 'forward' });

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(targetUrl: string): Promise<FaultProxy> {
    // The handler needs the proxy, made once the server listens.
    const made: { proxy?: FaultProxy } = {};
    const server = createServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const received: ProxiedRequest = {
          method: incoming.method ?? 'GET',
          path: incoming.url ?? '/',
          headers: incoming.headers,
          body: Buffer.concat(chunks),
        };
        void made.proxy!.handle(targetUrl, received, outgoing).catch((error: unknown) => {
          outgoing.destroy(error instanceof Error ? error : new Error(String(error)));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    made.proxy = new FaultProxy(server, `http://127.0.0.1:${port}`);
    return made.proxy;
  }

  private async handle(targetUrl: string, received: ProxiedRequest, outgoing: ServerResponse): Promise<void> {
    const action = this.plan(received, this.received.length);
    this.received.push(received);
    if (action.kind === 'cut') {
      outgoing.socket?.destroy();
      return;
    }
    if (action.kind === 'answer') return send(outgoing, action.answer);
    const headers = Object.fromEntries(
      Object.entries(received.headers).filter(([name, value]) => !HOP_BY_HOP.has(name) && value !== undefined),
    ) as Record<string, string>;
    const answer = await upstreamRequest(`${targetUrl}${received.path}`, {
      method: received.method as 'GET',
      headers,
      body: received.body.length > 0 ? received.body : undefined,
    });
    const body = await answer.body.text();
    const retryAfter = answer.headers['retry-after'];
    this.upstreamAnswers.push({
      status: answer.statusCode,
      retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
      body,
    });
    if (action.kind === 'forward-then-answer') return send(outgoing, action.answer);
    const answerHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name))
        answerHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
    send(outgoing, { status: answer.statusCode, headers: answerHeaders, body });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function send(outgoing: ServerResponse, answer: CannedAnswer): void {
  outgoing.writeHead(answer.status, answer.headers ?? {});
  outgoing.end(answer.body ?? '');
}
