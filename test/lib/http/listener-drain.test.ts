/**
 * src/lib/http/listener-drain.ts on a real Node HTTP server over loopback, with connections kept
 * alive by hand: keep-alive ends when told, a request received before the close is answered
 * and its connection then closed, idle connections are closed at once, an answer already under
 * way ends its connection once sent, and the open requests are named.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ListenerDrain } from '../../../src/lib/http/listener-drain.js';
import { KeptAliveConnection } from '../../support/kept-alive-connection.js';

/** Far longer than any test: a connection closed within a test was closed by the drain, not by this. */
const KEEP_ALIVE_MS = 60_000;

describe('ListenerDrain', () => {
  let server: Server;
  let drain: ListenerDrain;
  let url: string;
  let connections: number;
  /** Releases the requests that wait (/slow answers, /stream ends its body). */
  let release: () => void;
  let released: Promise<void>;
  const opened: KeptAliveConnection[] = [];

  const handler = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? '').split('?', 1)[0];
    if (path === '/slow') await released;
    if (path === '/stream') {
      // The headers and half the body go out at once; the rest after the release.
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '4' });
      response.write('ab');
      await released;
      response.end('cd');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(path ?? '') });
    response.end(path);
  };

  const open = async (): Promise<KeptAliveConnection> => {
    const connection = await KeptAliveConnection.open(url);
    opened.push(connection);
    return connection;
  };

  const closeServer = (): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

  beforeEach(async () => {
    released = new Promise((resolve) => (release = resolve));
    connections = 0;
    server = createServer((request, response) => void handler(request, response));
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.on('connection', () => (connections += 1));
    drain = new ListenerDrain(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    release();
    for (const connection of opened.splice(0)) connection.destroy();
    if (server.listening) {
      server.closeAllConnections();
      await closeServer();
    }
  });

  it('keeps connections alive until endKeepAlive; then every answer says Connection: close and its connection ends', async () => {
    const first = await open();
    const kept = await first.get('/a');
    expect(kept.status).toBe(200);
    expect(kept.headers.connection).toBe('keep-alive');
    expect((await first.get('/b')).body).toBe('/b');
    expect(first.isClosed).toBe(false);

    drain.endKeepAlive();
    const last = await first.get('/c');
    expect(last.body).toBe('/c');
    expect(last.headers.connection).toBe('close');
    await first.closed;
    // Still accepting: the next request goes on a new connection, answered the same way.
    const second = await open();
    const next = await second.get('/d');
    expect([next.status, next.headers.connection]).toEqual([200, 'close']);
    await second.closed;
    expect(connections).toBe(2);
  });

  it('on close answers the request it received, then closes its connection; closes idle ones at once and accepts none', async () => {
    const idle = await open();
    expect((await idle.get('/a')).headers.connection).toBe('keep-alive');
    const busy = await open();
    const answer = busy.get('/slow?token=secret');
    await expect.poll(() => drain.describeOpen()).toEqual([expect.stringMatching(/^GET \/slow \(\d+\.\d s\)$/)]);

    let closed = false;
    const closing = drain.close(closeServer).then(() => (closed = true));
    await idle.closed;
    // Nothing new is accepted.
    const refused = connect({ host: '127.0.0.1', port: Number(new URL(url).port) });
    const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ECONNREFUSED');
    expect(closed).toBe(false);
    expect(busy.isClosed).toBe(false);

    release();
    const slow = await answer;
    expect([slow.status, slow.body, slow.headers.connection]).toEqual([200, '/slow', 'close']);
    await busy.closed;
    await closing;
    expect(drain.describeOpen()).toEqual([]);
  });

  it('ends a connection whose answer was under way at the close once it is sent, not a keep-alive timeout later', async () => {
    const streaming = await open();
    const answer = streaming.get('/stream');
    await expect.poll(() => drain.describeOpen().length).toBe(1);
    const started = performance.now();
    const closing = drain.close(closeServer);
    release();
    const streamed = await answer;
    // Its headers were out before the close: they still say keep-alive, and the drain closes the connection instead.
    expect([streamed.body, streamed.headers.connection]).toEqual(['abcd', 'keep-alive']);
    await streaming.closed;
    await closing;
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('names at most five open requests, the oldest first, and counts the rest', async () => {
    const clients = await Promise.all(Array.from({ length: 7 }, () => open()));
    const answers: Promise<unknown>[] = [];
    for (const [index, client] of clients.entries()) {
      answers.push(client.get(`/slow?n=${index}`));
      // One at a time, so that their order is the order sent.
      await expect.poll(() => drain.describeOpen().at(-1)).toMatch(index < 5 ? /^GET/ : `${index - 4} more`);
    }
    const described = drain.describeOpen();
    expect(described.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => expect.stringMatching(/^GET \/slow \(/)));
    expect(described[5]).toBe('2 more');
    release();
    await Promise.all(answers);
    expect(drain.describeOpen()).toEqual([]);
  });
});
