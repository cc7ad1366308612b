/**
 * The legacy success bodies as the shipped declarations build them (compileResponse over each
 * endpoint's `response`, compileRecord over each record of mappings/records.ts): every body is
 * `{status: 'success', message, data, ...}` on v1 and v2, each record has its declared fields in
 * the declared order with the legacy words of the value maps, amounts are LegacyAmount values
 * written with exactly the v3 digits, and a v3 answer that breaks the contract (or a record
 * builder that would write a wrong type) is a V3ContractError naming the path, never a body.
 */
import { describe, expect, it } from 'vitest';

import { LEGACY_RECORDS } from '../../../../mappings/records.js';
import type { EndpointMapping } from '../../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import {
  LEGACY_GENERATIONS,
  LEGACY_OPERATIONS,
  type LegacyGeneration,
} from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import { loadLegacyMappings } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import type { RecordShape } from '../../../../src/gateway/legacy/declarations/record-shapes.js';
import { LegacyAmount, stringifyLegacyJson } from '../../../../src/gateway/legacy/runtime/lossless-json.js';
import { CONVERTERS } from '../../../../src/gateway/legacy/transforms/derived-fields.js';
import {
  compileRecord,
  compileResponse,
  type V3Answers,
} from '../../../../src/gateway/legacy/transforms/response-body.js';
import { readV3, V3_RECORDS } from '../../../../src/gateway/legacy/v3-contract/v3-records.js';
import { V3ContractError } from '../../../../src/lib/errors/internal-errors.js';
import {
  BALANCE_EUR,
  BALANCES,
  BIG,
  CONTEXT,
  DEPOSIT_FAILED,
  DEPOSIT_USD,
  DEPOSIT_USDC,
  EXPOSURE,
  FIAT_ACCOUNT,
  FIAT_WITHDRAWAL,
  KEY_ID,
  ORG_ID,
  PAIR,
  QUOTE,
  REVERSAL,
  REVERSE_QUOTE,
  SETTLED,
  TRADE,
  UUIDS,
  WALLET_ACCOUNT,
  WITHDRAWAL,
} from '../v3-contract/v3-samples.js';

const MAPPINGS = await loadLegacyMappings();
const A = (digits: string) => new LegacyAmount(digits);

function mappingOf(generation: LegacyGeneration, operation: string): EndpointMapping {
  const mapping = (MAPPINGS.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation];
  if (!mapping) throw new Error(`no ${generation} operation ${operation}`);
  return mapping;
}

function build(generation: LegacyGeneration, operation: string, answers: V3Answers): Record<string, unknown> {
  return compileResponse(
    mappingOf(generation, operation).response,
    MAPPINGS.records,
    MAPPINGS.maps,
    operation,
  )(answers, CONTEXT);
}

/** What the handler sends: the built body through the legacy writer. */
function written(generation: LegacyGeneration, operation: string, answers: V3Answers): string {
  return stringifyLegacyJson(build(generation, operation, answers));
}

function contractError(run: () => unknown): V3ContractError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(V3ContractError);
    return error as V3ContractError;
  }
  throw new Error('expected a V3ContractError');
}

const problemsOf = (generation: LegacyGeneration, operation: string, answers: V3Answers) => {
  const error = contractError(() => build(generation, operation, answers));
  expect(error.operation).toBe(operation);
  return error.problems;
};

/** The v3 answers of every operation, by its v3 call names, as the core gives them. */
function answersFor(operation: string): V3Answers {
  switch (operation) {
    case 'withdrawal_addresses':
      return { accounts: { data: [WALLET_ACCOUNT] } };
    case 'fiat_withdrawal_addresses':
      return { accounts: { data: [FIAT_ACCOUNT] } };
    case 'fiat_withdrawal':
      return { withdrawal: { data: FIAT_WITHDRAWAL } };
    case 'trade/reverse-quote':
      return { quote: { data: REVERSE_QUOTE } };
    default:
      return {
        pairs: { data: [PAIR] },
        balances: BALANCES,
        quote: { data: QUOTE },
        trade: { data: TRADE },
        exposure: EXPOSURE,
        trades: { data: [TRADE, REVERSAL.trade] },
        deposits: { data: [DEPOSIT_USDC, DEPOSIT_USD] },
        withdrawals: { data: [WITHDRAWAL, FIAT_WITHDRAWAL] },
        withdrawal: { data: WITHDRAWAL },
        reversal: { data: REVERSAL },
        settlement: { data: SETTLED },
      };
  }
}

/** The trade record (trades list, trade/{id}) of TRADE: v1's fields, then v2's that do not clash. */
const TRADE_RECORD = {
  id: UUIDS.trade,
  tradingPair: 'EUR/USD',
  referencedUnit: 'EUR',
  tradeDirection: 'BUY',
  amount: A('100.50'),
  computedAmount: A('108.76'),
  createdAtUtc: '2026-11-23T09:48:23.560Z',
  updatedAtUtc: '2026-11-23T09:48:23.560Z',
  orderType: 'MARKET',
  status: 'EXECUTED',
  source: 'API',
  buy: 'EUR',
  sell: 'USD',
  referencedAmount: A('100.50'),
  transactedAt: '2026-11-23T09:48:23.560Z',
  quoteId: UUIDS.quote,
  clientReferenceId: 'ref1',
  originalTradeId: null,
};

