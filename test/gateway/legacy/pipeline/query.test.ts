/**
 * The legacy query as each shipped operation reads it (compileQuery): page and limit with the
 * conventions' defaults and bounds on paginated lists, every declared filter (a currency in any
 * case, a boolean in any case, a word through its value map by the v3 or the legacy word, closed
 * maps refusing other words), sent to v3 or kept as a predicate on the legacy records; and
 * anything else refused as VALIDATION_QUERY_FAILED naming the parameter, so that a filter the
 * gateway cannot serve never becomes a silent full list.
 */
import { describe, expect, it } from 'vitest';

import type { EndpointMapping } from '../../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import { loadLegacyMappings } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import { compileQuery, type ReadQuery } from '../../../../src/gateway/legacy/pipeline/query.js';
import { ApiError } from '../../../../src/lib/errors/api-error.js';

const MAPPINGS = await loadLegacyMappings();

function reader(operation: string, generation: 'v1' | 'v2' = 'v2'): (query: unknown) => ReadQuery {
  const mapping = (MAPPINGS.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation]!;
  return compileQuery(mapping, MAPPINGS.conventions, MAPPINGS.maps);
}

const readQuery = (operation: string, query: Record<string, unknown>) => reader(operation)(query);

/** The issues of the VALIDATION_QUERY_FAILED the reader must throw. */
function issuesOf(
  operation: string,
  query: Record<string, unknown>,
): { path: string; code: string; message: string }[] {
  try {
    readQuery(operation, query);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.code).toBe('VALIDATION_QUERY_FAILED');
    expect(apiError.statusCode).toBe(400);
    return apiError.details.issues as { path: string; code: string; message: string }[];
  }
  throw new Error(`${operation} accepted ${JSON.stringify(query)}`);
}

const pathsOf = (operation: string, query: Record<string, unknown>) =>
  issuesOf(operation, query).map((issue) => issue.path);

/** What the keep predicate of a query makes of records. */
function kept(
  operation: string,
  query: Record<string, unknown>,
  records: readonly Record<string, unknown>[],
): Record<string, unknown>[] {
  const { keep } = readQuery(operation, query);
  if (keep === null) throw new Error('no keep predicate');
  return records.filter(keep);
}

describe('page and limit', () => {
  it("default to the conventions' page 1 and limit 10", () => {
    expect(MAPPINGS.conventions.pagination).toMatchObject({
      page: { default: 1, min: 1 },
      limit: { default: 10, min: 1, max: 50 },
    });
    expect(readQuery('trades', {})).toStrictEqual({ paging: { page: 1, limit: 10 }, v3Query: {}, keep: null });
    expect(readQuery('trades', { page: '3' }).paging).toStrictEqual({ page: 3, limit: 10 });
    expect(readQuery('trades', { limit: '25' }).paging).toStrictEqual({ page: 1, limit: 25 });
  });

  it('take limit 1 to 50 and any page from 1', () => {
    expect(readQuery('deposits', { page: '1', limit: '1' }).paging).toStrictEqual({ page: 1, limit: 1 });
    expect(readQuery('deposits', { page: '999999999', limit: '50' }).paging).toStrictEqual({
      page: 999999999,
      limit: 50,
    });
  });

  it.each([
    ['page', '0', 'must be a whole number of at least 1'],
    ['page', '-1', 'must be a whole number of at least 1'],
    ['page', '1.5', 'must be a whole number of at least 1'],
    ['page', 'two', 'must be a whole number of at least 1'],
    ['page', '', 'must be a whole number of at least 1'],
    ['page', '1e3', 'must be a whole number of at least 1'],
    ['page', '1234567890', 'must be a whole number of at least 1'],
    ['limit', '0', 'must be a whole number from 1 to 50'],
    ['limit', '51', 'must be a whole number from 1 to 50'],
    ['limit', ' 5', 'must be a whole number from 1 to 50'],
    ['limit', '10.0', 'must be a whole number from 1 to 50'],
  ])('refuse %s=%j', (name, value, message) => {
    expect(issuesOf('trades', { [name]: value })).toEqual([{ path: name, code: 'invalid_value', message }]);
  });

  it('refuse a repeated page or limit', () => {
    expect(issuesOf('trades', { page: ['1', '2'], limit: ['5', '5'] })).toEqual([
      { path: 'page', code: 'invalid_value', message: 'must be a whole number of at least 1' },
      { path: 'limit', code: 'invalid_value', message: 'must be a whole number from 1 to 50' },
    ]);
  });

  it('are no parameters of an operation that does not paginate: its paging is null and a page is refused', () => {
    expect(readQuery('balances', {})).toStrictEqual({ paging: null, v3Query: {}, keep: null });
    expect(reader('available_markets', 'v1')(undefined)).toStrictEqual({ paging: null, v3Query: {}, keep: null });
    expect(issuesOf('balances', { page: '1' })).toEqual([
      { path: 'page', code: 'unrecognized_keys', message: 'not a query parameter of this operation' },
    ]);
  });
});

