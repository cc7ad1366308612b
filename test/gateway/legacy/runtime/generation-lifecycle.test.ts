/**
 * Retiring a legacy generation: the Deprecation, Sunset and Link headers as configured (held to
 * their RFCs' grammar) on every kind of legacy answer, and the 410 of brownouts and of the
 * sunset, driven by an injected clock: before, inside, at both edges and after a window, an
 * exempt org, after the sunset with and without `serve`. The gateway runs against a scripted v3
 * that records what reaches it, so "refused before any upstream call" is seen, not assumed.
 */
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import { gatewayClientErrorAnswer } from '../../../../src/gateway/client-errors.js';
import { loadLegacyMappings } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import {
  GenerationLifecycle,
  type GenerationLifecycleOptions,
  lifecycleOptionsFromConfig,
} from '../../../../src/gateway/legacy/runtime/generation-lifecycle.js';
import { readUsage } from '../../../../src/gateway/usage/usage-recorder.js';
import { loadConfig } from '../../../../src/lib/config.js';
import { newUuid } from '../../../../src/lib/ids.js';
import { parseInstant } from '../../../../src/lib/time-text.js';
import { IMF_FIXDATE, LINK, linkRelations, SF_DATE } from '../../../support/http-date-grammar.js';
import { rawExchange } from '../../../support/raw-http.js';
import { ScriptedGateway } from '../../scripted-gateway.js';
import * as S from '../v3-contract/v3-samples.js';

const GUIDE = 'https://example.test/migrate/v1';
const V2_GUIDE = 'https://example.test/migrate/v2';
const HOUR = 3_600_000;
const DEPRECATED = parseInstant('2026-01-01T00:00:00Z');
const SUNSET = parseInstant('2026-12-31T23:59:59Z');
const WINDOW = { start: parseInstant('2026-12-10T15:00:00Z'), end: parseInstant('2026-12-10T16:00:00Z') };
const LATER_WINDOW = { start: parseInstant('2026-12-17T15:00:00Z'), end: parseInstant('2026-12-17T17:00:00Z') };

/** The three headers of a generation with both dates, each to its RFC's grammar, pointing at `guide`. */
function expectDeprecationHeaders(
  headers: Record<string, string | string[] | undefined>,
  expected: { deprecation: string; sunset: string },
  guide = GUIDE,
): void {
  expect(headers.deprecation).toMatch(SF_DATE);
  expect(headers.sunset).toMatch(IMF_FIXDATE);
  expect(headers.link).toMatch(LINK);
  expect({ deprecation: headers.deprecation, sunset: headers.sunset }).toEqual(expected);
  expect(linkRelations(headers.link as string)).toEqual([
    { target: guide, rel: 'deprecation' },
    { target: guide, rel: 'sunset' },
  ]);
}

const V1_DEFAULT = { deprecation: '@1767225600', sunset: 'Thu, 31 Dec 2026 23:59:59 GMT' };

