/**
 * A legacy double for the shadow mode's tests: a small HTTP server standing in for the legacy
 * v1/v2 service. It answers each request with the answer of a second fxgate gateway (`target`:
 * its own nonce store, so a client's token is fresh there as it would be at the real legacy
 * service) or with a recorded answer, and can be told to change one field of one operation's
 * answers, to answer slowly, or to answer garbage. It keeps every request it received, and the
 * bytes of every answer it gave.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import { parse, stringify } from 'lossless-json';
import { request as undiciRequest } from 'undici';

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

export interface GivenAnswer {
  readonly url: string;
  readonly status: number;
  readonly body: Buffer;
}

/** One field of one operation's answers, changed: `path` is normalised (`data[].accountNumber`), every match changed. */
export interface PlantedChange {
  /** The operation's path below the org, as in its route (`fiat_withdrawal_addresses`, `trade/{id}` matches `trade/<anything>`). */
  readonly operation: string;
  readonly generation?: 'v1' | 'v2';
  readonly path: string;
  readonly value: (old: unknown) => unknown;
}

export type DoubleBehaviour =
  | { readonly kind: 'answer' }
  /** Waits this long before answering. */
  | { readonly kind: 'slow'; readonly delayMs: number }
  /** 200 with a body that is not JSON. */
  | { readonly kind: 'garbage-body' }
  /** Bytes that are not HTTP, then the connection closed. */
  | { readonly kind: 'garbage-bytes' };

export interface LegacyDoubleOptions {
  /** A gateway to ask for each answer. */
  readonly target?: string;
  /** Or a recorded answer per request. */
  readonly recorded?: (request: ReceivedRequest) => { status: number; body: string } | undefined;
}

function operationPattern(change: PlantedChange): RegExp {
  const generation = change.generation ?? 'v[12]';
  const operation = change.operation.replaceAll(/\{[A-Za-z]+\}/g, '[^/?]+');
  return new RegExp(`^/${generation}/brokerage/[^/]+/${operation}(?:\\?|$)`);
}

/** Applies `value` at every place of `body` the normalised path names. */
function plant(body: unknown, path: readonly string[], value: (old: unknown) => unknown): void {
  if (path.length === 0 || body === null || typeof body !== 'object') return;
  const [head, ...rest] = path;
  const list = head!.endsWith('[]');
  const key = list ? head!.slice(0, -2) : head!;
  const holder = body as Record<string, unknown>;
  if (!(key in holder)) return;
  if (list) {
    const items = holder[key];
    if (!Array.isArray(items)) return;
    if (rest.length === 0) items.forEach((item, index) => (items[index] = value(item)));
    else for (const item of items) plant(item, rest, value);
  } else if (rest.length === 0) {
    holder[key] = value(holder[key]);
  } else {
    plant(holder[key], rest, value);
  }
}

export class LegacyDouble {
  readonly received: ReceivedRequest[] = [];
  readonly answers: GivenAnswer[] = [];
  private changes: PlantedChange[] = [];
  behaviour: DoubleBehaviour = { kind: 'answer' };
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly options: LegacyDoubleOptions,
  ) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(options: LegacyDoubleOptions): Promise<LegacyDouble> {
    let double: LegacyDouble | null = null;
    const server = createServer((request, response) => void double!.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    double = new LegacyDouble(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, options);
    return double;
  }

  /** Changes one field of one operation's answers from now on. */
  plant(change: PlantedChange): void {
    this.changes.push(change);
  }

  clear(): void {
    this.changes = [];
    this.behaviour = { kind: 'answer' };
    this.received.length = 0;
    this.answers.length = 0;
  }

  /** The requests received of a method. */
  requests(method: string): ReceivedRequest[] {
    return this.received.filter((request) => request.method === method);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const received: ReceivedRequest = {
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      headers: { ...request.headers },
      body: Buffer.concat(chunks),
    };
    this.received.push(received);
    const behaviour = this.behaviour;
    if (behaviour.kind === 'garbage-bytes') {
      request.socket.end('\u0000\u0001 this is not HTTP \u00ff\r\n\r\n');
      return;
    }
    if (behaviour.kind === 'garbage-body') {
      response
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html><body>Service temporarily unavailable</body></html>');
      return;
    }
    if (behaviour.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
    try {
      const answer = await this.answer(received);
      const body = this.withChanges(received.url, answer.body);
      this.answers.push({ url: received.url, status: answer.status, body });
      if (!response.destroyed)
        response
          .writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers })
          .end(body);
    } catch (error) {
      if (!response.destroyed)
        response.writeHead(502, { 'content-type': 'text/plain' }).end(`the double could not answer: ${String(error)}`);
    }
  }

  private async answer(
    received: ReceivedRequest,
  ): Promise<{ status: number; body: Buffer; headers: Record<string, string> }> {
    const recorded = this.options.recorded?.(received);
    if (recorded !== undefined) return { status: recorded.status, body: Buffer.from(recorded.body), headers: {} };
    if (this.options.target === undefined)
      return { status: 404, body: Buffer.from('{"status":"error","message":"Route not found"}'), headers: {} };
    const headers = Object.fromEntries(
      Object.entries(received.headers).filter(
        ([name, value]) =>
          value !== undefined && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(name),
      ),
    ) as Record<string, string>;
    const answer = await undiciRequest(`${this.options.target}${received.url}`, {
      method: received.method as 'GET',
      headers,
      ...(received.body.length > 0 ? { body: received.body } : {}),
    });
    const body = Buffer.from(await answer.body.arrayBuffer());
    const kept: Record<string, string> = {};
    for (const name of ['deprecation', 'sunset', 'link', 'x-trace-id']) {
      const value = answer.headers[name];
      if (typeof value === 'string') kept[name] = value;
    }
    return { status: answer.statusCode, body, headers: kept };
  }

  private withChanges(url: string, body: Buffer): Buffer {
    const changes = this.changes.filter((change) => operationPattern(change).test(url));
    if (changes.length === 0) return body;
    let parsed: unknown;
    try {
      parsed = parse(body.toString('utf8'));
    } catch {
      return body;
    }
    for (const change of changes) plant(parsed, change.path.split('.'), change.value);
    return Buffer.from(stringify(parsed) ?? '');
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
