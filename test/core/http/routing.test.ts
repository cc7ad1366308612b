/**
 * Step 2, routing: an unknown path is 404 ROUTE_NOT_FOUND and a known path asked with another
 * method is 405 METHOD_NOT_ALLOWED with `Allow`; both are decided before the body is read and
 * before the caller is authenticated. HEAD is served on every GET operation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { expectPipelineHeaders, expectV3Error } from '../../support/v3-assertions.js';
import { TEST_ISSUER, V3Harness } from '../../support/v3-harness.js';

let harness: V3Harness;
let key: LoadedKey;
const log = new OperationLog();

beforeAll(async () => {
  harness = await V3Harness.start({
    operations: withTestOperations(log),
    core: { rateLimits: { reads: 1000, writes: 1000 } },
  });
  key = await harness.createKey({ scopes: ['view', 'trade'] });
});
afterAll(async () => harness?.close());

describe('404 ROUTE_NOT_FOUND', () => {
  it.each([
    ['GET', '/v3/fx/nope', '/v3/fx/nope'],
    ['GET', '/v3/fx/pairs/EUR/extra', '/v3/fx/pairs/EUR/extra'],
    ['GET', '/v3/fx/test/items', '/v3/fx/test/items'],
    ['GET', '/v3/fx', '/v3/fx'],
    ['GET', '/v3/fx/nope?limit=10&x=y', '/v3/fx/nope'],
    ['POST', '/v3/fx/withdrawalz', '/v3/fx/withdrawalz'],
    ['DELETE', '/v3/fx/test/echo/extra', '/v3/fx/test/echo/extra'],
    ['GET', '/', '/'],
    ['GET', '/v2/brokerage/x/balances', '/v2/brokerage/x/balances'],
    ['PUT', '/totally/elsewhere?q=1', '/totally/elsewhere'],
  ])('%s %s without any credentials', async (method, url, path) => {
    const response = await harness.send({ method, path: url });
    expectV3Error(response, 'ROUTE_NOT_FOUND', { details: { method, path } });
  });

  it('is the same for a correctly signed request (auth plays no part)', async () => {
    const response = await harness.signed({ key, path: '/v3/fx/nope' });
    expectV3Error(response, 'ROUTE_NOT_FOUND', { details: { method: 'GET', path: '/v3/fx/nope' } });
  });

  it('is decided before the body is read: an oversized body to an unknown path is still 404', async () => {
    const response = await harness.send({
      method: 'POST',
      path: '/v3/fx/nope',
      body: 'x'.repeat(20_000),
      headers: { 'content-type': 'application/json' },
    });
    expectV3Error(response, 'ROUTE_NOT_FOUND', { details: { method: 'POST', path: '/v3/fx/nope' } });
  });

  it('is decided before Content-Type: a text/plain write to an unknown path is 404', async () => {
    const response = await harness.send({
      method: 'POST',
      path: '/v3/fx/nope',
      body: 'hi',
      headers: { 'content-type': 'text/plain' },
    });
    expectV3Error(response, 'ROUTE_NOT_FOUND');
  });

  it('covers an unknown path whose percent-encoding is malformed, in the v3 envelope', async () => {
    const response = await harness.send({ path: '/v3/fx/test/items/%zz' });
    expectV3Error(response, 'ROUTE_NOT_FOUND');
    expect(response.json<{ error: { details: { method: string } } }>().error.details.method).toBe('GET');
  });

  it('covers a path segment longer than the router accepts (no id is that long), not as a 500', async () => {
    const path = `/v3/fx/test/items/${'a'.repeat(150)}`;
    const response = await harness.signed({ key, path: `${path}?expand=all` });
    expectV3Error(response, 'ROUTE_NOT_FOUND', { details: { method: 'GET', path } });
  });

  it('answers HEAD on an unknown path with status and headers only', async () => {
    const response = await harness.send({ method: 'HEAD', path: '/v3/fx/nope' });
    expect(response.status).toBe(404);
    expect(response.text).toBe('');
    expectPipelineHeaders(response);
  });
});

describe('405 METHOD_NOT_ALLOWED', () => {
  it.each([
    ['POST', '/v3/fx/pairs', ['GET', 'HEAD']],
    ['PUT', '/v3/fx/pairs', ['GET', 'HEAD']],
    ['PATCH', '/v3/fx/pairs', ['GET', 'HEAD']],
    ['DELETE', '/v3/fx/pairs', ['GET', 'HEAD']],
    ['OPTIONS', '/v3/fx/pairs', ['GET', 'HEAD']],
    ['GET', '/v3/fx/test/echo', ['POST']],
    ['DELETE', '/v3/fx/test/echo', ['POST']],
    ['PUT', '/v3/fx/test/echo', ['POST']],
    ['POST', '/v3/fx/test/items/abc', ['GET', 'HEAD']],
    ['DELETE', '/v3/fx/test/items/abc', ['GET', 'HEAD']],
    ['PUT', '/v3/fx/test/boom', ['GET', 'HEAD']],
  ])('%s %s without credentials allows %j', async (method, path, allowed) => {
    const response = await harness.send({ method, path });
    expectV3Error(response, 'METHOD_NOT_ALLOWED', { details: { method, allowed } });
    expect(response.headers.allow).toBe(allowed.join(', '));
  });

  it('keeps its answer with a query string and a signed request', async () => {
    const response = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/pairs?limit=1',
      body: '{}',
      idempotencyKey: 'rt-405',
    });
    expectV3Error(response, 'METHOD_NOT_ALLOWED', { details: { method: 'POST', allowed: ['GET', 'HEAD'] } });
  });

  it('is decided before the body: an oversized body on a wrong method is 405, not 413', async () => {
    const response = await harness.send({
      method: 'PUT',
      path: '/v3/fx/test/echo',
      body: 'x'.repeat(20_000),
      headers: { 'content-type': 'application/json' },
    });
    expectV3Error(response, 'METHOD_NOT_ALLOWED', { details: { method: 'PUT', allowed: ['POST'] } });
  });

  it('never runs the handler', async () => {
    const before = log.count('echo');
    await harness.send({
      method: 'PUT',
      path: '/v3/fx/test/echo',
      body: '{"amount":"1","currency":"USD"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(log.count('echo')).toBe(before);
  });

  it('answers HEAD on a POST-only path with 405 and Allow: POST', async () => {
    const response = await harness.send({ method: 'HEAD', path: '/v3/fx/test/echo' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(response.text).toBe('');
    expectPipelineHeaders(response);
  });
});

describe('HEAD on a GET operation', () => {
  it('works when signed: 200, the GET headers, no body', async () => {
    const get = await harness.signed({ key, path: '/v3/fx/pairs' });
    const head = await harness.signed({ key, method: 'HEAD', path: '/v3/fx/pairs' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expectPipelineHeaders(head);
  });

  it('works on a parameterised path', async () => {
    const head = await harness.signed({ key, method: 'HEAD', path: '/v3/fx/test/items/itm_1?expand=all' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('is authenticated like GET: unsigned HEAD is 401', async () => {
    const head = await harness.send({ method: 'HEAD', path: '/v3/fx/pairs' });
    expect(head.status).toBe(401);
    expect(head.text).toBe('');
    expectPipelineHeaders(head);
  });

  it('needs a signature over the HEAD method: a GET signature does not verify', async () => {
    const headers = await new V3RequestSigner(key, { issuer: TEST_ISSUER }).headers({
      method: 'GET',
      pathAndQuery: '/v3/fx/pairs',
    });
    const head = await harness.send({ method: 'HEAD', path: '/v3/fx/pairs', headers });
    expect(head.status).toBe(401);
  });
});
