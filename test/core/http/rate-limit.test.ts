/**
 * Step 5, rate limits (docs/contract.md#rate-limits): GCRA per API key with separate read and write
 * cells; a request whose token proves no key is charged to its client address; every response
 * carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset; 429 RATE_LIMIT_EXCEEDED adds
 * Retry-After. A rate-limit store outage lets requests through (fail open).
 *
 * Client addresses are told apart through X-Forwarded-For from a trusted 127.0.0.1, so each
 * test has its own address cell.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RedisStore } from '../../../src/cli/store/redis-store.js';
import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { newUuid } from '../../../src/lib/ids.js';
import { generateKeyFile, type LoadedKey, loadKey } from '../../../src/lib/keys/key-file.js';
import type { NonceClaim } from '../../../src/lib/store/ephemeral-store.js';
import { testServices } from '../../support/services.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { testKeyPrefix } from '../../support/test-run.js';
import { expectPipelineHeaders, expectV3Error } from '../../support/v3-assertions.js';
import { TEST_ISSUER, type TestResponse, V3Harness } from '../../support/v3-harness.js';

const READS = 3;
const WRITES = 2;
/** The period is 10 s: a full bucket is at most 10 s away; one request at most ceil(10/3) s. */
const PERIOD_SECONDS = 10;

let harness: V3Harness;
const log = new OperationLog();
let addressCounter = 0;
let idempotencyCounter = 0;

beforeAll(async () => {
  harness = await V3Harness.start({
    operations: withTestOperations(log),
    core: { rateLimits: { reads: READS, writes: WRITES }, trustedProxies: ['127.0.0.1'] },
  });
});
afterAll(async () => harness?.close());

/** A client address of its own (TEST-NET-3), so address cells never leak between tests. */
function freshAddress(): string {
  addressCounter += 1;
  return `203.0.113.${addressCounter}`;
}

function read(key: LoadedKey, from?: string): Promise<TestResponse> {
  return harness.signed({ key, path: '/v3/fx/pairs', headers: from ? { 'x-forwarded-for': from } : {} });
}

function write(key: LoadedKey): Promise<TestResponse> {
  idempotencyCounter += 1;
  const body = JSON.stringify({ amount: '1.00', currency: 'USD' });
  return harness.signed({
    key,
    method: 'POST',
    path: '/v3/fx/test/echo',
    body,
    idempotencyKey: `rl-${idempotencyCounter}`,
  });
}

function remaining(response: TestResponse): string | undefined {
  return response.headers['ratelimit-remaining'];
}

function expectLimited(response: TestResponse, limit: number): void {
  expectV3Error(response, 'RATE_LIMIT_EXCEEDED', { details: {} });
  expect(response.headers['ratelimit-limit']).toBe(String(limit));
  expect(remaining(response)).toBe('0');
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(Math.ceil(PERIOD_SECONDS / limit));
  const reset = Number(response.headers['ratelimit-reset']);
  expect(reset).toBeGreaterThanOrEqual(retryAfter);
  expect(reset).toBeLessThanOrEqual(PERIOD_SECONDS);
}

