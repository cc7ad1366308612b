/**
 * Shadow mode with the gateway serving (FXGATE_SHADOW_SERVE=gateway): every read of v1 and v2 is
 * answered by the translation and, once the client has it, sent as it came to the legacy
 * service (a legacy double in front of a second fxgate gateway on the same core) and the two
 * answers compared. No change planted: no difference on any read operation. A volatile field is
 * reported as noise, found by translating again (or declared). A change planted in one field of
 * one operation: exactly that path, with its count and a masked example. A legacy service down,
 * slow or answering garbage changes nothing of the client's answer or its latency and counts as
 * not compared; the cap on mirrors in flight drops and counts; sampling mirrors its share; the
 * report is in the database and survives a restart; the data plane serves no admin route.
 */
import { LosslessNumber } from 'lossless-json';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { DEFAULT_USD_PRICES, type RateSource, StaticRateSource } from '../../../src/core/trading/rate-source.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { Decimal } from '../../../src/lib/money.js';
import { testResolver } from '../../support/outbound.js';
import { legacyIdOf } from '../legacy/contract/legacy-client.js';
import {
  EVM_ADDRESSES,
  FEDWIRE_ACCOUNT,
  stablecoinAccount,
  SWIFT_ACCOUNT,
  V3Side,
  type V3Trade,
} from '../legacy/contract/v3-setup.js';
import {
  clearReport,
  freePortUrl,
  GatewayUnderTest,
  type Generation,
  type LegacySide,
  operationOf,
  settled,
  startLegacySide,
  totalSettled,
} from './shadow-setup.js';

/** USD prices that move on every read while `moving` is set: the USD valuations of balances then differ between any two answers. */
class MovingRates implements RateSource {
  readonly name = 'moving';
  moving = false;
  private ticks = 0;
  private readonly base = new StaticRateSource(DEFAULT_USD_PRICES);

  async usdPrice(currency: string): Promise<Decimal> {
    const price = await this.base.usdPrice(currency);
    if (!this.moving || currency === 'USD') return price;
    this.ticks += 1;
    return price.plus(new Decimal(this.ticks).times('0.0001'));
  }

  midRate(base: string, quote: string): Promise<Decimal> {
    return this.base.midRate(base, quote);
  }
}

const READS = [
  'available_markets',
  'balances',
  'trades',
  'trade/{id}',
  'deposits',
  'withdrawal_addresses',
  'fiat_withdrawal_addresses',
  'withdrawals',
] as const;

let side: LegacySide;
let key: LoadedKey;
let trade: V3Trade;
const rates = new MovingRates();
const gateways: GatewayUnderTest[] = [];

async function gateway(
  ...args: Parameters<typeof GatewayUnderTest.start> extends [unknown, ...infer Rest] ? Rest : never
): Promise<GatewayUnderTest> {
  const started = await GatewayUnderTest.start(side, ...args);
  gateways.push(started);
  return started;
}

function pathOf(operation: (typeof READS)[number]): string {
  return operation === 'trade/{id}' ? `trade/${legacyIdOf(trade.id)}` : operation;
}

beforeAll(async () => {
  side = await startLegacySide({ rates });
  key = await side.h.createKey();
  const v3 = new V3Side(side.h, key);
  await v3.deposit({ currency: 'USD', amount: '100000.00', referenceId: 'wire-0001', comments: 'opening balance' });
  await v3.deposit({ currency: 'USDC', amount: '5000.000000', network: 'ETHEREUM' });
  await v3.deposit({ currency: 'EUR', amount: '250.00', completeAfterSeconds: 3600 });
  const fiat = await v3.account(FEDWIRE_ACCOUNT);
  await v3.account(SWIFT_ACCOUNT);
  const wallet = await v3.account(stablecoinAccount('USDC', 'ETHEREUM', 'ETH USDC Wallet', EVM_ADDRESSES[0]));
  trade = await v3.trade({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '40.00', amountCurrency: 'EUR' });
  await v3.withdraw({ withdrawalAccountId: fiat.id, withdrawalAmount: '10.00', currency: 'USD' });
  await v3.withdraw({ withdrawalAccountId: wallet.id, withdrawalAmount: '2.5', currency: 'USDC' });
});

afterEach(async () => {
  for (const started of gateways.splice(0)) await started.close();
  rates.moving = false;
  side.double.clear();
  await clearReport(side.h);
});

afterAll(async () => {
  await side?.close();
});

