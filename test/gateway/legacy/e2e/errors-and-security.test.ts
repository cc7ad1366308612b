/**
 * The legacy error answers produced end to end, and the token rules of the gateway: a legacy key
 * never does more through the gateway than it could itself, whatever the gateway's own v3
 * credential may do. Scopes and orgs on every route: authorization.test.ts.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { V3RequestSigner } from '../../../../src/lib/auth/request-signer.js';
import { idToLegacyUuid } from '../../../../src/lib/ids.js';
import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { postData, postEmpty, quoteAndTrade, recordTestDeposit } from '../../../support/book-fixtures.js';
import { makeJwt, standardToken } from '../../../support/independent-signing.js';
import { idemKey, LegacyHarness } from '../../../support/legacy-harness.js';
import { TEST_ISSUER } from '../../../support/v3-harness.js';

const AUTH_MESSAGE = 'The authorization key provided is either invalid or expired, please try again';

let h: LegacyHarness;
let key: LoadedKey;
let usdcAccountId: string;

beforeAll(async () => {
  h = await LegacyHarness.start();
  key = await h.createKey();
  await recordTestDeposit(h.core.db, {
    orgId: key.file.orgId,
    environment: 'sandbox',
    currency: 'USDC',
    amount: '100.000000',
  });
  const account = await postData(h.core, key, '/v3/fx/withdrawal-accounts', {
    currency: 'USDC',
    assetType: 'STABLECOIN',
    accountName: 'Wallet',
    network: 'ETHEREUM',
    address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  });
  usdcAccountId = idToLegacyUuid('withdrawalAccount', account.id!)!;
});
afterAll(async () => {
  await h?.close();
});

describe('v1 errors', () => {
  it('400 Query validation failed for a bad query', async () => {
    const response = await h.v1(key, { path: 'trades?limit=51' });
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({ status: 'error', message: 'Query validation failed' });
    expect(response.headers.sunset).toBe('Thu, 31 Dec 2026 23:59:59 GMT');
  });

  it('401 with the v2 authorization message for a bad JWT', async () => {
    const response = await h.v1(key, { path: 'balances', headers: { authorization: 'Bearer not.a.jwt' } });
    expect(response.status).toBe(401);
    expect(response.json()).toEqual({ status: 'error', message: AUTH_MESSAGE });
  });

  it('500 An internal error has occurred when v3 cannot be reached', async () => {
    const dead = await LegacyHarness.start();
    try {
      const deadKey = await dead.createKey();
      await dead.core.app.close();
      const response = await dead.v1(deadKey, { path: 'balances' });
      expect(response.status).toBe(500);
      expect(response.json()).toEqual({ status: 'error', message: 'An internal error has occurred' });
    } finally {
      await dead.close();
    }
  });
});

describe('v2 errors', () => {
  it('400 Query validation failed for a bad body', async () => {
    for (const body of [
      '{',
      '{"amount":"abc","buy":"EUR","sell":"USD","referencedUnit":"EUR"}',
      '{"amount":1.123456789,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}',
      '[]',
    ]) {
      const response = await h.v2(key, { path: 'generate_quote', body, headers: { 'idempotency-key': idemKey() } });
      expect(response.status, body).toBe(400);
      expect(response.json()).toEqual({ status: 'error', message: 'Query validation failed' });
    }
  });

  it('401 for a token past its expiry and for a token that lives longer than 120 s', async () => {
    const long = await h.v2(key, { path: 'balances', lifetimeSeconds: 121 });
    expect(long.status).toBe(401);
    const { header, payload } = standardToken({
      keyName: key.file.name,
      issuer: TEST_ISSUER,
      nowSeconds: Math.floor(Date.now() / 1000) - 200,
      lifetimeSeconds: 60,
    });
    const expired = await h.v2(key, {
      path: 'balances',
      headers: { authorization: `Bearer ${makeJwt(header, payload, { kind: 'es256', key: key.privateKey })}` },
    });
    expect(expired.status).toBe(401);
    expect(expired.json()).toEqual({ status: 'error', message: AUTH_MESSAGE });
  });

  it('withdrawal: 400 Checksum verification failed, 400 Insufficient balance, 400 not active or verified', async () => {
    const unverified = await h.v2(key, {
      path: 'withdrawal',
      body: `{"amount":1,"currency":"USDC","withdrawalAddressId":"${usdcAccountId}"}`,
      headers: { 'idempotency-key': idemKey() },
    });
    expect(unverified.status).toBe(400);
    expect(unverified.json()).toEqual({ status: 'error', message: 'Withdrawal address is not active or verified' });

    const id = `wac_${usdcAccountId.replaceAll('-', '')}`;
    await postEmpty(h.core, key, `/v3/fx/sandbox/withdrawal-accounts/${id}/verify`);
    const tooMuch = await h.v2(key, {
      path: 'withdrawal',
      body: `{"amount":1000,"currency":"USDC","withdrawalAddressId":"${usdcAccountId}"}`,
      headers: { 'idempotency-key': idemKey() },
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.json()).toEqual({ status: 'error', message: 'Insufficient balance for this withdraw.' });
    // v3 sends Retry-After with its 409; the legacy 400 it became does not carry it.
    expect(tooMuch.headers['retry-after']).toBeUndefined();
  });

  it('trade/reverse: 404 Trade not found, 409 The trade cannot be reversed; trade/settle: 404 and 409', async () => {
    const headers = () => ({ 'idempotency-key': idemKey() });
    const missing = await h.v2(key, {
      path: 'trade/reverse',
      body: JSON.stringify({ tradeId: randomUUID(), quoteId: randomUUID() }),
      headers: headers(),
    });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ status: 'error', message: 'Trade not found' });
    const unsettledMissing = await h.v2(key, {
      path: 'trade/settle',
      body: JSON.stringify({ tradeId: randomUUID() }),
      headers: headers(),
    });
    expect(unsettledMissing.status).toBe(404);

    // Funded from credit: the sold EUR balance is negative, so it is not settleable; reverse it.
    const trade = await quoteAndTrade(h.core, key, {
      buyCurrency: 'USD',
      sellCurrency: 'EUR',
      amount: '20.00',
      amountCurrency: 'EUR',
    });
    const tradeId = idToLegacyUuid('trade', trade.id!)!;
    const unsettleable = await h.v2(key, {
      path: 'trade/settle',
      body: JSON.stringify({ tradeId }),
      headers: headers(),
    });
    expect(unsettleable.status).toBe(409);
    expect(unsettleable.json()).toEqual({
      status: 'error',
      message: 'The trade cannot be settled (not in a settleable state)',
    });
    const quote = await h.v2(key, {
      path: 'trade/reverse-quote',
      body: JSON.stringify({ tradeId }),
      headers: headers(),
    });
    const quoteId = quote.json<{ data: { quote: { id: string } } }>().data.quote.id;
    expect(
      (await h.v2(key, { path: 'trade/reverse', body: JSON.stringify({ tradeId, quoteId }), headers: headers() }))
        .status,
    ).toBe(200);
    const again = await h.v2(key, {
      path: 'trade/reverse',
      body: JSON.stringify({ tradeId, quoteId }),
      headers: headers(),
    });
    expect(again.status).toBe(409);
    expect(again.json()).toEqual({ status: 'error', message: 'The trade cannot be reversed' });
  });

  it('an unknown path is 404 in v2 and 400 in v1; a known path with another method likewise', async () => {
    expect((await h.v2(key, { path: 'nothing-here' })).status).toBe(404);
    expect((await h.v1(key, { path: 'nothing-here' })).status).toBe(400);
    const wrongMethod = await h.v2(key, { path: 'balances', method: 'POST', body: '{}' });
    expect(wrongMethod.status).toBe(404);
    expect(wrongMethod.json()).toEqual({ status: 'error', message: 'Route not found' });
  });

  it('an oversized body is the legacy 400', async () => {
    const body = JSON.stringify({ amount: 1, buy: 'EUR', sell: 'USD', referencedUnit: 'EUR', pad: 'x'.repeat(9000) });
    const response = await h.v2(key, { path: 'generate_quote', body, headers: { 'idempotency-key': idemKey() } });
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({ status: 'error', message: 'Query validation failed' });
  });
});

describe('text v3 cannot store', () => {
  const BAD = [
    ['U+0000', '\u0000'],
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate', '\udc00'],
  ] as const;

  async function tradesOf(orgId: string): Promise<number> {
    const { rows } = await h.core.db.query<{ n: number }>('SELECT count(*)::int AS n FROM trades WHERE org_id = $1', [
      orgId,
    ]);
    return rows[0]!.n;
  }

  async function legacyQuoteId(trader: LoadedKey): Promise<string> {
    const quote = await postData(h.core, trader, '/v3/fx/quotes', {
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      amount: '5.00',
      amountCurrency: 'EUR',
    });
    return idToLegacyUuid('quote', quote.id!)!;
  }

  it.each(
    (['v1', 'v2'] as const).flatMap((generation) => BAD.map(([label, bad]) => [generation, label, bad] as const)),
  )(
    '%s trade with %s in clientReferenceId: the legacy 400 with no upstream call, replayed for its key',
    async (generation, _label, bad) => {
      const trader = await h.createKey();
      const quoteId = await legacyQuoteId(trader);
      const body = JSON.stringify({ quoteId, clientReferenceId: `inv${bad}-7` });
      const headers = { 'idempotency-key': idemKey() };
      const first = await h.call(generation, trader, { path: 'trade', body, headers });
      expect(first.status, first.text).toBe(400);
      expect(first.json()).toEqual({ status: 'error', message: 'Query validation failed' });
      expect(first.headers['server-timing']).toMatch(/^upstream;dur=0\.000,/);
      const retry = await h.call(generation, trader, { path: 'trade', body, headers });
      expect(retry.status).toBe(400);
      expect(retry.text).toBe(first.text);
      expect(await tradesOf(trader.file.orgId)).toBe(0);
      // The quote was never executed: the same trade with well-formed text goes through.
      const fixed = await h.call(generation, trader, {
        path: 'trade',
        body: JSON.stringify({ quoteId, clientReferenceId: 'inv-7' }),
        headers: { 'idempotency-key': idemKey() },
      });
      expect(fixed.status, fixed.text).toBe(200);
    },
  );

  it.each(BAD)(
    'v2 trade/reverse with %s in clientReferenceId is the legacy 400 with no upstream call',
    async (_label, bad) => {
      const trader = await h.createKey();
      const trade = await quoteAndTrade(h.core, trader, {
        buyCurrency: 'EUR',
        sellCurrency: 'USD',
        amount: '5.00',
        amountCurrency: 'EUR',
      });
      const quote = await postData(h.core, trader, `/v3/fx/trades/${trade.id}/reverse-quote`, {});
      const body = JSON.stringify({
        tradeId: idToLegacyUuid('trade', trade.id!),
        quoteId: idToLegacyUuid('quote', quote.id!),
        clientReferenceId: `r${bad}`,
      });
      const response = await h.v2(trader, { path: 'trade/reverse', body, headers: { 'idempotency-key': idemKey() } });
      expect(response.status, response.text).toBe(400);
      expect(response.json()).toEqual({ status: 'error', message: 'Query validation failed' });
      expect(response.headers['server-timing']).toMatch(/^upstream;dur=0\.000,/);
      expect(await tradesOf(trader.file.orgId)).toBe(1);
    },
  );

  it.each(['v1', 'v2'] as const)(
    '%s trade with a body of bytes that are not UTF-8 is the legacy 400 with no upstream call',
    async (generation) => {
      const trader = await h.createKey();
      const body = Buffer.concat([
        Buffer.from(`{"quoteId":"${await legacyQuoteId(trader)}","clientReferenceId":"a`),
        Buffer.from([0xff]),
        Buffer.from('"}'),
      ]);
      const response = await h.send({
        method: 'POST',
        path: `/${generation}/brokerage/${trader.file.orgId}/trade`,
        body,
        headers: {
          authorization: `Bearer ${h.token(trader)}`,
          'x-app-mode': 'SANDBOX',
          'content-type': 'application/json',
          'idempotency-key': idemKey(),
        },
      });
      expect(response.status, response.text).toBe(400);
      expect(response.json()).toEqual({ status: 'error', message: 'Query validation failed' });
      expect(response.headers['server-timing']).toMatch(/^upstream;dur=0\.000,/);
      expect(await tradesOf(trader.file.orgId)).toBe(0);
    },
  );

  it.each(['v1', 'v2'] as const)(
    '%s trade keeps well-formed text of any kind exactly, and still ignores unknown fields',
    async (generation) => {
      const trader = await h.createKey();
      const clientReferenceId = 'Zoë\t東京 😀\n\u0001 end';
      const body = JSON.stringify({ quoteId: await legacyQuoteId(trader), clientReferenceId, ignored: '\u0000\ud800' });
      const response = await h.call(generation, trader, {
        path: 'trade',
        body,
        headers: { 'idempotency-key': idemKey() },
      });
      expect(response.status, response.text).toBe(200);
      expect(response.json<{ data: { trade: { clientReferenceId: string } } }>().data.trade.clientReferenceId).toBe(
        clientReferenceId,
      );
    },
  );
});

describe('one JSON, one meaning: a key repeated in a body is refused on every generation', () => {
  const QUOTE = '"buy":"EUR","sell":"USD","referencedUnit":"EUR"';
  const V3_QUOTE = '"buyCurrency":"EUR","sellCurrency":"USD","amountCurrency":"EUR"';

  async function quotesOf(orgId: string): Promise<number> {
    const { rows } = await h.core.db.query<{ n: number }>('SELECT count(*)::int AS n FROM quotes WHERE org_id = $1', [
      orgId,
    ]);
    return rows[0]!.n;
  }

  const LEGACY_BODIES = [
    ['at the top, another value', `{"amount":1,${QUOTE},"amount":99999}`],
    ['at the top, the same value', `{"amount":1,"amount":1,${QUOTE}}`],
    ['nested, another value', `{"amount":1,${QUOTE},"extra":{"a":1,"a":2}}`],
    ['nested, the same value', `{"amount":1,${QUOTE},"extra":{"a":1,"a":1}}`],
    ['a __proto__ key', `{"amount":1,${QUOTE},"__proto__":{"amount":2}}`],
  ] as const;

  it.each(['v1', 'v2'] as const)(
    '%s: each is the legacy 400 Query validation failed, and no quote is made',
    async (generation) => {
      const before = await quotesOf(key.file.orgId);
      for (const [name, body] of LEGACY_BODIES) {
        const response = await h.call(generation, key, {
          path: 'generate_quote',
          body,
          headers: { 'idempotency-key': idemKey() },
        });
        expect([response.status, response.json()], name).toEqual([
          400,
          { status: 'error', message: 'Query validation failed' },
        ]);
        if (generation === 'v1') expect(response.headers.sunset).toBe('Thu, 31 Dec 2026 23:59:59 GMT');
      }
      expect(await quotesOf(key.file.orgId)).toBe(before);
      // The same quote written once is served.
      const once = await h.call(generation, key, {
        path: 'generate_quote',
        body: `{"amount":1,${QUOTE}}`,
        headers: { 'idempotency-key': idemKey() },
      });
      expect(once.status, once.text).toBe(200);
    },
  );

  it.each<[string, string, string]>([
    ['at the top, another value', `{"amount":"1.00",${V3_QUOTE},"amount":"99999.00"}`, 'amount'],
    ['at the top, the same value', `{"amount":"1.00","amount":"1.00",${V3_QUOTE}}`, 'amount'],
    ['nested, another value', `{"amount":"1.00",${V3_QUOTE},"x":[{"a":1,"a":2}]}`, 'x[0].a'],
    ['nested, the same value', `{"amount":"1.00",${V3_QUOTE},"x":{"a":1,"a":1}}`, 'x.a'],
  ])(
    '/v3 through the gateway, %s: v3 400 VALIDATION_BODY_FAILED duplicate_key at its path',
    async (_name, body, path) => {
      const before = await quotesOf(key.file.orgId);
      const idempotencyKey = idemKey();
      const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
      const auth = await signer.headers({ method: 'POST', pathAndQuery: '/v3/fx/quotes', body, idempotencyKey });
      const response = await h.send({ method: 'POST', path: '/v3/fx/quotes', body, headers: auth });
      expect(response.status, response.text).toBe(400);
      expect(response.json()).toMatchObject({
        error: {
          code: 'VALIDATION_BODY_FAILED',
          details: { issues: [{ path, code: 'duplicate_key', message: expect.stringMatching(/more than once/) }] },
        },
      });
      expect(await quotesOf(key.file.orgId)).toBe(before);
    },
  );
});

describe('security', () => {
  it('a replayed legacy token is refused', async () => {
    const token = h.token(key);
    const first = await h.v2(key, { path: 'balances', headers: { authorization: `Bearer ${token}` } });
    const replay = await h.v2(key, { path: 'balances', headers: { authorization: `Bearer ${token}` } });
    expect(first.status).toBe(200);
    expect(replay.status).toBe(401);
  });

  it('alg none and HS256 tokens are refused', async () => {
    const { header, payload } = standardToken({ keyName: key.file.name, issuer: TEST_ISSUER });
    const none = makeJwt({ ...header, alg: 'none' }, payload, { kind: 'none' });
    const hs256 = makeJwt({ ...header, alg: 'HS256' }, payload, {
      kind: 'hs256',
      secret: Buffer.from(key.file.publicKey),
    });
    for (const token of [none, hs256]) {
      const response = await h.v2(key, { path: 'balances', headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(401);
    }
  });

  it('a token without typ, or with another typ, is refused; typ in any case is taken', async () => {
    const { header, payload } = standardToken({ keyName: key.file.name, issuer: TEST_ISSUER });
    const sign = (changed: Record<string, unknown>) =>
      makeJwt({ ...changed, nonce: randomUUID().replaceAll('-', '') }, payload, { kind: 'es256', key: key.privateKey });
    const { typ: _typ, ...withoutTyp } = header;
    for (const generation of ['v1', 'v2'] as const) {
      for (const refused of [withoutTyp, { ...header, typ: 'at+jwt' }, { ...header, typ: null }]) {
        const response = await h.call(generation, key, {
          path: 'balances',
          headers: { authorization: `Bearer ${sign(refused)}` },
        });
        expect([response.status, response.json()], JSON.stringify(refused)).toEqual([
          401,
          { status: 'error', message: AUTH_MESSAGE },
        ]);
      }
      const lower = await h.call(generation, key, {
        path: 'balances',
        headers: { authorization: `Bearer ${sign({ ...header, typ: 'jwt' })}` },
      });
      expect(lower.status, lower.text).toBe(200);
    }
  });

  it('a sandbox key declaring live, and a key outside its IP allowlist, are refused', async () => {
    expect((await h.v2(key, { path: 'balances', headers: { 'x-app-mode': 'LIVE' } })).status).toBe(401);
    const fenced = await h.createKey({ ipAllowlist: ['203.0.113.0/24'] });
    expect((await h.v2(fenced, { path: 'balances' })).status).toBe(401);
  });

  it('rate-limit, request and trace headers are forwarded', async () => {
    const response = await h.v2(key, { path: 'balances', headers: { 'x-request-id': 'legacy-req-1' } });
    expect(response.headers['x-request-id']).toBe('legacy-req-1');
    expect(response.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(response.headers['ratelimit-limit']).toBeDefined();
    expect(response.headers['ratelimit-reset']).toBeDefined();
  });
});
