/**
 * Step 1, request context: X-Request-Id (echoed or generated), X-Trace-Id (continuing a W3C
 * traceparent), X-Request-Timestamp, and the headers every response carries whatever its status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { expectGeneratedRequestId, expectPipelineHeaders, expectV3Error } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

let harness: V3Harness;
let key: LoadedKey;

beforeAll(async () => {
  harness = await V3Harness.start({
    operations: withTestOperations(new OperationLog()),
    core: { rateLimits: { reads: 1000, writes: 1000 } },
  });
  key = await harness.createKey({ scopes: ['view', 'trade'] });
});
afterAll(async () => harness?.close());

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe('X-Request-Id', () => {
  it.each([
    ['a client id', 'client-req-1'],
    ['every allowed character', 'Az09._:-'],
    ['128 characters', 'r'.repeat(128)],
    ['a single character', 'x'],
  ])('echoes %s on success', async (_label, id) => {
    const response = await harness.signed({ key, path: '/v3/fx/pairs', headers: { 'x-request-id': id } });
    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toBe(id);
    expectPipelineHeaders(response);
  });

  it('echoes a valid id on an error response too', async () => {
    const response = await harness.send({ path: '/v3/fx/pairs', headers: { 'x-request-id': 'err-req-7' } });
    expectV3Error(response, 'AUTH_TOKEN_MISSING');
    expect(response.headers['x-request-id']).toBe('err-req-7');
  });

  it('generates req_<32 hex> when absent, a new one per request', async () => {
    const first = await harness.signed({ key, path: '/v3/fx/pairs' });
    const second = await harness.signed({ key, path: '/v3/fx/pairs' });
    expect(first.status).toBe(200);
    expectGeneratedRequestId(first);
    expectGeneratedRequestId(second);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
  });

  it.each([
    ['too long (129 characters)', 'r'.repeat(129)],
    ['a space', 'abc def'],
    ['a slash', 'abc/def'],
    ['angle brackets', '<script>'],
    ['a quote', 'id"1'],
    ['empty', ''],
  ])('is 400 VALIDATION_HEADER_FAILED when %s, with a generated id and the other headers', async (_label, id) => {
    const response = await harness.signed({
      key,
      path: '/v3/fx/pairs',
      headers: { 'x-request-id': id, traceparent: TRACEPARENT },
    });
    expectV3Error(response, 'VALIDATION_HEADER_FAILED', {
      details: {
        header: 'X-Request-Id',
        issues: [{ path: 'X-Request-Id', code: 'invalid_format', message: expect.any(String) }],
      },
    });
    expectGeneratedRequestId(response);
    expect(response.headers['x-request-id']).not.toBe(id);
    expect(response.headers['x-trace-id']).toBe(TRACE_ID);
  });

  it('rejects a malformed id before authentication (unsigned gets 400, not 401)', async () => {
    const response = await harness.send({ path: '/v3/fx/pairs', headers: { 'x-request-id': 'bad id' } });
    expectV3Error(response, 'VALIDATION_HEADER_FAILED');
    expectGeneratedRequestId(response);
  });
});

describe('X-Trace-Id', () => {
  it('continues the trace of a valid traceparent', async () => {
    const response = await harness.signed({ key, path: '/v3/fx/pairs', headers: { traceparent: TRACEPARENT } });
    expect(response.status).toBe(200);
    expect(response.headers['x-trace-id']).toBe(TRACE_ID);
  });

  it('continues the trace on an error response too', async () => {
    const response = await harness.send({ path: '/v3/fx/nowhere', headers: { traceparent: TRACEPARENT } });
    expectV3Error(response, 'ROUTE_NOT_FOUND');
    expect(response.headers['x-trace-id']).toBe(TRACE_ID);
  });

  it('starts a new trace per request without traceparent', async () => {
    const first = await harness.signed({ key, path: '/v3/fx/pairs' });
    const second = await harness.signed({ key, path: '/v3/fx/pairs' });
    expect(first.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(second.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(second.headers['x-trace-id']).not.toBe(first.headers['x-trace-id']);
  });

  it.each([
    ['an all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-00f067aa0ba902b7-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-00f067aa0ba902b7-01`],
    ['garbage', 'not-a-traceparent'],
  ])('ignores a traceparent with %s and starts a new trace', async (_label, traceparent) => {
    const response = await harness.signed({ key, path: '/v3/fx/pairs', headers: { traceparent } });
    expect(response.status).toBe(200);
    expect(response.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(response.headers['x-trace-id']).not.toBe('0'.repeat(32));
    expect(response.headers['x-trace-id']).not.toBe(TRACE_ID);
    expect(response.headers['x-trace-id']).not.toBe(TRACE_ID.slice(1));
  });
});

describe('X-Request-Timestamp', () => {
  it('is when the request arrived, in ISO 8601 UTC with milliseconds', async () => {
    const before = Date.now();
    const response = await harness.signed({ key, path: '/v3/fx/pairs' });
    const after = Date.now();
    expectPipelineHeaders(response);
    const at = Date.parse(response.headers['x-request-timestamp']!);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
  });
});

describe('headers on every response', () => {
  it('200', async () => {
    const response = await harness.signed({ key, path: '/v3/fx/pairs' });
    expect(response.status).toBe(200);
    expectPipelineHeaders(response);
    expect(response.headers['ratelimit-limit']).toBe('1000');
  });

  it('200 on a write', async () => {
    const body = JSON.stringify({ amount: '1.00', currency: 'USD' });
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body,
      idempotencyKey: 'ctx-write-1',
    });
    expect(response.status).toBe(200);
    expectPipelineHeaders(response);
    expect(response.headers['ratelimit-limit']).toBe('1000');
  });

  it('400', async () => {
    expectV3Error(await harness.signed({ key, path: '/v3/fx/test/items/a?expand=bogus' }), 'VALIDATION_QUERY_FAILED');
  });

  it('401', async () => {
    expectV3Error(await harness.send({ path: '/v3/fx/pairs' }), 'AUTH_TOKEN_MISSING');
  });

  it('403', async () => {
    const viewer = await harness.createKey({ scopes: ['view'] });
    const body = JSON.stringify({ amount: '1.00', currency: 'USD' });
    const response = await harness.signed({
      key: viewer,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body,
      idempotencyKey: 'ctx-403',
    });
    expectV3Error(response, 'AUTH_INSUFFICIENT_SCOPE', { details: { requiredScope: 'trade' } });
  });

  it('404', async () => {
    expectV3Error(await harness.send({ path: '/v3/fx/missing' }), 'ROUTE_NOT_FOUND');
  });

  it('405', async () => {
    expectV3Error(await harness.send({ method: 'DELETE', path: '/v3/fx/pairs' }), 'METHOD_NOT_ALLOWED');
  });

  it('413', async () => {
    const response = await harness.send({
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: 'x'.repeat(9000),
      headers: { 'content-type': 'application/json' },
    });
    expectV3Error(response, 'VALIDATION_PAYLOAD_TOO_LARGE');
  });

  it('428', async () => {
    const body = JSON.stringify({ amount: '1.00', currency: 'USD' });
    expectV3Error(
      await harness.signed({ key, method: 'POST', path: '/v3/fx/test/echo', body }),
      'IDEMPOTENCY_KEY_MISSING',
      {
        details: { endpoint: 'POST /v3/fx/test/echo' },
      },
    );
  });

  it('500', async () => {
    expectV3Error(await harness.signed({ key, path: '/v3/fx/test/boom' }), 'INTERNAL_ERROR', { write: false });
  });
});