describe('per API key', () => {
  it('lets three reads through with RateLimit-Remaining 2, 1, 0 and refuses the fourth with 429', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    const responses: TestResponse[] = [];
    for (let i = 0; i < READS; i += 1) responses.push(await read(key));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(responses.map(remaining)).toEqual(['2', '1', '0']);
    for (const response of responses) {
      expectPipelineHeaders(response);
      expect(response.headers['ratelimit-limit']).toBe(String(READS));
      expect(response.headers['retry-after']).toBeUndefined();
    }
    const resets = responses.map((r) => Number(r.headers['ratelimit-reset']));
    expect(resets[0]).toBeGreaterThanOrEqual(1);
    expect(resets[2]).toBeLessThanOrEqual(PERIOD_SECONDS);
    expect([...resets].sort((a, b) => a - b)).toEqual(resets);

    expectLimited(await read(key), READS);
  });

  it('keeps refusing while the bucket is empty', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    for (let i = 0; i < READS; i += 1) await read(key);
    expectLimited(await read(key), READS);
    expectLimited(await read(key), READS);
  });

  it('gives writes their own cell: two writes pass after the reads are exhausted, the third is 429', async () => {
    const key = await harness.createKey({ scopes: ['view', 'trade'] });
    for (let i = 0; i < READS; i += 1) expect((await read(key)).status).toBe(200);
    expectLimited(await read(key), READS);

    const first = await write(key);
    const second = await write(key);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([remaining(first), remaining(second)]).toEqual(['1', '0']);
    expect(first.headers['ratelimit-limit']).toBe(String(WRITES));

    const before = log.count('echo');
    const third = await write(key);
    expectLimited(third, WRITES);
    expect(log.count('echo')).toBe(before);
  });

  it('leaves the read cell untouched when the writes are exhausted', async () => {
    const key = await harness.createKey({ scopes: ['view', 'trade'] });
    await write(key);
    await write(key);
    expectLimited(await write(key), WRITES);
    const response = await read(key);
    expect(response.status).toBe(200);
    expect(remaining(response)).toBe('2');
  });

  it('gives two keys of the same organisation separate cells', async () => {
    const orgId = newUuid();
    const first = await harness.createKey({ scopes: ['view'], orgId });
    const second = await harness.createKey({ scopes: ['view'], orgId });
    for (let i = 0; i < READS; i += 1) await read(first);
    expectLimited(await read(first), READS);
    const other = await read(second);
    expect(other.status).toBe(200);
    expect(remaining(other)).toBe('2');
  });

  it('charges a key whatever address it comes from', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    expect(remaining(await read(key, freshAddress()))).toBe('2');
    expect(remaining(await read(key, freshAddress()))).toBe('1');
    expect(remaining(await read(key, freshAddress()))).toBe('0');
    expectLimited(await read(key, freshAddress()), READS);
  });

  it('charges failures after the token proved the key (replayed nonce, missing scope) to the key', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    const address = freshAddress();
    const headers = await new V3RequestSigner(key, { issuer: TEST_ISSUER }).headers({
      method: 'GET',
      pathAndQuery: '/v3/fx/pairs',
    });
    const first = await harness.send({ path: '/v3/fx/pairs', headers: { ...headers, 'x-forwarded-for': address } });
    expect(first.status).toBe(200);
    expect(remaining(first)).toBe('2');

    const replay = await harness.send({ path: '/v3/fx/pairs', headers: { ...headers, 'x-forwarded-for': address } });
    expectV3Error(replay, 'AUTH_TOKEN_INVALID');
    expect(remaining(replay)).toBe('1');

    // The address was never charged: its own cell is still full.
    const anonymous = await harness.send({ path: '/v3/fx/pairs', headers: { 'x-forwarded-for': address } });
    expectV3Error(anonymous, 'AUTH_TOKEN_MISSING');
    expect(remaining(anonymous)).toBe('2');

    const body = JSON.stringify({ amount: '1.00', currency: 'USD' });
    const forbidden = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body,
      idempotencyKey: 'rl-scope',
    });
    expectV3Error(forbidden, 'AUTH_INSUFFICIENT_SCOPE', { details: { requiredScope: 'trade' } });
    expect(remaining(forbidden)).toBe('1');
    expect(forbidden.headers['ratelimit-limit']).toBe(String(WRITES));
  });
});

