/**
 * Text the database cannot store, on every v3 write against the real core: U+0000 and a lone
 * UTF-16 surrogate (high or low), in each string field of each body and in metadata keys, are
 * 400 VALIDATION_BODY_FAILED naming the field (code `invalid_text`), never a 500 with a new
 * resourceId. Nothing is written (every row of the test's books, ledger included, is unchanged),
 * and a retry with the same Idempotency-Key replays the same 400. Well-formed text of any kind
 * (emoji, accents, tab, newline, U+0001) is stored and read back exactly. Query parameters get
 * the same check, and `%00` in a path id is a 404.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkLedger } from '../../../src/core/ledger/ledger-check.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import {
  FEDWIRE_ACCOUNT,
  postData,
  postEmpty,
  quoteAndTrade,
  recordTestDeposit,
  SWIFT_ACCOUNT,
} from '../../support/book-fixtures.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { type TestResponse, V3Harness } from '../../support/v3-harness.js';

const STABLECOIN_ACCOUNT = {
  currency: 'USDC',
  assetType: 'STABLECOIN',
  accountName: 'Treasury wallet',
  network: 'ETHEREUM',
  address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
} as const;

const BAD_TEXT = [
  ['U+0000', '\u0000', /NUL character \(U\+0000/],
  ['a lone high surrogate', '\ud800', /unpaired UTF-16 surrogate \(U\+D800\)/],
  ['a lone low surrogate', '\udc00', /unpaired UTF-16 surrogate \(U\+DC00\)/],
] as const;

/** Well-formed text that is not plain ASCII: accents, CJK, an emoji (a surrogate pair), tab, newline, U+0001, DEL. */
const FINE_TEXT = 'Zoë\t東京 😀\n\u0001\u007f end';
const FINE_KEY = 'clé 😀\t1';

let harness: V3Harness;
/** A trading book: a trade to reverse and its reverse quote, a fresh quote to execute. */
let trader: LoadedKey;
/** A money book: a verified, funded USD account and a pending withdrawal. */
let banker: LoadedKey;
let unusedQuoteId: string;
let tradeId: string;
let reverseQuoteId: string;
let accountId: string;
let withdrawalId: string;