/** The tradeResult record (trade, reverse, settle) of TRADE. */
const TRADE_RESULT = {
  id: UUIDS.trade,
  buy: 'EUR',
  sell: 'USD',
  referencedUnit: 'EUR',
  referencedAmount: A('100.50'),
  referenceAmount: A('100.50'),
  amount: A('108.76'),
  status: 'EXECUTED',
  transactedAt: '2026-11-23T09:48:23.560Z',
  quoteId: UUIDS.quote,
  clientReferenceId: 'ref1',
  originalTradeId: null,
};

const LEGACY_QUOTE = {
  id: UUIDS.quote,
  userId: KEY_ID,
  buy: 'EUR',
  sell: 'USD',
  referencedUnit: 'EUR',
  referencedAmount: A('100.50'),
  quoteAmount: A('108.76'),
  createdAt: '2026-11-23T09:48:22.926Z',
  expiryTimeinSeconds: 30,
};

const LEGACY_BALANCE_EUR = {
  id: UUIDS.balanceEur,
  amount: A('50000.00'),
  currency: 'EUR',
  createdAt: '2026-11-23T09:40:00.000Z',
  updatedAt: '2026-11-23T09:48:23.560Z',
  totalBalanceInUSD: A('54000.00'),
  withdrawableBalanceInUSD: A('54000.00'),
  withdrawableBalance: A('50000.00'),
};

const LEGACY_BALANCE_USD = {
  ...LEGACY_BALANCE_EUR,
  id: UUIDS.balanceUsd,
  amount: A('-12.50'),
  currency: 'USD',
  totalBalanceInUSD: A('-12.50'),
  withdrawableBalanceInUSD: A('0.00'),
  withdrawableBalance: A('0.00'),
};

const LEGACY_DEPOSIT_USDC = {
  id: UUIDS.depositUsdc,
  orgId: ORG_ID,
  currency: 'USDC',
  amount: A('100000.000000'),
  status: 'COMPLETED',
  network: 'ETHEREUM',
  transactionHash: '0xd77a3c5b1e0f',
  comments: null,
  referenceId: null,
  createdAt: '2026-11-23T09:30:00.000Z',
  completedAt: '2026-11-23T09:31:00.000Z',
};

const LEGACY_ADDRESS = {
  id: UUIDS.walletAccount,
  name: 'Treasury wallet',
  coinId: CONVERTERS.coinUuid!('USDC'),
  coinName: 'USDC',
  coinNetworkId: CONVERTERS.networkUuid!('ETHEREUM'),
  coinNetworkName: 'Ethereum',
  address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  status: 'Verified',
  verified: true,
  createdAt: '2026-11-23T09:41:00.000Z',
  updatedAt: '2026-11-23T09:42:00.000Z',
  comments: 'cold storage',
};

const LEGACY_FIAT_ACCOUNT = {
  id: UUIDS.fiatAccount,
  currency: 'USD',
  nickname: 'Sandbox operating account',
  accountName: 'Sandbox operating account',
  accountNumber: '000123456789',
  bankName: 'JPMorgan Chase Bank, N.A.',
  routingNumber: '021000021',
  swiftCode: null,
  status: 'active',
  verified: true,
  creatorId: UUIDS.user,
  orgId: ORG_ID,
  comments: null,
  transferType: 'FEDWIRE',
  memo: null,
  createdAt: '2026-11-23T09:41:00.000Z',
  updatedAt: '2026-11-23T09:42:00.000Z',
};

const LEGACY_WITHDRAWAL = {
  id: UUIDS.withdrawal,
  createdAt: '2026-11-23T10:00:00.000Z',
  amount: A('12.500000'),
  currency: 'USDC',
  network: 'ETHEREUM',
  status: 'PENDING',
  transactionHash: null,
  withdrawalAddressId: UUIDS.walletAccount,
  comments: '',
  completedAt: null,
};

const LEGACY_FIAT_WITHDRAWAL = {
  ...LEGACY_WITHDRAWAL,
  id: UUIDS.fiatWithdrawal,
  amount: A('100.00'),
  currency: 'USD',
  network: 'FIAT',
  status: 'COMPLETED',
  withdrawalAddressId: UUIDS.fiatAccount,
  completedAt: '2026-11-23T10:05:00.000Z',
};

const ALL_OPERATIONS = LEGACY_GENERATIONS.flatMap((generation) =>
  LEGACY_OPERATIONS[generation].map((operation) => [generation, operation] as const),
);

