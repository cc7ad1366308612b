/**
 * The v3 operations the gateway relies on, derived from the published v3 document: every
 * operation a v3 key may call, with its scope, list kind, query and sandbox flag as the document
 * states them; the document's own route (no key) is not one; a scope or method the gateway cannot
 * name stops the derivation.
 */
import { describe, expect, it } from 'vitest';

import { parseV3Document, V3_DOCUMENT } from '../../../../src/gateway/legacy/v3-contract/document.js';
import {
  deriveV3Operations,
  findV3Operation,
  pathParams,
  V3_OPERATIONS,
} from '../../../../src/gateway/legacy/v3-contract/operations.js';

describe('the v3 operations', () => {
  it('are the operations of the document a key may call, in its order', () => {
    expect(V3_OPERATIONS).toHaveLength(28);
    expect(findV3Operation('GET', '/v3/openapi.json')).toBeUndefined();
    expect(findV3Operation('GET', '/v3/fx/trades')).toEqual({
      method: 'GET',
      path: '/v3/fx/trades',
      scope: 'view',
      list: 'cursor',
      query: ['limit', 'startingAfter', 'endingBefore', 'status', 'currency'],
    });
    expect(findV3Operation('GET', '/v3/fx/withdrawal-accounts')).toMatchObject({
      list: 'bounded',
      query: ['assetType', 'network', 'currency', 'status', 'verified'],
    });
    expect(findV3Operation('GET', '/v3/fx/exposure')).toMatchObject({ list: null, query: [] });
    expect(findV3Operation('DELETE', '/v3/fx/webhook-endpoints/:id')).toMatchObject({ scope: 'webhooks' });
    expect(V3_OPERATIONS.filter((operation) => operation.sandboxOnly).map(({ path }) => path)).toEqual([
      '/v3/fx/sandbox/deposits',
      '/v3/fx/sandbox/withdrawal-accounts/:id/verify',
      '/v3/fx/sandbox/withdrawal-accounts/:id',
      '/v3/fx/sandbox/withdrawals/:id/complete',
      '/v3/fx/sandbox/withdrawals/:id/fail',
    ]);
    expect(pathParams('/v3/fx/trades/:id/settle')).toEqual(['id']);
  });

  it('follow the document: an operation it drops is gone, and one it scopes otherwise cannot be derived', () => {
    const copy = JSON.parse(JSON.stringify(V3_DOCUMENT)) as { paths: Record<string, Record<string, unknown>> };
    delete copy.paths['/v3/fx/trades/{id}/settle'];
    const derived = deriveV3Operations(parseV3Document(copy));
    expect(derived).toHaveLength(27);
    expect(derived.some((operation) => operation.path === '/v3/fx/trades/:id/settle')).toBe(false);

    (copy.paths['/v3/fx/pairs']!.get as { security: unknown }).security = [{ bearerToken: ['admin'] }];
    expect(() => deriveV3Operations(parseV3Document(copy))).toThrow(/GET \/v3\/fx\/pairs: scopes admin/);
  });
});