beforeAll(async () => {
  harness = await V3Harness.start({ core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
  trader = await harness.createKey();
  banker = await harness.createKey();
  unusedQuoteId = (
    await postData(harness, trader, '/v3/fx/quotes', {
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      amount: '10.00',
      amountCurrency: 'EUR',
    })
  ).id!;
  tradeId = (
    await quoteAndTrade(harness, trader, {
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      amount: '20.00',
      amountCurrency: 'EUR',
    })
  ).id!;
  reverseQuoteId = (await postData(harness, trader, `/v3/fx/trades/${tradeId}/reverse-quote`, {})).id!;

  await recordTestDeposit(harness.db, {
    orgId: banker.file.orgId,
    environment: 'sandbox',
    currency: 'USD',
    amount: '1000.00',
  });
  accountId = (await postData(harness, banker, '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT)).id!;
  await postEmpty(harness, banker, `/v3/fx/sandbox/withdrawal-accounts/${accountId}/verify`);
  withdrawalId = (
    await postData(harness, banker, '/v3/fx/withdrawals', {
      withdrawalAccountId: accountId,
      withdrawalAmount: '1.00',
      currency: 'USD',
    })
  ).id!;
});
afterAll(async () => harness?.close());

function post(
  key: LoadedKey,
  path: string,
  body: unknown,
  idempotencyKey: string = randomUUID(),
): Promise<TestResponse> {
  return harness.signed({ key, method: 'POST', path, body: JSON.stringify(body), idempotencyKey });
}

/** Every row the books of this file own, in full: any write at all changes it. */
async function snapshot(): Promise<string> {
  const tables = [
    'trades',
    'quotes',
    'withdrawals',
    'withdrawal_accounts',
    'deposits',
    'webhook_endpoints',
    'events',
    'ledger_transactions',
    'ledger_accounts',
    'org_environments',
  ];
  const parts = tables.map(
    (table) =>
      `'${table}', (SELECT json_agg(to_jsonb(t) ORDER BY to_jsonb(t)::text) FROM ${table} t WHERE t.org_id = ANY($1::uuid[]))`,
  );
  const entries = `'ledger_entries', (SELECT count(*) FROM ledger_entries e JOIN ledger_transactions x ON x.id = e.transaction_id WHERE x.org_id = ANY($1::uuid[]))`;
  const { rows } = await harness.db.query<{ state: string }>(
    `SELECT json_build_object(${[...parts, entries].join(', ')})::text AS state`,
    [[trader.file.orgId, banker.file.orgId]],
  );
  return rows[0]!.state;
}

interface Write {
  readonly operation: string;
  readonly key: () => LoadedKey;
  readonly path: () => string;
  /** A body the operation accepts (or that fails only later, on a rule of its own). */
  readonly body: () => Record<string, unknown>;
}

const WRITES = {
  quote: {
    operation: 'POST /v3/fx/quotes',
    key: () => trader,
    path: () => '/v3/fx/quotes',
    body: () => ({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '5.00', amountCurrency: 'EUR' }),
  },
  trade: {
    operation: 'POST /v3/fx/trades',
    key: () => trader,
    path: () => '/v3/fx/trades',
    body: () => ({ quoteId: unusedQuoteId, clientReferenceId: 'inv-1' }),
  },
  reverseQuote: {
    operation: 'POST /v3/fx/trades/{id}/reverse-quote',
    key: () => trader,
    path: () => `/v3/fx/trades/${tradeId}/reverse-quote`,
    body: () => ({ validForSeconds: 30 }),
  },
  reverse: {
    operation: 'POST /v3/fx/trades/{id}/reverse',
    key: () => trader,
    path: () => `/v3/fx/trades/${tradeId}/reverse`,
    body: () => ({ quoteId: reverseQuoteId }),
  },
  settle: {
    operation: 'POST /v3/fx/trades/{id}/settle',
    key: () => trader,
    path: () => `/v3/fx/trades/${tradeId}/settle`,
    body: () => ({}),
  },
  fedwire: {
    operation: 'POST /v3/fx/withdrawal-accounts (FEDWIRE)',
    key: () => banker,
    path: () => '/v3/fx/withdrawal-accounts',
    body: () => ({ ...FEDWIRE_ACCOUNT, memo: 'memo', comments: 'c' }),
  },
  swift: {
    operation: 'POST /v3/fx/withdrawal-accounts (SWIFT)',
    key: () => banker,
    path: () => '/v3/fx/withdrawal-accounts',
    body: () => ({ ...SWIFT_ACCOUNT }),
  },
  stablecoin: {
    operation: 'POST /v3/fx/withdrawal-accounts (STABLECOIN)',
    key: () => banker,
    path: () => '/v3/fx/withdrawal-accounts',
    body: () => ({ ...STABLECOIN_ACCOUNT, comments: 'c' }),
  },
  accountUpdate: {
    operation: 'POST /v3/fx/sandbox/withdrawal-accounts/{id}',
    key: () => banker,
    path: () => `/v3/fx/sandbox/withdrawal-accounts/${accountId}`,
    body: () => ({ status: 'ACTIVE' }),
  },
  verify: {
    operation: 'POST /v3/fx/sandbox/withdrawal-accounts/{id}/verify',
    key: () => banker,
    path: () => `/v3/fx/sandbox/withdrawal-accounts/${accountId}/verify`,
    body: () => ({}),
  },
  withdrawal: {
    operation: 'POST /v3/fx/withdrawals',
    key: () => banker,
    path: () => '/v3/fx/withdrawals',
    body: () => ({ withdrawalAccountId: accountId, withdrawalAmount: '2.00', currency: 'USD', comments: 'c' }),
  },
  complete: {
    operation: 'POST /v3/fx/sandbox/withdrawals/{id}/complete',
    key: () => banker,
    path: () => `/v3/fx/sandbox/withdrawals/${withdrawalId}/complete`,
    body: () => ({}),
  },
  fail: {
    operation: 'POST /v3/fx/sandbox/withdrawals/{id}/fail',
    key: () => banker,
    path: () => `/v3/fx/sandbox/withdrawals/${withdrawalId}/fail`,
    body: () => ({ failureReason: 'r' }),
  },
  deposit: {
    operation: 'POST /v3/fx/sandbox/deposits',
    key: () => banker,
    path: () => '/v3/fx/sandbox/deposits',
    body: () => ({ currency: 'USD', amount: '5.00', referenceId: 'r', comments: 'c' }),
  },
  webhook: {
    operation: 'POST /v3/fx/webhook-endpoints',
    key: () => banker,
    path: () => '/v3/fx/webhook-endpoints',
    body: () => ({ url: 'https://example.com/hooks', eventTypes: ['deposit.completed'] }),
  },
} satisfies Record<string, Write>;

/** Where the bad text goes: a field's value, a metadata value or key, an array element, or an extra key of the body. */
type Spot =
  | { readonly field: string }
  | { readonly metadataValue: true }
  | { readonly metadataKey: true }
  | { readonly element: string }
  | { readonly bodyKey: true };

function placed(
  base: Record<string, unknown>,
  spot: Spot,
  bad: string,
): { body: Record<string, unknown>; issuePath: string } {
  if ('field' in spot) {
    const original = typeof base[spot.field] === 'string' ? (base[spot.field] as string) : 'text';
    return {
      body: { ...base, [spot.field]: `${original.slice(0, 2)}${bad}${original.slice(2)}` },
      issuePath: spot.field,
    };
  }
  if ('metadataValue' in spot)
    return { body: { ...base, metadata: { orderRef: 'ok', note: `a${bad}b` } }, issuePath: 'metadata.note' };
  if ('metadataKey' in spot)
    return { body: { ...base, metadata: { orderRef: 'ok', [`k${bad}y`]: 'v' } }, issuePath: `metadata.k${bad}y` };
  if ('element' in spot)
    return { body: { ...base, [spot.element]: [`deposit${bad}.completed`] }, issuePath: `${spot.element}[0]` };
  return { body: { ...base, [`extra${bad}`]: 1 }, issuePath: `extra${bad}` };
}

function describeSpot(spot: Spot): string {
  if ('field' in spot) return spot.field;
  if ('metadataValue' in spot) return 'a metadata value';
  if ('metadataKey' in spot) return 'a metadata key';
  if ('element' in spot) return `${spot.element}[0]`;
  return 'a key of the body';
}

/** Every string of every v3 write body, and a key where the body has no string (or takes no parameters). */
const SPOTS: Array<[Write, Spot]> = [
  ...(['buyCurrency', 'sellCurrency', 'amount', 'amountCurrency'] as const).map((field): [Write, Spot] => [
    WRITES.quote,
    { field },
  ]),
  [WRITES.trade, { field: 'quoteId' }],
  [WRITES.trade, { field: 'clientReferenceId' }],
  [WRITES.trade, { metadataValue: true }],
  [WRITES.trade, { metadataKey: true }],
  [WRITES.reverseQuote, { bodyKey: true }],
  [WRITES.reverse, { field: 'quoteId' }],
  [WRITES.reverse, { field: 'clientReferenceId' }],
  [WRITES.reverse, { metadataValue: true }],
  [WRITES.reverse, { metadataKey: true }],
  [WRITES.settle, { bodyKey: true }],
  ...(
    [
      'currency',
      'assetType',
      'transferType',
      'accountName',
      'bankName',
      'accountNumber',
      'routingNumber',
      'memo',
      'comments',
    ] as const
  ).map((field): [Write, Spot] => [WRITES.fedwire, { field }]),
  ...(['accountNumber', 'swiftCode'] as const).map((field): [Write, Spot] => [WRITES.swift, { field }]),
  ...(['accountName', 'network', 'address', 'comments'] as const).map((field): [Write, Spot] => [
    WRITES.stablecoin,
    { field },
  ]),
  [WRITES.accountUpdate, { field: 'status' }],
  [WRITES.verify, { bodyKey: true }],
  ...(['withdrawalAccountId', 'withdrawalAmount', 'currency', 'comments'] as const).map((field): [Write, Spot] => [
    WRITES.withdrawal,
    { field },
  ]),
  [WRITES.withdrawal, { metadataValue: true }],
  [WRITES.withdrawal, { metadataKey: true }],
  [WRITES.complete, { bodyKey: true }],
  [WRITES.fail, { field: 'failureReason' }],
  ...(['currency', 'amount', 'network', 'referenceId', 'comments'] as const).map((field): [Write, Spot] => [
    WRITES.deposit,
    { field },
  ]),
  [WRITES.webhook, { field: 'url' }],
  [WRITES.webhook, { element: 'eventTypes' }],
];

const CASES = SPOTS.flatMap(([write, spot]) =>
  BAD_TEXT.map(([label, bad, message]) => ({ write, spot, label, bad, message })),
);

describe('text the database cannot store is refused before anything is written', () => {
  it.each(CASES.map((c) => [`${c.write.operation}: ${c.label} in ${describeSpot(c.spot)}`, c] as const))(
    '%s',
    async (_name, { write, spot, bad, message }) => {
      const { body, issuePath } = placed(write.body(), spot, bad);
      const before = await snapshot();
      const idempotencyKey = randomUUID();
      const first = await post(write.key(), write.path(), body, idempotencyKey);
      const error = expectV3Error(first, 'VALIDATION_BODY_FAILED');
      expect(error.details.issues).toEqual([
        { path: issuePath, code: 'invalid_text', message: expect.stringMatching(message) },
      ]);

      // A 400 is final: the same key replays it byte for byte, and never turns into a 500.
      const retry = await post(write.key(), write.path(), body, idempotencyKey);
      expect(retry.status).toBe(400);
      expect(retry.text).toBe(first.text);
      expect(await snapshot()).toBe(before);
    },
  );

  it('reports every bad string of one body, in its order, and nothing else', async () => {
    const body = {
      quoteId: unusedQuoteId,
      clientReferenceId: 'a\u0000',
      metadata: { 'k\ud800': 'v', ok: '\udc00' },
      unknown: 1,
    };
    const error = expectV3Error(await post(trader, '/v3/fx/trades', body), 'VALIDATION_BODY_FAILED');
    expect(error.details.issues).toEqual([
      { path: 'clientReferenceId', code: 'invalid_text', message: expect.stringMatching(/NUL/) },
      {
        path: 'metadata.k\ud800',
        code: 'invalid_text',
        message: expect.stringMatching(/^the key contains an unpaired UTF-16 surrogate/),
      },
      {
        path: 'metadata.ok',
        code: 'invalid_text',
        message: expect.stringMatching(/unpaired UTF-16 surrogate \(U\+DC00\)/),
      },
    ]);
  });

  it('(control) the snapshot sees a write: a valid body of the same kind is accepted and recorded', async () => {
    const before = await snapshot();
    await postData(harness, banker, '/v3/fx/sandbox/deposits', WRITES.deposit.body());
    expect(await snapshot()).not.toBe(before);
  });

  it('a body of bytes that are not UTF-8 is refused as a whole, never stored with U+FFFD in their place', async () => {
    const before = await snapshot();
    for (const bytes of [[0xff], [0xc3], [0xed, 0xa0, 0x80]]) {
      const body = Buffer.concat([
        Buffer.from(`{"quoteId":"${unusedQuoteId}","clientReferenceId":"a`),
        Buffer.from(bytes),
        Buffer.from('"}'),
      ]);
      const response = await harness.signed({
        key: trader,
        method: 'POST',
        path: '/v3/fx/trades',
        body,
        idempotencyKey: randomUUID(),
      });
      const error = expectV3Error(response, 'VALIDATION_BODY_FAILED');
      expect(error.details.issues).toEqual([
        { path: '', code: 'invalid_text', message: 'the body is not valid UTF-8; send the JSON text encoded as UTF-8' },
      ]);
    }
    expect(await snapshot()).toBe(before);
  });

  it('leaves the ledger sound', async () => {
    expect(await checkLedger(harness.db)).toEqual([]);
  });
});

describe('well-formed text of any kind is stored and read back exactly', () => {
  const metadata = { [FINE_KEY]: FINE_TEXT, plain: 'ok' };

  it('on a trade: clientReferenceId and metadata', async () => {
    const quote = await postData(harness, trader, '/v3/fx/quotes', {
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      amount: '3.00',
      amountCurrency: 'EUR',
    });
    const trade = await postData(harness, trader, '/v3/fx/trades', {
      quoteId: quote.id,
      clientReferenceId: FINE_TEXT,
      metadata,
    });
    const read = (await harness.signed({ key: trader, path: `/v3/fx/trades/${trade.id}` })).json<{
      data: Record<string, unknown>;
    }>().data;
    for (const record of [trade, read]) expect(record).toMatchObject({ clientReferenceId: FINE_TEXT, metadata });
  });

  it('on a reversal: clientReferenceId and metadata', async () => {
    const original = await quoteAndTrade(harness, trader, {
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      amount: '4.00',
      amountCurrency: 'EUR',
    });
    const quote = await postData(harness, trader, `/v3/fx/trades/${original.id}/reverse-quote`, {});
    const reversed = (await postData(harness, trader, `/v3/fx/trades/${original.id}/reverse`, {
      quoteId: quote.id,
      clientReferenceId: FINE_TEXT,
      metadata,
    })) as unknown as {
      trade: Record<string, unknown>;
    };
    const read = (await harness.signed({ key: trader, path: `/v3/fx/trades/${reversed.trade.id as string}` })).json<{
      data: Record<string, unknown>;
    }>().data;
    for (const record of [reversed.trade, read])
      expect(record).toMatchObject({ clientReferenceId: FINE_TEXT, metadata });
  });

  it('on a withdrawal account: accountName, bankName, memo, comments', async () => {
    const fields = {
      accountName: FINE_TEXT,
      bankName: `Bank ${FINE_TEXT}`,
      memo: `memo ${FINE_TEXT}`,
      comments: `comments ${FINE_TEXT}`,
    };
    const account = await postData(harness, banker, '/v3/fx/withdrawal-accounts', { ...FEDWIRE_ACCOUNT, ...fields });
    const read = (await harness.signed({ key: banker, path: `/v3/fx/withdrawal-accounts/${account.id}` })).json<{
      data: Record<string, unknown>;
    }>().data;
    for (const record of [account, read]) expect(record).toMatchObject(fields);
  });

  it('on a withdrawal and its sandbox failure: comments, metadata, failureReason', async () => {
    const withdrawal = await postData(harness, banker, '/v3/fx/withdrawals', {
      withdrawalAccountId: accountId,
      withdrawalAmount: '1.50',
      currency: 'USD',
      comments: FINE_TEXT,
      metadata,
    });
    expect(withdrawal).toMatchObject({ comments: FINE_TEXT, metadata });
    const failed = await postData(harness, banker, `/v3/fx/sandbox/withdrawals/${withdrawal.id}/fail`, {
      failureReason: FINE_TEXT,
    });
    const read = (await harness.signed({ key: banker, path: `/v3/fx/withdrawals/${withdrawal.id}` })).json<{
      data: Record<string, unknown>;
    }>().data;
    for (const record of [failed, read])
      expect(record).toMatchObject({ status: 'FAILED', comments: FINE_TEXT, metadata, failureReason: FINE_TEXT });
  });

  it('on a sandbox deposit: referenceId and comments', async () => {
    const fields = { referenceId: FINE_TEXT, comments: `comments ${FINE_TEXT}` };
    const deposit = await postData(harness, banker, '/v3/fx/sandbox/deposits', {
      currency: 'USD',
      amount: '2.00',
      ...fields,
    });
    const read = (await harness.signed({ key: banker, path: `/v3/fx/deposits/${deposit.id}` })).json<{
      data: Record<string, unknown>;
    }>().data;
    for (const record of [deposit, read]) expect(record).toMatchObject(fields);
  });
});

describe('query parameters and path ids', () => {
  it.each([
    ['/v3/fx/trades?currency=US%00', 'currency'],
    ['/v3/fx/trades?status=EXECUTED%00', 'status'],
    ['/v3/fx/trades?startingAfter=%00', 'startingAfter'],
    ['/v3/fx/withdrawals?endingBefore=abc%00', 'endingBefore'],
    ['/v3/fx/deposits?currency=%00', 'currency'],
    ['/v3/fx/withdrawal-accounts?currency=USD%00', 'currency'],
    ['/v3/fx/trades?limit=1%00', 'limit'],
  ])('GET %s is 400 VALIDATION_QUERY_FAILED naming %s', async (path, name) => {
    const error = expectV3Error(await harness.signed({ key: banker, path }), 'VALIDATION_QUERY_FAILED');
    expect(error.details.issues).toEqual([{ path: name, code: 'invalid_text', message: expect.stringMatching(/NUL/) }]);
  });

  it('a query parameter whose name holds U+0000 is named by it', async () => {
    const error = expectV3Error(
      await harness.signed({ key: banker, path: '/v3/fx/trades?a%00=1' }),
      'VALIDATION_QUERY_FAILED',
    );
    expect(error.details.issues).toEqual([
      { path: 'a\u0000', code: 'invalid_text', message: expect.stringMatching(/^the key contains the NUL/) },
    ]);
  });

  it.each([
    ['GET', '/v3/fx/trades/%00', 'TRADE_NOT_FOUND'],
    ['GET', '/v3/fx/deposits/%00', 'DEPOSIT_NOT_FOUND'],
    ['GET', '/v3/fx/withdrawals/%00', 'WITHDRAWAL_NOT_FOUND'],
    ['GET', '/v3/fx/withdrawal-accounts/%00', 'WITHDRAWAL_ADDRESS_NOT_FOUND'],
    ['GET', '/v3/fx/webhook-endpoints/%00', 'WEBHOOK_ENDPOINT_NOT_FOUND'],
    ['GET', '/v3/fx/webhook-endpoints/whe_%00', 'WEBHOOK_ENDPOINT_NOT_FOUND'],
    ['DELETE', '/v3/fx/webhook-endpoints/%00', 'WEBHOOK_ENDPOINT_NOT_FOUND'],
    ['POST', '/v3/fx/trades/%00/reverse-quote', 'TRADE_NOT_FOUND'],
    ['POST', '/v3/fx/trades/%00/settle', 'TRADE_NOT_FOUND'],
    ['POST', '/v3/fx/sandbox/withdrawal-accounts/%00/verify', 'WITHDRAWAL_ADDRESS_NOT_FOUND'],
    ['POST', '/v3/fx/sandbox/withdrawals/%00/complete', 'WITHDRAWAL_NOT_FOUND'],
  ] as const)('%s %s is 404 %s, not a 500', async (method, path, code) => {
    const response = await harness.signed({
      key: banker,
      method,
      path,
      idempotencyKey: method === 'POST' ? randomUUID() : undefined,
    });
    expectV3Error(response, code);
  });
});
