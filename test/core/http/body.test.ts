/**
 * Step 3, the body: at most 8 KB (413 VALIDATION_PAYLOAD_TOO_LARGE, whether announced by
 * Content-Length or streamed chunked), decided before authentication; a write that carries a
 * body (or declares a type) must be application/json (400 VALIDATION_CONTENT_TYPE); an
 * operation without a body schema takes an empty body or `{}` only (the core's own such
 * operations: parameterless-body.test.ts).
 */
import { Readable } from 'node:stream';

import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { expectPipelineHeaders, expectV3Error } from '../../support/v3-assertions.js';
import { TEST_ISSUER, type TestResponse, V3Harness } from '../../support/v3-harness.js';

const LIMIT = 8192;

let harness: V3Harness;
let key: LoadedKey;
const log = new OperationLog();
let keyCounter = 0;

beforeAll(async () => {
  harness = await V3Harness.start({
    operations: withTestOperations(log),
    core: { rateLimits: { reads: 1000, writes: 1000 } },
  });
  key = await harness.createKey({ scopes: ['view', 'trade'] });
});
afterAll(async () => harness?.close());

function nextIdempotencyKey(): string {
  keyCounter += 1;
  return `body-${keyCounter}`;
}

/** A valid echo body of exactly `size` bytes (padding inside metadata). */
function echoBodyOfSize(size: number): string {
  const empty = JSON.stringify({ amount: '12.50', currency: 'USD', metadata: { pad: '' } });
  const body = JSON.stringify({ amount: '12.50', currency: 'USD', metadata: { pad: 'p'.repeat(size - empty.length) } });
  expect(Buffer.byteLength(body)).toBe(size);
  return body;
}

/** Sends `body` as a stream of chunks: undici uses Transfer-Encoding: chunked, no Content-Length. */
async function sendChunked(path: string, body: Buffer, headers: Record<string, string>): Promise<TestResponse> {
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let offset = 0; offset < body.length; offset += 1000) {
      yield body.subarray(offset, offset + 1000);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
  const response = await undiciRequest(`${harness.baseUrl}${path}`, {
    method: 'POST',
    headers,
    body: Readable.from(chunks()),
  });
  const text = await response.body.text();
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { status: response.statusCode, headers: flat, text, json: <T>() => JSON.parse(text) as T };
}

describe('size limit (8 KB)', () => {
  it('refuses 8193 bytes announced by Content-Length with 413, before auth (unsigned)', async () => {
    const before = log.count('echo');
    const response = await harness.send({
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: echoBodyOfSize(LIMIT + 1),
      headers: { 'content-type': 'application/json' },
    });
    expectV3Error(response, 'VALIDATION_PAYLOAD_TOO_LARGE', { details: {} });
    expect(log.count('echo')).toBe(before);
  });

  it('refuses a large declared Content-Length without credentials', async () => {
    const response = await harness.send({
      method: 'POST',
      path: '/v3/fx/test/flaky',
      body: Buffer.alloc(64 * 1024, 0x20),
      headers: { 'content-type': 'application/json' },
    });
    expectV3Error(response, 'VALIDATION_PAYLOAD_TOO_LARGE');
  });

  it('refuses 8193 bytes even from a correctly signed request', async () => {
    const body = echoBodyOfSize(LIMIT + 1);
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body,
      idempotencyKey: nextIdempotencyKey(),
    });
    expectV3Error(response, 'VALIDATION_PAYLOAD_TOO_LARGE');
  });

  it('refuses a chunked body without Content-Length once it passes 8 KB, before auth', async () => {
    const before = log.count('echo');
    const response = await sendChunked('/v3/fx/test/echo', Buffer.from(echoBodyOfSize(20_000)), {
      'content-type': 'application/json',
    });
    expectV3Error(response, 'VALIDATION_PAYLOAD_TOO_LARGE');
    expect(log.count('echo')).toBe(before);
  });

  it('refuses a chunked body of 8193 bytes', async () => {
    const response = await sendChunked('/v3/fx/test/echo', Buffer.from(echoBodyOfSize(LIMIT + 1)), {
      'content-type': 'application/json',
    });
    expectV3Error(response, 'VALIDATION_PAYLOAD_TOO_LARGE');
  });

  it('accepts exactly 8192 bytes: the request goes on to the handler', async () => {
    const body = echoBodyOfSize(LIMIT);
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body,
      idempotencyKey: nextIdempotencyKey(),
    });
    expect(response.status).toBe(200);
    expect(response.json<{ data: { metadata: { pad: string } } }>().data.metadata.pad).toHaveLength(
      JSON.parse(body).metadata.pad.length,
    );
  });

  it('accepts exactly 8192 bytes sent chunked', async () => {
    const body = Buffer.from(echoBodyOfSize(LIMIT));
    const idempotencyKey = nextIdempotencyKey();
    const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
    const headers = await signer.headers({ method: 'POST', pathAndQuery: '/v3/fx/test/echo', body, idempotencyKey });
    const response = await sendChunked('/v3/fx/test/echo', body, headers);
    expect(response.status).toBe(200);
    expectPipelineHeaders(response);
  });

  it('lets an unsigned 8192-byte body through the body step (then auth answers 401)', async () => {
    const response = await harness.send({
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: echoBodyOfSize(LIMIT),
      headers: { 'content-type': 'application/json' },
    });
    expectV3Error(response, 'AUTH_TOKEN_MISSING');
  });
});

