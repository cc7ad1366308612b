/**
 * The guarded connector: a refused destination never reaches the connector that opens sockets;
 * an allowed name is connected to at the addresses checked (never resolved again), its `host`
 * kept for TLS; the peer address is checked once connected; an exact destination is connected
 * to as written. Every socket here is on loopback: names come from a test resolver, and where
 * a name's address is public only the policy's decision is asserted.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import { buildConnector, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { DestinationRefusedError } from '../../../src/lib/errors/internal-errors.js';
import { ExactDestinations, type Resolver, webhookPolicy } from '../../../src/lib/net/destination-policy.js';
import { guardedAgent, guardedConnector } from '../../../src/lib/net/guarded-connector.js';

const resolver: Resolver = async (hostname) => {
  const table: Record<string, string[]> = {
    'rebind.example': ['10.0.0.1'],
    'public.example': ['93.184.216.34'],
    'receiver.test': ['127.0.0.2', '127.0.0.1'],
  };
  const addresses = table[hostname];
  if (addresses === undefined) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: 4 }));
};

/** The connector that opens sockets, recording what it was asked to connect to. */
function recordingConnector(open: buildConnector.connector = buildConnector({ timeout: 2_000 })) {
  const calls: buildConnector.Options[] = [];
  const connector: buildConnector.connector = (options, callback) => {
    calls.push(options);
    open(options, callback);
  };
  return { calls, connector };
}

function connectWith(connector: buildConnector.connector, options: buildConnector.Options) {
  return new Promise<{ error: Error | null; socket: Socket | null }>((resolve) =>
    connector(options, (error, socket) => resolve({ error, socket })),
  );
}

let server: Server;
let port: number;
const received: { host: string | undefined; url: string | undefined }[] = [];
let connections = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push({ host: req.headers.host, url: req.url });
    res.end('ok');
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterEach(() => {
  received.length = 0;
  connections = 0;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('guardedConnector', () => {
  const live = webhookPolicy('live', { resolver });
  const sandbox = webhookPolicy('sandbox', { resolver });

  it('refuses a name that resolves to a private address before anything opens a socket', async () => {
    const { calls, connector } = recordingConnector();
    const { error } = await connectWith(guardedConnector(sandbox, {}, connector), {
      hostname: 'rebind.example',
      host: 'rebind.example:8080',
      protocol: 'http:',
      port: '8080',
    });
    expect(error).toBeInstanceOf(DestinationRefusedError);
    expect(error!.message).toBe(
      'refused: rebind.example resolved to 10.0.0.1, a private address; sandbox webhooks must reach a public or loopback address',
    );
    expect(calls).toEqual([]);
  });

  it('refuses a refused literal before anything opens a socket', async () => {
    const { calls, connector } = recordingConnector();
    for (const hostname of ['169.254.169.254', '127.0.0.1', '::ffff:a00:1']) {
      const { error } = await connectWith(guardedConnector(live, {}, connector), {
        hostname,
        protocol: 'https:',
        port: '',
      });
      expect(error, hostname).toBeInstanceOf(DestinationRefusedError);
    }
    expect(calls).toEqual([]);
  });

  it('connects an allowed name to the addresses checked, one after another, keeping its host for TLS', async () => {
    const { calls, connector } = recordingConnector();
    const { error, socket } = await connectWith(guardedConnector(sandbox, {}, connector), {
      hostname: 'receiver.test',
      host: `receiver.test:${port}`,
      protocol: 'http:',
      port: String(port),
    });
    expect(error).toBeNull();
    expect(socket!.remoteAddress).toBe('127.0.0.1');
    socket!.destroy();
    // 127.0.0.2 has no listener on the port: refused, and the next checked address is tried.
    expect(calls.map((call) => [call.hostname, call.host])).toEqual([
      ['127.0.0.2', `receiver.test:${port}`],
      ['127.0.0.1', `receiver.test:${port}`],
    ]);
  });

  it('checks the address the socket actually connected to, and closes it when refused', async () => {
    // A connector that went somewhere else than it was told: here, always to the local server.
    const { calls, connector } = recordingConnector((options, callback) =>
      buildConnector({ timeout: 2_000 })({ ...options, hostname: '127.0.0.1', port: String(port) }, callback),
    );
    const { error, socket } = await connectWith(guardedConnector(live, {}, connector), {
      hostname: 'public.example',
      host: 'public.example',
      protocol: 'http:',
      port: '',
    });
    expect(calls.map((call) => call.hostname)).toEqual(['93.184.216.34']);
    expect(socket).toBeNull();
    expect(error!.message).toBe(
      'refused: connected to 127.0.0.1, a loopback address; live webhooks must reach a public address',
    );
    expect(received).toEqual([]);
  });
});

describe('guardedAgent', () => {
  it('carries requests to an allowed name, the name in Host', async () => {
    const agent = guardedAgent(webhookPolicy('sandbox', { resolver }));
    try {
      const response = await request(`http://receiver.test:${port}/hook`, { dispatcher: agent });
      expect(await response.body.text()).toBe('ok');
      expect(received).toEqual([{ host: `receiver.test:${port}`, url: '/hook' }]);
    } finally {
      await agent.close();
    }
  });

  it('rejects a refused request with the refusal itself, having connected nowhere', async () => {
    const agent = guardedAgent(webhookPolicy('live', { resolver }));
    try {
      for (const url of [
        `http://127.0.0.1:${port}/hook`,
        `http://0x7f000001:${port}/hook`,
        `http://receiver.test:${port}/`,
      ]) {
        const error = await request(url, { dispatcher: agent, method: 'POST', body: '{}' }).then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(error, url).toBeInstanceOf(DestinationRefusedError);
      }
      expect(connections).toBe(0);
    } finally {
      await agent.close();
    }
  });

  it('connects to an exact destination as written, on its port only', async () => {
    const exact = new ExactDestinations();
    exact.allow(`http://127.0.0.1:${port}/_fxgate/webhooks/v3`);
    const agent = guardedAgent(webhookPolicy('live', { resolver, exact }));
    try {
      const response = await request(`http://127.0.0.1:${port}/_fxgate/webhooks/v3/org/live`, { dispatcher: agent });
      expect(response.statusCode).toBe(200);
      await response.body.dump();
      const other = await request(`http://127.0.0.1:${port + 1}/metrics`, { dispatcher: agent }).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(other).toBeInstanceOf(DestinationRefusedError);
    } finally {
      await agent.close();
    }
  });
});
