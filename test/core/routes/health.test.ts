/**
 * The core's /healthz (liveness) and /readyz on the v3 harness's real database and store: ready
 * while both answer, and 503 `draining` from the process's stop signal on while everything else,
 * liveness included, is still served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { V3Harness } from '../../support/v3-harness.js';

describe('the core health routes', () => {
  let harness: V3Harness;
  let draining = false;
  beforeAll(async () => {
    harness = await V3Harness.start({ core: { draining: () => draining } });
  });
  afterAll(async () => harness?.close());

  it('are live and ready, then not ready from the stop signal on while still live and serving', async () => {
    expect((await harness.app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await harness.app.inject('/readyz');
    expect([ready.statusCode, ready.json()]).toEqual([200, { status: 'ready' }]);
    draining = true;
    const drained = await harness.app.inject('/readyz');
    expect([drained.statusCode, drained.json()]).toEqual([503, { status: 'draining' }]);
    expect((await harness.app.inject('/healthz')).statusCode).toBe(200);
    expect((await harness.app.inject('/v3/openapi.json')).statusCode).toBe(200);
  });
});
