import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGatewayApp } from '../../../src/gateway/app.js';
import { RecordingUpstream } from '../recording-upstream.js';

describe('legacy routes before their translation exists', () => {
  let upstream: RecordingUpstream;
  let app: FastifyInstance;
  beforeAll(async () => {
    upstream = await RecordingUpstream.start();
    app = await buildGatewayApp({ upstreamUrl: upstream.url, logLevel: 'silent' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it.each([
    ['GET', '/v1/balances'],
    ['POST', '/v1/trade'],
    ['GET', '/v2/trades?page=2&limit=5'],
    ['POST', '/v2/withdrawal'],
    ['GET', '/v2'],
  ] as const)('%s %s answers 501 in the legacy envelope without calling the upstream', async (method, url) => {
    const response = await app.inject({ method, url, payload: method === 'POST' ? { amount: 1 } : undefined });
    expect(response.statusCode).toBe(501);
    expect(response.json()).toEqual({ status: 'error', message: 'This legacy operation is not available yet on this gateway' });
    expect(upstream.requests).toEqual([]);
  });
});
