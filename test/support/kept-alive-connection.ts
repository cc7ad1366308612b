/**
 * One HTTP/1.1 connection kept alive by hand, for what a pooled client hides: which answers
 * came on it, what their Connection header said, and when the server closed it. Requests are
 * written as the test says (a body's last byte held back, for a request received but not yet
 * whole); answers are read by Content-Length, one after another.
 */
import { connect, type Socket } from 'node:net';

import { parseRawResponse, type RawResponse } from './raw-http.js';

export class KeptAliveConnection {
  private buffer = Buffer.alloc(0);
  private waiting: { resolve: (response: RawResponse) => void; reject: (error: Error) => void } | null = null;
  private closedAt: number | null = null;
  /** Resolves when the server has closed its side (or reset it), with performance.now() then. */
  readonly closed: Promise<number>;

  private constructor(private readonly socket: Socket) {
    this.closed = new Promise((resolve) => {
      const done = () => {
        this.closedAt ??= performance.now();
        this.waiting?.reject(new Error('the server closed the connection without answering'));
        this.waiting = null;
        resolve(this.closedAt);
      };
      socket.once('end', done);
      socket.once('close', done);
    });
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.deliver();
    });
  }

  /** Connects to `baseUrl` (http://host:port). */
  static open(baseUrl: string): Promise<KeptAliveConnection> {
    const { hostname, port } = new URL(baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new KeptAliveConnection(socket));
      });
    });
  }

  /** Whether the server has closed it. */
  get isClosed(): boolean {
    return this.closedAt !== null;
  }

  /** Writes a GET asking to keep the connection, and resolves with its answer. */
  get(path: string, headers: Readonly<Record<string, string>> = {}): Promise<RawResponse> {
    const answer = this.nextAnswer();
    this.write(`GET ${path} HTTP/1.1\r\n${headerLines(headers)}\r\n`);
    return answer;
  }

  /**
   * Writes a request's head and all of its body but the last byte, which `finish` sends: a
   * request the server has received but cannot handle yet. Resolves with its answer.
   */
  postAllButLastByte(
    path: string,
    body: string,
    headers: Readonly<Record<string, string>> = {},
  ): { readonly answer: Promise<RawResponse>; finish(): void } {
    const answer = this.nextAnswer();
    const bytes = Buffer.from(body);
    const head = `POST ${path} HTTP/1.1\r\n${headerLines({ ...headers, 'content-length': String(bytes.length) })}\r\n`;
    this.write(Buffer.concat([Buffer.from(head, 'latin1'), bytes.subarray(0, -1)]));
    return { answer, finish: () => this.write(bytes.subarray(-1)) };
  }

  private write(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  private nextAnswer(): Promise<RawResponse> {
    if (this.waiting !== null) throw new Error('one request at a time on a kept-alive connection');
    const answer = new Promise<RawResponse>((resolve, reject) => (this.waiting = { resolve, reject }));
    // A test that gives up on an answer (the connection destroyed after it) leaves no unhandled rejection.
    answer.catch(() => undefined);
    return answer;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private deliver(): void {
    if (this.waiting === null) return;
    const response = parseRawResponse(this.buffer);
    if (response === null) return;
    const headEnd = this.buffer.indexOf('\r\n\r\n') + 4;
    const length = Number(response.headers['content-length'] ?? Number.NaN);
    // Answers here always say their length; anything else waits for more bytes.
    if (!Number.isInteger(length) || this.buffer.length < headEnd + length) return;
    this.buffer = this.buffer.subarray(headEnd + length);
    const { resolve } = this.waiting;
    this.waiting = null;
    resolve(response);
  }
}

/** `name: value` lines, the Host and keep-alive first unless given. */
function headerLines(headers: Readonly<Record<string, string>>): string {
  return Object.entries({ host: 'fxgate.test', connection: 'keep-alive', ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
}
