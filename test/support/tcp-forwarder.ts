/**
 * A TCP forwarder on 127.0.0.1 in front of a server, which a test can take down (connections
 * refused, open ones cut) and bring back on the same port: an upstream that is unreachable for a
 * while, with everything else about it real.
 */
import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpForwarder {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly target: { readonly host: string; readonly port: number },
    private port: number,
  ) {}

  /** Forwards to `targetUrl`'s host and port. */
  static async start(targetUrl: string): Promise<TcpForwarder> {
    const target = new URL(targetUrl);
    const forwarder = new TcpForwarder({ host: target.hostname, port: Number(target.port) }, 0);
    await forwarder.up();
    return forwarder;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens (again) on its port. */
  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts every connection: new ones are refused. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async close(): Promise<void> {
    await this.down();
  }
}