describe('every operation of both generations', () => {
  it.each(ALL_OPERATIONS)(
    '%s %s answers {status: success, message, data, ...} with the declared message',
    (generation, operation) => {
      const mapping = mappingOf(generation, operation);
      const body = build(generation, operation, answersFor(operation));
      expect(body.status).toBe('success');
      expect(body.message).toBe(mapping.response.message.text);
      if (mapping.method === 'GET') expect(body.message).toBe('Data fetched successfully');
      const dataAtRoot =
        mapping.response.dataAlsoAtRoot && 'object' in mapping.response.data
          ? Object.keys(mapping.response.data.object)
          : [];
      expect(Object.keys(body)).toEqual([
        'status',
        'message',
        'data',
        ...Object.keys(mapping.response.root ?? {}),
        ...dataAtRoot,
      ]);
    },
  );

  it.each(ALL_OPERATIONS)(
    '%s %s writes as JSON the legacy writer accepts, with no amount left as text',
    (generation, operation) => {
      const text = written(generation, operation, answersFor(operation));
      // Every amount of the samples has decimals; none may be written as a string.
      expect(text).not.toMatch(/"-?[0-9]+\.[0-9]+"/);
    },
  );

  it('only v1 trade copies its data to the top of the body', () => {
    const copying = ALL_OPERATIONS.filter(
      ([generation, operation]) => mappingOf(generation, operation).response.dataAlsoAtRoot !== undefined,
    );
    expect(copying).toEqual([['v1', 'trade']]);
  });

  it('builds each record with its declared fields, in the declared order', () => {
    const answers = answersFor('default');
    const records: [keyof typeof LEGACY_RECORDS, unknown][] = [
      ['trade', build('v2', 'trade/{id}', answers).data as object],
      ['tradeResult', (build('v2', 'trade', answers).data as { trade: object }).trade],
      ['quote', (build('v2', 'generate_quote', answers).data as { quote: object }).quote],
      ['balance', (build('v2', 'balances', answers).data as object[])[0]],
      ['deposit', (build('v2', 'deposits', answers).data as object[])[0]],
      ['withdrawal', build('v2', 'withdrawal', answers).data],
      [
        'withdrawalAddress',
        (build('v2', 'withdrawal_addresses', answersFor('withdrawal_addresses')).data as object[])[0],
      ],
      [
        'fiatWithdrawalAddress',
        (build('v2', 'fiat_withdrawal_addresses', answersFor('fiat_withdrawal_addresses')).data as object[])[0],
      ],
      ['reversalDetails', (build('v2', 'trade/reverse', answers).data as { reversalDetails: object }).reversalDetails],
      ['tradingPair', (build('v2', 'available_markets', answers).data as { tradingPairs: object[] }).tradingPairs[0]],
    ];
    for (const [name, record] of records)
      expect(Object.keys(record as object), name).toEqual(Object.keys(LEGACY_RECORDS[name].fields));
  });
});

describe('trades and trade/{id}: the trade record, on both generations', () => {
  it.each(LEGACY_GENERATIONS)(
    "%s: v1's fields and v2's that do not clash; bought referenced currency is BUY",
    (generation) => {
      expect(build(generation, 'trade/{id}', { trade: { data: TRADE } })).toStrictEqual({
        status: 'success',
        message: 'Data fetched successfully',
        data: TRADE_RECORD,
      });
      expect(build(generation, 'trades', { trades: { data: [TRADE] } }).data).toStrictEqual([TRADE_RECORD]);
      expect(build(generation, 'trades', { trades: { data: [] } }).data).toStrictEqual([]);
    },
  );

  it('sold referenced currency is SELL; amount is the referenced amount and computedAmount the other side', () => {
    const sold = {
      ...TRADE,
      buyCurrency: 'USD',
      sellCurrency: 'EUR',
      buyAmount: '13.35',
      sellAmount: '12.34',
      referencedAmount: '12.34',
    };
    expect(build('v1', 'trade/{id}', { trade: { data: sold } }).data).toStrictEqual({
      ...TRADE_RECORD,
      tradeDirection: 'SELL',
      amount: A('12.34'),
      computedAmount: A('13.35'),
      buy: 'USD',
      sell: 'EUR',
      referencedAmount: A('12.34'),
    });
    const usdReferenced = { ...TRADE, referencedCurrency: 'USD', referencedAmount: '108.76' };
    expect(build('v2', 'trade/{id}', { trade: { data: usdReferenced } }).data).toMatchObject({
      tradingPair: 'USD/EUR',
      referencedUnit: 'USD',
      tradeDirection: 'SELL',
      amount: A('108.76'),
      computedAmount: A('100.50'),
    });
  });

  it('a reversal shows the trade it reversed and its own status', () => {
    const [, reversal] = build('v2', 'trades', { trades: { data: [TRADE, REVERSAL.trade] } }).data as Record<
      string,
      unknown
    >[];
    expect(reversal).toMatchObject({
      id: UUIDS.reversal,
      status: 'REVERSED',
      originalTradeId: UUIDS.trade,
      quoteId: UUIDS.reverseQuote,
      clientReferenceId: null,
    });
  });
});

