import { afterEach, describe, expect, it } from 'vitest';
import { buildGatewayApp } from '../../src/gateway/app.js';
import { RecordingUpstream } from './recording-upstream.js';

describe('gateway health', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('is live and ready while the upstream answers its /healthz', async () => {
    const upstream = await RecordingUpstream.start();
    cleanups.push(() => upstream.close());
    const app = await buildGatewayApp({ upstreamUrl: upstream.url, logLevel: 'silent' });
    cleanups.push(() => app.close());
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });

  it('is live but not ready when the upstream is gone', async () => {
    const upstream = await RecordingUpstream.start();
    await upstream.close();
    const app = await buildGatewayApp({ upstreamUrl: upstream.url, logLevel: 'silent' });
    cleanups.push(() => app.close());
    expect((await app.inject('/healthz')).statusCode).toBe(200);
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'unavailable' });
  });
});