describe('the headers', () => {
  it("are v1's default dates, and none on v2, without configuration", () => {
    const lifecycle = new GenerationLifecycle({ migrationUrl: GUIDE });
    expectDeprecationHeaders(lifecycle.deprecationHeaders.v1, V1_DEFAULT);
    expect(lifecycle.deprecationHeaders.v2).toEqual({});
  });

  it('follow the configured dates, on v1 and on v2 once its dates are set', () => {
    const config = loadConfig({
      FXGATE_MIGRATION_URL: GUIDE,
      FXGATE_V2_MIGRATION_URL: V2_GUIDE,
      FXGATE_V1_DEPRECATED_AT: '2025-06-30T12:00:00+02:00',
      FXGATE_V1_SUNSET_AT: '2027-03-31T23:00:00Z',
      FXGATE_V2_DEPRECATED_AT: '2027-01-01T00:00:00Z',
      FXGATE_V2_SUNSET_AT: '2028-02-29T12:30:00Z',
    });
    const lifecycle = new GenerationLifecycle(lifecycleOptionsFromConfig(config));
    expectDeprecationHeaders(lifecycle.deprecationHeaders.v1, {
      deprecation: `@${Date.UTC(2025, 5, 30, 10) / 1000}`,
      sunset: 'Wed, 31 Mar 2027 23:00:00 GMT',
    });
    expectDeprecationHeaders(
      lifecycle.deprecationHeaders.v2,
      { deprecation: `@${Date.UTC(2027, 0, 1) / 1000}`, sunset: 'Tue, 29 Feb 2028 12:30:00 GMT' },
      V2_GUIDE,
    );
  });

  it("link each generation's own guide on the gateway unless configured, and FXGATE_MIGRATION_URL moves v1's alone", () => {
    const v2Dates = { FXGATE_V2_DEPRECATED_AT: '2027-01-01T00:00:00Z', FXGATE_V2_SUNSET_AT: '2028-02-29T12:30:00Z' };
    const own = new GenerationLifecycle(lifecycleOptionsFromConfig(loadConfig(v2Dates)));
    expectDeprecationHeaders(own.deprecationHeaders.v1, V1_DEFAULT, '/docs/migrate/v1-to-v2');
    expect(linkRelations(own.deprecationHeaders.v2.link!).map((link) => link.target)).toEqual([
      '/docs/migrate/v2-to-v3',
      '/docs/migrate/v2-to-v3',
    ]);
    const moved = new GenerationLifecycle(
      lifecycleOptionsFromConfig(loadConfig({ ...v2Dates, FXGATE_MIGRATION_URL: GUIDE })),
    );
    expectDeprecationHeaders(moved.deprecationHeaders.v1, V1_DEFAULT, GUIDE);
    expect(linkRelations(moved.deprecationHeaders.v2.link!)[0]!.target).toBe('/docs/migrate/v2-to-v3');
    expect(moved.migrationUrls).toEqual({ v1: GUIDE, v2: '/docs/migrate/v2-to-v3' });
  });

  it('take a root-relative guide as a path, and refuse what is neither a URL nor a path from the root', () => {
    expect(new GenerationLifecycle({ migrationUrl: '/guides/v1 to v2>' }).migrationUrl).toBe('/guides/v1%20to%20v2%3E');
    expect(() => new GenerationLifecycle({ migrationUrl: 'guides/v1' })).toThrow(
      /neither an absolute URL nor a path from the root: guides\/v1/,
    );
    expect(() => new GenerationLifecycle({ v2MigrationUrl: '//elsewhere.test/v2' })).toThrow(/neither an absolute URL/);
  });

  it('carry only what is set: a deprecation without a sunset links rel="deprecation" alone', () => {
    const lifecycle = new GenerationLifecycle({ v2MigrationUrl: V2_GUIDE, v2: { deprecatedAt: DEPRECATED } });
    expect(lifecycle.deprecationHeaders.v2.sunset).toBeUndefined();
    expect(lifecycle.deprecationHeaders.v2.deprecation).toBe('@1767225600');
    expect(linkRelations(lifecycle.deprecationHeaders.v2.link!)).toEqual([{ target: V2_GUIDE, rel: 'deprecation' }]);
  });

  it('keep the Link target one URI: characters that would end it are escaped', () => {
    const lifecycle = new GenerationLifecycle({ migrationUrl: 'https://example.test/guide?from=v1&to=v2>x' });
    expect(lifecycle.deprecationHeaders.v1.link).toMatch(LINK);
    expect(linkRelations(lifecycle.deprecationHeaders.v1.link!)[0]!.target).toBe(
      'https://example.test/guide?from=v1&to=v2%3Ex',
    );
  });

  it('refuse a sunset before the deprecation', () => {
    expect(() => new GenerationLifecycle({ v1: { deprecatedAt: SUNSET, sunsetAt: DEPRECATED } })).toThrow(
      /sunset .* is before its deprecation/,
    );
  });

  it('are on the server-edge answers of each generation with dates', async () => {
    const { errors } = await loadLegacyMappings();
    const lifecycle = new GenerationLifecycle({
      migrationUrl: GUIDE,
      v2MigrationUrl: V2_GUIDE,
      v2: { deprecatedAt: DEPRECATED, sunsetAt: SUNSET },
    });
    for (const generation of ['v1', 'v2'] as const) {
      const answer = gatewayClientErrorAnswer(errors, lifecycle, {
        code: 'REQUEST_TIMEOUT',
        method: 'GET',
        path: `/${generation}/brokerage/o/balances`,
        requestId: 'req_x',
      });
      expectDeprecationHeaders(answer.headers, V1_DEFAULT, generation === 'v1' ? GUIDE : V2_GUIDE);
    }
    expect(
      gatewayClientErrorAnswer(errors, lifecycle, {
        code: 'REQUEST_TIMEOUT',
        method: 'GET',
        path: '/v3/fx/pairs',
        requestId: 'req_x',
      }).headers.deprecation,
    ).toBeUndefined();
  });
});