describe('trade: the trade result, the balances after it and the credit used', () => {
  const answers = { trade: { data: TRADE }, balances: BALANCES, exposure: EXPOSURE };
  const DATA = {
    balances: { EUR: A('50000.00'), USD: A('-12.50') },
    trade: TRADE_RESULT,
    userCreditLimit: A('1000000.00'),
    userCreditUsed: A('108.76'),
  };

  it('v2: under data only', () => {
    expect(build('v2', 'trade', answers)).toStrictEqual({
      status: 'success',
      message: 'Trade executed successfully',
      data: DATA,
    });
  });

  it('v1: under data, and copied to the top of the body', () => {
    expect(build('v1', 'trade', answers)).toStrictEqual({
      status: 'success',
      message: 'Trade executed successfully',
      data: DATA,
      ...DATA,
    });
  });

  it('the result has both referencedAmount and referenceAmount; amount is the counter amount', () => {
    const sold = { ...TRADE, referencedCurrency: 'USD', referencedAmount: '108.76', clientReferenceId: null };
    expect(
      (build('v2', 'trade', { ...answers, trade: { data: sold } }).data as { trade: unknown }).trade,
    ).toStrictEqual({
      ...TRADE_RESULT,
      referencedUnit: 'USD',
      referencedAmount: A('108.76'),
      referenceAmount: A('108.76'),
      amount: A('100.50'),
      clientReferenceId: null,
    });
  });

  it('writes the v1 body with exact amounts, the copy included', () => {
    const text = written('v1', 'trade', answers);
    expect(text).toBe(
      '{"status":"success","message":"Trade executed successfully",' +
        `"data":{"balances":{"EUR":50000.00,"USD":-12.50},"trade":{"id":"${UUIDS.trade}","buy":"EUR","sell":"USD","referencedUnit":"EUR",` +
        `"referencedAmount":100.50,"referenceAmount":100.50,"amount":108.76,"status":"EXECUTED","transactedAt":"2026-11-23T09:48:23.560Z","quoteId":"${UUIDS.quote}",` +
        '"clientReferenceId":"ref1","originalTradeId":null},"userCreditLimit":1000000.00,"userCreditUsed":108.76},' +
        `"balances":{"EUR":50000.00,"USD":-12.50},"trade":{"id":"${UUIDS.trade}","buy":"EUR","sell":"USD","referencedUnit":"EUR",` +
        `"referencedAmount":100.50,"referenceAmount":100.50,"amount":108.76,"status":"EXECUTED","transactedAt":"2026-11-23T09:48:23.560Z","quoteId":"${UUIDS.quote}",` +
        '"clientReferenceId":"ref1","originalTradeId":null},"userCreditLimit":1000000.00,"userCreditUsed":108.76}',
    );
  });

  it('no balance at all is an empty object', () => {
    expect(
      (build('v2', 'trade', { ...answers, balances: { ...BALANCES, data: [] } }).data as { balances: unknown })
        .balances,
    ).toStrictEqual({});
  });
});

describe('generate_quote and trade/reverse-quote: data.quote', () => {
  it.each(LEGACY_GENERATIONS)("%s generate_quote: the quote, with the caller's key id as userId", (generation) => {
    expect(build(generation, 'generate_quote', { quote: { data: QUOTE } })).toStrictEqual({
      status: 'success',
      message: 'Quote generated successfully',
      data: { quote: LEGACY_QUOTE },
    });
  });

  it('referencedAmount is in the amount currency, quoteAmount the other side, the validity in seconds', () => {
    const sellSide = { ...QUOTE, amountCurrency: 'USD', expiresAt: '2026-11-23T09:49:22.926Z' };
    expect(build('v2', 'generate_quote', { quote: { data: sellSide } }).data).toStrictEqual({
      quote: {
        ...LEGACY_QUOTE,
        referencedUnit: 'USD',
        referencedAmount: A('108.76'),
        quoteAmount: A('100.50'),
        expiryTimeinSeconds: 60,
      },
    });
  });

  it('trade/reverse-quote answers the reverse quote the same way', () => {
    expect(build('v2', 'trade/reverse-quote', { quote: { data: REVERSE_QUOTE } })).toStrictEqual({
      status: 'success',
      message: 'Reverse quote generated successfully',
      data: {
        quote: {
          id: UUIDS.reverseQuote,
          userId: KEY_ID,
          buy: 'USD',
          sell: 'EUR',
          referencedUnit: 'EUR',
          referencedAmount: A('100.50'),
          quoteAmount: A('108.32'),
          createdAt: '2026-11-23T09:50:00.000Z',
          expiryTimeinSeconds: 30,
        },
      },
    });
  });
});

describe('trade/reverse and trade/settle', () => {
  it('reverse: the REVERSED trade result with its reversal details', () => {
    expect(build('v2', 'trade/reverse', { reversal: { data: REVERSAL } })).toStrictEqual({
      status: 'success',
      message: 'Trade reversed successfully',
      data: {
        trade: {
          id: UUIDS.reversal,
          buy: 'USD',
          sell: 'EUR',
          referencedUnit: 'EUR',
          referencedAmount: A('100.50'),
          referenceAmount: A('100.50'),
          amount: A('108.32'),
          status: 'REVERSED',
          transactedAt: '2026-11-23T09:50:01.000Z',
          quoteId: UUIDS.reverseQuote,
          clientReferenceId: null,
          originalTradeId: UUIDS.trade,
        },
        reversalDetails: { direction: 'DEBIT', differentialAmount: A('0.44'), currency: 'USD' },
      },
    });
  });

  it('settle: the SETTLED trade result', () => {
    expect(build('v2', 'trade/settle', { settlement: { data: SETTLED } })).toStrictEqual({
      status: 'success',
      message: 'Trade settled successfully',
      data: { trade: { ...TRADE_RESULT, status: 'SETTLED' } },
    });
  });
});

