/**
 * Operations without a body schema take no parameters: through the signed pipeline, an empty
 * body or the JSON object `{}` (as most HTTP clients send for a POST without parameters, with any
 * whitespace around it) runs the action; any other body is 400 VALIDATION_BODY_FAILED naming the
 * offending field, and the resource is unchanged. The optional bodies of reverse-quote and sandbox
 * fail answer the same bodies the same way. The signature and the idempotency fingerprint stay
 * over the bytes as sent, so `{}` and an empty body under one Idempotency-Key are a mismatch.
 */
import { createHash, randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { coreOperations } from '../../../src/core/app.js';
import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { FEDWIRE_ACCOUNT, postData, postEmpty, recordTestDeposit } from '../../support/book-fixtures.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { TEST_ISSUER, type TestResponse, V3Harness } from '../../support/v3-harness.js';

interface Target {
  readonly name: string;
  readonly method: 'POST' | 'DELETE';
  /** Whether the operation has no body schema at all (the others take optional fields). */
  readonly parameterless: boolean;
  /** Makes a fresh resource the action can run on: the action's path and where to read the resource. */
  prepare(): Promise<{ path: string; read: string }>;
  /** The resource's status before the action. */
  readonly before: string;
  /** Checks the action's `data` once it has run. */
  done(data: Record<string, unknown>): void;
}

let harness: V3Harness;
let key: LoadedKey;

beforeAll(async () => {
  harness = await V3Harness.start({ core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
  key = await harness.createKey();
  // Enough USD that every trade below is funded (settle) and every withdrawal covered.
  await recordTestDeposit(harness.db, {
    orgId: key.file.orgId,
    environment: key.file.mode,
    currency: 'USD',
    amount: '1000000',
  });
});
afterAll(async () => harness?.close());

async function executedTrade(): Promise<string> {
  const quote = await postData(harness, key, '/v3/fx/quotes', {
    buyCurrency: 'EUR',
    sellCurrency: 'USD',
    amount: '10.00',
    amountCurrency: 'EUR',
  });
  return (await postData(harness, key, '/v3/fx/trades', { quoteId: quote.id })).id!;
}

async function pendingAccount(): Promise<string> {
  const account = await postData(harness, key, '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT);
  return account.id!;
}

async function pendingWithdrawal(): Promise<string> {
  const accountId = await pendingAccount();
  await postEmpty(harness, key, `/v3/fx/sandbox/withdrawal-accounts/${accountId}/verify`);
  return (
    await postData(harness, key, '/v3/fx/withdrawals', {
      withdrawalAccountId: accountId,
      withdrawalAmount: '1.00',
      currency: 'USD',
    })
  ).id!;
}

const TARGETS: readonly Target[] = [
  {
    name: 'POST /v3/fx/trades/{id}/settle',
    method: 'POST',
    parameterless: true,
    prepare: async () => {
      const id = await executedTrade();
      return { path: `/v3/fx/trades/${id}/settle`, read: `/v3/fx/trades/${id}` };
    },
    before: 'EXECUTED',
    done: (data) => expect(data).toMatchObject({ status: 'SETTLED', settlementStage: 'SETTLED' }),
  },
  {
    name: 'POST /v3/fx/sandbox/withdrawal-accounts/{id}/verify',
    method: 'POST',
    parameterless: true,
    prepare: async () => {
      const id = await pendingAccount();
      return { path: `/v3/fx/sandbox/withdrawal-accounts/${id}/verify`, read: `/v3/fx/withdrawal-accounts/${id}` };
    },
    before: 'PENDING_VERIFICATION',
    done: (data) => expect(data).toMatchObject({ status: 'ACTIVE', verified: true }),
  },
  {
    name: 'POST /v3/fx/sandbox/withdrawals/{id}/complete',
    method: 'POST',
    parameterless: true,
    prepare: async () => {
      const id = await pendingWithdrawal();
      return { path: `/v3/fx/sandbox/withdrawals/${id}/complete`, read: `/v3/fx/withdrawals/${id}` };
    },
    before: 'PENDING',
    done: (data) => expect(data).toMatchObject({ status: 'COMPLETED', failureReason: null }),
  },
  {
    name: 'DELETE /v3/fx/webhook-endpoints/{id}',
    method: 'DELETE',
    parameterless: true,
    prepare: async () => {
      const id = (await postData(harness, key, '/v3/fx/webhook-endpoints', { url: 'https://example.com/hook' })).id!;
      return { path: `/v3/fx/webhook-endpoints/${id}`, read: `/v3/fx/webhook-endpoints/${id}` };
    },
    before: 'ACTIVE',
    done: (data) => expect(data).toMatchObject({ status: 'DELETED' }),
  },
  {
    name: 'POST /v3/fx/trades/{id}/reverse-quote (optional body)',
    method: 'POST',
    parameterless: false,
    prepare: async () => {
      const id = await executedTrade();
      return { path: `/v3/fx/trades/${id}/reverse-quote`, read: `/v3/fx/trades/${id}` };
    },
    before: 'EXECUTED',
    done: (data) => expect(data).toMatchObject({ reversesTradeId: expect.stringMatching(/^trd_/) }),
  },
  {
    name: 'POST /v3/fx/sandbox/withdrawals/{id}/fail (optional body)',
    method: 'POST',
    parameterless: false,
    prepare: async () => {
      const id = await pendingWithdrawal();
      return { path: `/v3/fx/sandbox/withdrawals/${id}/fail`, read: `/v3/fx/withdrawals/${id}` };
    },
    before: 'PENDING',
    done: (data) => expect(data).toMatchObject({ status: 'FAILED', failureReason: expect.any(String) }),
  },
];
const PARAMETERLESS = TARGETS.filter((target) => target.parameterless);

function act(
  target: Target,
  path: string,
  body?: string,
  headers?: Record<string, string | undefined>,
  idempotencyKey?: string,
): Promise<TestResponse> {
  const idem = target.method === 'POST' ? (idempotencyKey ?? randomUUID()) : undefined;
  return harness.signed({ key, method: target.method, path, body, idempotencyKey: idem, headers });
}

async function statusOf(read: string): Promise<unknown> {
  const response = await harness.signed({ key, path: read });
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: { status: unknown } }>().data.status;
}

function dataOf(response: TestResponse): Record<string, unknown> {
  expect(response.status, response.text.slice(0, 300)).toBe(200);
  return response.json<{ data: Record<string, unknown> }>().data;
}

function issuesOf(response: TestResponse): Array<[string, string]> {
  const error = expectV3Error(response, 'VALIDATION_BODY_FAILED');
  return (error.details.issues as Array<{ path: string; code: string }>).map((issue) => [issue.path, issue.code]);
}

it('covers every write of the core without a body schema', async () => {
  const operations = await coreOperations({
    db: harness.db,
    store: harness.store,
    registry: harness.registry,
    keyring: harness.keyring,
  });
  const bodiless = operations.filter((operation) => operation.method !== 'GET' && operation.body === undefined);
  const display = (operation: { method: string; path: string }) =>
    `${operation.method} ${operation.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
  expect(bodiless.map(display).sort()).toEqual(PARAMETERLESS.map((target) => target.name).sort());
});

describe.each(TARGETS)('$name', (target) => {
  const accepted: Array<[string, string | undefined, Record<string, string>]> = [
    ['no body, no Content-Type', undefined, {}],
    ['no body, Content-Type application/json', undefined, { 'content-type': 'application/json' }],
    ['{}', '{}', {}],
    ['{ }', '{ }', {}],
    ['{}\\n', '{}\n', {}],
    ['whitespace around {}', '\r\n\t{\n}\n ', {}],
    ['{} declared with a charset', '{}', { 'content-type': 'application/json; charset=utf-8' }],
  ];

  it.each(accepted)('runs with %s', async (_label, body, headers) => {
    const { path } = await target.prepare();
    target.done(dataOf(await act(target, path, body, headers)));
  });

  // One resource for every refusal: each must leave it as it was.
  let refused: { path: string; read: string };
  beforeAll(async () => {
    refused = await target.prepare();
  });

  it.each<[string, string, Array<[string, string]>]>([
    ['{"foo":1}', '{"foo":1}', [['foo', 'unrecognized_keys']]],
    [
      'two unknown fields',
      '{ "foo": 1, "bar": {} }',
      [
        ['foo', 'unrecognized_keys'],
        ['bar', 'unrecognized_keys'],
      ],
    ],
    ['[]', '[]', [['', 'invalid_type']]],
    ['[{}]', '[{}]', [['', 'invalid_type']]],
    ['null', 'null', [['', 'invalid_type']]],
    ['a string', '"{}"', [['', 'invalid_type']]],
    ['a number', '0', [['', 'invalid_type']]],
    ['true', 'true', [['', 'invalid_type']]],
    ['malformed JSON', '{', [['', 'invalid_json']]],
    ['{} followed by more', '{}{}', [['', 'invalid_json']]],
    ['whitespace alone (not an empty body)', ' \n', [['', 'invalid_json']]],
  ])('refuses %s with 400 VALIDATION_BODY_FAILED naming the issue', async (_label, body, issues) => {
    expect(issuesOf(await act(target, refused.path, body))).toEqual(issues);
    expect(await statusOf(refused.read)).toBe(target.before);
  });

  it.each<[string, string, Record<string, string | undefined>]>([
    ['{} without Content-Type', '{}', { 'content-type': undefined }],
    ['{} declared as text/plain', '{}', { 'content-type': 'text/plain' }],
    ['no body declared as text/plain', '', { 'content-type': 'text/plain' }],
  ])('refuses %s with 400 VALIDATION_CONTENT_TYPE', async (_label, body, headers) => {
    expectV3Error(await act(target, refused.path, body, headers), 'VALIDATION_CONTENT_TYPE');
    expect(await statusOf(refused.read)).toBe(target.before);
  });

  it('checks the signature over the bytes as sent: signed {}, sent { }, is refused', async () => {
    const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
    const idempotencyKey = target.method === 'POST' ? randomUUID() : undefined;
    const headers = await signer.headers({
      method: target.method,
      pathAndQuery: refused.path,
      body: '{}',
      idempotencyKey,
    });
    expectV3Error(
      await harness.send({ method: target.method, path: refused.path, body: '{ }', headers }),
      'AUTH_TOKEN_INVALID_CONFIG',
      {
        details: { reason: 'SIGNATURE_INVALID' },
      },
    );
    expect(await statusOf(refused.read)).toBe(target.before);
  });
});

describe.each(PARAMETERLESS.filter((target) => target.method === 'POST'))('idempotency of $name', (target) => {
  const hashOf = (path: string, body: string) =>
    `sha256:${createHash('sha256').update(`POST\n${path}\n`).update(body).digest('hex')}`;

  it('replays {} under the same key; an empty body (or { }) under it is 422 IDEMPOTENCY_MISMATCH', async () => {
    const { path } = await target.prepare();
    const idem = randomUUID();
    const first = await act(target, path, '{}', undefined, idem);
    target.done(dataOf(first));
    expect(first.headers['idempotency-replayed']).toBe('false');
    const replay = await act(target, path, '{}', undefined, idem);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    for (const other of [undefined, '{ }']) {
      expectV3Error(await act(target, path, other, undefined, idem), 'IDEMPOTENCY_MISMATCH', {
        details: { originalRequestHash: hashOf(path, '{}') },
      });
    }
  });

  it('replays an empty body under the same key; {} under it is 422 IDEMPOTENCY_MISMATCH', async () => {
    const { path } = await target.prepare();
    const idem = randomUUID();
    const first = await act(target, path, undefined, undefined, idem);
    target.done(dataOf(first));
    const replay = await act(target, path, undefined, undefined, idem);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    expectV3Error(await act(target, path, '{}', undefined, idem), 'IDEMPOTENCY_MISMATCH', {
      details: { originalRequestHash: hashOf(path, '') },
    });
  });
});
