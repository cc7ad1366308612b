import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildGatewayApp, LEGACY_NOT_CONFIGURED_MESSAGE } from '../../../src/gateway/app.js';
import { RecordingUpstream } from '../recording-upstream.js';

describe('a gateway built without the legacy options (a /v3-only gateway)', () => {
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
  ] as const)(
    '%s %s answers 501 in the legacy envelope, saying so, without calling the upstream',
    async (method, url) => {
      const response = await app.inject({ method, url, payload: method === 'POST' ? { amount: 1 } : undefined });
      expect(response.statusCode).toBe(501);
      expect(response.json()).toEqual({ status: 'error', message: LEGACY_NOT_CONFIGURED_MESSAGE });
      expect(upstream.requests).toEqual([]);
    },
  );
});
