/**
 * The v3 reference on a stand-alone core: GET /v3/openapi.json without authentication, the same
 * document the code generates; another method is the v3 405; /docs lists v3 under a
 * Content-Security-Policy of this origin only, with the renderer served from node_modules.
 */
import { readFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { coreV3Document } from '../../../src/core/openapi/declared-operations.js';
import { REFERENCE_PAGE_CSP, rendererBundlePath } from '../../../src/lib/openapi/reference-page.js';
import { V3Harness } from '../../support/v3-harness.js';

describe('the v3 reference served by the core', () => {
  let harness: V3Harness;
  beforeAll(async () => {
    harness = await V3Harness.start();
  });
  afterAll(async () => harness?.close());

  it('serves the generated document at /v3/openapi.json without authentication', async () => {
    const response = await harness.send({ path: '/v3/openapi.json' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['x-request-id']).toMatch(/^req_/);
    expect(response.json()).toEqual(JSON.parse(JSON.stringify(coreV3Document())));
  });

  it('answers another method with the v3 405 and Allow, before any authentication', async () => {
    const response = await harness.send({
      method: 'POST',
      path: '/v3/openapi.json',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.json()).toEqual({
      error: {
        code: 'METHOD_NOT_ALLOWED',
        type: 'VALIDATION_ERROR',
        message: expect.any(String),
        retryStrategy: 'FIX_AND_RESUBMIT',
        details: { method: 'POST', allowed: ['GET', 'HEAD'] },
      },
    });
  });

  it('serves /docs over the v3 document, scripts from this origin only', async () => {
    const page = await harness.send({ path: '/docs' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(REFERENCE_PAGE_CSP);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const config = /<script id="fxgate-reference-config" type="application\/json">(.*?)<\/script>/s.exec(page.text);
    expect(JSON.parse(config![1]!)).toEqual({
      sources: [{ title: 'v3', slug: 'v3', url: '/v3/openapi.json', default: true }],
    });
    // Every script is a file of this origin; none is inline, none from elsewhere.
    const scripts = [...page.text.matchAll(/<script([^>]*)>/g)].map((match) => match[1]!);
    expect(scripts.filter((attributes) => !attributes.includes('application/json'))).toEqual([
      ' src="/docs/scalar.js"',
      ' src="/docs/init.js"',
    ]);
    expect(page.text).not.toMatch(/https?:\/\//);
  });

  it('serves the renderer bundle from node_modules and the page script', async () => {
    const bundle = await harness.send({ path: '/docs/scalar.js' });
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(bundle.text).toBe(readFileSync(rendererBundlePath(), 'utf8'));
    const init = await harness.send({ path: '/docs/init.js' });
    expect(init.text).toContain('createApiReference');
    expect(init.headers['content-security-policy']).toBe(REFERENCE_PAGE_CSP);
  });

  it('answers another method on /docs with the v3 404', async () => {
    const response = await harness.send({ method: 'DELETE', path: '/docs' });
    expect(response.status).toBe(404);
    expect(response.json<{ error: { code: string } }>().error.code).toBe('ROUTE_NOT_FOUND');
  });
});
