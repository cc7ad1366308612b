/**
 * A legacy integrator's webhook receiver for the tests: a node:http server on 127.0.0.1 that
 * keeps every request (raw body, headers, arrival time) and answers as the test says: 200, a
 * failure status, or by killing the connection. It can stop listening and come back on the same
 * port, as a receiver that is down and then up.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly rawBody: Buffer;
  readonly body: { eventId: string; type: string; message: string; timestamp: string; data: Record<string, unknown>[] };
  /** performance-free wall clock, ms since the epoch. */
  readonly at: number;
}

/** What to do with a request: a status to answer, or `drop` to destroy the connection unanswered. */
export type ReceiverAnswer = number | 'drop';

export class LegacyWebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Decides each request's answer; 200 unless set. Called before the request is kept. */
  answer: (request: ReceivedWebhook) => ReceiverAnswer | Promise<ReceiverAnswer> = () => 200;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private waiters: { check: () => boolean; resolve: () => void }[] = [];

  private constructor(public port: number) {}

  static async start(port = 0): Promise<LegacyWebhookReceiver> {
    const receiver = new LegacyWebhookReceiver(port);
    await receiver.up();
    return receiver;
  }

  /** The URL to subscribe; `path` tells subscriptions apart. */
  url(path = '/hooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Starts listening (again) on its port. */
  async up(): Promise<void> {
    const server = createServer((request, response) => void this.handle(request, response));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and drops every connection: a receiver that is down (connection refused). */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The requests for one legacy eventId. */
  for(eventId: string): ReceivedWebhook[] {
    return this.received.filter((hit) => hit.body.eventId === eventId);
  }

  /** Resolves once check() holds after some request, or rejects after timeoutMs. */
  waitFor(check: () => boolean, timeoutMs = 15_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = {
        check,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        reject(
          new Error(
            `the receiver did not get what was awaited within ${timeoutMs} ms (it has ${this.received.length} requests)`,
          ),
        );
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  close(): Promise<void> {
    return this.down();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks);
    const headers = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(', ') : String(value),
      ]),
    );
    const hit: ReceivedWebhook = {
      path: request.url ?? '',
      headers,
      rawBody,
      body: JSON.parse(rawBody.toString('utf8')) as ReceivedWebhook['body'],
      at: Date.now(),
    };
    const answer = await this.answer(hit);
    if (answer === 'drop') {
      request.socket.destroy();
      return;
    }
    this.received.push(hit);
    response.writeHead(answer, { 'content-type': 'application/json' }).end('{"ok":true}');
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.check()) return true;
      waiter.resolve();
      return false;
    });
  }
}