describe('balances', () => {
  it.each(LEGACY_GENERATIONS)('%s: the balances, and the net USD totals at the top of the body', (generation) => {
    expect(build(generation, 'balances', { balances: BALANCES })).toStrictEqual({
      status: 'success',
      message: 'Data fetched successfully',
      data: [LEGACY_BALANCE_EUR, LEGACY_BALANCE_USD],
      netPositiveBalanceInUSD: A('54000.00'),
      netNegativeBalanceInUSD: A('-12.50'),
      netBalanceInUSD: A('53987.50'),
    });
  });

  it('writes negative amounts as negative JSON numbers', () => {
    const text = written('v2', 'balances', { balances: BALANCES });
    expect(text).toContain(`{"id":"${UUIDS.balanceUsd}","amount":-12.50,"currency":"USD",`);
    expect(text).toContain('"totalBalanceInUSD":-12.50,"withdrawableBalanceInUSD":0.00,"withdrawableBalance":0.00}');
    expect(text).toContain(
      '"netPositiveBalanceInUSD":54000.00,"netNegativeBalanceInUSD":-12.50,"netBalanceInUSD":53987.50}',
    );
  });
});

describe('available_markets', () => {
  it.each(LEGACY_GENERATIONS)(
    '%s: {tradingPairs: [{buy, sell}], tradeLimits: [{"BASE/QUOTE": {minTradeLimit, maxTradeLimit}}]}',
    (generation) => {
      const usdc = {
        ...PAIR,
        symbol: 'USDC/USD',
        baseCurrency: 'USDC',
        quoteCurrency: 'USD',
        minAmount: '10.000000',
        maxAmount: BIG,
      };
      expect(build(generation, 'available_markets', { pairs: { data: [PAIR, usdc] } }).data).toStrictEqual({
        tradingPairs: [
          { buy: 'EUR', sell: 'GBP' },
          { buy: 'USDC', sell: 'USD' },
        ],
        tradeLimits: [
          { 'EUR/GBP': { minTradeLimit: A('1.00'), maxTradeLimit: A('1000000.00') } },
          { 'USDC/USD': { minTradeLimit: A('10.000000'), maxTradeLimit: A(BIG) } },
        ],
      });
    },
  );

  it('writes the limits as exact JSON numbers', () => {
    expect(written('v2', 'available_markets', { pairs: { data: [PAIR] } })).toBe(
      '{"status":"success","message":"Data fetched successfully","data":{"tradingPairs":[{"buy":"EUR","sell":"GBP"}],"tradeLimits":[{"EUR/GBP":{"minTradeLimit":1.00,"maxTradeLimit":1000000.00}}]}}',
    );
  });
});

describe('deposits', () => {
  it.each(LEGACY_GENERATIONS)(
    '%s: completedAt, the org of the path, and network FIAT for a fiat deposit',
    (generation) => {
      expect(build(generation, 'deposits', { deposits: { data: [DEPOSIT_USDC, DEPOSIT_USD] } }).data).toStrictEqual([
        LEGACY_DEPOSIT_USDC,
        {
          id: UUIDS.depositUsd,
          orgId: ORG_ID,
          currency: 'USD',
          amount: A('75.25'),
          status: 'PENDING',
          network: 'FIAT',
          transactionHash: null,
          comments: 'March top-up',
          referenceId: 'wire-42',
          createdAt: '2026-11-23T09:30:00.000Z',
          completedAt: null,
        },
      ]);
    },
  );

  it('a FAILED deposit is written ERROR', () => {
    expect(build('v1', 'deposits', { deposits: { data: [DEPOSIT_FAILED] } }).data).toMatchObject([
      { id: UUIDS.depositFailed, status: 'ERROR', network: 'FIAT' },
    ]);
  });
});

describe('withdrawal_addresses', () => {
  it.each(LEGACY_GENERATIONS)(
    '%s: name, coin and network by code, name and stable UUID, status Verified',
    (generation) => {
      expect(build(generation, 'withdrawal_addresses', { accounts: { data: [WALLET_ACCOUNT] } }).data).toStrictEqual([
        LEGACY_ADDRESS,
      ]);
    },
  );

  it('an active address not yet verified is Pending; a disabled one Disabled', () => {
    const pending = { ...WALLET_ACCOUNT, verified: false };
    const disabled = { ...WALLET_ACCOUNT, status: 'DISABLED' };
    const awaiting = { ...WALLET_ACCOUNT, status: 'PENDING_VERIFICATION', verified: false };
    expect(
      (
        build('v2', 'withdrawal_addresses', { accounts: { data: [pending, disabled, awaiting] } }).data as {
          status: string;
          verified: boolean;
        }[]
      ).map((a) => [a.status, a.verified]),
    ).toEqual([
      ['Pending', false],
      ['Disabled', true],
      ['Pending', false],
    ]);
  });

  it('the coin and network UUIDs are the same on every call, and differ by coin and network', () => {
    const polygonUsdt = { ...WALLET_ACCOUNT, currency: 'USDT', network: 'POLYGON' };
    const [first, second] = build('v2', 'withdrawal_addresses', { accounts: { data: [WALLET_ACCOUNT, polygonUsdt] } })
      .data as Record<string, unknown>[];
    const again = (
      build('v1', 'withdrawal_addresses', { accounts: { data: [WALLET_ACCOUNT] } }).data as Record<string, unknown>[]
    )[0]!;
    expect([again.coinId, again.coinNetworkId]).toEqual([first!.coinId, first!.coinNetworkId]);
    expect(second).toMatchObject({ coinName: 'USDT', coinNetworkName: 'Polygon' });
    expect(second!.coinId).not.toBe(first!.coinId);
    expect(second!.coinNetworkId).not.toBe(first!.coinNetworkId);
  });
});