describe('an unknown query parameter', () => {
  it('is refused, naming it and what the operation takes', () => {
    expect(issuesOf('trades', { status: 'EXECUTED' })).toEqual([
      {
        path: 'status',
        code: 'unrecognized_keys',
        message: 'not a query parameter of this operation (it takes page, limit)',
      },
    ]);
    expect(issuesOf('deposits', { cursor: 'abc' })).toEqual([
      {
        path: 'cursor',
        code: 'unrecognized_keys',
        message: 'not a query parameter of this operation (it takes page, limit, currency)',
      },
    ]);
  });

  it('is refused even beside valid parameters, with every other problem at once', () => {
    expect(issuesOf('trades', { page: '0', limit: '51', foo: 'x' })).toEqual([
      {
        path: 'foo',
        code: 'unrecognized_keys',
        message: 'not a query parameter of this operation (it takes page, limit)',
      },
      { path: 'page', code: 'invalid_value', message: 'must be a whole number of at least 1' },
      { path: 'limit', code: 'invalid_value', message: 'must be a whole number from 1 to 50' },
    ]);
  });

  it('is judged by name only: a v3 parameter name is not a legacy one', () => {
    expect(pathsOf('withdrawal_addresses', { assetType: 'FIAT', network: 'ETHEREUM' })).toEqual([
      'assetType',
      'network',
    ]);
  });
});

describe('filters sent to v3', () => {
  it('a currency in any case goes to v3 in upper case; nothing is left for the records', () => {
    for (const value of ['usdc', 'USDC', 'UsDc'])
      expect(readQuery('deposits', { currency: value })).toStrictEqual({
        paging: { page: 1, limit: 10 },
        v3Query: { currency: 'USDC' },
        keep: null,
      });
  });

  it.each(['US', 'USDCXX', 'US1', 'us d'])('refuse the currency %j', (value) => {
    expect(issuesOf('deposits', { currency: value })).toEqual([
      { path: 'currency', code: 'invalid_value', message: 'must be a currency code such as USD' },
    ]);
  });
});

describe('filters on the legacy records', () => {
  const address = (fields: Record<string, unknown>) => ({
    verified: true,
    status: 'Verified',
    coinName: 'USDC',
    coinNetworkName: 'Ethereum',
    ...fields,
  });
  const VERIFIED = address({ id: 'a' });
  const PENDING = address({
    id: 'b',
    verified: false,
    status: 'Pending',
    coinName: 'USDT',
    coinNetworkName: 'Polygon',
  });
  const DISABLED = address({ id: 'c', status: 'Disabled', coinNetworkName: 'ARBITRUM' });
  const ADDRESSES = [VERIFIED, PENDING, DISABLED];

  it('send nothing to v3 and give a keep predicate', () => {
    const query = readQuery('withdrawal_addresses', { verified: 'true' });
    expect(query.v3Query).toStrictEqual({});
    expect(typeof query.keep).toBe('function');
  });

  it('a boolean in any case', () => {
    for (const value of ['true', 'TRUE', 'True'])
      expect(kept('withdrawal_addresses', { verified: value }, ADDRESSES)).toEqual([VERIFIED, DISABLED]);
    for (const value of ['false', 'FALSE', 'False'])
      expect(kept('withdrawal_addresses', { verified: value }, ADDRESSES)).toEqual([PENDING]);
  });

  it.each(['yes', '1', 't', 'truee'])('refuse the boolean %j', (value) => {
    expect(issuesOf('withdrawal_addresses', { verified: value })).toEqual([
      { path: 'verified', code: 'invalid_value', message: 'must be true or false' },
    ]);
  });

  it("a currency in any case, matched against the record's code", () => {
    expect(kept('withdrawal_addresses', { coin: 'usdt' }, ADDRESSES)).toEqual([PENDING]);
    expect(kept('fiat_withdrawal_addresses', { currency: 'eur' }, [{ currency: 'USD' }, { currency: 'EUR' }])).toEqual([
      { currency: 'EUR' },
    ]);
  });

  it('a word through its map: the v3 word or the legacy word, in any case', () => {
    for (const value of ['ACTIVE', 'active', 'Verified', 'VERIFIED'])
      expect(kept('withdrawal_addresses', { status: value }, ADDRESSES)).toEqual([VERIFIED]);
    for (const value of ['PENDING_VERIFICATION', 'Pending', 'pending'])
      expect(kept('withdrawal_addresses', { status: value }, ADDRESSES)).toEqual([PENDING]);
    expect(kept('withdrawal_addresses', { status: 'DISABLED' }, ADDRESSES)).toEqual([DISABLED]);
    for (const value of ['ETHEREUM', 'Ethereum', 'ethereum'])
      expect(kept('withdrawal_addresses', { coinNetwork: value }, ADDRESSES)).toEqual([VERIFIED]);
    const fiat = [{ status: 'active' }, { status: 'disabled' }];
    expect(kept('fiat_withdrawal_addresses', { status: 'ACTIVE' }, fiat)).toEqual([{ status: 'active' }]);
    expect(kept('fiat_withdrawal_addresses', { status: 'Disabled' }, fiat)).toEqual([{ status: 'disabled' }]);
  });

  it('a closed map refuses any other word, listing the legacy words', () => {
    expect(issuesOf('withdrawal_addresses', { status: 'archived' })).toEqual([
      { path: 'status', code: 'invalid_value', message: 'must be one of Verified, Pending, Disabled' },
    ]);
    expect(issuesOf('fiat_withdrawal_addresses', { status: 'x' })).toEqual([
      { path: 'status', code: 'invalid_value', message: 'must be one of active, pending_verification, disabled' },
    ]);
  });

  it('an open map takes a word it does not list, as it is, matched in any case', () => {
    expect(kept('withdrawal_addresses', { coinNetwork: 'arbitrum' }, ADDRESSES)).toEqual([DISABLED]);
    expect(kept('withdrawal_addresses', { coinNetwork: 'Solana' }, ADDRESSES)).toEqual([]);
  });

  it('every filter must hold: the predicate is their conjunction', () => {
    expect(kept('withdrawal_addresses', { verified: 'true', coin: 'USDC' }, ADDRESSES)).toEqual([VERIFIED, DISABLED]);
    expect(kept('withdrawal_addresses', { verified: 'true', coin: 'USDC', status: 'Disabled' }, ADDRESSES)).toEqual([
      DISABLED,
    ]);
    expect(kept('withdrawal_addresses', { verified: 'false', coin: 'USDC' }, ADDRESSES)).toEqual([]);
  });

  it('a record whose field is missing or of another type is not kept', () => {
    expect(kept('withdrawal_addresses', { verified: 'true' }, [{ verified: 'true' }, {}])).toEqual([]);
    expect(kept('withdrawal_addresses', { coin: 'USDC' }, [{ coinName: null }, { coinName: 7 }])).toEqual([]);
  });

  it('no filter sent: no predicate, and page and limit still apply', () => {
    expect(readQuery('withdrawal_addresses', { page: '2', limit: '5' })).toStrictEqual({
      paging: { page: 2, limit: 5 },
      v3Query: {},
      keep: null,
    });
  });
});

