/**
 * The blocker declarations (mappings/blockers.ts) and their detectors: the validator refusing
 * what cannot be checked (a wrong target, an unknown operation, a method no operation has, a
 * query parameter the operation refuses already, a malformed kind), each shipped blocker firing
 * on the request it describes and on no other, the masked examples carrying no value the client
 * sent, and the guide links.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { MIGRATION_BLOCKERS } from '../../../../mappings/blockers.js';
import {
  type BlockerHit,
  type BlockerRequest,
  migrationGuideLink,
  validateBlockers,
} from '../../../../src/gateway/legacy/declarations/blockers.js';
import type { LegacyGeneration } from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import {
  type LegacyMappings,
  loadLegacyMappings,
} from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import { compileOperation } from '../../../../src/gateway/legacy/pipeline/compiled-operation.js';
import { LegacyMappingError } from '../../../../src/lib/errors/internal-errors.js';

let mappings: LegacyMappings;
beforeAll(async () => {
  mappings = await loadLegacyMappings();
});

const ALL_SCOPES = ['view', 'trade', 'withdraw'] as const;

function detect(generation: LegacyGeneration, operation: string, request: Partial<BlockerRequest>): BlockerHit[] {
  const compiled = compileOperation(mappings, generation, operation as never);
  return compiled.blockers({ headers: {}, query: {}, scopes: ALL_SCOPES, success: true, ...request });
}

const kinds = (hits: BlockerHit[]) => hits.map((hit) => hit.kind);

describe('the validator', () => {
  const valid = {
    source: 'ours',
    reason: 'A reason.',
    severity: 'blocker',
    from: 'v1',
    to: 'v2',
    operations: { method: 'POST' },
    detect: { rule: 'header-missing', header: 'Idempotency-Key' },
  } as const;
  const refusal = (table: unknown): string => {
    try {
      validateBlockers(table, mappings.endpoints);
    } catch (error) {
      expect(error).toBeInstanceOf(LegacyMappingError);
      return (error as Error).message;
    }
    throw new Error('accepted');
  };

  it('accepts the shipped table as it is', () => {
    expect(validateBlockers(MIGRATION_BLOCKERS, mappings.endpoints)).toEqual(MIGRATION_BLOCKERS);
  });

  it.each([
    [
      'a target that is not the next generation',
      { 'x-y': { ...valid, to: 'v3' } },
      'x-y.to: v1 clients move to v2, not v3',
    ],
    [
      'an operation its generation lacks',
      { 'x-y': { ...valid, operations: ['trade/settle'] } },
      'x-y.operations: v1 has no operation trade/settle',
    ],
    [
      'a query parameter the operation does not take',
      { 'x-y': { ...valid, operations: ['balances'], detect: { rule: 'query-present', parameters: ['page'] } } },
      'x-y.detect.parameters: balances takes no query parameter page (it takes none): a request naming it is refused already',
    ],
    ['a kind that is not a lower-case word', { Missing_Key: valid }, 'Missing_Key: a kind is lower-case words'],
    ['a declaration without its reason', { 'x-y': { ...valid, reason: undefined } }, 'x-y.reason:'],
    ['an unknown rule', { 'x-y': { ...valid, detect: { rule: 'body-field' } } }, 'x-y.detect.rule:'],
    ['an unknown field', { 'x-y': { ...valid, note: 'extra' } }, 'x-y: Unrecognized key: "note"'],
  ])('refuses %s, naming it', (_case, table, message) => {
    const text = refusal(table);
    expect(text).toMatch(/^mappings\/blockers is not a valid legacy mapping table/);
    expect(text).toContain(message);
  });
});

describe('v1 requests, checked against v2', () => {
  it('a POST without Idempotency-Key (or with an empty one) is a blocker; with one, none', () => {
    for (const headers of [{}, { 'idempotency-key': '' }]) {
      expect(detect('v1', 'generate_quote', { headers })).toEqual([
        {
          kind: 'idempotency-key-missing',
          severity: 'blocker',
          example: 'POST /v1/brokerage/{orgId}/generate_quote without Idempotency-Key',
        },
      ]);
    }
    expect(detect('v1', 'withdrawal', { headers: { 'idempotency-key': 'a-key' } })).toEqual([]);
  });

  it('a trade answered is a warning (the client may read it at the top), beside a missing key', () => {
    expect(detect('v1', 'trade', {})).toEqual([
      {
        kind: 'idempotency-key-missing',
        severity: 'blocker',
        example: 'POST /v1/brokerage/{orgId}/trade without Idempotency-Key',
      },
      { kind: 'trade-read-top-level', severity: 'warning', example: 'POST /v1/brokerage/{orgId}/trade' },
    ]);
    expect(kinds(detect('v1', 'trade', { headers: { 'idempotency-key': 'k' }, success: false }))).toEqual([]);
  });

  it('a read carrying Idempotency-Key is a warning (v2 honours it); a plain read meets nothing', () => {
    expect(detect('v1', 'trade/{id}', { headers: { 'idempotency-key': 'same-every-time' } })).toEqual([
      {
        kind: 'read-idempotency-key-honoured',
        severity: 'warning',
        example: 'GET /v1/brokerage/{orgId}/trade/{id} with Idempotency-Key',
      },
    ]);
    for (const operation of ['balances', 'trades', 'withdrawal_addresses'])
      expect(
        detect('v1', operation, { query: { page: '2', coin: 'USDC' }, headers: { 'x-app-mode': 'production' } }),
      ).toEqual([]);
  });
});

describe('v1 failures, answered otherwise on v2', () => {
  it("a path naming another org: v1's 400, v2's 404; the idempotency store down: 500, 503", () => {
    expect(detect('v1', 'balances', { success: false, error: { code: 'ROUTE_NOT_FOUND' } })).toEqual([
      {
        kind: 'error-answer-changes',
        severity: 'warning',
        example:
          'GET /v1/brokerage/{orgId}/balances answered 400 "Route not found"; the next generation answers 404 "Route not found"',
      },
    ]);
    expect(
      detect('v1', 'withdrawal', {
        headers: { 'idempotency-key': 'k' },
        success: false,
        error: { code: 'IDEMPOTENCY_UNAVAILABLE' },
      }).map((hit) => hit.example),
    ).toEqual([
      expect.stringMatching(
        /^POST \/v1\/brokerage\/\{orgId\}\/withdrawal answered 500 .*; the next generation answers 503 /,
      ),
    ]);
  });

  it('an error both generations answer alike, and a success, meet nothing', () => {
    expect(detect('v1', 'trade/{id}', { success: false, error: { code: 'TRADE_NOT_FOUND' } })).toEqual([]);
    expect(detect('v1', 'balances', { success: true, error: null })).toEqual([]);
  });

  it('is refused where the target has no legacy error table', () => {
    expect(() =>
      validateBlockers(
        {
          'x-y': {
            source: 'ours',
            reason: 'A reason.',
            severity: 'warning',
            from: 'v2',
            to: 'v3',
            operations: 'all',
            detect: { rule: 'error-answer' },
          },
        },
        mappings.endpoints,
      ),
    ).toThrow('x-y.detect.rule: error-answer compares legacy error tables, and v3 has none');
  });
});

describe('v2 requests, checked against v3', () => {
  it("a key without the scope of one of the operation's v3 calls: the calls and scopes are named", () => {
    expect(detect('v2', 'trade', { headers: { 'idempotency-key': 'k' }, scopes: ['trade'] })).toEqual([
      {
        kind: 'scope-missing',
        severity: 'blocker',
        example:
          'POST /v2/brokerage/{orgId}/trade: key scopes trade; v3 needs view for GET /v3/fx/balances, view for GET /v3/fx/exposure',
      },
    ]);
    expect(detect('v2', 'trade', { scopes: ['view', 'trade'] })).toEqual([]);
    // Scopes unknown (the key was refused before it was admitted): not judged.
    expect(detect('v2', 'trade', { scopes: null })).toEqual([]);
  });

  it('x-app-mode production, in any case, is a blocker; sandbox, live and none are not', () => {
    expect(detect('v2', 'balances', { headers: { 'x-app-mode': ' PRODUCTION' } })).toEqual([
      {
        kind: 'app-mode-production',
        severity: 'blocker',
        example: 'GET /v2/brokerage/{orgId}/balances with X-App-Mode: production',
      },
    ]);
    for (const mode of ['sandbox', 'LIVE', undefined])
      expect(detect('v2', 'balances', { headers: { 'x-app-mode': mode } })).toEqual([]);
  });

  it('page numbers and the renamed filters are blockers, named without their values', () => {
    expect(detect('v2', 'trades', { query: { page: '3', limit: '50' } })).toEqual([
      { kind: 'page-number-paging', severity: 'blocker', example: 'GET /v2/brokerage/{orgId}/trades?page=…' },
    ]);
    expect(detect('v2', 'trades', { query: { limit: '50' } })).toEqual([]);
    const hits = detect('v2', 'withdrawal_addresses', { query: { coin: 'secret-ish', coinNetwork: 'ETH', page: '1' } });
    expect(hits).toEqual([
      {
        kind: 'page-number-paging',
        severity: 'blocker',
        example: 'GET /v2/brokerage/{orgId}/withdrawal_addresses?page=…',
      },
      {
        kind: 'filter-renamed',
        severity: 'blocker',
        example: 'GET /v2/brokerage/{orgId}/withdrawal_addresses?coinNetwork=…&coin=…',
      },
    ]);
    expect(JSON.stringify(hits)).not.toMatch(/secret-ish|ETH/);
  });

  it('v1-only blockers are not checked on v2: a v2 POST without a key is refused by v2 itself', () => {
    expect(kinds(detect('v2', 'generate_quote', {}))).toEqual([]);
  });
});

describe('the guide links', () => {
  it("point at the migration guide's section of the operation, its braces percent-encoded", () => {
    expect(migrationGuideLink('v1', 'trade')).toBe('/docs/migrate/v1-to-v2#trade');
    expect(migrationGuideLink('v2', 'trade/reverse-quote')).toBe('/docs/migrate/v2-to-v3#trade/reverse-quote');
    expect(migrationGuideLink('v1', 'trade/{id}')).toBe('/docs/migrate/v1-to-v2#trade/%7Bid%7D');
    expect(decodeURIComponent(new URL(migrationGuideLink('v1', 'trade/{id}'), 'http://x').hash)).toBe('#trade/{id}');
  });
});