describe('fiat_withdrawal_addresses', () => {
  it.each(LEGACY_GENERATIONS)('%s: the bank account with its nickname and a lower-case status', (generation) => {
    expect(build(generation, 'fiat_withdrawal_addresses', { accounts: { data: [FIAT_ACCOUNT] } }).data).toStrictEqual([
      LEGACY_FIAT_ACCOUNT,
    ]);
  });

  it('a SWIFT account awaiting verification', () => {
    const swift = {
      ...FIAT_ACCOUNT,
      transferType: 'SWIFT',
      routingNumber: null,
      swiftCode: 'CHASUS33',
      memo: 'ref',
      status: 'PENDING_VERIFICATION',
      verified: false,
    };
    expect(build('v2', 'fiat_withdrawal_addresses', { accounts: { data: [swift] } }).data).toStrictEqual([
      {
        ...LEGACY_FIAT_ACCOUNT,
        transferType: 'SWIFT',
        routingNumber: null,
        swiftCode: 'CHASUS33',
        memo: 'ref',
        status: 'pending_verification',
        verified: false,
      },
    ]);
  });

  it('writes account numbers as text, never as numbers', () => {
    expect(written('v1', 'fiat_withdrawal_addresses', { accounts: { data: [FIAT_ACCOUNT] } })).toContain(
      '"accountNumber":"000123456789","bankName"',
    );
  });
});

describe('withdrawals, withdrawal and fiat_withdrawal', () => {
  it.each(LEGACY_GENERATIONS)(
    '%s withdrawals: the legacy names, network FIAT for a fiat withdrawal, completedAt',
    (generation) => {
      expect(
        build(generation, 'withdrawals', { withdrawals: { data: [WITHDRAWAL, FIAT_WITHDRAWAL] } }).data,
      ).toStrictEqual([LEGACY_WITHDRAWAL, LEGACY_FIAT_WITHDRAWAL]);
    },
  );

  it.each(ALL_OPERATIONS.filter(([, operation]) => operation === 'withdrawal' || operation === 'fiat_withdrawal'))(
    '%s %s: the withdrawal created',
    (generation, operation) => {
      expect(build(generation, operation, { withdrawal: { data: WITHDRAWAL } })).toStrictEqual({
        status: 'success',
        message: 'Withdrawal created successfully',
        data: LEGACY_WITHDRAWAL,
      });
      expect(build(generation, operation, { withdrawal: { data: FIAT_WITHDRAWAL } }).data).toStrictEqual(
        LEGACY_FIAT_WITHDRAWAL,
      );
    },
  );
});

describe('amounts keep exactly the v3 digits', () => {
  const cases: [string, LegacyGeneration, string, V3Answers, string][] = [
    [
      'trade record amount',
      'v1',
      'trade/{id}',
      { trade: { data: { ...TRADE, buyAmount: BIG, referencedAmount: BIG, sellAmount: '0.01' } } },
      `"amount":${BIG},"computedAmount":0.01,`,
    ],
    [
      'trades list',
      'v2',
      'trades',
      { trades: { data: [TRADE, { ...TRADE, sellAmount: BIG }] } },
      `"amount":100.50,"computedAmount":${BIG},`,
    ],
    [
      'trade result and credit',
      'v2',
      'trade',
      {
        trade: { data: { ...TRADE, sellAmount: BIG } },
        balances: BALANCES,
        exposure: { data: { ...EXPOSURE.data, committedAmount: BIG } },
      },
      `"amount":${BIG},`,
    ],
    [
      'credit used',
      'v2',
      'trade',
      { trade: { data: TRADE }, balances: BALANCES, exposure: { data: { ...EXPOSURE.data, committedAmount: BIG } } },
      `"userCreditUsed":${BIG}}`,
    ],
    [
      'balances entries',
      'v1',
      'trade',
      {
        trade: { data: TRADE },
        balances: { ...BALANCES, data: [{ ...BALANCE_EUR, amount: BIG }] },
        exposure: EXPOSURE,
      },
      `"balances":{"EUR":${BIG}}`,
    ],
    [
      'quote',
      'v2',
      'generate_quote',
      { quote: { data: { ...QUOTE, buyAmount: BIG } } },
      `"referencedAmount":${BIG},"quoteAmount":108.76,`,
    ],
    [
      'reversal difference',
      'v2',
      'trade/reverse',
      {
        reversal: { data: { ...REVERSAL, reversalDetails: { ...REVERSAL.reversalDetails, differentialAmount: BIG } } },
      },
      `"differentialAmount":${BIG},`,
    ],
    [
      'balance and totals',
      'v2',
      'balances',
      { balances: { data: [{ ...BALANCE_EUR, amount: BIG }], totals: { ...BALANCES.totals, netUsd: BIG } } },
      `"netBalanceInUSD":${BIG}}`,
    ],
    ['deposit', 'v1', 'deposits', { deposits: { data: [{ ...DEPOSIT_USD, amount: BIG }] } }, `"amount":${BIG},`],
    [
      'withdrawal',
      'v2',
      'withdrawals',
      { withdrawals: { data: [{ ...WITHDRAWAL, withdrawalAmount: BIG }] } },
      `"amount":${BIG},`,
    ],
    [
      'trailing zeros',
      'v2',
      'withdrawal',
      { withdrawal: { data: { ...WITHDRAWAL, withdrawalAmount: '12.500000' } } },
      '"amount":12.500000,',
    ],
  ];

  it.each(cases)('%s (%s %s)', (_name, generation, operation, answers, expected) => {
    expect(written(generation, operation, answers)).toContain(expected);
  });

  it('a negative zero loses only its sign', () => {
    expect(
      written('v2', 'balances', { balances: { data: [{ ...BALANCE_EUR, amount: '-0.00' }], totals: BALANCES.totals } }),
    ).toContain('"amount":0.00,');
  });
});