describe('per client address when the token proves no key', () => {
  it('limits requests without a token: 401s, then 429', async () => {
    const address = freshAddress();
    const responses: TestResponse[] = [];
    for (let i = 0; i < READS; i += 1)
      responses.push(await harness.send({ path: '/v3/fx/pairs', headers: { 'x-forwarded-for': address } }));
    for (const response of responses) expectV3Error(response, 'AUTH_TOKEN_MISSING');
    expect(responses.map(remaining)).toEqual(['2', '1', '0']);
    expectLimited(await harness.send({ path: '/v3/fx/pairs', headers: { 'x-forwarded-for': address } }), READS);
  });

  it('limits a garbage token per address: 401 AUTH_TOKEN_INVALID, then 429', async () => {
    const address = freshAddress();
    const headers = { authorization: 'Bearer not.a.jwt', 'x-forwarded-for': address };
    const responses: TestResponse[] = [];
    for (let i = 0; i < READS; i += 1) responses.push(await harness.send({ path: '/v3/fx/pairs', headers }));
    for (const response of responses) expectV3Error(response, 'AUTH_TOKEN_INVALID');
    expect(responses.map(remaining)).toEqual(['2', '1', '0']);
    expectLimited(await harness.send({ path: '/v3/fx/pairs', headers }), READS);
  });

  it('limits a token naming an unknown key per address: 401 AUTH_API_KEY_INVALID, then 429', async () => {
    const address = freshAddress();
    const stranger = loadKey(
      generateKeyFile({ orgId: newUuid(), keyId: newUuid(), scopes: ['view'], mode: 'sandbox' }),
    );
    const responses: TestResponse[] = [];
    for (let i = 0; i < READS; i += 1) responses.push(await read(stranger, address));
    for (const response of responses) expectV3Error(response, 'AUTH_API_KEY_INVALID');
    expect(responses.map(remaining)).toEqual(['2', '1', '0']);
    expectLimited(await read(stranger, address), READS);
  });

  it('limits writes without a proven key in the address write cell', async () => {
    const address = freshAddress();
    const send = () =>
      harness.send({
        method: 'POST',
        path: '/v3/fx/test/echo',
        body: '{}',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      });
    const first = await send();
    const second = await send();
    expectV3Error(first, 'AUTH_TOKEN_MISSING');
    expectV3Error(second, 'AUTH_TOKEN_MISSING');
    expect([remaining(first), remaining(second)]).toEqual(['1', '0']);
    expect(first.headers['ratelimit-limit']).toBe(String(WRITES));
    expectLimited(await send(), WRITES);
  });

  it('charges errors raised before authentication (400, 404, 405, 413) to the address, reads and writes apart', async () => {
    const address = freshAddress();
    const headers = { 'x-forwarded-for': address };
    const notFound = await harness.send({ path: '/v3/fx/nope', headers });
    expectV3Error(notFound, 'ROUTE_NOT_FOUND');
    const notAllowed = await harness.send({ path: '/v3/fx/test/echo', headers });
    expectV3Error(notAllowed, 'METHOD_NOT_ALLOWED');
    const badHeader = await harness.send({ path: '/v3/fx/pairs', headers: { ...headers, 'x-request-id': 'bad id' } });
    expectV3Error(badHeader, 'VALIDATION_HEADER_FAILED');
    expect([notFound, notAllowed, badHeader].map(remaining)).toEqual(['2', '1', '0']);
    expectLimited(await harness.send({ path: '/v3/fx/nope', headers }), READS);

    const writeNotAllowed = await harness.send({ method: 'DELETE', path: '/v3/fx/pairs', headers });
    expectV3Error(writeNotAllowed, 'METHOD_NOT_ALLOWED');
    expect(writeNotAllowed.headers['ratelimit-limit']).toBe(String(WRITES));
    const tooLarge = await harness.send({
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: 'x'.repeat(9000),
      headers: { ...headers, 'content-type': 'application/json' },
    });
    expectV3Error(tooLarge, 'VALIDATION_PAYLOAD_TOO_LARGE');
    expect([writeNotAllowed, tooLarge].map(remaining)).toEqual(['1', '0']);
    expectLimited(await harness.send({ method: 'POST', path: '/v3/fx/nope', headers }), WRITES);
  });

  it('charges a valid token with a forged signature to the address, not to the key', async () => {
    const key = await harness.createKey({ scopes: ['view'] });
    const address = freshAddress();
    const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
    const forged = async () => {
      // A fresh, valid token; the signature covers another path, so it does not verify here.
      const headers = await signer.headers({ method: 'GET', pathAndQuery: '/v3/fx/test/items/other' });
      return harness.send({ path: '/v3/fx/pairs', headers: { ...headers, 'x-forwarded-for': address } });
    };
    const responses: TestResponse[] = [];
    for (let i = 0; i < READS; i += 1) responses.push(await forged());
    for (const response of responses) {
      expectV3Error(response, 'AUTH_TOKEN_INVALID_CONFIG', { details: { reason: 'SIGNATURE_INVALID' } });
    }
    expect(responses.map(remaining)).toEqual(['2', '1', '0']);
    expectLimited(await forged(), READS);

    // The key's own budget is untouched, even from the exhausted address.
    const genuine = await read(key, address);
    expect(genuine.status).toBe(200);
    expect(remaining(genuine)).toBe('2');
  });

  it('does not let an exhausted address stop a proven key coming from it', async () => {
    const address = freshAddress();
    for (let i = 0; i < READS; i += 1)
      await harness.send({ path: '/v3/fx/pairs', headers: { 'x-forwarded-for': address } });
    expectLimited(await harness.send({ path: '/v3/fx/pairs', headers: { 'x-forwarded-for': address } }), READS);
    const key = await harness.createKey({ scopes: ['view'] });
    const response = await read(key, address);
    expect(response.status).toBe(200);
    expect(remaining(response)).toBe('2');
  });
});

