import { describe, expect, it } from 'vitest';
import { V1_ENDPOINTS } from '../../../../mappings/endpoints.v1.js';
import { V2_ENDPOINTS } from '../../../../mappings/endpoints.v2.js';
import { transformNames, validateEndpointTable } from '../../../../src/gateway/legacy/endpoint-mappings.js';
import { LEGACY_TRANSFORMS } from '../../../../src/gateway/legacy/transforms/index.js';
import { REQUEST_TRANSFORMS } from '../../../../src/gateway/legacy/transforms/request-transforms.js';
import { RESPONSE_TRANSFORMS } from '../../../../src/gateway/legacy/transforms/response-transforms.js';

const REGISTRY = { request: Object.keys(LEGACY_TRANSFORMS.request), response: Object.keys(LEGACY_TRANSFORMS.response) };

describe('the transform registry', () => {
  it('registers every transform the v1 and v2 tables name', () => {
    for (const table of [V1_ENDPOINTS, V2_ENDPOINTS]) {
      const names = transformNames(table);
      expect(REGISTRY.request).toEqual(expect.arrayContaining(names.request));
      expect(REGISTRY.response).toEqual(expect.arrayContaining(names.response));
    }
  });

  it('registers nothing the tables do not name', () => {
    const v1 = transformNames(V1_ENDPOINTS);
    const v2 = transformNames(V2_ENDPOINTS);
    expect([...REGISTRY.request].sort()).toEqual([...new Set([...v1.request, ...v2.request])].sort());
    expect([...REGISTRY.response].sort()).toEqual([...new Set([...v1.response, ...v2.response])].sort());
  });

  it('lets both endpoint tables validate', () => {
    expect(validateEndpointTable('v1', V1_ENDPOINTS, { request: Object.keys(REQUEST_TRANSFORMS), response: Object.keys(RESPONSE_TRANSFORMS) })).toBe(V1_ENDPOINTS);
    expect(validateEndpointTable('v2', V2_ENDPOINTS, { request: Object.keys(REQUEST_TRANSFORMS), response: Object.keys(RESPONSE_TRANSFORMS) })).toBe(V2_ENDPOINTS);
  });

  it('combines the two sides, each a function under its table name', () => {
    expect(LEGACY_TRANSFORMS.request).toBe(REQUEST_TRANSFORMS);
    expect(LEGACY_TRANSFORMS.response).toBe(RESPONSE_TRANSFORMS);
    expect(Object.keys(REQUEST_TRANSFORMS).sort()).toEqual(['quoteRequest', 'reverseQuoteRequest', 'reverseRequest', 'settleRequest', 'tradeRequest', 'withdrawalRequest']);
    expect(Object.keys(RESPONSE_TRANSFORMS).sort()).toEqual(
      [
        'fiatWithdrawalAccountList',
        'withdrawalAddressList',
        'v1TradeList',
        'v1Trade',
        'depositList',
        'balanceList',
        'legacyQuote',
        'v1TradeResult',
        'marketList',
        'v2TradeList',
        'withdrawalList',
        'v2TradeResult',
        'reverseQuoteResult',
        'v2ReversalResult',
        'v2SettleResult',
        'withdrawalResult',
      ].sort(),
    );
    for (const run of [...Object.values(REQUEST_TRANSFORMS), ...Object.values(RESPONSE_TRANSFORMS)]) expect(typeof run).toBe('function');
    expect(Object.isFrozen(REQUEST_TRANSFORMS) && Object.isFrozen(RESPONSE_TRANSFORMS) && Object.isFrozen(LEGACY_TRANSFORMS)).toBe(true);
  });
});