describe('with nothing planted', () => {
  it('compares every read operation of v1 and v2 and finds no difference', async () => {
    const shadowed = await gateway({ legacyUrl: side.double.url });
    for (const generation of ['v1', 'v2'] as const) {
      for (const operation of READS) {
        const answer = await shadowed.call(generation, key, pathOf(operation));
        expect(answer.status, `${generation} ${operation}: ${answer.text}`).toBe(200);
      }
    }
    const report = await shadowed.reportWhen((current) => totalSettled(current) === 2 * READS.length);
    expect(report.since).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(report.operations).toHaveLength(2 * READS.length);
    for (const operation of report.operations) {
      expect(operation, `${operation.generation} ${operation.operation}`).toMatchObject({
        compared: 1,
        differing: 0,
        notCompared: 0,
        dropped: 0,
        fields: [],
        noise: [],
      });
    }
    // Each read went to the legacy service as the client sent it, its token included; nothing else did.
    expect(side.double.received).toHaveLength(2 * READS.length);
    expect(
      side.double.received.every(
        (request) => request.method === 'GET' && /^Bearer ey/.test(String(request.headers.authorization)),
      ),
    ).toBe(true);
  });

  it('reports USD valuations that move under it as noise, found by translating again, never as differences', async () => {
    rates.moving = true;
    // The declaration of mappings/conventions.ts left out, so that only the second translation can tell.
    const shadowed = await gateway({ legacyUrl: side.double.url, volatile: [] });
    for (const generation of ['v1', 'v2'] as const) await shadowed.call(generation, key, 'balances');
    const report = await shadowed.reportWhen((current) => totalSettled(current) === 2);
    for (const generation of ['v1', 'v2'] as const) {
      const balances = operationOf(report, generation, 'balances')!;
      expect(balances).toMatchObject({ compared: 1, differing: 0, fields: [] });
      expect(balances.noise.map((noise) => noise.path).sort()).toEqual([
        'data[].totalBalanceInUSD',
        'data[].withdrawableBalanceInUSD',
        'netBalanceInUSD',
        'netPositiveBalanceInUSD',
      ]);
      expect(balances.noise.every((noise) => noise.count === 1)).toBe(true);
    }
  });

  it('reports a declared volatile field as noise without translating again', async () => {
    // The double changes a USD valuation the translation would never change by itself.
    side.double.plant({ operation: 'balances', path: 'netBalanceInUSD', value: () => new LosslessNumber('1.23') });
    const shadowed = await gateway({ legacyUrl: side.double.url });
    await shadowed.call('v2', key, 'balances');
    const report = await shadowed.reportWhen((current) => totalSettled(current) === 1);
    expect(operationOf(report, 'v2', 'balances')).toMatchObject({
      compared: 1,
      differing: 0,
      fields: [],
      noise: [{ path: 'netBalanceInUSD', count: 1 }],
    });
  });
});

describe('with a change planted in one field of one operation', () => {
  it('reports exactly that path, with its count and an example masked but for its last four characters', async () => {
    side.double.plant({
      operation: 'fiat_withdrawal_addresses',
      generation: 'v2',
      path: 'data[].accountNumber',
      value: () => '000999887766',
    });
    const shadowed = await gateway({ legacyUrl: side.double.url });
    for (let round = 0; round < 3; round += 1) {
      for (const generation of ['v1', 'v2'] as const) {
        for (const operation of READS) await shadowed.call(generation, key, pathOf(operation));
      }
    }
    const report = await shadowed.reportWhen((current) => totalSettled(current) === 3 * 2 * READS.length);
    const differing = report.operations.filter((operation) => operation.differing > 0 || operation.fields.length > 0);
    expect(differing.map((operation) => `${operation.generation} ${operation.operation}`)).toEqual([
      'v2 fiat_withdrawal_addresses',
    ]);
    const changed = differing[0]!;
    expect(changed).toMatchObject({ compared: 3, differing: 3, notCompared: 0, dropped: 0, noise: [] });
    expect(changed.fields).toHaveLength(1);
    // Counted once per answer though both accounts of the list differ; an example per answer, its record named by id.
    expect(changed.fields[0]).toMatchObject({ path: 'data[].accountNumber', count: 3 });
    expect(changed.fields[0]!.examples).toHaveLength(3);
    expect(changed.fields[0]!.examples.map((example) => [example.legacy, example.gateway])).toContainEqual([
      '"********7766"',
      '"******************3000"',
    ]);
    expect(changed.fields[0]!.example).toEqual(changed.fields[0]!.examples[0]);
    for (const example of changed.fields[0]!.examples)
      expect(example.at).toMatch(/^data\[id=[0-9a-f-]{36}\]\.accountNumber$/);
    // No account number, and no token, is kept anywhere in the report.
    const stored = JSON.stringify(await side.h.core.db.query('SELECT * FROM shadow_fields'));
    for (const secret of [
      '000999887766',
      FEDWIRE_ACCOUNT.accountNumber,
      SWIFT_ACCOUNT.accountNumber,
      '123456789',
      'Bearer',
      'eyJ',
    ])
      expect(stored).not.toContain(secret);
  });
});

