/**
 * Step 6, idempotency of writes (docs/contract.md#idempotency-v3): required key, replay byte for
 * byte, mismatch, in-flight, which responses are stored, scope per org and environment, and failing
 * closed when the store is down. Runs on Redis and on the in-process store.
 */
import { createHash, randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RedisStore } from '../../../src/cli/store/redis-store.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { type StoreName, V3Harness } from '../../support/v3-harness.js';

const ECHO = '/v3/fx/test/echo';
const body = (amount: string) => JSON.stringify({ amount, currency: 'USD', metadata: { order: 'A-1' } });

describe.each<StoreName>(['redis', 'memory'])('idempotency on the %s store', (storeKind) => {
  let harness: V3Harness;
  let log: OperationLog;
  let key: LoadedKey;

  beforeAll(async () => {
    log = new OperationLog();
    harness = await V3Harness.start({
      storeKind,
      operations: withTestOperations(log),
      core: { rateLimits: { reads: 10_000, writes: 10_000 } },
    });
    key = await harness.createKey({ scopes: ['view', 'trade', 'withdraw'] });
  });
  afterAll(async () => harness?.close());

  const post = (idempotencyKey: string | undefined, payload = body('10.00'), path = ECHO, signingKey = key) =>
    harness.signed({ key: signingKey, method: 'POST', path, body: payload, idempotencyKey });

  it('428 IDEMPOTENCY_KEY_MISSING names the endpoint', async () => {
    const response = await post(undefined);
    expect(response.status).toBe(428);
    expect(response.json()).toEqual({
      error: {
        code: 'IDEMPOTENCY_KEY_MISSING',
        type: 'VALIDATION_ERROR',
        message: expect.any(String),
        retryStrategy: 'FIX_AND_RESUBMIT',
        details: { endpoint: 'POST /v3/fx/test/echo' },
      },
    });
  });

  it.each(['', 'a'.repeat(256), 'has space', 'ümlaut', 'semi;colon'])(
    '400 IDEMPOTENCY_KEY_INVALID for %j',
    async (bad) => {
      const response = await post(bad);
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_KEY_INVALID', details: {} } });
    },
  );

  it('accepts the whole allowed alphabet up to 255 characters', async () => {
    const response = await post(`Az09-_.:${'x'.repeat(247)}`);
    expect(response.status).toBe(200);
  });

  it('replays the first response byte for byte and does not run the handler again', async () => {
    const idem = randomUUID();
    const first = await post(idem);
    const calls = log.count('echo');
    const second = await post(idem);
    expect(first.status).toBe(200);
    expect(first.headers['idempotency-replayed']).toBe('false');
    expect(second.status).toBe(200);
    expect(second.headers['idempotency-replayed']).toBe('true');
    expect(second.text).toBe(first.text);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(log.count('echo')).toBe(calls);
  });

  it('422 IDEMPOTENCY_MISMATCH with the original request hash when the body differs', async () => {
    const idem = randomUUID();
    const original = body('10.00');
    expect((await post(idem, original)).status).toBe(200);
    const response = await post(idem, body('10.01'));
    const expectedHash = createHash('sha256').update(`POST\n${ECHO}\n`).update(original).digest('hex');
    expect(response.status).toBe(422);
    expect(response.json()).toEqual({
      error: {
        code: 'IDEMPOTENCY_MISMATCH',
        type: 'CONFLICT',
        message: expect.any(String),
        retryStrategy: 'FIX_AND_RESUBMIT',
        details: { originalRequestHash: `sha256:${expectedHash}` },
      },
    });
    expect(response.headers['idempotency-replayed']).toBeUndefined();
  });

  it('422 IDEMPOTENCY_MISMATCH when the same key is reused on another endpoint', async () => {
    const idem = randomUUID();
    expect((await post(idem)).status).toBe(200);
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/sandbox-only',
      idempotencyKey: idem,
    });
    expect(response.status).toBe(422);
  });

  it('409 IDEMPOTENCY_IN_FLIGHT with Retry-After while the first request runs, then replays', async () => {
    const idem = randomUUID();
    const first = harness.signed({ key, method: 'POST', path: '/v3/fx/test/slow', idempotencyKey: idem });
    await expect.poll(() => log.count('slow')).toBeGreaterThan(0);
    const during = await harness.signed({ key, method: 'POST', path: '/v3/fx/test/slow', idempotencyKey: idem });
    expect(during.status).toBe(409);
    expect(during.json()).toMatchObject({
      error: {
        code: 'IDEMPOTENCY_IN_FLIGHT',
        type: 'CONFLICT',
        retryStrategy: 'WAIT_THEN_RETRY_SAME_KEY',
        details: {},
      },
    });
    expect(Number(during.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    log.openGate();
    expect((await first).status).toBe(200);
    const after = await harness.signed({ key, method: 'POST', path: '/v3/fx/test/slow', idempotencyKey: idem });
    expect(after.headers['idempotency-replayed']).toBe('true');
    expect(log.count('slow')).toBe(1);
  });

  it('100 concurrent requests with one key run the handler once', async () => {
    const idem = randomUUID();
    const before = log.count('echo');
    const responses = await Promise.all(Array.from({ length: 100 }, () => post(idem, body('77.00'))));
    expect(log.count('echo') - before).toBe(1);
    const ok = responses.filter((r) => r.status === 200);
    const inFlight = responses.filter((r) => r.status === 409);
    expect(ok.length + inFlight.length).toBe(100);
    expect(new Set(ok.map((r) => r.text)).size).toBe(1);
  });

  it('does not store a 5xx: the retry with the same key runs again', async () => {
    const idem = randomUUID();
    log.failNext('flaky', 1);
    const failed = await harness.signed({ key, method: 'POST', path: '/v3/fx/test/flaky', idempotencyKey: idem });
    expect(failed.status).toBe(500);
    expect(failed.json()).toMatchObject({
      error: {
        code: 'INTERNAL_ERROR',
        retryStrategy: 'CHECK_STATE_THEN_RETRY',
        details: { resourceId: 'trd_0190b5a0c0de7000800000000000abcd' },
      },
    });
    const retried = await harness.signed({ key, method: 'POST', path: '/v3/fx/test/flaky', idempotencyKey: idem });
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotency-replayed']).toBe('false');
  });

  it('does not store a 409: the retry with the same key runs again', async () => {
    const idem = randomUUID();
    log.failNext('conflict', 1);
    const refused = await harness.signed({ key, method: 'POST', path: '/v3/fx/test/conflict', idempotencyKey: idem });
    expect(refused.status).toBe(409);
    const retried = await harness.signed({ key, method: 'POST', path: '/v3/fx/test/conflict', idempotencyKey: idem });
    expect(retried.status).toBe(200);
  });

  it('stores a 422 business error and replays it without Idempotency-Replayed', async () => {
    const idem = randomUUID();
    const first = await harness.signed({ key, method: 'POST', path: '/v3/fx/test/rejected', idempotencyKey: idem });
    const calls = log.count('rejected');
    const second = await harness.signed({ key, method: 'POST', path: '/v3/fx/test/rejected', idempotencyKey: idem });
    expect(first.status).toBe(422);
    expect(second.status).toBe(422);
    expect(second.text).toBe(first.text);
    expect(second.headers['idempotency-replayed']).toBeUndefined();
    expect(log.count('rejected')).toBe(calls);
  });

  it('stores a 400 validation failure: the same bad request replays it', async () => {
    const idem = randomUUID();
    const bad = JSON.stringify({ amount: '-1', currency: 'USD' });
    const first = await post(idem, bad);
    expect(first.status).toBe(400);
    expect((await post(idem, bad)).text).toBe(first.text);
    expect((await post(idem, body('1.00'))).status).toBe(422);
  });

  it('scopes keys per org and per environment', async () => {
    const idem = randomUUID();
    const otherOrg = await harness.createKey({ scopes: ['trade'] });
    const sameOrgLive = await harness.createKey({ scopes: ['trade'], mode: 'live', orgId: key.file.orgId });
    const before = log.count('echo');
    expect((await post(idem, body('1.00'))).status).toBe(200);
    expect((await post(idem, body('2.00'), ECHO, otherOrg)).status).toBe(200);
    expect((await post(idem, body('3.00'), ECHO, sameOrgLive)).status).toBe(200);
    expect(log.count('echo') - before).toBe(3);
  });

  it('ignores Idempotency-Key on reads', async () => {
    const idem = randomUUID();
    const first = await harness.signed({ key, path: '/v3/fx/pairs', idempotencyKey: idem });
    const second = await harness.signed({ key, path: '/v3/fx/pairs', idempotencyKey: idem });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers['idempotency-replayed']).toBeUndefined();
  });
});

describe('idempotency store down', () => {
  let harness: V3Harness;
  let key: LoadedKey;

  beforeAll(async () => {
    const deadStore = new RedisStore({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 200, commandTimeoutMs: 200 });
    harness = await V3Harness.start({ store: deadStore, operations: withTestOperations(new OperationLog()) });
    key = await harness.createKey({ scopes: ['view', 'trade'] });
  });
  afterAll(async () => harness?.close());

  it('writes fail closed with 503 IDEMPOTENCY_UNAVAILABLE', async () => {
    const response = await harness.signed({
      key,
      method: 'POST',
      path: ECHO,
      body: body('5.00'),
      idempotencyKey: randomUUID(),
    });
    expect(response.status).toBe(503);
    expect(response.json()).toEqual({
      error: {
        code: 'IDEMPOTENCY_UNAVAILABLE',
        type: 'INTERNAL_ERROR',
        message: expect.any(String),
        retryStrategy: 'WAIT_THEN_RETRY_SAME_KEY',
        details: {},
      },
    });
  });

  it('reads go on', async () => {
    const response = await harness.signed({ key, path: '/v3/fx/pairs' });
    expect(response.status).toBe(200);
  });
});
