/**
 * The error handler: every failure of every step leaves as the v3 envelope with the catalog's
 * status, type, retry strategy and details schema, plus the required headers. Unexpected
 * throws become 500 INTERNAL_ERROR (RETRY_WITH_BACKOFF on reads; CHECK_STATE_THEN_RETRY with
 * details.resourceId on writes: docs/contract.md#errors-status-rules) and never leak a stack, a
 * message or a path.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { newNonce, signApiToken } from '../../../src/lib/auth/jwt.js';
import { signRequest } from '../../../src/lib/auth/request-signature.js';
import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import type { ErrorCode } from '../../../src/lib/errors/v3-error-catalog.js';
import { newUuid } from '../../../src/lib/ids.js';
import { generateKeyFile, type LoadedKey, loadKey } from '../../../src/lib/keys/key-file.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { expectPipelineHeaders, expectV3Error, type ExpectV3ErrorOptions } from '../../support/v3-assertions.js';
import { TEST_ISSUER, type TestResponse, V3Harness } from '../../support/v3-harness.js';

const RESOURCE_ID = 'trd_0190b5a0c0de7000800000000000abcd';

let harness: V3Harness;
const log = new OperationLog();
let sandboxKey: LoadedKey;
let liveKey: LoadedKey;
let viewerKey: LoadedKey;
let fencedKey: LoadedKey;
let counter = 0;

beforeAll(async () => {
  harness = await V3Harness.start({
    operations: withTestOperations(log),
    core: { rateLimits: { reads: 1000, writes: 1000 } },
  });
  sandboxKey = await harness.createKey({ scopes: ['view', 'trade', 'withdraw'], mode: 'sandbox' });
  liveKey = await harness.createKey({ scopes: ['view', 'trade', 'withdraw'], mode: 'live' });
  viewerKey = await harness.createKey({ scopes: ['view'] });
  fencedKey = await harness.createKey({ scopes: ['view'], ipAllowlist: ['10.0.0.0/8'] });
});
afterAll(async () => harness?.close());

function nextKey(): string {
  counter += 1;
  return `eh-${counter}`;
}

const ECHO = JSON.stringify({ amount: '1.00', currency: 'USD' });

function post(
  path: string,
  key: LoadedKey = sandboxKey,
  extra: { body?: string; headers?: Record<string, string | undefined> } = {},
) {
  return harness.signed({ key, method: 'POST', path, idempotencyKey: nextKey(), ...extra });
}

/** GET /v3/fx/pairs with a token signed by hand (for expired and kid-less tokens). */
async function pairsWithToken(token: string, nonce: string, privateKey = sandboxKey.privateKey): Promise<TestResponse> {
  const signature = signRequest(privateKey, {
    method: 'GET',
    pathAndQuery: '/v3/fx/pairs',
    nonce,
    idempotencyKey: undefined,
    body: undefined,
  });
  return harness.send({
    path: '/v3/fx/pairs',
    headers: { authorization: `Bearer ${token}`, 'x-request-signature': signature, 'x-app-mode': 'SANDBOX' },
  });
}