describe('the refusal, by the clock', () => {
  let now = 0;
  const lifecycle = (options: GenerationLifecycleOptions = {}) =>
    new GenerationLifecycle({
      migrationUrl: GUIDE,
      v1: {
        deprecatedAt: DEPRECATED,
        sunsetAt: SUNSET,
        brownouts: [WINDOW, LATER_WINDOW],
        brownoutExempt: ['0190C5A8-7D2E-7C1A-9F3B-2A4D6E8F0B1C'],
      },
      now: () => now,
      ...options,
    });
  const ORG = newUuid();

  it.each([
    ['before the window', WINDOW.start - 1, null],
    ['at its start', WINDOW.start, 'brownout'],
    ['inside it', WINDOW.start + HOUR / 2, 'brownout'],
    ['its last millisecond', WINDOW.end - 1, 'brownout'],
    ['at its end', WINDOW.end, null],
    ['between two windows', WINDOW.end + HOUR, null],
    ['inside the second', LATER_WINDOW.start + HOUR, 'brownout'],
    ['a millisecond before the sunset', SUNSET - 1, null],
    ['at the sunset', SUNSET, 'sunset'],
    ['a year after it', SUNSET + 365 * 24 * HOUR, 'sunset'],
  ])('%s: %s', (_when, at, kind) => {
    now = at;
    expect(lifecycle().refusal('v1', ORG)?.kind ?? null).toBe(kind);
    // v2 has no plan: never refused.
    expect(lifecycle().refusal('v2', ORG)).toBeNull();
  });

  it('serves an exempt org inside a window, whatever the case of its id, but not after the sunset', () => {
    now = WINDOW.start;
    expect(lifecycle().refusal('v1', '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c')).toBeNull();
    now = SUNSET;
    expect(lifecycle().refusal('v1', '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c')?.kind).toBe('sunset');
  });

  it('serves after the sunset when told to', () => {
    now = SUNSET + HOUR;
    expect(lifecycle({ v1: { sunsetAt: SUNSET, afterSunset: 'serve' } }).refusal('v1', ORG)).toBeNull();
  });

  it("names the window's end, the sunset and the guide in the message", () => {
    now = WINDOW.start;
    expect(lifecycle().refusal('v1', ORG)?.message).toBe(
      `v1 is unavailable until 2026-12-10T16:00:00Z for a scheduled brownout, a rehearsal of its retirement on 2026-12-31T23:59:59Z. Migrate before then: ${GUIDE}`,
    );
    now = SUNSET;
    expect(lifecycle().refusal('v1', ORG)?.message).toBe(
      `v1 was retired on 2026-12-31T23:59:59Z and no longer serves requests. Migrate to a supported version: ${GUIDE}`,
    );
  });
});

