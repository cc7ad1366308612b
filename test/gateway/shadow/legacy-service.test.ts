/**
 * The legacy service's client, for a mirrored read: the request as the client sent it under the
 * base URL's path, with Via and X-Forwarded-For added and no body; the whole answer, or a
 * rejection when it is too slow, too large, or refused. And the base URL it accepts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';

import {
  cameThroughGateway,
  InvalidLegacyServiceUrlError,
  LegacyService,
  LegacyTimeoutError,
  MAX_COMPARED_BODY_BYTES,
} from '../../../src/gateway/shadow/legacy-service.js';
import { freePortUrl } from './shadow-setup.js';

const servers: Server[] = [];
const services: LegacyService[] = [];

async function serve(
  answer: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    seen.push(request);
    answer(request, response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function service(url: string): LegacyService {
  const created = new LegacyService({ url, connectTimeoutMs: 1_000, timeoutMs: 5_000 });
  services.push(created);
  return created;
}

/** What the client sent, as fastify hands it on. */
function clientRequest(url: string, headers: Record<string, string> = {}): FastifyRequest {
  return {
    url,
    headers: { host: 'gateway.example', authorization: 'Bearer token-of-the-client', ...headers },
    ip: '203.0.113.7',
  } as unknown as FastifyRequest;
}

afterEach(async () => {
  for (const created of services.splice(0)) await created.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('LegacyService.mirror', () => {
  it('sends the read as it came under the base path, adding Via and X-Forwarded-For, and returns the whole answer', async () => {
    const legacy = await serve((_request, response) =>
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"error"}'),
    );
    const answer = await service(`${legacy.url}/legacy-api/`).mirror(
      clientRequest('/v2/brokerage/o/trades?page=2', { via: '1.1 edge', 'content-length': '0' }),
      1_000,
    );
    expect(answer).toEqual({ status: 404, body: Buffer.from('{"status":"error"}') });
    const [seen] = legacy.seen;
    expect(seen!.url).toBe('/legacy-api/v2/brokerage/o/trades?page=2');
    expect(seen!.method).toBe('GET');
    expect(seen!.headers).toMatchObject({
      authorization: 'Bearer token-of-the-client',
      via: '1.1 edge, 1.1 fxgate',
      'x-forwarded-for': '203.0.113.7',
      host: new URL(legacy.url).host,
    });
    expect(seen!.headers['content-length']).toBeUndefined();
  });

  it('gives up after the timeout, on an answer larger than it keeps, and on a service that is not there', async () => {
    const silent = await serve(() => undefined);
    await expect(service(silent.url).mirror(clientRequest('/v1/brokerage/o/balances'), 200)).rejects.toBeInstanceOf(
      LegacyTimeoutError,
    );
    const huge = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(Buffer.alloc(MAX_COMPARED_BODY_BYTES + 1, 0x20));
    });
    await expect(service(huge.url).mirror(clientRequest('/v1/brokerage/o/balances'), 5_000)).rejects.toThrow(
      /larger than/,
    );
    await expect(
      service(await freePortUrl()).mirror(clientRequest('/v1/brokerage/o/balances'), 1_000),
    ).rejects.toThrow();
  });
});

describe('the legacy service URL', () => {
  it.each(['ftp://legacy', 'not a url', 'http://user:secret@legacy', 'http://legacy/?x=1'])('refuses %s', (url) => {
    expect(() => new LegacyService({ url, connectTimeoutMs: 1, timeoutMs: 1 })).toThrow(InvalidLegacyServiceUrlError);
  });
});

describe('cameThroughGateway', () => {
  it.each([
    [undefined, false],
    ['1.1 edge', false],
    ['1.1 fxgate', true],
    ['1.0 a, 1.1 fxgate', true],
    [['1.1 a', '1.1 fxgate'], true],
    ['1.1 fxgate-other', false],
  ] as const)('%j -> %s', (via, expected) => {
    expect(cameThroughGateway(via as string | string[] | undefined)).toBe(expected);
  });
});