describe('a legacy service that fails', () => {
  /** The body and status a gateway without shadow mode gives for the same request. */
  async function baseline(generation: Generation, path: string): Promise<{ status: number; text: string }> {
    const plain = await gateway(undefined);
    const answer = await plain.call(generation, key, path);
    return { status: answer.status, text: answer.text };
  }

  it.each([
    ['down (connection refused)', 'down'],
    ['slow (10 s)', 'slow'],
    ['answering bytes that are not HTTP', 'garbage-bytes'],
    ['answering 200 with a body that is not JSON', 'garbage-body'],
    ['refused by the destination policy (its name resolves to a private address)', 'refused'],
  ] as const)(
    '%s: the client gets the same bytes as without shadow mode, as fast, and the read counts as not compared',
    async (_name, failure) => {
      const reads = [
        ['v1', 'trades'],
        ['v2', `trade/${legacyIdOf(trade.id)}`],
        ['v2', 'fiat_withdrawal_addresses'],
      ] as const;
      const expected = [];
      for (const [generation, path] of reads) expected.push(await baseline(generation, path));
      let legacyUrl = side.double.url;
      let outbound = {};
      if (failure === 'down') {
        legacyUrl = await freePortUrl();
      } else if (failure === 'refused') {
        legacyUrl = `http://legacy.test:${new URL(side.double.url).port}`;
        outbound = { outbound: { resolver: testResolver({ 'legacy.test': ['10.0.0.1'] }) } };
      } else if (failure === 'slow') {
        side.double.behaviour = { kind: 'slow', delayMs: 10_000 };
      } else {
        side.double.behaviour = { kind: failure };
      }
      const shadowed = await gateway({ legacyUrl, timeoutMs: 1_000, ...outbound });
      // Warm the gateway's own v3 credential and connections first, as the baseline's were.
      await shadowed.call('v2', key, 'available_markets');
      for (const [index, [generation, path]] of reads.entries()) {
        const answer = await shadowed.call(generation, key, path);
        expect({ status: answer.status, text: answer.text }).toEqual(expected[index]);
        expect(answer.ms).toBeLessThan(500);
      }
      const report = await shadowed.reportWhen((current) => totalSettled(current) === reads.length + 1);
      expect(report.operations.reduce((sum, operation) => sum + operation.notCompared, 0)).toBe(reads.length + 1);
      expect(report.operations.every((operation) => operation.compared === 0 && operation.fields.length === 0)).toBe(
        true,
      );
    },
  );
});

describe('bounds', () => {
  it('mirrors at most the cap at once and counts each read beyond it as dropped', async () => {
    side.double.behaviour = { kind: 'slow', delayMs: 1_500 };
    const shadowed = await gateway({ legacyUrl: side.double.url, maxInFlight: 2, timeoutMs: 5_000 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => shadowed.call('v2', key, 'available_markets')));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const report = await shadowed.reportWhen((current) => totalSettled(current) === 6);
    expect(operationOf(report, 'v2', 'available_markets')).toMatchObject({
      compared: 2,
      differing: 0,
      notCompared: 0,
      dropped: 4,
    });
    expect(side.double.requests('GET')).toHaveLength(2);
  });

  it('mirrors about the sampled share of reads (0.1 of 1,000: between 60 and 140)', { timeout: 120_000 }, async () => {
    const shadowed = await gateway({ legacyUrl: side.double.url, sample: 0.1 });
    const total = 1_000;
    let sent = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (sent < total) {
          sent += 1;
          expect((await shadowed.call('v1', key, 'available_markets')).status).toBe(200);
        }
      }),
    );
    const report = await shadowed.reportWhen(
      (current) => settled(operationOf(current, 'v1', 'available_markets')) === side.double.received.length,
    );
    const mirrored = side.double.received.length;
    expect(mirrored).toBeGreaterThanOrEqual(60);
    expect(mirrored).toBeLessThanOrEqual(140);
    expect(operationOf(report, 'v1', 'available_markets')).toMatchObject({ compared: mirrored, differing: 0 });
  });
});

describe('the report', () => {
  it('is kept in the database: a restarted gateway, shadow mode off, serves the same counts', async () => {
    side.double.plant({ operation: 'trades', path: 'data[].amount', value: () => new LosslessNumber('1.00') });
    const first = await gateway({ legacyUrl: side.double.url });
    await first.call('v1', key, 'trades');
    await first.call('v1', key, 'balances');
    const before = await first.reportWhen((current) => totalSettled(current) === 2);
    await first.close();
    gateways.splice(gateways.indexOf(first), 1);
    const second = await gateway(undefined);
    expect(await second.report()).toEqual(before);
    expect(operationOf(before, 'v1', 'trades')).toMatchObject({
      compared: 1,
      differing: 1,
      fields: [{ path: 'data[].amount', count: 1 }],
    });
  });

  it('is served on the admin listener only: the data plane has no /admin route, the admin listener nothing else', async () => {
    const shadowed = await gateway({ legacyUrl: side.double.url });
    const direct = await fetch(`${shadowed.url}/admin/shadow/report`);
    expect(direct.status).toBe(404);
    expect(await direct.text()).not.toContain('operations');
    for (const path of [
      '/healthz',
      `/v2/brokerage/${key.file.orgId}/balances`,
      '/v3/fx/pairs',
      '/admin',
      '/admin/shadow/report/x',
    ]) {
      expect((await fetch(`${shadowed.adminUrl}${path}`)).status, path).toBe(404);
    }
    expect((await fetch(`${shadowed.adminUrl}/admin/shadow/report`)).status).toBe(200);
  });
});
