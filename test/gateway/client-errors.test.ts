/**
 * The gateway's answer to a request its server refused before routing: the legacy envelope and
 * the generation's own status (through the loaded error tables) under /v1 and /v2, v3's elsewhere.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { gatewayClientErrorAnswer, type LegacyErrorTablesByGeneration } from '../../src/gateway/client-errors.js';
import { resolveLegacyError } from '../../src/gateway/legacy/declarations/error-tables.js';
import { loadLegacyMappings } from '../../src/gateway/legacy/declarations/mappings-loader.js';
import { legacyGenerationOf } from '../../src/gateway/legacy/routes.js';
import { GenerationLifecycle } from '../../src/gateway/legacy/runtime/generation-lifecycle.js';
import type { ClientErrorCode } from '../../src/lib/http/client-errors.js';

const GUIDE = 'https://example.test/migrate';
let tables: LegacyErrorTablesByGeneration;
beforeAll(async () => {
  tables = (await loadLegacyMappings()).errors;
});

describe('legacyGenerationOf', () => {
  it.each([
    ['/v1', 'v1'],
    ['/v1/brokerage/o/balances', 'v1'],
    ['/v2/', 'v2'],
    ['/v2/brokerage/o/trade', 'v2'],
    ['/v3/fx/pairs', null],
    ['/v10/x', null],
    ['/v1x', null],
    ['/', null],
    ['/nope/v1/x', null],
    ['THERE', null],
    ['/v1?page=2', 'v1'],
  ])('%j is %j', (path, generation) => {
    expect(legacyGenerationOf(path)).toBe(generation);
  });
});

describe('gatewayClientErrorAnswer', () => {
  const answer = (code: ClientErrorCode, path: string | undefined) =>
    gatewayClientErrorAnswer(tables, new GenerationLifecycle({ migrationUrl: GUIDE }), {
      code,
      method: 'POST',
      path,
      requestId: 'req_x',
    });

  it.each<[ClientErrorCode, number, string]>([
    ['REQUEST_MALFORMED', 400, 'Query validation failed'],
    ['REQUEST_HEADERS_TOO_LARGE', 400, 'Query validation failed'],
    ['REQUEST_TIMEOUT', 500, 'The request did not arrive in time, please try again'],
    ['VALIDATION_PAYLOAD_TOO_LARGE', 400, 'Query validation failed'],
  ])("%s under /v1 and /v2 is each generation's table row: %i %s", (code, status, message) => {
    for (const generation of ['v1', 'v2'] as const) {
      const got = answer(code, `/${generation}/brokerage/o/trade`);
      const row = resolveLegacyError(tables[generation], { code });
      expect([got.status, JSON.parse(got.body)], generation).toEqual([
        row.status,
        { status: 'error', message: row.message },
      ]);
      expect([got.status, JSON.parse(got.body)], generation).toEqual([status, { status: 'error', message }]);
      expect(got.headers['x-request-id']).toBe('req_x');
      expect(got.headers.deprecation !== undefined, `deprecation headers on ${generation}`).toBe(generation === 'v1');
    }
    expect(answer(code, '/v1/x').headers.link).toContain(GUIDE);
  });

  it.each(['/v3/fx/quotes', '/', '/nope', undefined])('%j is the v3 envelope', (path) => {
    const got = answer('REQUEST_TIMEOUT', path);
    expect(got.status).toBe(408);
    expect(JSON.parse(got.body)).toMatchObject({
      error: { code: 'REQUEST_TIMEOUT', type: 'VALIDATION_ERROR', retryStrategy: 'RETRY_WITH_BACKOFF', details: {} },
    });
  });
});