describe('a v3 answer that breaks the contract is a V3ContractError naming the path', () => {
  it('a missing field', () => {
    const { status: _status, ...noStatus } = TRADE;
    expect(problemsOf('v2', 'trade/{id}', { trade: { data: noStatus } })).toEqual([
      'trade.data.status: Invalid input: expected string, received undefined',
    ]);
  });

  it('a number where an amount string is due', () => {
    expect(problemsOf('v1', 'trades', { trades: { data: [TRADE, { ...TRADE, buyAmount: 100.5 }] } })).toEqual([
      'trades.data[1].buyAmount: Invalid input: expected string, received number',
    ]);
    expect(
      problemsOf('v2', 'trade', {
        trade: { data: TRADE },
        balances: BALANCES,
        exposure: { data: { creditLine: 1000000, committedAmount: '1' } },
      }),
    ).toEqual(['exposure.data.creditLine: must be a decimal string']);
    expect(problemsOf('v2', 'available_markets', { pairs: { data: [{ ...PAIR, minAmount: 1 }] } })).toEqual([
      'pairs.data[0].minAmount: Invalid input: expected string, received number',
    ]);
  });

  it('a wrong id prefix', () => {
    expect(problemsOf('v1', 'trade/{id}', { trade: { data: { ...TRADE, id: TRADE.quoteId } } })).toEqual([
      'trade.data.id: must be a trd_ id',
    ]);
    expect(
      problemsOf('v2', 'withdrawals', { withdrawals: { data: [{ ...WITHDRAWAL, id: UUIDS.withdrawal }] } }),
    ).toEqual(['withdrawals.data[0].id: must be a wtd_ id']);
  });

  it('a duplicate currency in the balances entries', () => {
    expect(
      problemsOf('v1', 'trade', {
        trade: { data: TRADE },
        balances: { ...BALANCES, data: [BALANCE_EUR, BALANCE_EUR] },
        exposure: EXPOSURE,
      }),
    ).toEqual(['balances.data[1].currency: a second record for EUR']);
  });

  it('a missing answer, list or total', () => {
    expect(problemsOf('v2', 'trade', { trade: { data: TRADE }, balances: BALANCES })).toEqual([
      'exposure.data.creditLine: must be a decimal string',
    ]);
    expect(problemsOf('v2', 'trades', {})).toEqual(['trades.data: Invalid input: expected array, received undefined']);
    expect(problemsOf('v2', 'withdrawal_addresses', { accounts: { data: WALLET_ACCOUNT } })).toEqual([
      'accounts.data: Invalid input: expected array, received object',
    ]);
    expect(problemsOf('v2', 'balances', { balances: { data: BALANCES.data } })).toEqual([
      'balances.totals.netPositiveUsd: must be a decimal string',
    ]);
    expect(problemsOf('v2', 'trade/reverse', { reversal: { data: { trade: REVERSAL.trade } } })).toEqual([
      'reversal.data.reversalDetails: Invalid input: expected object, received undefined',
    ]);
  });

  it('a cross-field rule the legacy record relies on', () => {
    expect(
      problemsOf('v2', 'trade/reverse-quote', { quote: { data: { ...REVERSE_QUOTE, amountCurrency: 'GBP' } } }),
    ).toEqual(['quote.data.amountCurrency: must be buyCurrency or sellCurrency']);
    expect(problemsOf('v1', 'deposits', { deposits: { data: [{ ...DEPOSIT_USDC, network: null }] } })).toEqual([
      'deposits.data[0].network: must be a network for a non-FIAT deposit',
    ]);
  });

  it('a v3 null where the legacy field is not nullable', () => {
    expect(
      problemsOf('v2', 'withdrawal_addresses', { accounts: { data: [{ ...WALLET_ACCOUNT, address: null }] } }),
    ).toEqual(['accounts.data[0].address: must be a string']);
    // A bank account in the stablecoin list has no network: no coin network UUID to give.
    expect(problemsOf('v2', 'withdrawal_addresses', { accounts: { data: [WALLET_ACCOUNT, FIAT_ACCOUNT] } })).toEqual([
      'accounts.data[1].coinNetworkId: must be a UUID',
    ]);
    expect(problemsOf('v2', 'withdrawal', { withdrawal: { data: { ...WITHDRAWAL, network: null } } })).toEqual([
      'withdrawal.data.network: must be a string',
    ]);
  });
});