describe('rate-limit store outage', () => {
  let outage: V3Harness;
  let key: LoadedKey;

  beforeAll(async () => {
    outage = await V3Harness.start({
      store: new RedisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 100, connectTimeoutMs: 100 }),
      operations: withTestOperations(new OperationLog()),
      core: { rateLimits: { reads: READS, writes: WRITES } },
    });
    key = await outage.createKey({ scopes: ['view', 'trade'] });
  });
  afterAll(async () => outage?.close());

  it('lets reads through beyond the limit, still with the rate-limit headers', async () => {
    for (let i = 0; i < READS + 2; i += 1) {
      const response = await outage.signed({ key, path: '/v3/fx/pairs' });
      expect(response.status).toBe(200);
      expectPipelineHeaders(response);
      expect(response.headers['ratelimit-limit']).toBe(String(READS));
      expect(response.headers['retry-after']).toBeUndefined();
    }
  });

  it('skips the nonce replay check for reads (the same token is accepted twice)', async () => {
    const headers = await new V3RequestSigner(key, { issuer: TEST_ISSUER }).headers({
      method: 'GET',
      pathAndQuery: '/v3/fx/pairs',
    });
    expect((await outage.send({ path: '/v3/fx/pairs', headers })).status).toBe(200);
    expect((await outage.send({ path: '/v3/fx/pairs', headers })).status).toBe(200);
  });

  it('never turns an unauthenticated client into a 429 either', async () => {
    for (let i = 0; i < READS + 2; i += 1)
      expectV3Error(await outage.send({ path: '/v3/fx/pairs' }), 'AUTH_TOKEN_MISSING');
  });

  it('still fails writes closed at the idempotency step (503 IDEMPOTENCY_UNAVAILABLE)', async () => {
    const body = JSON.stringify({ amount: '1.00', currency: 'USD' });
    const response = await outage.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body,
      idempotencyKey: 'outage-1',
    });
    expectV3Error(response, 'IDEMPOTENCY_UNAVAILABLE', { details: {} });
  });
});

describe('the charge of a proven key', () => {
  const CLAIM_HOLD_MS = 50;
  /** Real Redis underneath; every nonce claim is held for CLAIM_HOLD_MS, and the order of events is kept. */
  class ObservedStore extends RedisStore {
    readonly events: string[] = [];
    override async claimNonce(key: string, ttlMs: number): Promise<NonceClaim> {
      this.events.push('claim sent');
      await new Promise((resolve) => setTimeout(resolve, CLAIM_HOLD_MS));
      const claim = await super.claimNonce(key, ttlMs);
      this.events.push('claim answered');
      return claim;
    }
    override async rateLimit(input: Parameters<RedisStore['rateLimit']>[0]): ReturnType<RedisStore['rateLimit']> {
      this.events.push(`charge sent ${input.key.startsWith('rl:{key:') ? 'to the key' : 'to the address'}`);
      return super.rateLimit(input);
    }
  }
  let observed: ObservedStore;
  let own: V3Harness;

  beforeAll(async () => {
    observed = new ObservedStore({ url: testServices().redisUrl, keyPrefix: testKeyPrefix() });
    own = await V3Harness.start({
      operations: withTestOperations(new OperationLog()),
      store: observed,
      core: { rateLimits: { reads: 1, writes: 1 } },
    });
  });
  afterAll(async () => own?.close());

  it('goes to the store with the nonce claim, not a round trip after it, and a 429 still answers before a replay 401', async () => {
    const key = await own.createKey({ scopes: ['view'] });
    const headers = await new V3RequestSigner(key, { issuer: TEST_ISSUER }).headers({
      method: 'GET',
      pathAndQuery: '/v3/fx/pairs',
    });
    const first = await own.send({ path: '/v3/fx/pairs', headers });
    expect(first.status).toBe(200);
    // Before: claim sent, claim answered, charge sent.
    expect(observed.events).toEqual(['charge sent to the key', 'claim sent', 'claim answered']);

    // The same token again, over the limit of 1: both checks fail; the rate limit answers.
    const replay = await own.send({ path: '/v3/fx/pairs', headers });
    expectLimited(replay, 1);
  });
});