describe('unexpected failures', () => {
  it('turns a throw on a read into 500 INTERNAL_ERROR, RETRY_WITH_BACKOFF, details {}', async () => {
    const response = await harness.signed({ key: sandboxKey, path: '/v3/fx/test/boom' });
    const error = expectV3Error(response, 'INTERNAL_ERROR', { write: false, details: {} });
    expect(error.retryStrategy).toBe('RETRY_WITH_BACKOFF');
    expect(error.type).toBe('INTERNAL_ERROR');
    expect(error.message).toBe('An internal error has occurred.');
  });

  it('leaks nothing of the thrown error: no stack, no message, no file paths', async () => {
    const response = await harness.signed({ key: sandboxKey, path: '/v3/fx/test/boom' });
    expect(response.status).toBe(500);
    expect(response.text).not.toMatch(/stack/i);
    expect(response.text).not.toMatch(/secret/i);
    expect(response.text).not.toContain('unexpected failure');
    expect(response.text).not.toMatch(/\.(ts|js)\b/);
    expect(response.text).not.toMatch(/\/(work|src|test|node_modules|home|usr)\//);
    expect(response.text).not.toMatch(/\bat \S+ \(/);
    expect(response.text).not.toMatch(/\bcause\b/);
  });

  it('answers HEAD on a failing read with 500 and the headers only', async () => {
    const response = await harness.signed({ key: sandboxKey, method: 'HEAD', path: '/v3/fx/test/boom' });
    expect(response.status).toBe(500);
    expect(response.text).toBe('');
    expectPipelineHeaders(response);
  });

  it('turns a throw on a write that named its resource into 500 CHECK_STATE_THEN_RETRY with details.resourceId', async () => {
    log.failNext('flaky', 1);
    const idempotencyKey = nextKey();
    const before = log.count('flaky');
    const failed = await harness.signed({ key: sandboxKey, method: 'POST', path: '/v3/fx/test/flaky', idempotencyKey });
    const error = expectV3Error(failed, 'INTERNAL_ERROR', { write: true, details: { resourceId: RESOURCE_ID } });
    expect(error.retryStrategy).toBe('CHECK_STATE_THEN_RETRY');
    expect(failed.text).not.toContain('database went away');
    expect(log.count('flaky')).toBe(before + 1);

    // The resource is absent, so the client retries with the SAME key, and it runs again
    // (docs/contract.md#errors-recovery).
    const retried = await harness.signed({
      key: sandboxKey,
      method: 'POST',
      path: '/v3/fx/test/flaky',
      idempotencyKey,
    });
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotency-replayed']).toBe('false');
    expect(log.count('flaky')).toBe(before + 2);
  });

  it('passes a cataloged error thrown by a handler through unchanged', async () => {
    const response = await post('/v3/fx/test/rejected');
    expectV3Error(response, 'WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH', { details: { expected: 'USD', received: 'EUR' } });
  });
});

interface ErrorCase {
  readonly code: ErrorCode;
  readonly send: () => Promise<TestResponse>;
  readonly options?: ExpectV3ErrorOptions;
}

const CASES: Record<string, ErrorCase> = {
  'unknown route': {
    code: 'ROUTE_NOT_FOUND',
    send: () => harness.send({ path: '/v3/fx/missing' }),
    options: { details: { method: 'GET', path: '/v3/fx/missing' } },
  },
  'malformed URL': { code: 'ROUTE_NOT_FOUND', send: () => harness.send({ path: '/v3/fx/test/items/%zz' }) },
  'wrong method': {
    code: 'METHOD_NOT_ALLOWED',
    send: () => harness.send({ method: 'PATCH', path: '/v3/fx/test/echo' }),
    options: { details: { method: 'PATCH', allowed: ['POST'] } },
  },
  'bad X-Request-Id': {
    code: 'VALIDATION_HEADER_FAILED',
    send: () => harness.send({ path: '/v3/fx/pairs', headers: { 'x-request-id': 'x'.repeat(200) } }),
  },
  'bad X-App-Mode': {
    code: 'VALIDATION_HEADER_FAILED',
    send: () => harness.signed({ key: sandboxKey, path: '/v3/fx/pairs', headers: { 'x-app-mode': 'STAGING' } }),
  },
  'text/plain body': {
    code: 'VALIDATION_CONTENT_TYPE',
    send: () =>
      harness.send({ method: 'POST', path: '/v3/fx/test/echo', body: ECHO, headers: { 'content-type': 'text/plain' } }),
    options: { details: {} },
  },
  'body over 8 KB': {
    code: 'VALIDATION_PAYLOAD_TOO_LARGE',
    send: () =>
      harness.send({
        method: 'POST',
        path: '/v3/fx/test/echo',
        body: ' '.repeat(8193),
        headers: { 'content-type': 'application/json' },
      }),
  },
  'no token': { code: 'AUTH_TOKEN_MISSING', send: () => harness.send({ path: '/v3/fx/pairs' }) },
  'not a bearer token': {
    code: 'AUTH_TOKEN_INVALID',
    send: () => harness.send({ path: '/v3/fx/pairs', headers: { authorization: 'Basic dXNlcjpwYXNz' } }),
  },
  'garbage token': {
    code: 'AUTH_TOKEN_INVALID',
    send: () => harness.send({ path: '/v3/fx/pairs', headers: { authorization: 'Bearer abc.def.ghi' } }),
  },
  'expired token': {
    code: 'AUTH_TOKEN_EXPIRED',
    send: async () => {
      const { token, nonce } = await signApiToken({
        privateKey: sandboxKey.privateKey,
        keyName: sandboxKey.file.name,
        issuer: TEST_ISSUER,
        lifetimeSeconds: 30,
        nowSeconds: Math.floor(Date.now() / 1000) - 120,
      });
      return pairsWithToken(token, nonce);
    },
  },
  'token without kid': {
    code: 'AUTH_API_KEY_MISSING',
    send: async () => {
      const nonce = newNonce();
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT', nonce })
        .setIssuer(TEST_ISSUER)
        .setSubject(sandboxKey.file.name)
        .setAudience(['developer-api'])
        .setIssuedAt()
        .setNotBefore('0s')
        .setExpirationTime('30s')
        .sign(sandboxKey.privateKey);
      return pairsWithToken(token, nonce);
    },
  },
  'unknown key': {
    code: 'AUTH_API_KEY_INVALID',
    send: () =>
      harness.signed({
        key: loadKey(generateKeyFile({ orgId: newUuid(), keyId: newUuid(), scopes: ['view'], mode: 'sandbox' })),
        path: '/v3/fx/pairs',
      }),
  },
  'missing signature': {
    code: 'AUTH_TOKEN_INVALID_CONFIG',
    send: () =>
      harness.signed({ key: sandboxKey, path: '/v3/fx/pairs', headers: { 'x-request-signature': undefined } }),
    options: { details: { reason: 'SIGNATURE_MISSING' } },
  },
  'malformed signature': {
    code: 'AUTH_TOKEN_INVALID_CONFIG',
    send: () =>
      harness.signed({ key: sandboxKey, path: '/v3/fx/pairs', headers: { 'x-request-signature': 'not-a-signature' } }),
    options: { details: { reason: 'SIGNATURE_MALFORMED' } },
  },
  'signature over another request': {
    code: 'AUTH_TOKEN_INVALID_CONFIG',
    send: async () => {
      const headers = await new V3RequestSigner(sandboxKey, { issuer: TEST_ISSUER }).headers({
        method: 'GET',
        pathAndQuery: '/v3/fx/pairs?x=1',
      });
      return harness.send({ path: '/v3/fx/pairs', headers });
    },
    options: { details: { reason: 'SIGNATURE_INVALID' } },
  },
  'live key declaring sandbox': {
    code: 'AUTH_API_KEY_SANDBOX_REQUIRED',
    send: () => harness.signed({ key: liveKey, path: '/v3/fx/pairs', headers: { 'x-app-mode': 'SANDBOX' } }),
  },
  'sandbox key declaring live': {
    code: 'AUTH_API_KEY_LIVE_REQUIRED',
    send: () => harness.signed({ key: sandboxKey, path: '/v3/fx/pairs', headers: { 'x-app-mode': undefined } }),
  },
  'address outside the allowlist': {
    code: 'AUTH_FORBIDDEN_IP',
    send: () => harness.signed({ key: fencedKey, path: '/v3/fx/pairs' }),
  },
  'sandbox-only operation in live mode': {
    code: 'SANDBOX_MODE_REQUIRED',
    send: () => post('/v3/fx/test/sandbox-only', liveKey),
  },
  'missing scope': {
    code: 'AUTH_INSUFFICIENT_SCOPE',
    send: () => post('/v3/fx/test/echo', viewerKey, { body: ECHO }),
    options: { details: { requiredScope: 'trade' } },
  },
  'missing Idempotency-Key': {
    code: 'IDEMPOTENCY_KEY_MISSING',
    send: () => harness.signed({ key: sandboxKey, method: 'POST', path: '/v3/fx/test/flaky' }),
    options: { details: { endpoint: 'POST /v3/fx/test/flaky' } },
  },
  'malformed Idempotency-Key': {
    code: 'IDEMPOTENCY_KEY_INVALID',
    send: () =>
      harness.signed({ key: sandboxKey, method: 'POST', path: '/v3/fx/test/flaky', idempotencyKey: 'k'.repeat(256) }),
    options: { details: {} },
  },
  'reused Idempotency-Key': {
    code: 'IDEMPOTENCY_MISMATCH',
    send: async () => {
      const idempotencyKey = nextKey();
      const first = await harness.signed({
        key: sandboxKey,
        method: 'POST',
        path: '/v3/fx/test/echo',
        body: ECHO,
        idempotencyKey,
      });
      expect(first.status).toBe(200);
      const other = JSON.stringify({ amount: '2.00', currency: 'USD' });
      return harness.signed({ key: sandboxKey, method: 'POST', path: '/v3/fx/test/echo', body: other, idempotencyKey });
    },
  },
  'malformed JSON': { code: 'VALIDATION_BODY_FAILED', send: () => post('/v3/fx/test/echo', sandboxKey, { body: '{' }) },
  'invalid body': {
    code: 'VALIDATION_BODY_FAILED',
    send: () => post('/v3/fx/test/echo', sandboxKey, { body: '{"amount":"-1","currency":"USD"}' }),
  },
  'invalid query': {
    code: 'VALIDATION_QUERY_FAILED',
    send: () => harness.signed({ key: sandboxKey, path: '/v3/fx/test/items/a?expand=x' }),
  },
  'business rule': { code: 'WITHDRAWAL_ADDRESS_CURRENCY_MISMATCH', send: () => post('/v3/fx/test/rejected') },
  'state conflict': {
    code: 'WITHDRAWAL_INSUFFICIENT_BALANCE',
    send: () => {
      log.failNext('conflict', 1);
      return post('/v3/fx/test/conflict');
    },
    options: { details: { requiredAmount: '10.00', availableAmount: '5.00', currency: 'USD' } },
  },
  'read failure': {
    code: 'INTERNAL_ERROR',
    send: () => harness.signed({ key: sandboxKey, path: '/v3/fx/test/boom' }),
    options: { write: false },
  },
  'write failure': {
    code: 'INTERNAL_ERROR',
    send: () => {
      log.failNext('flaky', 1);
      return post('/v3/fx/test/flaky');
    },
    options: { write: true, details: { resourceId: RESOURCE_ID } },
  },
};

describe('every error body is the envelope, with the catalog row and details schema of its code', () => {
  it.each(Object.entries(CASES))('%s', async (_name, errorCase) => {
    expectV3Error(await errorCase.send(), errorCase.code, errorCase.options);
  });

  it('includes 409 IDEMPOTENCY_IN_FLIGHT with its own Retry-After', async () => {
    const idempotencyKey = nextKey();
    const before = log.count('slow');
    const first = harness.signed({ key: sandboxKey, method: 'POST', path: '/v3/fx/test/slow', idempotencyKey });
    while (log.count('slow') === before) await new Promise((resolve) => setTimeout(resolve, 5));
    try {
      const second = await harness.signed({
        key: sandboxKey,
        method: 'POST',
        path: '/v3/fx/test/slow',
        idempotencyKey,
      });
      expectV3Error(second, 'IDEMPOTENCY_IN_FLIGHT', { details: {} });
    } finally {
      log.openGate();
    }
    expect((await first).status).toBe(200);
  });
});