describe('compileRecord', () => {
  const provenance = { source: 'ours', reason: 'test' } as const;
  const trade = readV3(V3_RECORDS.trade, TRADE, 'test', '') as unknown as Record<string, unknown>;
  const deposit = (status: string) =>
    readV3(V3_RECORDS.deposit, { ...DEPOSIT_USDC, status }, 'test', '') as unknown as Record<string, unknown>;

  it('catches a derived field that returns the wrong type, naming the field', () => {
    const shape: RecordShape = {
      summary: 'wrong types',
      v3: 'trade',
      fields: { pairAsAmount: { ...provenance, type: 'amount', derived: 'tradingPair' } },
    };
    const error = contractError(() => compileRecord(shape, MAPPINGS.maps)(trade, CONTEXT, 'op', 'trade.data'));
    expect(error.problems).toEqual(['trade.data.pairAsAmount: must be a decimal string']);
    const counterAsInteger: RecordShape = {
      summary: 'wrong types',
      v3: 'trade',
      fields: { counter: { ...provenance, type: 'integer', nullable: true, derived: 'counterAmount' } },
    };
    expect(
      contractError(() => compileRecord(counterAsInteger, MAPPINGS.maps)(trade, CONTEXT, 'op', 'x')).problems,
    ).toEqual(['x.counter: must be a whole number or null']);
  });

  it('reads from, derived, constant and context values, each checked against its type', () => {
    const shape: RecordShape = {
      summary: 'every source',
      v3: 'trade',
      fields: {
        id: { ...provenance, type: 'id', from: 'id' },
        direction: { ...provenance, type: 'string', derived: 'tradeDirection' },
        kind: { ...provenance, type: 'string', constant: 'MARKET' },
        org: { ...provenance, type: 'id', context: 'orgId' },
        key: { ...provenance, type: 'id', context: 'keyId' },
      },
    };
    expect(compileRecord(shape, MAPPINGS.maps)(trade, CONTEXT, 'op', 'x')).toStrictEqual({
      id: UUIDS.trade,
      direction: 'BUY',
      kind: 'MARKET',
      org: ORG_ID,
      key: KEY_ID,
    });
  });

  it('value maps give the legacy word and pass an unknown v3 word through unchanged', () => {
    const shape: RecordShape = {
      summary: 'mapped',
      v3: 'deposit',
      fields: { status: { ...provenance, type: 'string', from: 'status', map: 'depositStatus' } },
    };
    const buildDeposit = compileRecord(shape, MAPPINGS.maps);
    expect(
      ['PENDING', 'COMPLETED', 'FAILED', 'REFUNDED', 'failed'].map(
        (status) => buildDeposit(deposit(status), CONTEXT, 'op', 'x').status,
      ),
    ).toEqual(['PENDING', 'COMPLETED', 'ERROR', 'REFUNDED', 'failed']);
  });

  it('unknown words pass through the shipped records too: a new network, a new status', () => {
    const arbitrum = { ...WALLET_ACCOUNT, network: 'ARBITRUM', status: 'SUSPENDED' };
    expect(
      (build('v2', 'withdrawal_addresses', { accounts: { data: [arbitrum] } }).data as Record<string, unknown>[])[0],
    ).toMatchObject({
      coinNetworkName: 'ARBITRUM',
      coinNetworkId: CONVERTERS.networkUuid!('ARBITRUM'),
      status: 'SUSPENDED',
    });
    expect(
      (
        build('v2', 'fiat_withdrawal_addresses', { accounts: { data: [{ ...FIAT_ACCOUNT, status: 'ARCHIVED' }] } })
          .data as Record<string, unknown>[]
      )[0],
    ).toMatchObject({ status: 'ARCHIVED' });
  });

  it('a nullable field takes null; a field that is not nullable refuses it', () => {
    const shape: RecordShape = {
      summary: 'nullable',
      v3: 'trade',
      fields: {
        reference: { ...provenance, type: 'string', nullable: true, from: 'clientReferenceId' },
        original: { ...provenance, type: 'id', from: 'originalTradeId' },
      },
    };
    expect(
      contractError(() =>
        compileRecord(shape, MAPPINGS.maps)({ ...trade, clientReferenceId: null }, CONTEXT, 'op', 'x'),
      ).problems,
    ).toEqual(['x.original: must be a UUID']);
  });
});

describe('the builders', () => {
  it('do not change the v3 answers they read', () => {
    const answers = structuredClone({ trade: { data: TRADE }, balances: BALANCES, exposure: EXPOSURE });
    build('v1', 'trade', answers);
    expect(answers).toStrictEqual({ trade: { data: TRADE }, balances: BALANCES, exposure: EXPOSURE });
  });

  it('build a new body on every call', () => {
    const first = build('v2', 'balances', { balances: BALANCES });
    const second = build('v2', 'balances', { balances: BALANCES });
    expect(second).toStrictEqual(first);
    expect(second).not.toBe(first);
    expect(second.data).not.toBe(first.data);
  });
});