describe('through the gateway', () => {
  let now = WINDOW.start - HOUR;
  let gw: ScriptedGateway;
  let exempt: ScriptedGateway;
  let serving: ScriptedGateway;
  const clock = () => now;

  async function legacy(
    gateway: ScriptedGateway,
    method: 'GET' | 'POST',
    path: string,
    options: { body?: string; token?: string | null; headers?: Record<string, string> } = {},
  ) {
    const response = await request(`${gateway.url}${path.replace('{org}', gateway.key.file.orgId)}`, {
      method,
      headers: {
        ...(options.token === null ? {} : { authorization: `Bearer ${options.token ?? gateway.token()}` }),
        'x-app-mode': 'SANDBOX',
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: options.body,
    });
    const text = await response.body.text();
    return { status: response.statusCode, headers: response.headers, text, json: () => JSON.parse(text) as unknown };
  }

  const plan = (orgId: string, extra: { exempt?: boolean; afterSunset?: 'refuse' | 'serve' } = {}) => ({
    lifecycle: {
      migrationUrl: GUIDE,
      v1: {
        deprecatedAt: DEPRECATED,
        sunsetAt: SUNSET,
        brownouts: [WINDOW],
        brownoutExempt: extra.exempt ? [orgId] : [],
        ...(extra.afterSunset ? { afterSunset: extra.afterSunset } : {}),
      },
      now: clock,
    },
    usage: { flushIntervalMs: 20 },
  });

  beforeAll(async () => {
    [gw, exempt, serving] = await Promise.all([
      ScriptedGateway.start({ legacy: (orgId) => plan(orgId) }),
      ScriptedGateway.start({ legacy: (orgId) => plan(orgId, { exempt: true }) }),
      ScriptedGateway.start({ legacy: (orgId) => plan(orgId, { afterSunset: 'serve' }) }),
    ]);
    for (const gateway of [gw, exempt, serving])
      gateway.upstream.answer = {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(S.BALANCES),
      };
  });
  afterAll(async () => {
    await Promise.all([gw?.close(), exempt?.close(), serving?.close()]);
  });
  afterEach(() => {
    for (const gateway of [gw, exempt, serving]) gateway.upstream.requests.length = 0;
  });

  it('serves v1 before the window, with the headers', async () => {
    now = WINDOW.start - 1;
    const answer = await legacy(gw, 'GET', '/v1/brokerage/{org}/balances');
    expect(answer.status).toBe(200);
    expectDeprecationHeaders(answer.headers, V1_DEFAULT);
    expect(gw.upstream.requests).toHaveLength(1);
  });

  it('answers v1 with 410 inside the window, in the legacy envelope, with the headers, and sends nothing upstream', async () => {
    for (const at of [WINDOW.start, WINDOW.end - 1]) {
      now = at;
      const read = await legacy(gw, 'GET', '/v1/brokerage/{org}/balances');
      expect(read.status).toBe(410);
      expect(read.json()).toEqual({
        status: 'error',
        message: expect.stringMatching(/brownout.*2026-12-31T23:59:59Z.*https:\/\/example\.test\/migrate\/v1$/),
      });
      expect(read.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(read.headers['x-request-id']).toBeDefined();
      expectDeprecationHeaders(read.headers, V1_DEFAULT);
      const write = await legacy(gw, 'POST', '/v1/brokerage/{org}/trade', {
        body: '{"quoteId":"01a21585-2549-76d2-ac9d-8bb4e3f21838"}',
        headers: { 'idempotency-key': `k-${at}` },
      });
      expect(write.status).toBe(410);
    }
    expect(gw.upstream.requests).toHaveLength(0);
  });

  it("serves v1 again at the window's end, and v2 throughout", async () => {
    now = WINDOW.start;
    expect((await legacy(gw, 'GET', '/v2/brokerage/{org}/balances')).status).toBe(200);
    now = WINDOW.end;
    expect((await legacy(gw, 'GET', '/v1/brokerage/{org}/balances')).status).toBe(200);
    expect(gw.upstream.requests).toHaveLength(2);
  });

  it('checks the token first: a bad one is the 401, not the 410', async () => {
    now = WINDOW.start;
    const answer = await legacy(gw, 'GET', '/v1/brokerage/{org}/balances', { token: 'not-a-jwt' });
    expect(answer.status).toBe(401);
    expectDeprecationHeaders(answer.headers, V1_DEFAULT);
  });

  it("serves an exempt org inside the window (its key's org decides)", async () => {
    now = WINDOW.start;
    expect((await legacy(exempt, 'GET', '/v1/brokerage/{org}/balances')).status).toBe(200);
    expect(exempt.upstream.requests).toHaveLength(1);
  });

  it('answers v1 with 410 after the sunset, exempt or not, unless told to serve', async () => {
    now = SUNSET;
    for (const gateway of [gw, exempt]) {
      const answer = await legacy(gateway, 'GET', '/v1/brokerage/{org}/balances');
      expect(answer.status).toBe(410);
      expect(answer.json()).toEqual({
        status: 'error',
        message: `v1 was retired on 2026-12-31T23:59:59Z and no longer serves requests. Migrate to a supported version: ${GUIDE}`,
      });
      expectDeprecationHeaders(answer.headers, V1_DEFAULT);
    }
    expect((await legacy(gw, 'GET', '/v2/brokerage/{org}/balances')).status).toBe(200);
    const served = await legacy(serving, 'GET', '/v1/brokerage/{org}/balances');
    expect(served.status).toBe(200);
    expectDeprecationHeaders(served.headers, V1_DEFAULT);
  });

  it('puts the configured headers on route-level answers and on the server edge', async () => {
    const unknown = await legacy(gw, 'GET', '/v1/brokerage/{org}/nothing-here', { token: null });
    expect(unknown.status).toBe(400);
    expectDeprecationHeaders(unknown.headers, V1_DEFAULT);
    const edge = await rawExchange(gw.url, {
      steps: [`GET /v1/brokerage/x/balances HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`],
    });
    expectDeprecationHeaders(edge.response!.headers, V1_DEFAULT);
    const v2Edge = await rawExchange(gw.url, {
      steps: [`GET /v2/brokerage/x/balances HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`],
    });
    expect(v2Edge.response!.headers.deprecation).toBeUndefined();
  });

  it('counts the refusals against the key, apart from the requests served', async () => {
    const { orgId } = gw.key.file;
    await vi.waitFor(
      async () => {
        const rows = (await readUsage(gw.database.db, { generation: 'v1' })).rows;
        const balances = rows.find((row) => row.orgId === orgId && row.operation === 'balances');
        // Served: before, at the end, after (1 + 1); 410: the window's two edges (2) and the sunset (1).
        expect(balances).toMatchObject({
          keyName: gw.key.file.name,
          count: 5,
          refusedInBrownout: 2,
          refusedAfterSunset: 1,
          lastAddress: '127.0.0.1',
        });
        expect(rows.find((row) => row.orgId === orgId && row.operation === 'trade')).toMatchObject({
          count: 2,
          refusedInBrownout: 2,
          refusedAfterSunset: 0,
        });
        // The bad token and the unknown path: no org, no key.
        expect(rows.filter((row) => row.orgId === null).map((row) => [row.operation, row.count])).toEqual(
          expect.arrayContaining([
            ['balances', 1],
            ['(no operation)', 1],
          ]),
        );
      },
      { timeout: 5_000, interval: 50 },
    );
  });
});
