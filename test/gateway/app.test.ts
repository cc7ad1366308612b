/**
 * buildGatewayApp's upstream dispatcher: its own Pool by default, or one its caller gives it
 * (`upstreamDispatcher`), which then carries every upstream call and stays the caller's.
 */
import { type Dispatcher, Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';

import { buildGatewayApp } from '../../src/gateway/app.js';
import { RecordingUpstream } from './recording-upstream.js';

describe('the gateway with a dispatcher of its caller', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('sends the passthrough and the readiness probe through it, and leaves it open on close', async () => {
    const upstream = await RecordingUpstream.start();
    cleanups.push(() => upstream.close());
    upstream.answerFor = (sent) => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: sent.url === '/healthz' ? '{"status":"ok"}' : '{"data":[]}',
    });
    const pool = new Pool(upstream.url);
    cleanups.push(() => pool.close());
    const seen: string[] = [];
    const counting: Dispatcher = pool.compose((dispatch) => (options, handler) => {
      seen.push(`${options.method} ${options.path}`);
      return dispatch(options, handler);
    });

    const app = await buildGatewayApp({ upstreamUrl: upstream.url, logLevel: 'silent', upstreamDispatcher: counting });
    expect((await app.inject('/v3/fx/pairs')).statusCode).toBe(200);
    expect((await app.inject('/readyz')).statusCode).toBe(200);
    await app.close();

    expect(seen).toEqual(['GET /v3/fx/pairs', 'GET /healthz']);
    expect(pool.closed).toBe(false);
    const after = await pool.request({ method: 'GET', path: '/healthz' });
    expect(after.statusCode).toBe(200);
    await after.body.dump();
  });
});

describe('the upstream deadline', () => {
  it('is refused when shorter than a timeout it contains', async () => {
    await expect(
      buildGatewayApp({ upstreamUrl: 'http://127.0.0.1:1', logLevel: 'silent', timeoutMs: 2_000, deadlineMs: 1_000 }),
    ).rejects.toThrow(/deadline \(1000 ms\) must be at least/);
    await expect(
      buildGatewayApp({
        upstreamUrl: 'http://127.0.0.1:1',
        logLevel: 'silent',
        connectTimeoutMs: 3_000,
        timeoutMs: 1_000,
        deadlineMs: 2_000,
      }),
    ).rejects.toThrow(RangeError);
  });
});