describe('Content-Type', () => {
  const valid = JSON.stringify({ amount: '1.00', currency: 'USD' });

  it.each([
    ['text/plain', 'text/plain'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['application/xml', 'application/xml'],
    ['application/jsonx', 'application/jsonx'],
    ['application/json with a non-UTF-8 charset', 'application/json; charset=latin1'],
    ['multipart/form-data', 'multipart/form-data; boundary=x'],
  ])('refuses a body declared as %s with 400, signed or not', async (_label, contentType) => {
    const unsigned = await harness.send({
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: valid,
      headers: { 'content-type': contentType },
    });
    expectV3Error(unsigned, 'VALIDATION_CONTENT_TYPE', { details: {} });
    const signed = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: valid,
      idempotencyKey: nextIdempotencyKey(),
      headers: { 'content-type': contentType },
    });
    expectV3Error(signed, 'VALIDATION_CONTENT_TYPE', { details: {} });
  });

  it('refuses a body without Content-Type', async () => {
    const before = log.count('echo');
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: valid,
      idempotencyKey: nextIdempotencyKey(),
      headers: { 'content-type': undefined },
    });
    expectV3Error(response, 'VALIDATION_CONTENT_TYPE');
    expect(log.count('echo')).toBe(before);
  });

  it('refuses a declared non-JSON type on a bodyless write', async () => {
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/flaky',
      idempotencyKey: nextIdempotencyKey(),
      headers: { 'content-type': 'text/plain' },
    });
    expectV3Error(response, 'VALIDATION_CONTENT_TYPE');
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'Application/JSON',
  ])('accepts %s', async (contentType) => {
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: valid,
      idempotencyKey: nextIdempotencyKey(),
      headers: { 'content-type': contentType },
    });
    expect(response.status).toBe(200);
    expect(response.json()).toMatchObject({ data: { amount: '1.00', currency: 'USD' } });
  });

  it('accepts a bodyless POST without Content-Type on an operation that takes no body', async () => {
    const before = log.count('flaky');
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/flaky',
      idempotencyKey: nextIdempotencyKey(),
    });
    expect(response.status).toBe(200);
    expect(log.count('flaky')).toBe(before + 1);
    expect(response.json()).toMatchObject({ data: { ok: true } });
  });

  it('accepts a bodyless POST declaring application/json', async () => {
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/flaky',
      idempotencyKey: nextIdempotencyKey(),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
  });

  it('does not ask a read for a Content-Type', async () => {
    const response = await harness.signed({ key, path: '/v3/fx/pairs', headers: { 'content-type': 'text/plain' } });
    expect(response.status).toBe(200);
  });
});

describe('operations that take no parameters', () => {
  it.each(['{}', '{ }', '\n{}\n'])('run with the body %j', async (body) => {
    const before = log.count('flaky');
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/flaky',
      body,
      idempotencyKey: nextIdempotencyKey(),
    });
    expect(response.status, response.text).toBe(200);
    expect(log.count('flaky')).toBe(before + 1);
  });

  it.each<[string, Array<[string, string]>]>([
    ['{"a":1}', [['a', 'unrecognized_keys']]],
    ['null', [['', 'invalid_type']]],
    ['[]', [['', 'invalid_type']]],
    ['{', [['', 'invalid_json']]],
  ])('answer VALIDATION_BODY_FAILED to the body %s', async (body, issues) => {
    const before = log.count('flaky');
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/flaky',
      body,
      idempotencyKey: nextIdempotencyKey(),
    });
    const error = expectV3Error(response, 'VALIDATION_BODY_FAILED');
    expect(
      (error.details.issues as Array<{ path: string; code: string }>).map((issue) => [issue.path, issue.code]),
    ).toEqual(issues);
    expect(log.count('flaky')).toBe(before);
  });
});
