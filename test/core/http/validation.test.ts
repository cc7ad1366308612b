/**
 * Step 7, input validation: body and query against the operation's zod schemas, after
 * authentication and idempotency. Failures are 400 VALIDATION_BODY_FAILED or
 * VALIDATION_QUERY_FAILED with `details.issues[{path, code, message}]`
 * (docs/contract.md#errors-envelope). Client metadata is echoed on success and never appears on
 * an error (docs/contract.md#types-metadata).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { expectV3Error, type V3ErrorBody } from '../../support/v3-assertions.js';
import { type TestResponse, V3Harness } from '../../support/v3-harness.js';

let harness: V3Harness;
let key: LoadedKey;
const log = new OperationLog();
let counter = 0;

beforeAll(async () => {
  harness = await V3Harness.start({
    operations: withTestOperations(log),
    core: { rateLimits: { reads: 1000, writes: 1000 } },
  });
  key = await harness.createKey({ scopes: ['view', 'trade'] });
});
afterAll(async () => harness?.close());

function echo(body: string, options: { key?: LoadedKey; idempotencyKey?: string | null } = {}): Promise<TestResponse> {
  counter += 1;
  const idempotencyKey = options.idempotencyKey === null ? undefined : (options.idempotencyKey ?? `val-${counter}`);
  return harness.signed({ key: options.key ?? key, method: 'POST', path: '/v3/fx/test/echo', body, idempotencyKey });
}

type Issue = { path: string; code: string; message: string };
function issuesOf(error: V3ErrorBody): Issue[] {
  return error.details.issues as Issue[];
}
/** Issues reduced to path and code; every message must be a non-empty string. */
function pathsAndCodes(error: V3ErrorBody): Array<[string, string]> {
  const issues = issuesOf(error);
  for (const issue of issues) expect(issue.message).toMatch(/\S/);
  return issues.map((issue) => [issue.path, issue.code]);
}

