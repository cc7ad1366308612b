/**
 * Paths under /v1 and /v2 that the router cannot even decode (a bad percent-escape), or that
 * escape a `/` inside a segment, get their own generation's "not found": the legacy table's
 * ROUTE_NOT_FOUND row (v2 404, v1 400 "Route not found", with v1's deprecation headers), never
 * the v3 envelope, and nothing is sent to v3. Against a real gateway on loopback.
 */
import { Client } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { buildGatewayApp } from '../../../src/gateway/app.js';
import { RecordingUpstream } from '../recording-upstream.js';
import { ScriptedGateway } from '../scripted-gateway.js';

const ROUTE_NOT_FOUND = { status: 'error', message: 'Route not found' };

let gw: ScriptedGateway;

beforeAll(async () => {
  gw = await ScriptedGateway.start();
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(() => {
  gw.upstream.requests.length = 0;
});

/** Sends the path exactly as written (undici's request(url) would normalise it first). */
async function send(base: string, method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}) {
  const client = new Client(base);
  try {
    const response = await client.request({ method, path, headers, ...(method === 'POST' ? { body: '{}' } : {}) });
    return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
  } finally {
    await client.close();
  }
}

describe('a path the router cannot decode', () => {
  it.each([
    ['v2', 'GET', '/v2/brokerage/%zz/balances', 404],
    ['v2', 'POST', '/v2/brokerage/%zz/trade', 404],
    ['v2', 'GET', '/v2/%E0%A4%A', 404],
    ['v1', 'GET', '/v1/brokerage/%zz/trades', 400],
    ['v1', 'POST', '/v1/brokerage/x%zzy/generate_quote', 400],
  ] as const)(
    "%s %s %s: the generation's own not-found, nothing sent to v3",
    async (generation, method, path, status) => {
      const signed = {
        authorization: `Bearer ${gw.token()}`,
        'x-app-mode': 'SANDBOX',
        'content-type': 'application/json',
      };
      const response = await send(gw.url, method, path, signed);
      expect(response.status).toBe(status);
      expect(JSON.parse(response.text)).toEqual(ROUTE_NOT_FOUND);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['x-request-id']).toBeDefined();
      if (generation === 'v1') expect(response.headers.sunset).toBe('Thu, 31 Dec 2026 23:59:59 GMT');
      else expect(response.headers.sunset).toBeUndefined();
      expect(gw.upstream.requests).toEqual([]);
    },
  );

  it('/v1%zz is under no generation: the v3 not-found envelope', async () => {
    const response = await send(gw.url, 'GET', '/v1%zz');
    expect(response.status).toBe(404);
    expect(JSON.parse(response.text)).toMatchObject({ error: { code: 'ROUTE_NOT_FOUND' } });
  });
});

describe('an escaped / or backslash in a legacy path', () => {
  it.each([
    ['/v1/brokerage/x%2Fy/trades', 400],
    ['/v1/brokerage/{org}%2F/trades', 400],
    ['/v2/brokerage/x%5Cy/balances', 404],
    ['/v2/brokerage/..%2F../balances', 404],
  ] as const)("%s: the generation's own not-found, nothing sent to v3", async (template, status) => {
    const path = template.replace('{org}', gw.key.file.orgId);
    const response = await send(gw.url, 'GET', path, {
      authorization: `Bearer ${gw.token()}`,
      'x-app-mode': 'SANDBOX',
    });
    expect(response.status).toBe(status);
    expect(JSON.parse(response.text)).toEqual(ROUTE_NOT_FOUND);
    expect(gw.upstream.requests).toEqual([]);
  });
});

describe('a gateway without the legacy options', () => {
  it('answers an undecodable /v1 or /v2 path as it answers every other one there: 501', async () => {
    const upstream = await RecordingUpstream.start();
    const app = await buildGatewayApp({ upstreamUrl: upstream.url, logLevel: 'silent' });
    try {
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      for (const path of ['/v2/brokerage/%zz/balances', '/v1/%zz']) {
        const response = await send(url, 'GET', path);
        expect(response.status, path).toBe(501);
        expect(JSON.parse(response.text)).toEqual({
          status: 'error',
          message: 'The v1 and v2 generations are not configured on this gateway',
        });
      }
      expect(upstream.requests).toEqual([]);
    } finally {
      await app.close();
      await upstream.close();
    }
  });
});
