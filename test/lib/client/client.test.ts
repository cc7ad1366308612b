/**
 * `fxgate/client` against a real core on loopback (test/support/v3-harness.ts): every operation
 * of docs/openapi/v3.json called through it (a new operation without a call here fails), the
 * signature over the exact bytes sent (the core verifying it is the proof), pagination across
 * pages, and the retry rules through a loopback proxy (fault-proxy.ts), the core's own rate
 * limiter and a failpoint.
 */
import { readFile } from 'node:fs/promises';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { createClient, type V3Client, V3ClientError } from '../../../src/lib/client/client.js';
import { armFailpoint, disarmAllFailpoints } from '../../../src/lib/failpoints.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { FaultProxy, SERVICE_UNAVAILABLE } from '../../support/fault-proxy.js';
import { V3Harness } from '../../support/v3-harness.js';

const ABA = '021000021'; // JPMorgan Chase's published ABA routing number
const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/** `METHOD /path/{template}` of every operation the committed v3 document declares. */
async function documentedOperations(): Promise<string[]> {
  const document = JSON.parse(await readFile(new URL('../../../docs/openapi/v3.json', import.meta.url), 'utf8')) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(document.paths)
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    )
    .sort();
}

/** A client on `baseUrl` that notes the operation (method and path template) of every call. */
function recordingClient(
  baseUrl: string,
  key: LoadedKey,
  options: Omit<Parameters<typeof createClient>[0], 'baseUrl' | 'key'> = {},
): { client: V3Client; calls: string[] } {
  const client = createClient({ baseUrl, key: key.file, ...options });
  const calls: string[] = [];
  client.use({
    onRequest({ request, schemaPath }) {
      calls.push(`${request.method} ${schemaPath}`);
    },
  });
  return { client, calls };
}

