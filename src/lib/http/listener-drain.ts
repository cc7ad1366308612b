/**
 * Closing an HTTP listener without failing a request it received (the core's, the gateway's,
 * the admin listener's). Node's server.close() stops accepting and closes the idle keep-alive
 * connections, but a connection busy answering at that moment is kept alive once it has
 * answered, for the whole keep-alive timeout, and the close waits for it. So from
 * endKeepAlive() on, every answer carries `Connection: close` (one already under way too, while
 * its headers are not out), and a client sends its next request on a new connection, to another
 * process; and once closing, a connection whose answer went out before that is closed as soon as
 * it is idle. The requests still open are named by method and path, for a stop that overran.
 *
 * It touches only the Node server it is given: a listener on it before the application's. The
 * `Draining` flag the health routes read is declared here too.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** True once the process is stopping: `/readyz` answers 503 from then on (src/cli/drain.ts sets it). */
export type Draining = () => boolean;

/** A process that is not stopping, as apps built outside the CLI are. */
export const NOT_DRAINING: Draining = () => false;

interface OpenRequest {
  readonly method: string;
  readonly path: string;
  readonly since: number;
  readonly response: ServerResponse;
}

/** How many open requests a description names; the rest are counted. */
const NAMED_REQUESTS = 5;

export class ListenerDrain {
  private readonly open = new Set<OpenRequest>();
  private keepAliveEnded = false;
  private closing = false;

  constructor(
    private readonly server: Server,
    private readonly now: () => number = Date.now,
  ) {
    // First among the server's request listeners: a header set here is there whatever answers.
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) =>
      this.received(request, response),
    );
  }

  /** Every answer from now on carries `Connection: close`, one under way included when its headers are not out. */
  endKeepAlive(): void {
    if (this.keepAliveEnded) return;
    this.keepAliveEnded = true;
    for (const { response } of this.open) closeAfter(response);
  }

  /**
   * Closes the listener with closeApp (the application's close, which stops accepting and waits
   * for every request received to be answered), ending keep-alive first and closing each
   * connection once it has answered.
   */
  async close(closeApp: () => Promise<void>): Promise<void> {
    this.endKeepAlive();
    this.closing = true;
    await closeApp();
  }

  /** The requests received and not yet answered: `GET /path (1.2 s)`, the oldest first; empty when none. */
  describeOpen(): string[] {
    const at = this.now();
    const open = [...this.open].sort((a, b) => a.since - b.since);
    const named = open
      .slice(0, NAMED_REQUESTS)
      .map(({ method, path, since }) => `${method} ${path} (${((at - since) / 1000).toFixed(1)} s)`);
    if (open.length > NAMED_REQUESTS) named.push(`${open.length - NAMED_REQUESTS} more`);
    return named;
  }

  private received(request: IncomingMessage, response: ServerResponse): void {
    const entry: OpenRequest = {
      method: request.method ?? 'UNKNOWN',
      // The path only: a query string may carry what a log should not.
      path: (request.url ?? '').split('?', 1)[0]!,
      since: this.now(),
      response,
    };
    this.open.add(entry);
    if (this.keepAliveEnded) closeAfter(response);
    response.once('close', () => {
      this.open.delete(entry);
      // The answer is out and the socket detached from it: an idle connection now, unless it said close.
      if (this.closing) setImmediate(() => this.server.closeIdleConnections());
    });
  }
}

/** The answer ends its connection: Node writes the header and closes the socket once it is sent. */
function closeAfter(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('connection', 'close');
}
