/**
 * Shadow mode with the legacy service serving (FXGATE_SHADOW_SERVE=legacy): an org not cut over
 * has every request relayed to the legacy service as it came and gets its answer's bytes as they
 * came, while its reads are translated after the answer and compared. FXGATE_CUTOVER_ORGS moves
 * one org onto the gateway and back by configuration alone. A write goes to exactly one place,
 * whoever serves: the legacy service for an org it serves (the gateway never calls v3 for it),
 * the gateway otherwise (the legacy service never sees it), and it is never compared.
 */
import { LosslessNumber } from 'lossless-json';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { V3Side } from '../legacy/contract/v3-setup.js';
import {
  clearReport,
  freePortUrl,
  GatewayUnderTest,
  type LegacySide,
  operationOf,
  startLegacySide,
  totalSettled,
} from './shadow-setup.js';

let side: LegacySide;
/** Two orgs, each with a funded sandbox book; the first is the one cut over. */
let cutOver: LoadedKey;
let stayed: LoadedKey;
const gateways: GatewayUnderTest[] = [];

async function gateway(
  ...args: Parameters<typeof GatewayUnderTest.start> extends [unknown, ...infer Rest] ? Rest : never
): Promise<GatewayUnderTest> {
  const started = await GatewayUnderTest.start(side, ...args);
  gateways.push(started);
  return started;
}

async function quotesOf(key: LoadedKey): Promise<number> {
  const { rows } = await side.h.core.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM quotes WHERE org_id = $1',
    [key.file.orgId],
  );
  return Number(rows[0]!.n);
}

async function tradesOf(key: LoadedKey): Promise<number> {
  const { rows } = await side.h.core.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM trades WHERE org_id = $1',
    [key.file.orgId],
  );
  return Number(rows[0]!.n);
}