describe('body', () => {
  it.each([
    '{"amount":',
    '{amount: "1"}',
    "{'amount':'1'}",
    '{"amount":"1","currency":"USD",}',
    'not json',
    '{"a":1}}',
  ])('refuses malformed JSON %s with invalid_json', async (body) => {
    const before = log.count('echo');
    const error = expectV3Error(await echo(body), 'VALIDATION_BODY_FAILED');
    expect(error.retryStrategy).toBe('FIX_AND_RESUBMIT');
    expect(error.type).toBe('VALIDATION_ERROR');
    expect(issuesOf(error)).toHaveLength(1);
    expect(issuesOf(error)[0]).toEqual({ path: '', code: 'invalid_json', message: expect.stringMatching(/\S/) });
    expect(log.count('echo')).toBe(before);
  });

  it.each<[string, string, string]>([
    ['at the top, another value', '{"amount":"1.00","currency":"USD","amount":"99999.00"}', 'amount'],
    ['at the top, the same value', '{"amount":"1.00","amount":"1.00","currency":"USD"}', 'amount'],
    ['nested, another value', '{"amount":"1.00","currency":"USD","metadata":{"a":"x","a":"y"}}', 'metadata.a'],
    ['nested, the same value', '{"amount":"1.00","currency":"USD","metadata":{"a":"x","a":"x"}}', 'metadata.a'],
    ['spelt with an escape', '{"amount":"1.00","currency":"USD","\\u0061mount":"2.00"}', 'amount'],
  ])('refuses a key repeated %s with duplicate_key at its path, before any handler', async (_name, body, path) => {
    const before = log.count('echo');
    const error = expectV3Error(await echo(body), 'VALIDATION_BODY_FAILED');
    expect(issuesOf(error)).toEqual([
      { path, code: 'duplicate_key', message: expect.stringMatching(/more than once/) },
    ]);
    expect(log.count('echo')).toBe(before);
  });

  it.each<[string, string]>([
    ['{"amount":"1.00","currency":"USD","__proto__":{"polluted":"yes"}}', '__proto__'],
    ['{"amount":"1.00","currency":"USD","metadata":{"__proto__":"x"}}', 'metadata.__proto__'],
  ])('refuses the __proto__ key of %s with forbidden_key, polluting nothing', async (body, path) => {
    const error = expectV3Error(await echo(body), 'VALIDATION_BODY_FAILED');
    expect(pathsAndCodes(error)).toEqual([[path, 'forbidden_key']]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['a number amount', { amount: 5, currency: 'USD' }, [['amount', 'invalid_type']]],
    ['a number currency', { amount: '5', currency: 840 }, [['currency', 'invalid_type']]],
    ['a boolean amount', { amount: true, currency: 'USD' }, [['amount', 'invalid_type']]],
    ['a null amount', { amount: null, currency: 'USD' }, [['amount', 'invalid_type']]],
    [
      'no fields',
      {},
      [
        ['amount', 'invalid_type'],
        ['currency', 'invalid_type'],
      ],
    ],
    ['no currency', { amount: '1.00' }, [['currency', 'invalid_type']]],
    ['a negative amount', { amount: '-1', currency: 'USD' }, [['amount', 'invalid_format']]],
    ['a plus sign', { amount: '+1', currency: 'USD' }, [['amount', 'invalid_format']]],
    ['9 decimals', { amount: '1.123456789', currency: 'USD' }, [['amount', 'invalid_format']]],
    ['an exponent', { amount: '1e3', currency: 'USD' }, [['amount', 'invalid_format']]],
    ['a trailing dot', { amount: '1.', currency: 'USD' }, [['amount', 'invalid_format']]],
    ['an empty amount', { amount: '', currency: 'USD' }, [['amount', 'invalid_format']]],
    ['a 4-letter currency', { amount: '1', currency: 'USDC' }, [['currency', 'too_big']]],
    ['a 2-letter currency', { amount: '1', currency: 'US' }, [['currency', 'too_small']]],
    ['an unknown field', { amount: '1', currency: 'USD', foo: 1 }, [['foo', 'unrecognized_keys']]],
    [
      'two unknown fields',
      { amount: '1', currency: 'USD', foo: 1, bar: 'x' },
      [
        ['foo', 'unrecognized_keys'],
        ['bar', 'unrecognized_keys'],
      ],
    ],
    [
      'a non-string metadata value',
      { amount: '1', currency: 'USD', metadata: { a: 1 } },
      [['metadata.a', 'invalid_type']],
    ],
    ['metadata that is not an object', { amount: '1', currency: 'USD', metadata: 'x' }, [['metadata', 'invalid_type']]],
    [
      'two faults at once',
      { amount: '-1', currency: 1 },
      [
        ['amount', 'invalid_format'],
        ['currency', 'invalid_type'],
      ],
    ],
  ])('refuses %s with the issue paths', async (_label, body, expected) => {
    const before = log.count('echo');
    const error = expectV3Error(await echo(JSON.stringify(body)), 'VALIDATION_BODY_FAILED');
    expect(pathsAndCodes(error)).toEqual(expected);
    expect(log.count('echo')).toBe(before);
  });

  it.each([
    ['an array', '[{"amount":"1","currency":"USD"}]'],
    ['a string', '"hello"'],
    ['null', 'null'],
    ['a number', '42'],
    ['true', 'true'],
  ])('refuses a body that is %s', async (_label, body) => {
    const error = expectV3Error(await echo(body), 'VALIDATION_BODY_FAILED');
    expect(pathsAndCodes(error)).toEqual([['', 'invalid_type']]);
  });

  it('refuses a missing body on an operation that needs one', async () => {
    const error = expectV3Error(await echo(''), 'VALIDATION_BODY_FAILED');
    expect(pathsAndCodes(error)).toEqual([['', 'invalid_type']]);
  });

  it.each(['1', '0.1', '1.12345678', '1000000', '0'])('accepts the amount %s', async (amount) => {
    const response = await echo(JSON.stringify({ amount, currency: 'USD' }));
    expect(response.status).toBe(200);
    expect(response.json()).toMatchObject({ data: { amount, currency: 'USD' } });
  });

  it('validates only after authentication: an unsigned malformed body is 401', async () => {
    const response = await harness.send({
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: '{oops',
      headers: { 'content-type': 'application/json' },
    });
    expectV3Error(response, 'AUTH_TOKEN_MISSING');
  });

  it('validates only after authorisation: a view-only key with a malformed body is 403', async () => {
    const viewer = await harness.createKey({ scopes: ['view'] });
    expectV3Error(await echo('{oops', { key: viewer }), 'AUTH_INSUFFICIENT_SCOPE', {
      details: { requiredScope: 'trade' },
    });
  });

  it('validates only after the idempotency step: a malformed body without Idempotency-Key is 428', async () => {
    expectV3Error(await echo('{oops', { idempotencyKey: null }), 'IDEMPOTENCY_KEY_MISSING', {
      details: { endpoint: 'POST /v3/fx/test/echo' },
    });
  });
});

describe('query', () => {
  it('accepts a valid query', async () => {
    const response = await harness.signed({ key, path: '/v3/fx/test/items/itm_1?expand=all' });
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({ data: { id: 'itm_1', expand: 'all' } });
  });

  it.each([
    ['an unknown parameter', '/v3/fx/test/items/a?foo=1', [['foo', 'unrecognized_keys']]],
    [
      'an unknown parameter next to a valid one',
      '/v3/fx/test/items/a?expand=all&zzz=2',
      [['zzz', 'unrecognized_keys']],
    ],
    ['a value outside the enum', '/v3/fx/test/items/a?expand=bogus', [['expand', 'invalid_value']]],
    ['an empty enum value', '/v3/fx/test/items/a?expand=', [['expand', 'invalid_value']]],
    ['a repeated parameter', '/v3/fx/test/items/a?expand=all&expand=none', [['expand', 'invalid_value']]],
    ['a parameter on an operation that takes none', '/v3/fx/pairs?limit=10', [['limit', 'unrecognized_keys']]],
    [
      'two parameters on an operation that takes none',
      '/v3/fx/pairs?a=1&b=2',
      [
        ['a', 'unrecognized_keys'],
        ['b', 'unrecognized_keys'],
      ],
    ],
  ])('refuses %s with VALIDATION_QUERY_FAILED', async (_label, path, expected) => {
    const error = expectV3Error(await harness.signed({ key, path }), 'VALIDATION_QUERY_FAILED');
    expect(error.retryStrategy).toBe('FIX_AND_RESUBMIT');
    expect(pathsAndCodes(error)).toEqual(expected);
  });

  it('validates the query only after authentication', async () => {
    expectV3Error(await harness.send({ path: '/v3/fx/test/items/a?expand=bogus' }), 'AUTH_TOKEN_MISSING');
  });
});

describe('metadata', () => {
  const MARKER = 'meta-marker-7f3a9c';
  const metadata = { orderRef: MARKER, note: `${MARKER}-note` };

  it('is echoed on success exactly as sent', async () => {
    const response = await echo(JSON.stringify({ amount: '10.50', currency: 'EUR', metadata }));
    expect(response.status).toBe(200);
    expect(response.json()).toMatchObject({ data: { amount: '10.50', currency: 'EUR', metadata } });
  });

  it('is echoed on an idempotent replay of that success', async () => {
    const body = JSON.stringify({ amount: '11.00', currency: 'EUR', metadata });
    const first = await echo(body, { idempotencyKey: 'meta-replay' });
    const replay = await echo(body, { idempotencyKey: 'meta-replay' });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(replay.json()).toMatchObject({ data: { metadata } });
  });

  it('never appears on an error body', async () => {
    const viewer = await harness.createKey({ scopes: ['view'] });
    const withMetadata = (fields: Record<string, unknown>) => JSON.stringify({ ...fields, metadata });
    const cases: Array<[TestResponse, Parameters<typeof expectV3Error>[1]]> = [
      [await echo(withMetadata({ amount: '-1', currency: 'USD' })), 'VALIDATION_BODY_FAILED'],
      [await echo(withMetadata({ amount: '1', currency: 'USD', extra: MARKER })), 'VALIDATION_BODY_FAILED'],
      [await echo(withMetadata({ amount: '1', currency: 'USD' }), { key: viewer }), 'AUTH_INSUFFICIENT_SCOPE'],
      [await echo(withMetadata({ amount: '1', currency: 'USD' }), { idempotencyKey: null }), 'IDEMPOTENCY_KEY_MISSING'],
      [
        await echo(withMetadata({ amount: '1', currency: 'USD' }), { idempotencyKey: 'bad key with spaces' }),
        'IDEMPOTENCY_KEY_INVALID',
      ],
      [
        await harness.send({
          method: 'POST',
          path: '/v3/fx/test/echo',
          body: withMetadata({ amount: '1', currency: 'USD' }),
          headers: { 'content-type': 'application/json' },
        }),
        'AUTH_TOKEN_MISSING',
      ],
      [
        await harness.send({
          method: 'POST',
          path: '/v3/fx/test/echo',
          body: withMetadata({ amount: '1', currency: 'USD' }),
          headers: { 'content-type': 'text/plain' },
        }),
        'VALIDATION_CONTENT_TYPE',
      ],
      [
        await harness.send({
          method: 'POST',
          path: '/v3/fx/test/echo',
          body: withMetadata({ amount: '1', currency: 'USD', pad: 'x'.repeat(9000) }),
          headers: { 'content-type': 'application/json' },
        }),
        'VALIDATION_PAYLOAD_TOO_LARGE',
      ],
      [
        await harness.send({
          method: 'PUT',
          path: '/v3/fx/test/echo',
          body: withMetadata({ amount: '1' }),
          headers: { 'content-type': 'application/json' },
        }),
        'METHOD_NOT_ALLOWED',
      ],
    ];
    // Same key, another body: 422 IDEMPOTENCY_MISMATCH must not leak the first request's metadata either.
    expect(
      (await echo(withMetadata({ amount: '1', currency: 'USD' }), { idempotencyKey: 'meta-mismatch' })).status,
    ).toBe(200);
    cases.push([
      await echo(withMetadata({ amount: '2', currency: 'USD' }), { idempotencyKey: 'meta-mismatch' }),
      'IDEMPOTENCY_MISMATCH',
    ]);

    for (const [response, code] of cases) {
      expectV3Error(response, code, { write: true });
      expect(response.text).not.toContain(MARKER);
      expect(response.text).not.toContain('"metadata"');
    }
  });
});
