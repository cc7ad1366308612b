/**
 * A real HTTP upstream for gateway tests, on 127.0.0.1: a fastify server that records every
 * request exactly as it arrived (raw URL, headers, body bytes) and answers with whatever the
 * test sets, so passthrough can be checked byte for byte without stubbing the network.
 */
import { Readable } from 'node:stream';

import Fastify, { type FastifyInstance } from 'fastify';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

export interface UpstreamAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** Send the body as these chunks, streamed without a Content-Length. */
  readonly chunks?: readonly string[];
  /** Never answer (to test timeouts); the socket stays open until the server closes. */
  readonly hang?: boolean;
  /** Answer only after this many ms. */
  readonly delayMs?: number;
}

export class RecordingUpstream {
  readonly requests: RecordedRequest[] = [];
  /** Answers to recorded requests fully written (or cut by the peer): a test waits on it, not past a delayed answer. */
  answered = 0;
  answer: UpstreamAnswer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[]}' };
  /** When set, answers each request by its method and path (`GET /v3/fx/balances`) instead of `answer`. */
  answerFor: ((request: RecordedRequest) => UpstreamAnswer) | null = null;
  private app: FastifyInstance | null = null;
  private address = '';

  /** The origin, e.g. http://127.0.0.1:40123. */
  get url(): string {
    return this.address;
  }

  static async start(): Promise<RecordingUpstream> {
    const upstream = new RecordingUpstream();
    const app = Fastify({ logger: false, forceCloseConnections: true });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    app.addHook('onResponse', async (request) => {
      if (request.url !== '/healthz') upstream.answered += 1;
    });
    app.get('/healthz', async () => ({ status: 'ok' }));
    app.all('/*', async (request, reply) => {
      const recorded: RecordedRequest = {
        method: request.method,
        url: request.raw.url ?? '',
        headers: { ...request.headers },
        body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      };
      upstream.requests.push(recorded);
      const answer = upstream.answerFor ? upstream.answerFor(recorded) : upstream.answer;
      if (answer.hang) return new Promise<never>(() => {});
      if (answer.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      reply.code(answer.status).headers(answer.headers ?? {});
      return reply.send(
        answer.chunks ? Readable.from(answer.chunks.map((chunk) => Buffer.from(chunk))) : (answer.body ?? ''),
      );
    });
    upstream.address = await app.listen({ host: '127.0.0.1', port: 0 });
    upstream.app = app;
    return upstream;
  }

  async close(): Promise<void> {
    await this.app?.close();
  }
}
