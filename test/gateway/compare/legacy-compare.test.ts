/**
 * The comparison tools' reading of legacy answers: every path of an operation's body typed from
 * the declarations, the leaves of a real body on those paths, and when two values of a type are
 * the same (amounts as decimals, timestamps to the millisecond, ids in any case).
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { legacyFieldIndex, legacyLeaves } from '../../../src/gateway/compare/legacy-fields.js';
import { legacyValueText, parseLegacyAnswer, sameLegacyValue } from '../../../src/gateway/compare/legacy-values.js';
import type { EndpointMapping } from '../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import { type LegacyMappings, loadLegacyMappings } from '../../../src/gateway/legacy/declarations/mappings-loader.js';

let mappings: LegacyMappings;
const mapping = (generation: 'v1' | 'v2', operation: string): EndpointMapping =>
  (mappings.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation]!;

beforeAll(async () => {
  mappings = await loadLegacyMappings();
});

describe('legacyFieldIndex', () => {
  it('types every path of a list, with the envelope and the pagination', () => {
    const index = legacyFieldIndex(mapping('v2', 'deposits'), mappings.records);
    expect([...index.keys()]).toEqual([
      'status',
      'message',
      ...Object.keys(mappings.records.deposit!.fields).map((field) => `data[].${field}`),
      ...['total', 'start', 'end', 'page', 'limit'].map((field) => `meta.pagination.${field}`),
    ]);
    expect(index.get('data[].amount')).toMatchObject({
      type: 'amount',
      nullable: false,
      origin: { kind: 'record', record: 'deposit', field: 'amount' },
    });
    expect(index.get('data[].completedAt')).toMatchObject({ type: 'timestamp', nullable: true });
    expect(index.get('message')).toMatchObject({ origin: { kind: 'envelope', constant: 'Data fetched successfully' } });
  });

  it('writes keyed maps as *, and v1 trade result fields at the top as well as under data', () => {
    const markets = legacyFieldIndex(mapping('v1', 'available_markets'), mappings.records);
    expect(markets.get('data.tradeLimits[].*.minTradeLimit')).toMatchObject({ type: 'amount' });
    expect(markets.get('data.tradingPairs[].buy')).toMatchObject({ type: 'currency' });
    const v1Trade = legacyFieldIndex(mapping('v1', 'trade'), mappings.records);
    const v2Trade = legacyFieldIndex(mapping('v2', 'trade'), mappings.records);
    expect(v1Trade.get('data.balances.*')).toMatchObject({ type: 'amount', origin: { kind: 'layout' } });
    expect(v1Trade.get('balances.*')).toEqual(v1Trade.get('data.balances.*'));
    expect(v1Trade.get('trade.referenceAmount')).toMatchObject({ type: 'amount' });
    expect(v2Trade.has('trade.referenceAmount')).toBe(false);
    expect(v2Trade.get('data.userCreditUsed')).toMatchObject({ type: 'amount' });
  });
});

describe('legacyLeaves', () => {
  it('normalises array positions and data-keyed object keys, and keeps unknown fields as they are', () => {
    const index = legacyFieldIndex(mapping('v2', 'available_markets'), mappings.records);
    const body = parseLegacyAnswer(
      '{"status":"success","message":"m","data":{"tradingPairs":[{"buy":"EUR","sell":"USD"}],"tradeLimits":[{"EUR/USD":{"minTradeLimit":1.00,"maxTradeLimit":10}}]},"extra":{"a":[true]}}',
    );
    expect(legacyLeaves(body, index).map((leaf) => [leaf.path, leaf.normalized, legacyValueText(leaf.value)])).toEqual([
      ['status', 'status', '"success"'],
      ['message', 'message', '"m"'],
      ['data.tradingPairs[0].buy', 'data.tradingPairs[].buy', '"EUR"'],
      ['data.tradingPairs[0].sell', 'data.tradingPairs[].sell', '"USD"'],
      ['data.tradeLimits[0].EUR/USD.minTradeLimit', 'data.tradeLimits[].*.minTradeLimit', '1.00'],
      ['data.tradeLimits[0].EUR/USD.maxTradeLimit', 'data.tradeLimits[].*.maxTradeLimit', '10'],
      ['extra.a[0]', 'extra.a[]', 'true'],
    ]);
  });
});

describe('sameLegacyValue', () => {
  const number = (text: string) => (parseLegacyAnswer(`{"n":${text}}`) as { n: unknown }).n;

  it.each([
    ['amount', number('12.3'), '12.30', true],
    ['amount', number('12.301'), '12.30', false],
    ['amount', number('12345678901234567890.10'), '12345678901234567890.1', true],
    ['amount', number('12345678901234567890.10'), '12345678901234567890.11', false],
    ['amount', number('-0'), '0.00', true],
    ['amount', 'abc', '1', false],
    ['integer', number('60'), 60, true],
    ['timestamp', '2026-11-26T01:42:47.974Z', '2026-11-26T01:42:47.974000Z', true],
    ['timestamp', '2026-11-26T01:42:47.974Z', '2026-11-26T01:42:47.975Z', false],
    ['timestamp', 'not a time', 'not a time', false],
    ['id', '01A21585-01A6-7FA2-A011-511BC0FD7E15', '01a21585-01a6-7fa2-a011-511bc0fd7e15', true],
    ['string', 'Verified', 'verified', false],
    ['string', null, null, true],
    ['string', null, 'x', false],
    ['boolean', true, true, true],
  ] as const)('%s: %o and %o are the same: %s', (type, a, b, same) => {
    expect(sameLegacyValue(type, a, b)).toBe(same);
  });
});