describe('a filter value', () => {
  it('given twice is refused', () => {
    expect(issuesOf('deposits', { currency: ['USD', 'EUR'] })).toEqual([
      { path: 'currency', code: 'invalid_type', message: 'must be given once, as 1 to 64 characters' },
    ]);
    expect(issuesOf('withdrawal_addresses', { verified: ['true', 'true'] })).toEqual([
      { path: 'verified', code: 'invalid_type', message: 'must be given once, as 1 to 64 characters' },
    ]);
  });

  it('longer than 64 characters, or empty, is refused', () => {
    expect(
      kept('withdrawal_addresses', { coinNetwork: 'x'.repeat(64) }, [{ coinNetworkName: 'X'.repeat(64) }]),
    ).toHaveLength(1);
    expect(issuesOf('withdrawal_addresses', { coinNetwork: 'x'.repeat(65) })).toEqual([
      { path: 'coinNetwork', code: 'invalid_type', message: 'must be given once, as 1 to 64 characters' },
    ]);
    expect(issuesOf('deposits', { currency: '' })).toEqual([
      { path: 'currency', code: 'invalid_type', message: 'must be given once, as 1 to 64 characters' },
    ]);
  });

  it('problems with several filters are reported together', () => {
    expect(
      pathsOf('withdrawal_addresses', {
        status: 'archived',
        verified: 'yes',
        coin: ['USDC', 'USDT'],
        coinNetwork: 'x'.repeat(65),
      }).sort(),
    ).toEqual(['coin', 'coinNetwork', 'status', 'verified']);
  });
});

describe('v1', () => {
  it('reads the same query as v2 for every list', () => {
    for (const operation of [
      'trades',
      'deposits',
      'withdrawal_addresses',
      'fiat_withdrawal_addresses',
      'withdrawals',
    ]) {
      const query = operation === 'deposits' ? { currency: 'usd', page: '2' } : { page: '2', limit: '3' };
      const v1 = reader(operation, 'v1')(query);
      const v2 = reader(operation, 'v2')(query);
      expect([v1.paging, v1.v3Query]).toEqual([v2.paging, v2.v3Query]);
    }
    expect(() => reader('withdrawal_addresses', 'v1')({ status: 'nope' })).toThrow(ApiError);
  });
});