const QUOTE = JSON.stringify({ amount: 100, buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' });

beforeAll(async () => {
  side = await startLegacySide();
  cutOver = await side.h.createKey();
  stayed = await side.h.createKey();
  for (const key of [cutOver, stayed]) {
    const v3 = new V3Side(side.h, key);
    await v3.deposit({ currency: 'USD', amount: '1000.00' });
    await v3.trade({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '40.00', amountCurrency: 'EUR' });
  }
});

afterEach(async () => {
  for (const started of gateways.splice(0)) await started.close();
  side.double.clear();
  await clearReport(side.h);
});

afterAll(async () => {
  await side?.close();
});

describe('an org the legacy service serves', () => {
  it('gets the legacy answer byte for byte, and its read is still compared with the translation', async () => {
    side.double.plant({
      operation: 'trades',
      generation: 'v1',
      path: 'data[].amount',
      value: () => new LosslessNumber('39.99'),
    });
    const shadowed = await gateway({ legacyUrl: side.double.url, serve: 'legacy' });
    const answer = await shadowed.call('v1', stayed, 'trades?page=1&limit=5');
    expect(answer.status).toBe(200);
    const given = side.double.answers.at(-1)!;
    expect(given.url).toBe(`/v1/brokerage/${stayed.file.orgId}/trades?page=1&limit=5`);
    expect(answer.text).toBe(given.body.toString('utf8'));
    expect(answer.text).toContain('"amount":39.99');
    // Relayed as it came: the legacy service's headers, none the gateway's handler adds.
    expect(answer.headers).toMatchObject({ deprecation: '@1767225600' });
    expect(answer.headers['server-timing']).toBeUndefined();
    const report = await shadowed.reportWhen((current) => totalSettled(current) === 1);
    expect(operationOf(report, 'v1', 'trades')).toMatchObject({
      compared: 1,
      differing: 1,
      fields: [{ path: 'data[].amount', count: 1, example: { legacy: '39.99', gateway: '40.00' } }],
    });
  });

  it('has the request relayed as the client sent it, headers and all, even one the gateway would refuse', async () => {
    const shadowed = await gateway({ legacyUrl: side.double.url, serve: 'legacy' });
    const answer = await shadowed.call('v2', stayed, 'no_such_operation?x=1', { headers: { 'x-client': 'kept' } });
    expect(answer.status).toBe(404);
    const [received] = side.double.received;
    expect(received).toMatchObject({ method: 'GET', url: `/v2/brokerage/${stayed.file.orgId}/no_such_operation?x=1` });
    expect(received!.headers).toMatchObject({
      'x-client': 'kept',
      'x-app-mode': 'SANDBOX',
      'x-forwarded-for': '127.0.0.1',
      via: '1.1 fxgate',
    });
    expect(String(received!.headers.authorization)).toMatch(/^Bearer ey/);
    expect(answer.text).toBe(side.double.answers[0]!.body.toString('utf8'));
  });

  it("gets its generation's error when the legacy service cannot be reached, and nothing is done in its place", async () => {
    const shadowed = await gateway({ legacyUrl: await freePortUrl(), serve: 'legacy' });
    const before = await quotesOf(stayed);
    for (const [generation, path, body] of [
      ['v2', 'balances', undefined],
      ['v1', 'generate_quote', QUOTE],
    ] as const) {
      const answer = await shadowed.call(
        generation,
        stayed,
        path,
        body === undefined ? {} : { body, headers: { 'idempotency-key': 'q-unreachable' } },
      );
      // SERVICE_UNAVAILABLE in both tables: their 500 with the legacy message.
      expect(answer.status).toBe(500);
      expect(answer.json()).toEqual({ status: 'error', message: expect.any(String) });
    }
    expect(await quotesOf(stayed)).toBe(before);
    expect(await shadowed.calledV3For(stayed.file.orgId)).toBe(false);
  });
});

describe('a request a gateway already sent on (its Via names fxgate)', () => {
  it('is served by the translation and never sent on again, so that a gateway named as its own legacy service cannot loop', async () => {
    for (const serve of ['legacy', 'gateway'] as const) {
      side.double.clear();
      const shadowed = await gateway({ legacyUrl: side.double.url, serve });
      const answer = await shadowed.call('v2', stayed, 'balances', {
        headers: { via: '1.1 proxy.example, 1.1 fxgate' },
      });
      expect(answer.status).toBe(200);
      expect(answer.headers['server-timing']).toMatch(/^upstream;dur=/);
      await shadowed.settle();
      expect(side.double.received).toEqual([]);
    }
  });
});

describe('writes', () => {
  it('of an org the legacy service serves go to it alone, once, as they came, and are never compared', async () => {
    const shadowed = await gateway({ legacyUrl: side.double.url, serve: 'legacy' });
    const [quotesBefore, tradesBefore] = [await quotesOf(stayed), await tradesOf(stayed)];
    const quote = await shadowed.call('v1', stayed, 'generate_quote', {
      body: QUOTE,
      headers: { 'idempotency-key': 'q-legacy-1' },
    });
    expect(quote.status, quote.text).toBe(200);
    const quoteId = quote.json<{ data: { quote: { id: string } } }>().data.quote.id;
    const trade = await shadowed.call('v1', stayed, 'trade', { body: JSON.stringify({ quoteId }) });
    expect(trade.status, trade.text).toBe(200);
    expect(side.double.requests('POST').map((request) => [request.url, request.body.toString('utf8')])).toEqual([
      [`/v1/brokerage/${stayed.file.orgId}/generate_quote`, QUOTE],
      [`/v1/brokerage/${stayed.file.orgId}/trade`, JSON.stringify({ quoteId })],
    ]);
    expect(side.double.requests('POST')[0]!.headers['idempotency-key']).toBe('q-legacy-1');
    expect([await quotesOf(stayed), await tradesOf(stayed)]).toEqual([quotesBefore + 1, tradesBefore + 1]);
    expect(await shadowed.calledV3For(stayed.file.orgId)).toBe(false);
    expect((await shadowed.settle()).operations).toEqual([]);
  });

  it('of an org the gateway serves go to v3 alone, once, and never to the legacy service', async () => {
    for (const options of [
      { serve: 'gateway' as const },
      { serve: 'legacy' as const, cutoverOrgs: [cutOver.file.orgId.toUpperCase()] },
    ]) {
      side.double.clear();
      const shadowed = await gateway({ legacyUrl: side.double.url, ...options });
      const before = await quotesOf(cutOver);
      const quote = await shadowed.call('v2', cutOver, 'generate_quote', {
        body: QUOTE,
        headers: { 'idempotency-key': `q-${options.serve}` },
      });
      expect(quote.status, quote.text).toBe(200);
      expect(await quotesOf(cutOver)).toBe(before + 1);
      const report = await shadowed.settle();
      expect(side.double.received).toEqual([]);
      expect(report.operations).toEqual([]);
    }
  });
});

describe('FXGATE_CUTOVER_ORGS', () => {
  it('serves the listed org by the gateway and the rest by the legacy service, comparing both, and moves an org back by configuration alone', async () => {
    side.double.plant({ operation: 'balances', path: 'data[].amount', value: () => new LosslessNumber('0.01') });
    const mixed = await gateway({ legacyUrl: side.double.url, serve: 'legacy', cutoverOrgs: [cutOver.file.orgId] });
    const translated = await mixed.call('v2', cutOver, 'balances');
    const relayed = await mixed.call('v2', stayed, 'balances');
    expect(translated.text).not.toContain('"amount":0.01');
    expect(translated.headers['server-timing']).toMatch(/^upstream;dur=/);
    expect(relayed.text).toContain('"amount":0.01');
    expect(relayed.text).toBe(
      side.double.answers.find((answer) => answer.url.includes(stayed.file.orgId))!.body.toString('utf8'),
    );
    const report = await mixed.reportWhen((current) => totalSettled(current) === 2);
    expect(operationOf(report, 'v2', 'balances')).toMatchObject({
      compared: 2,
      differing: 2,
      fields: [{ path: 'data[].amount', count: 2 }],
    });

    // The org taken off the list is served by the legacy service again.
    const movedBack = await gateway({ legacyUrl: side.double.url, serve: 'legacy', cutoverOrgs: [] });
    const again = await movedBack.call('v2', cutOver, 'balances');
    expect(again.text).toContain('"amount":0.01');
    expect(again.headers['server-timing']).toBeUndefined();
  });
});
