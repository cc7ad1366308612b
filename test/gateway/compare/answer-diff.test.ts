/**
 * The shadow mode's comparison of two answers: typed by the declarations (amounts as decimals,
 * timestamps to the millisecond, ids in any case), a path only one answer has differs, list
 * elements matched by id where every element has one and by position otherwise, data-keyed maps
 * normalised to `*`, statuses compared first, and a legacy answer that is a 5xx or not JSON not
 * comparable at all. differingPaths gives the paths two translations disagree on (the noise).
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { type AnswerText, compareAnswers, differingPaths } from '../../../src/gateway/compare/answer-diff.js';
import { type LegacyFieldIndex, legacyFieldIndex } from '../../../src/gateway/compare/legacy-fields.js';
import type { EndpointMapping } from '../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import { loadLegacyMappings } from '../../../src/gateway/legacy/declarations/mappings-loader.js';

let deposits: LegacyFieldIndex;
let markets: LegacyFieldIndex;
let balances: LegacyFieldIndex;

beforeAll(async () => {
  const mappings = await loadLegacyMappings();
  const table = mappings.endpoints.v2 as Readonly<Record<string, EndpointMapping>>;
  deposits = legacyFieldIndex(table.deposits!, mappings.records);
  markets = legacyFieldIndex(table.available_markets!, mappings.records);
  balances = legacyFieldIndex(table.balances!, mappings.records);
});

const ok = (body: string): AnswerText => ({ status: 200, body });
const ID_A = '01a21585-01a6-7fa2-a011-511bc0fd7e15';
const ID_B = '01a21585-2549-76d2-ac9d-8bb4e3f21838';

function depositsBody(...records: string[]): string {
  return `{"status":"success","message":"Data fetched successfully","data":[${records.join(',')}],"meta":{"pagination":{"total":${records.length},"start":0,"end":${records.length},"page":1,"limit":10}}}`;
}

function deposit(id: string, amount: string, createdAt = '2026-11-26T01:42:47.974Z'): string {
  return `{"id":"${id}","currency":"USD","amount":${amount},"status":"COMPLETED","createdAt":"${createdAt}"}`;
}

describe('compareAnswers', () => {
  it('finds nothing where the values mean the same by their declared types', () => {
    const legacy = depositsBody(deposit(ID_A.toUpperCase(), '12.3', '2026-11-26T01:42:47.974000Z'));
    const gateway = depositsBody(deposit(ID_A, '12.30'));
    expect(compareAnswers(deposits, ok(legacy), ok(gateway))).toEqual({ comparable: true, differences: [] });
  });

  it('matches list records by id, whatever their order, and names the record in `at`', () => {
    const legacy = depositsBody(deposit(ID_B, '2.00'), deposit(ID_A, '1.00'));
    const gateway = depositsBody(deposit(ID_A, '1.00'), deposit(ID_B, '2.01'));
    expect(compareAnswers(deposits, ok(legacy), ok(gateway))).toEqual({
      comparable: true,
      differences: [{ path: 'data[].amount', at: `data[id=${ID_B}].amount`, legacy: '2.00', gateway: '2.01' }],
    });
  });

  it('reports a record or a field only one answer has, on both sides', () => {
    const legacy = depositsBody(deposit(ID_A, '1.00'), deposit(ID_B, '2.00')).replace('"meta"', '"extra":true,"meta"');
    const gateway = depositsBody(deposit(ID_A, '1.00'));
    const result = compareAnswers(deposits, ok(legacy), ok(gateway));
    expect(
      result.comparable &&
        result.differences.map((difference) => [difference.path, difference.legacy, difference.gateway]),
    ).toEqual(
      expect.arrayContaining([
        ['data[].id', `"${ID_B}"`, '(absent)'],
        ['data[].amount', '2.00', '(absent)'],
        ['extra', 'true', '(absent)'],
        ['meta.pagination.total', '2', '1'],
      ]),
    );
  });

  it('matches by position where the records have no id, and normalises data-keyed maps to *', () => {
    const legacy =
      '{"status":"success","message":"m","data":{"tradingPairs":[{"buy":"EUR","sell":"USD"}],"tradeLimits":[{"EUR/USD":{"minTradeLimit":1.00,"maxTradeLimit":10}}]}}';
    const gateway =
      '{"status":"success","message":"m","data":{"tradingPairs":[{"buy":"EUR","sell":"GBP"}],"tradeLimits":[{"EUR/USD":{"minTradeLimit":1,"maxTradeLimit":10.5}}]}}';
    const result = compareAnswers(markets, ok(legacy), ok(gateway));
    expect(result).toEqual({
      comparable: true,
      differences: [
        { path: 'data.tradingPairs[].sell', at: 'data.tradingPairs[0].sell', legacy: '"USD"', gateway: '"GBP"' },
        {
          path: 'data.tradeLimits[].*.maxTradeLimit',
          at: 'data.tradeLimits[0].EUR/USD.maxTradeLimit',
          legacy: '10',
          gateway: '10.5',
        },
      ],
    });
  });

  it('compares amounts with their exact digits, beyond what a JS number holds', () => {
    const body = (amount: string) => `{"status":"success","message":"m","data":[],"netBalanceInUSD":${amount}}`;
    expect(compareAnswers(balances, ok(body('12345678901234567890.10')), ok(body('12345678901234567890.1')))).toEqual({
      comparable: true,
      differences: [],
    });
    const result = compareAnswers(balances, ok(body('12345678901234567890.10')), ok(body('12345678901234567890.11')));
    expect(result.comparable && result.differences.map((difference) => difference.path)).toEqual(['netBalanceInUSD']);
  });

  it('reports different statuses as one difference, without comparing the bodies', () => {
    expect(
      compareAnswers(deposits, { status: 401, body: '{"status":"error","message":"x"}' }, ok(depositsBody())),
    ).toEqual({
      comparable: true,
      differences: [{ path: '(status)', at: '(status)', legacy: '401', gateway: '200' }],
    });
  });

  it('compares two error answers field by field', () => {
    const result = compareAnswers(
      deposits,
      { status: 400, body: '{"status":"error","message":"Invalid page"}' },
      { status: 400, body: '{"status":"error","message":"Query validation failed"}' },
    );
    expect(result.comparable && result.differences.map((difference) => difference.path)).toEqual(['message']);
  });

  it.each([
    ['a 5xx', { status: 502, body: '{"status":"error"}' }],
    ['a body that is not JSON', { status: 200, body: '<html>busy</html>' }],
  ])('does not compare a legacy answer that is %s', (_what, legacy) => {
    expect(compareAnswers(deposits, legacy, ok(depositsBody()))).toMatchObject({ comparable: false });
  });
});

describe('differingPaths', () => {
  it('names the paths two translations disagree on, once each', () => {
    const first = depositsBody(deposit(ID_A, '1.00'), deposit(ID_B, '2.00'));
    const second = depositsBody(deposit(ID_A, '1.50'), deposit(ID_B, '2.50'));
    expect([...differingPaths(deposits, ok(first), ok(second))]).toEqual(['data[].amount']);
    expect([...differingPaths(deposits, ok(first), { status: 500, body: '{}' })]).toEqual(['(status)']);
    expect([...differingPaths(deposits, ok(first), ok(first))]).toEqual([]);
  });
});