/** The data of a successful call; the error envelope's code in the failure message otherwise. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  expect(result.error, JSON.stringify(result.error)).toBeUndefined();
  expect(result.response.status).toBe(200);
  return result.data as T;
}

describe('every v3 operation through the client', () => {
  let harness: V3Harness;
  beforeAll(async () => {
    harness = await V3Harness.start({ core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
  });
  afterAll(async () => harness?.close());

  it('calls each operation of the v3 document, signed, with money as strings', async () => {
    const key = await harness.createKey();
    const { client, calls } = recordingClient(harness.baseUrl, key);

    const pairs = ok(await client.GET('/v3/fx/pairs'));
    expect(pairs.data.length).toBeGreaterThan(0);

    // Funds the USD sell side so that a trade can settle.
    const deposit = ok(
      await client.POST('/v3/fx/sandbox/deposits', {
        body: { currency: 'USD', amount: '50000.00', comments: 'Zahlung für Müller: 東京 "quoted" \\ back' },
      }),
    ).data;
    expect(deposit.amount).toBe('50000.00');
    expect(ok(await client.GET('/v3/fx/deposits/{id}', { params: { path: { id: deposit.id } } })).data.id).toBe(
      deposit.id,
    );
    expect(ok(await client.GET('/v3/fx/deposits')).data.map((row) => row.id)).toContain(deposit.id);

    const terms = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '100.00', amountCurrency: 'USD' } as const;
    const quote = ok(await client.POST('/v3/fx/quotes', { body: terms })).data;
    expect(quote.sellAmount).toMatch(DECIMAL);
    expect(typeof quote.rate).toBe('string');
    expect(ok(await client.GET('/v3/fx/quotes/{id}', { params: { path: { id: quote.id } } })).data.id).toBe(quote.id);

    const settled = ok(await client.POST('/v3/fx/trades', { body: { quoteId: quote.id } })).data;
    expect(ok(await client.GET('/v3/fx/trades/{id}', { params: { path: { id: settled.id } } })).data.id).toBe(
      settled.id,
    );
    const settlement = ok(await client.POST('/v3/fx/trades/{id}/settle', { params: { path: { id: settled.id } } }));
    expect(settlement.data.status).toBe('SETTLED');

    const second = ok(
      await client.POST('/v3/fx/trades', {
        body: { quoteId: ok(await client.POST('/v3/fx/quotes', { body: terms })).data.id },
      }),
    ).data;
    const reverseQuote = ok(
      await client.POST('/v3/fx/trades/{id}/reverse-quote', { params: { path: { id: second.id } } }),
    ).data;
    expect(reverseQuote.reversesTradeId).toBe(second.id);
    ok(
      await client.POST('/v3/fx/trades/{id}/reverse', {
        params: { path: { id: second.id } },
        body: { quoteId: reverseQuote.id },
      }),
    );
    expect(ok(await client.GET('/v3/fx/trades')).data.map((trade) => trade.id)).toEqual(
      expect.arrayContaining([settled.id, second.id]),
    );

    expect(ok(await client.GET('/v3/fx/exposure')).data).toBeTypeOf('object');
    const balances = ok(await client.GET('/v3/fx/balances'));
    for (const balance of balances.data) expect(JSON.stringify(balance)).not.toMatch(/":\s*-?[0-9]/);

    const account = ok(
      await client.POST('/v3/fx/withdrawal-accounts', {
        body: {
          currency: 'USD',
          assetType: 'FIAT',
          accountName: 'Operating account',
          bankName: 'JPMorgan Chase',
          transferType: 'FEDWIRE',
          accountNumber: '12345678',
          routingNumber: ABA,
        },
      }),
    ).data;
    const byAccount = { params: { path: { id: account.id } } };
    expect(ok(await client.GET('/v3/fx/withdrawal-accounts')).data.map((row) => row.id)).toContain(account.id);
    expect(ok(await client.GET('/v3/fx/withdrawal-accounts/{id}', byAccount)).data.id).toBe(account.id);
    expect(ok(await client.POST('/v3/fx/sandbox/withdrawal-accounts/{id}/verify', byAccount)).data.verified).toBe(true);
    expect(
      ok(
        await client.POST('/v3/fx/sandbox/withdrawal-accounts/{id}', {
          ...byAccount,
          body: { withdrawalsEnabled: true },
        }),
      ).data.withdrawalsEnabled,
    ).toBe(true);

    const withdraw = async () =>
      ok(
        await client.POST('/v3/fx/withdrawals', {
          body: { withdrawalAccountId: account.id, withdrawalAmount: '10.00', currency: 'USD' },
        }),
      ).data;
    const completed = await withdraw();
    expect(completed.withdrawalAmount).toBe('10.00');
    const byCompleted = { params: { path: { id: completed.id } } };
    expect(ok(await client.GET('/v3/fx/withdrawals/{id}', byCompleted)).data.id).toBe(completed.id);
    expect(ok(await client.POST('/v3/fx/sandbox/withdrawals/{id}/complete', byCompleted)).data.status).toBe(
      'COMPLETED',
    );
    const failed = await withdraw();
    expect(
      ok(
        await client.POST('/v3/fx/sandbox/withdrawals/{id}/fail', {
          params: { path: { id: failed.id } },
          body: { failureReason: 'returned by the beneficiary bank' },
        }),
      ).data.status,
    ).toBe('FAILED');
    expect(ok(await client.GET('/v3/fx/withdrawals')).data.map((row) => row.id)).toEqual(
      expect.arrayContaining([completed.id, failed.id]),
    );

    const endpoint = ok(
      await client.POST('/v3/fx/webhook-endpoints', { body: { url: 'http://127.0.0.1:9/fxgate-events' } }),
    ).data;
    const byEndpoint = { params: { path: { id: endpoint.id } } };
    expect(ok(await client.GET('/v3/fx/webhook-endpoints')).data.map((row) => row.id)).toContain(endpoint.id);
    expect(ok(await client.GET('/v3/fx/webhook-endpoints/{id}', byEndpoint)).data.id).toBe(endpoint.id);
    expect(ok(await client.DELETE('/v3/fx/webhook-endpoints/{id}', byEndpoint)).data.id).toBe(endpoint.id);

    expect(ok(await client.GET('/v3/openapi.json'))).toMatchObject({ openapi: expect.any(String) });

    expect([...new Set(calls)].sort()).toEqual(await documentedOperations());
  });

  it('hands back the typed error envelope of a refused call, and does not send it again', async () => {
    const key = await harness.createKey();
    const { client, calls } = recordingClient(harness.baseUrl, key);
    const refused = await client.POST('/v3/fx/quotes', {
      body: { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '1.123456789', amountCurrency: 'USD' },
    });
    expect(refused.data).toBeUndefined();
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error.code).toBe('VALIDATION_BODY_FAILED');
    expect(refused.error?.error.retryStrategy).toBe('FIX_AND_RESUBMIT');
    expect(calls).toHaveLength(1);
  });

  it('signs the exact bytes it sends: the core refuses the same body re-serialised after signing', async () => {
    const key = await harness.createKey();
    const body = { currency: 'USD', amount: '12.34', comments: 'naïve café — 東京' };
    const signedAsSent = createClient({ baseUrl: harness.baseUrl, key: key.file });
    expect((await signedAsSent.POST('/v3/fx/sandbox/deposits', { body })).response.status).toBe(200);

    // A transport that re-serialises the body after the signature was made: same JSON, other bytes.
    const reserialising = createClient({
      baseUrl: harness.baseUrl,
      key: key.file,
      retry: { maxAttempts: 1 },
      fetch: async (request) => {
        const text = await request.text();
        return fetch(
          new Request(request.url, {
            method: request.method,
            headers: request.headers,
            body: JSON.stringify(JSON.parse(text), null, 2),
          }),
        );
      },
    });
    const refused = await reserialising.POST('/v3/fx/sandbox/deposits', { body });
    expect(refused.response.status).toBe(401);
    expect(refused.error?.error).toMatchObject({
      code: 'AUTH_TOKEN_INVALID_CONFIG',
      details: { reason: 'SIGNATURE_INVALID' },
    });
  });

  it('refuses a key that is not a key file, naming what to pass', () => {
    expect(() => createClient({ baseUrl: harness.baseUrl, key: { name: 'x' } })).toThrow(
      /key is not an fxgate API key file \(pass the parsed JSON that `fxgate keys create` writes\): /,
    );
  });
});

describe('paginate', () => {
  let harness: V3Harness;
  beforeAll(async () => {
    harness = await V3Harness.start({ core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
  });
  afterAll(async () => harness?.close());

  it('yields every record across three pages, newest first, following the cursors', async () => {
    const key = await harness.createKey();
    const { client, calls } = recordingClient(harness.baseUrl, key);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const quote = ok(
        await client.POST('/v3/fx/quotes', {
          body: { buyCurrency: 'EUR', sellCurrency: 'USD', amount: `${10 + i}.00`, amountCurrency: 'USD' },
        }),
      ).data;
      made.push(ok(await client.POST('/v3/fx/trades', { body: { quoteId: quote.id } })).data.id);
    }
    calls.length = 0;
    const seen: string[] = [];
    for await (const trade of client.paginate('/v3/fx/trades', { query: { limit: 2 } })) {
      expect(trade.sellAmount).toMatch(DECIMAL);
      seen.push(trade.id);
    }
    expect(seen).toEqual([...made].reverse());
    expect(calls).toEqual(['GET /v3/fx/trades', 'GET /v3/fx/trades', 'GET /v3/fx/trades']);
  });

  it('throws the refusal of a page as V3ClientError with its envelope', async () => {
    const key = await harness.createKey();
    const client = createClient({ baseUrl: harness.baseUrl, key: key.file });
    const pages = client.paginate('/v3/fx/trades', { query: { limit: 1000 } });
    const thrown = await pages.next().then(
      () => null,
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(V3ClientError);
    expect((thrown as V3ClientError).error?.error.code).toBe('VALIDATION_QUERY_FAILED');
    expect((thrown as V3ClientError).message).toMatch(
      /^VALIDATION_QUERY_FAILED \(400\): .* \[retryStrategy FIX_AND_RESUBMIT\]$/,
    );
  });
});

describe('retries', () => {
  let harness: V3Harness;
  let proxy: FaultProxy;
  const quoteTerms = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '25.00', amountCurrency: 'USD' } as const;
  beforeAll(async () => {
    // 10 reads and 10 writes per 10 s per key: the 11th waits about a second (Retry-After: 1).
    harness = await V3Harness.start({ core: { rateLimits: { reads: 10, writes: 10 } } });
    proxy = await FaultProxy.start(harness.baseUrl);
  });
  afterEach(() => {
    disarmAllFailpoints();
    proxy.received.length = 0;
    proxy.upstreamAnswers.length = 0;
    proxy.plan = () => ({ kind: 'forward' });
  });
  afterAll(async () => {
    await proxy?.close();
    await harness?.close();
  });

  it('waits out the core’s 429 and its Retry-After, then sends the write again with the same Idempotency-Key and a fresh token', async () => {
    const key = await harness.createKey();
    const client = createClient({ baseUrl: proxy.url, key: key.file });
    // Writes until one meets the limit (the 11th unless the cell refilled meanwhile); that one is checked.
    for (let sent = 0; sent < 40; sent++) {
      proxy.received.length = 0;
      proxy.upstreamAnswers.length = 0;
      const started = Date.now();
      const quote = ok(await client.POST('/v3/fx/quotes', { body: quoteTerms })).data;
      const waited = Date.now() - started;
      if (proxy.upstreamAnswers[0]!.status !== 429) continue;
      expect(proxy.upstreamAnswers.map((answer) => answer.status)).toEqual([429, 200]);
      const retryAfter = Number(proxy.upstreamAnswers[0]!.retryAfter);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(waited).toBeGreaterThanOrEqual(retryAfter * 1000);
      const [first, again] = proxy.received;
      expect(again!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
      expect(again!.headers.authorization).not.toBe(first!.headers.authorization);
      expect(again!.body.equals(first!.body)).toBe(true);
      expect(quote.sellAmount).toBe('25.00');
      return;
    }
    expect.fail('40 writes in a row never met the limit of 10 per 10 s');
  });

  it('sends a write again after a 503 with the same key, and gets the answer the core made the first time', async () => {
    const key = await harness.createKey();
    const client = createClient({ baseUrl: proxy.url, key: key.file, retry: { baseDelayMs: 10 } });
    // The core makes the quote; the proxy loses its answer and says 503.
    proxy.plan = (_request, index) =>
      index === 0 ? { kind: 'forward-then-answer', answer: SERVICE_UNAVAILABLE } : { kind: 'forward' };
    const quote = ok(await client.POST('/v3/fx/quotes', { body: quoteTerms })).data;
    expect(proxy.received).toHaveLength(2);
    expect(proxy.received[1]!.headers['idempotency-key']).toBe(proxy.received[0]!.headers['idempotency-key']);
    const firstAnswer = JSON.parse(proxy.upstreamAnswers[0]!.body) as { data: { id: string } };
    expect(quote.id).toBe(firstAnswer.data.id);
  });

  it('keeps the Idempotency-Key it is given across its retries', async () => {
    const key = await harness.createKey();
    const client = createClient({ baseUrl: proxy.url, key: key.file, retry: { baseDelayMs: 10 } });
    proxy.plan = (_request, index) =>
      index < 2 ? { kind: 'answer', answer: SERVICE_UNAVAILABLE } : { kind: 'forward' };
    ok(
      await client.POST('/v3/fx/quotes', {
        params: { header: { 'Idempotency-Key': 'order-42:quote' } },
        body: quoteTerms,
      }),
    );
    expect(proxy.received.map((request) => request.headers['idempotency-key'])).toEqual([
      'order-42:quote',
      'order-42:quote',
      'order-42:quote',
    ]);
  });

  it('sends a read again after a cut connection and after a proxy’s 502 without an envelope', async () => {
    const key = await harness.createKey();
    const client = createClient({ baseUrl: proxy.url, key: key.file, retry: { baseDelayMs: 10 } });
    proxy.plan = (_request, index) =>
      index === 0
        ? { kind: 'cut' }
        : index === 1
          ? { kind: 'answer', answer: { status: 502, body: 'Bad Gateway' } }
          : { kind: 'forward' };
    ok(await client.GET('/v3/fx/pairs'));
    expect(proxy.received).toHaveLength(3);
  });

  it('stops waiting to retry when the call is aborted', async () => {
    const key = await harness.createKey();
    const client = createClient({ baseUrl: proxy.url, key: key.file, retry: { baseDelayMs: 10_000 } });
    proxy.plan = () => ({
      kind: 'answer',
      answer: { ...SERVICE_UNAVAILABLE, headers: { ...SERVICE_UNAVAILABLE.headers, 'retry-after': '10' } },
    });
    const started = Date.now();
    const aborted = await client.GET('/v3/fx/pairs', { signal: AbortSignal.timeout(200) }).then(
      () => null,
      (error: unknown) => error,
    );
    expect((aborted as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(proxy.received).toHaveLength(1);
  });

  it('stops after maxAttempts and hands back the last answer', async () => {
    const key = await harness.createKey();
    const client = createClient({ baseUrl: proxy.url, key: key.file, retry: { baseDelayMs: 10, maxAttempts: 3 } });
    proxy.plan = () => ({ kind: 'answer', answer: SERVICE_UNAVAILABLE });
    const result = await client.GET('/v3/fx/pairs');
    expect(result.response.status).toBe(503);
    expect(result.error?.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(proxy.received).toHaveLength(3);
  });

  it('does not send again a 4xx, nor a write the core may have run (CHECK_STATE_THEN_RETRY), whose resourceId it hands back', async () => {
    const key = await harness.createKey();
    const client = createClient({ baseUrl: proxy.url, key: key.file, retry: { baseDelayMs: 10 } });
    const missing = await client.GET('/v3/fx/trades/{id}', {
      params: { path: { id: 'trd_00000000000000000000000000000000' } },
    });
    expect(missing.error?.error.code).toBe('TRADE_NOT_FOUND');
    expect(proxy.received).toHaveLength(1);

    const quote = ok(await client.POST('/v3/fx/quotes', { body: quoteTerms })).data;
    proxy.received.length = 0;
    armFailpoint('trade.after-commit');
    const failed = await client.POST('/v3/fx/trades', { body: { quoteId: quote.id } });
    expect(failed.response.status).toBe(500);
    expect(failed.error?.error.retryStrategy).toBe('CHECK_STATE_THEN_RETRY');
    expect(proxy.received).toHaveLength(1);
    const resourceId = (failed.error?.error.details as { resourceId?: string }).resourceId;
    expect(resourceId).toMatch(/^trd_/);
    expect(ok(await client.GET('/v3/fx/trades/{id}', { params: { path: { id: resourceId! } } })).data.quoteId).toBe(
      quote.id,
    );
  });
});
