/**
 * The reference on the gateway: /v2/openapi.json and /v1/openapi.json without authentication
 * (v1's with its deprecation headers), another method answered in the generation's own "not
 * found", /v3/openapi.json through the passthrough, and /docs over the three documents; a
 * gateway without the legacy generations lists v3 alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { coreV3Document } from '../../../src/core/openapi/declared-operations.js';
import { buildGatewayApp } from '../../../src/gateway/app.js';
import { loadLegacyMappings } from '../../../src/gateway/legacy/declarations/mappings-loader.js';
import { buildLegacyDocument } from '../../../src/gateway/openapi/legacy-document.js';
import { REFERENCE_PAGE_CSP } from '../../../src/lib/openapi/reference-page.js';
import { LegacyHarness } from '../../support/legacy-harness.js';
import { sendTo } from '../../support/v3-harness.js';

const configOf = (html: string) =>
  JSON.parse(/<script id="fxgate-reference-config" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!) as {
    sources: Array<{ title: string; url: string }>;
  };

describe('the reference served by a gateway with the legacy generations', () => {
  let h: LegacyHarness;
  beforeAll(async () => {
    h = await LegacyHarness.start();
  });
  afterAll(async () => h?.close());

  it.each(['v2', 'v1'] as const)('serves the %s document without authentication', async (generation) => {
    const response = await h.send({ path: `/${generation}/openapi.json` });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['x-request-id']).toBeDefined();
    expect(response.json()).toEqual(
      JSON.parse(JSON.stringify(buildLegacyDocument(await loadLegacyMappings(), generation))),
    );
  });

  it("carries v1's deprecation headers, like every v1 answer", async () => {
    const response = await h.send({ path: '/v1/openapi.json' });
    expect(response.headers.deprecation).toMatch(/^@\d+$/);
    expect(response.headers.sunset).toBeDefined();
    expect(response.headers.link).toContain('rel="deprecation"');
  });

  it('answers another method in the generation\'s own "not found": v2 404, v1 400', async () => {
    const v2 = await h.send({
      method: 'POST',
      path: '/v2/openapi.json',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(v2.status).toBe(404);
    expect(v2.json()).toEqual({ status: 'error', message: 'Route not found' });
    const v1 = await h.send({ method: 'DELETE', path: '/v1/openapi.json' });
    expect(v1.status).toBe(400);
    expect(v1.json()).toEqual({ status: 'error', message: 'Route not found' });
  });

  it('passes /v3/openapi.json through to the core, and its wrong method too', async () => {
    const response = await h.send({ path: '/v3/openapi.json' });
    expect(response.status).toBe(200);
    expect(response.json()).toEqual(JSON.parse(JSON.stringify(coreV3Document())));
    const wrong = await h.send({
      method: 'PUT',
      path: '/v3/openapi.json',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(wrong.status).toBe(405);
    expect(wrong.json<{ error: { code: string } }>().error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('serves /docs over the three generations, v3 first', async () => {
    const page = await h.send({ path: '/docs' });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toBe(REFERENCE_PAGE_CSP);
    expect(configOf(page.text).sources.map((source) => [source.title, source.url])).toEqual([
      ['v3', '/v3/openapi.json'],
      ['v2', '/v2/openapi.json'],
      ['v1', '/v1/openapi.json'],
    ]);
    const wrong = await h.send({
      method: 'POST',
      path: '/docs',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(wrong.status).toBe(404);
    expect(wrong.json<{ error: { code: string } }>().error.code).toBe('ROUTE_NOT_FOUND');
  });
});

describe('the reference served by a /v3-only gateway', () => {
  let h: LegacyHarness;
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    // A LegacyHarness for its core; the gateway under test is a second one, without legacy options.
    h = await LegacyHarness.start();
    const gateway = await buildGatewayApp({ upstreamUrl: h.core.baseUrl, logLevel: 'silent' });
    url = await gateway.listen({ host: '127.0.0.1', port: 0 });
    close = () => gateway.close();
  });
  afterAll(async () => {
    await close?.();
    await h?.close();
  });

  it('lists v3 alone and serves no legacy document', async () => {
    const page = await sendTo(url, { path: '/docs' });
    expect(configOf(page.text).sources.map((source) => source.title)).toEqual(['v3']);
    const v2 = await sendTo(url, { path: '/v2/openapi.json' });
    expect(v2.status).toBe(501);
    expect((await sendTo(url, { path: '/v3/openapi.json' })).status).toBe(200);
  });

  it('serves no migration guide: it has no legacy generation to migrate from', async () => {
    for (const path of ['/docs/migrate/v1-to-v2', '/docs/migrate/v2-to-v3'])
      expect((await sendTo(url, { path })).status, path).toBe(404);
  });
});
