import { describe, expect, it } from 'vitest';
import { V1_ENDPOINTS } from '../../../../mappings/endpoints.v1.js';
import { V2_ENDPOINTS } from '../../../../mappings/endpoints.v2.js';
import type { EndpointMapping } from '../../../../src/gateway/legacy/endpoint-mappings.js';
import { stringifyLegacyJson } from '../../../../src/gateway/legacy/lossless-json.js';
import type { LegacyGeneration } from '../../../../src/gateway/legacy/operations.js';
import { RESPONSE_TRANSFORMS } from '../../../../src/gateway/legacy/transforms/response-transforms.js';
import { V3ContractError } from '../../../../src/gateway/legacy/transforms/transform-types.js';
import {
  BALANCES,
  BALANCE_EUR,
  BIG,
  DEPOSIT_USD,
  DEPOSIT_USDC,
  EXPOSURE,
  FIAT_ACCOUNT,
  FIAT_WITHDRAWAL,
  KEY_ID,
  ORG_ID,
  PAIR,
  PRINCIPAL,
  QUOTE,
  REVERSAL,
  REVERSE_QUOTE,
  SETTLED,
  TRADE,
  UUIDS,
  WALLET_ACCOUNT,
  WITHDRAWAL,
} from './v3-samples.js';

function transform(name: string, generation: LegacyGeneration, answers: readonly unknown[], operation = 'op') {
  const run = RESPONSE_TRANSFORMS[name];
  if (!run) throw new Error(`no response transform ${name}`);
  return run({ generation, operation, answers: answers as never, principal: PRINCIPAL });
}

/** What the handler writes: the output with the mapping's amount paths as exact JSON numbers. */
function written(name: string, generation: LegacyGeneration, mapping: EndpointMapping, answers: readonly unknown[]): string {
  expect(mapping.transforms.response).toBe(name);
  return stringifyLegacyJson(transform(name, generation, answers), mapping.amounts.response);
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

const V1_TRADE = {
  id: UUIDS.trade,
  tradingPair: 'EUR/USD',
  referencedUnit: 'EUR',
  tradeDirection: 'BUY',
  amount: '100.50',
  computedAmount: '108.76',
  createdAtUtc: '2026-11-23T09:48:23.560Z',
  updatedAtUtc: '2026-11-23T09:48:23.560Z',
  orderType: 'MARKET',
  status: 'EXECUTED',
  source: 'API',
};

const V2_TRADE = {
  id: UUIDS.trade,
  buy: 'EUR',
  sell: 'USD',
  referencedUnit: 'EUR',
  referencedAmount: '100.50',
  amount: '108.76',
  status: 'EXECUTED',
  transactedAt: '2026-11-23T09:48:23.560Z',
  quoteId: UUIDS.quote,
  clientReferenceId: 'ref1',
  originalTradeId: null,
};

const LEGACY_BALANCE_EUR = {
  id: UUIDS.balanceEur,
  amount: '50000.00',
  currency: 'EUR',
  createdAt: '2026-11-23T09:40:00.000Z',
  updatedAt: '2026-11-23T09:48:23.560Z',
  totalBalanceInUSD: '54000.00',
  withdrawableBalanceInUSD: '54000.00',
  withdrawableBalance: '50000.00',
};

const LEGACY_BALANCE_USD = {
  ...LEGACY_BALANCE_EUR,
  id: UUIDS.balanceUsd,
  amount: '-12.50',
  currency: 'USD',
  totalBalanceInUSD: '-12.50',
  withdrawableBalanceInUSD: '0.00',
  withdrawableBalance: '0.00',
};

describe('v1Trade', () => {
  it('answers the v1 trade (spec 2.4): referenced currency bought is BUY, BASE/QUOTE = referenced/other', () => {
    expect(transform('v1Trade', 'v1', [{ data: TRADE }])).toStrictEqual({ status: 'success', data: V1_TRADE });
  });

  it('referenced currency sold is SELL, the amount is the referenced one and computedAmount the bought one', () => {
    const sold = { ...TRADE, buyCurrency: 'USD', sellCurrency: 'EUR', buyAmount: '13.35', sellAmount: '12.34', referencedAmount: '12.34', referencedCurrency: 'EUR' };
    expect(transform('v1Trade', 'v1', [{ data: sold }])).toStrictEqual({
      status: 'success',
      data: { ...V1_TRADE, tradingPair: 'EUR/USD', tradeDirection: 'SELL', amount: '12.34', computedAmount: '13.35' },
    });
    const usdReferenced = { ...TRADE, referencedCurrency: 'USD', referencedAmount: '108.76' };
    expect(transform('v1Trade', 'v1', [{ data: usdReferenced }])).toMatchObject({
      data: { tradingPair: 'USD/EUR', referencedUnit: 'USD', tradeDirection: 'SELL', amount: '108.76', computedAmount: '100.50' },
    });
  });

  it('writes the amounts as exact JSON numbers', () => {
    const text = written('v1Trade', 'v1', V1_ENDPOINTS['trade/{id}'], [{ data: TRADE }]);
    expect(text).toContain('"amount":100.50,"computedAmount":108.76,');
    const big = written('v1Trade', 'v1', V1_ENDPOINTS['trade/{id}'], [{ data: { ...TRADE, buyAmount: BIG, referencedAmount: BIG, sellAmount: '0.01' } }]);
    expect(big).toContain(`"amount":${BIG},"computedAmount":0.01,`);
  });

  it('refuses a trade whose referenced currency is neither side, or whose id has another prefix', () => {
    expect(contractError(() => transform('v1Trade', 'v1', [{ data: { ...TRADE, referencedCurrency: 'GBP' } }], 'trade/{id}')).problems).toEqual([
      'answers[0].data.referencedCurrency: must be buyCurrency or sellCurrency',
    ]);
    const error = contractError(() => transform('v1Trade', 'v1', [{ data: { ...TRADE, id: TRADE.quoteId } }], 'trade/{id}'));
    expect(error.operation).toBe('trade/{id}');
    expect(error.problems).toEqual(['answers[0].data.id: must be a trd_ id']);
  });
});

describe('v1TradeList', () => {
  const sold = { ...TRADE, id: REVERSAL.trade.id, referencedCurrency: 'USD', referencedAmount: '108.76' };

  it('answers every trade of the page in the v1 shape', () => {
    expect(transform('v1TradeList', 'v1', [{ data: [TRADE, sold] }])).toStrictEqual({
      status: 'success',
      data: [V1_TRADE, { ...V1_TRADE, id: UUIDS.reversal, tradingPair: 'USD/EUR', referencedUnit: 'USD', tradeDirection: 'SELL', amount: '108.76', computedAmount: '100.50' }],
    });
    expect(transform('v1TradeList', 'v1', [{ data: [] }])).toStrictEqual({ status: 'success', data: [] });
  });

  it('writes the amounts as exact JSON numbers', () => {
    const text = written('v1TradeList', 'v1', V1_ENDPOINTS.trades, [{ data: [TRADE, { ...sold, referencedAmount: BIG, sellAmount: BIG }] }]);
    expect(text).toContain('"amount":100.50,"computedAmount":108.76,');
    expect(text).toContain(`"amount":${BIG},"computedAmount":100.50,`);
  });

  it('names the record that breaks the contract', () => {
    expect(contractError(() => transform('v1TradeList', 'v1', [{ data: [TRADE, { ...TRADE, buyAmount: 100.5 }] }])).problems).toEqual([
      'answers[0].data[1].buyAmount: Invalid input: expected string, received number',
    ]);
    expect(contractError(() => transform('v1TradeList', 'v1', [{}])).problems).toEqual(['answers[0].data: Invalid input: expected array, received undefined']);
  });
});

describe('v1TradeResult', () => {
  const answers = [{ data: TRADE }, BALANCES, EXPOSURE];

  it('answers the v1 trade with the balances by currency and the credit line and use', () => {
    expect(transform('v1TradeResult', 'v1', answers)).toStrictEqual({
      status: 'success',
      data: { balances: { EUR: '50000.00', USD: '-12.50' }, trade: V1_TRADE, userCreditLimit: '1000000.00', userCreditUsed: '108.76' },
    });
  });

  it('writes the amounts as exact JSON numbers', () => {
    const text = written('v1TradeResult', 'v1', V1_ENDPOINTS.trade, answers);
    expect(text).toBe(
      `{"status":"success","data":{"balances":{"EUR":50000.00,"USD":-12.50},"trade":{"id":"${UUIDS.trade}","tradingPair":"EUR/USD","referencedUnit":"EUR",` +
        '"tradeDirection":"BUY","amount":100.50,"computedAmount":108.76,"createdAtUtc":"2026-11-23T09:48:23.560Z","updatedAtUtc":"2026-11-23T09:48:23.560Z",' +
        '"orderType":"MARKET","status":"EXECUTED","source":"API"},"userCreditLimit":1000000.00,"userCreditUsed":108.76}}',
    );
    const big = written('v1TradeResult', 'v1', V1_ENDPOINTS.trade, [{ data: TRADE }, { ...BALANCES, data: [{ ...BALANCE_EUR, amount: BIG }] }, { data: { ...EXPOSURE.data, creditLine: BIG } }]);
    expect(big).toContain(`"balances":{"EUR":${BIG}}`);
    expect(big).toContain(`"userCreditLimit":${BIG},`);
  });

  it('refuses a malformed balances or exposure answer, and a missing one', () => {
    expect(contractError(() => transform('v1TradeResult', 'v1', [{ data: TRADE }, { ...BALANCES, data: [BALANCE_EUR, BALANCE_EUR] }, EXPOSURE])).problems).toEqual([
      'answers[1].data[1].currency: a second balance of EUR',
    ]);
    expect(contractError(() => transform('v1TradeResult', 'v1', [{ data: TRADE }, BALANCES, { data: { creditLine: 1000000 } }])).problems).toEqual([
      'answers[2].data.creditLine: Invalid input: expected string, received number',
      'answers[2].data.committedAmount: Invalid input: expected string, received undefined',
    ]);
    expect(contractError(() => transform('v1TradeResult', 'v1', [{ data: TRADE }, BALANCES])).problems).toEqual([
      'answers[2]: Invalid input: expected object, received undefined',
    ]);
  });
});

describe('v2TradeResult', () => {
  const answers = [{ data: TRADE }, BALANCES, EXPOSURE];

  it('answers the v2 trade (spec 2.3) with the balances and credit, and a message', () => {
    expect(transform('v2TradeResult', 'v2', answers)).toStrictEqual({
      status: 'success',
      message: 'Trade executed successfully',
      data: { balances: { EUR: '50000.00', USD: '-12.50' }, trade: V2_TRADE, userCreditLimit: '1000000.00', userCreditUsed: '108.76' },
    });
  });

  it('amount is the other side: the bought amount when the referenced currency is sold', () => {
    const sold = { ...TRADE, referencedCurrency: 'USD', referencedAmount: '108.76', clientReferenceId: null };
    expect(transform('v2TradeResult', 'v2', [{ data: sold }, BALANCES, EXPOSURE])).toMatchObject({
      data: { trade: { ...V2_TRADE, referencedUnit: 'USD', referencedAmount: '108.76', amount: '100.50', clientReferenceId: null } },
    });
  });

  it('writes the amounts as exact JSON numbers', () => {
    const text = written('v2TradeResult', 'v2', V2_ENDPOINTS.trade, answers);
    expect(text).toContain('"balances":{"EUR":50000.00,"USD":-12.50}');
    expect(text).toContain('"referencedAmount":100.50,"amount":108.76,');
    expect(text).toContain('"userCreditLimit":1000000.00,"userCreditUsed":108.76}');
    const big = written('v2TradeResult', 'v2', V2_ENDPOINTS.trade, [{ data: { ...TRADE, sellAmount: BIG } }, BALANCES, { data: { ...EXPOSURE.data, committedAmount: BIG } }]);
    expect(big).toContain(`"referencedAmount":100.50,"amount":${BIG},`);
    expect(big).toContain(`"userCreditUsed":${BIG}}`);
  });

  it('refuses a trade whose quoteId is not a qte_ id', () => {
    expect(contractError(() => transform('v2TradeResult', 'v2', [{ data: { ...TRADE, quoteId: UUIDS.quote } }, BALANCES, EXPOSURE])).problems).toEqual([
      'answers[0].data.quoteId: must be a qte_ id',
    ]);
  });
});

describe('v2TradeList', () => {
  it('answers every trade of the page in the v2 shape', () => {
    expect(transform('v2TradeList', 'v2', [{ data: [TRADE, REVERSAL.trade] }])).toStrictEqual({
      status: 'success',
      message: 'Trades retrieved successfully',
      data: [
        V2_TRADE,
        {
          id: UUIDS.reversal,
          buy: 'USD',
          sell: 'EUR',
          referencedUnit: 'EUR',
          referencedAmount: '100.50',
          amount: '108.32',
          status: 'REVERSED',
          transactedAt: '2026-11-23T09:50:01.000Z',
          quoteId: UUIDS.reverseQuote,
          clientReferenceId: null,
          originalTradeId: UUIDS.trade,
        },
      ],
    });
  });

  it('writes the amounts as exact JSON numbers', () => {
    const text = written('v2TradeList', 'v2', V2_ENDPOINTS.trades, [{ data: [TRADE, { ...TRADE, referencedAmount: BIG, buyAmount: BIG }] }]);
    expect(text).toContain('"referencedAmount":100.50,"amount":108.76,');
    expect(text).toContain(`"referencedAmount":${BIG},"amount":108.76,`);
  });

  it('refuses an originalTradeId of another kind', () => {
    expect(contractError(() => transform('v2TradeList', 'v2', [{ data: [{ ...TRADE, originalTradeId: 'usr_01a207ce44eb72028b2f43bbb9b9c176' }] }])).problems).toEqual([
      'answers[0].data[0].originalTradeId: must be a trd_ id',
    ]);
  });
});

describe('v2ReversalResult', () => {
  it('answers the REVERSED trade with its reversal details', () => {
    expect(transform('v2ReversalResult', 'v2', [{ data: REVERSAL }])).toStrictEqual({
      status: 'success',
      message: 'Trade reversed successfully',
      data: {
        trade: {
          id: UUIDS.reversal,
          buy: 'USD',
          sell: 'EUR',
          referencedUnit: 'EUR',
          referencedAmount: '100.50',
          amount: '108.32',
          status: 'REVERSED',
          transactedAt: '2026-11-23T09:50:01.000Z',
          quoteId: UUIDS.reverseQuote,
          clientReferenceId: null,
          originalTradeId: UUIDS.trade,
        },
        reversalDetails: { direction: 'DEBIT', differentialAmount: '0.44', currency: 'USD' },
      },
    });
  });

  it('writes the amounts as exact JSON numbers', () => {
    const text = written('v2ReversalResult', 'v2', V2_ENDPOINTS['trade/reverse'], [{ data: REVERSAL }]);
    expect(text).toContain('"referencedAmount":100.50,"amount":108.32,');
    expect(text).toContain('"reversalDetails":{"direction":"DEBIT","differentialAmount":0.44,"currency":"USD"}');
    const big = written('v2ReversalResult', 'v2', V2_ENDPOINTS['trade/reverse'], [{ data: { ...REVERSAL, reversalDetails: { ...REVERSAL.reversalDetails, differentialAmount: BIG } } }]);
    expect(big).toContain(`"differentialAmount":${BIG},`);
  });

  it('refuses an answer without reversal details', () => {
    expect(contractError(() => transform('v2ReversalResult', 'v2', [{ data: { trade: REVERSAL.trade } }])).problems).toEqual([
      'answers[0].data.reversalDetails: Invalid input: expected object, received undefined',
    ]);
  });
});

describe('v2SettleResult', () => {
  it('answers the SETTLED trade', () => {
    expect(transform('v2SettleResult', 'v2', [{ data: SETTLED }])).toStrictEqual({
      status: 'success',
      message: 'Trade settled successfully',
      data: { trade: { ...V2_TRADE, status: 'SETTLED' } },
    });
  });

  it('writes the amounts as exact JSON numbers', () => {
    expect(written('v2SettleResult', 'v2', V2_ENDPOINTS['trade/settle'], [{ data: SETTLED }])).toContain('"referencedAmount":100.50,"amount":108.76,');
    expect(written('v2SettleResult', 'v2', V2_ENDPOINTS['trade/settle'], [{ data: { ...SETTLED, buyAmount: BIG, referencedAmount: BIG } }])).toContain(
      `"referencedAmount":${BIG},"amount":108.76,`,
    );
  });

  it('refuses an amount in exponent notation', () => {
    expect(contractError(() => transform('v2SettleResult', 'v2', [{ data: { ...SETTLED, sellAmount: '1.0876e2' } }])).problems).toEqual([
      'answers[0].data.sellAmount: must be a decimal string',
    ]);
  });
});

describe('legacyQuote', () => {
  const LEGACY_QUOTE = {
    id: UUIDS.quote,
    userId: KEY_ID,
    buy: 'EUR',
    sell: 'USD',
    referencedUnit: 'EUR',
    referencedAmount: '100.50',
    quoteAmount: '108.76',
    createdAt: '2026-11-23T09:48:22.926Z',
    expiryTimeinSeconds: 30,
  };

  it('answers the legacy quote: v1 without a message, v2 with one', () => {
    expect(transform('legacyQuote', 'v1', [{ data: QUOTE }])).toStrictEqual({ status: 'success', data: LEGACY_QUOTE });
    expect(transform('legacyQuote', 'v2', [{ data: QUOTE }])).toStrictEqual({ status: 'success', message: 'Quote generated successfully', data: LEGACY_QUOTE });
  });

  it('referencedAmount is in the amount currency, quoteAmount the other side', () => {
    const sellSide = { ...QUOTE, amountCurrency: 'USD', expiresAt: '2026-11-23T09:49:22.926Z' };
    expect(transform('legacyQuote', 'v2', [{ data: sellSide }])).toMatchObject({
      data: { referencedUnit: 'USD', referencedAmount: '108.76', quoteAmount: '100.50', expiryTimeinSeconds: 60 },
    });
  });

  it('writes the amounts as exact JSON numbers', () => {
    for (const [generation, mapping] of [['v1', V1_ENDPOINTS.generate_quote], ['v2', V2_ENDPOINTS.generate_quote]] as const) {
      const text = written('legacyQuote', generation, mapping, [{ data: QUOTE }]);
      expect(text).toContain('"referencedAmount":100.50,"quoteAmount":108.76,');
      expect(text).toContain('"expiryTimeinSeconds":30}');
      expect(written('legacyQuote', generation, mapping, [{ data: { ...QUOTE, buyAmount: BIG } }])).toContain(`"referencedAmount":${BIG},"quoteAmount":108.76,`);
    }
  });

  it('refuses a quote that expires before it is created, or without a prefix on its id', () => {
    expect(contractError(() => transform('legacyQuote', 'v2', [{ data: { ...QUOTE, expiresAt: '2026-11-23T09:48:00.000Z' } }])).problems).toEqual([
      'answers[0].data.expiresAt: must not be before createdAt',
    ]);
    expect(contractError(() => transform('legacyQuote', 'v2', [{ data: { ...QUOTE, id: '01a207ce7e0e71e781eb30df52f9704b' } }])).problems).toEqual([
      'answers[0].data.id: must be a qte_ id',
    ]);
    expect(contractError(() => transform('legacyQuote', 'v2', [{ data: { ...QUOTE, createdAt: 'yesterday' } }])).problems).toEqual([
      'answers[0].data.createdAt: must be an ISO 8601 UTC timestamp',
    ]);
  });
});

describe('reverseQuoteResult', () => {
  it('answers {quote} in the legacy quote shape', () => {
    expect(transform('reverseQuoteResult', 'v2', [{ data: REVERSE_QUOTE }])).toStrictEqual({
      status: 'success',
      message: 'Reverse quote generated successfully',
      data: {
        quote: {
          id: UUIDS.reverseQuote,
          userId: KEY_ID,
          buy: 'USD',
          sell: 'EUR',
          referencedUnit: 'EUR',
          referencedAmount: '100.50',
          quoteAmount: '108.32',
          createdAt: '2026-11-23T09:50:00.000Z',
          expiryTimeinSeconds: 30,
        },
      },
    });
  });

  it('writes the amounts as exact JSON numbers', () => {
    const text = written('reverseQuoteResult', 'v2', V2_ENDPOINTS['trade/reverse-quote'], [{ data: REVERSE_QUOTE }]);
    expect(text).toContain('"referencedAmount":100.50,"quoteAmount":108.32,');
    expect(written('reverseQuoteResult', 'v2', V2_ENDPOINTS['trade/reverse-quote'], [{ data: { ...REVERSE_QUOTE, buyAmount: BIG } }])).toContain(
      `"referencedAmount":100.50,"quoteAmount":${BIG},`,
    );
  });

  it('refuses an amount currency that is neither side', () => {
    expect(contractError(() => transform('reverseQuoteResult', 'v2', [{ data: { ...REVERSE_QUOTE, amountCurrency: 'GBP' } }])).problems).toEqual([
      'answers[0].data.amountCurrency: must be buyCurrency or sellCurrency',
    ]);
  });
});

describe('balanceList', () => {
  const LEGACY_TOTALS = { netPositiveBalanceInUSD: '54000.00', netNegativeBalanceInUSD: '-12.50', netBalanceInUSD: '53987.50' };

  it('answers the balances (spec 2.7) with the USD totals at the top level', () => {
    expect(transform('balanceList', 'v1', [BALANCES])).toStrictEqual({ status: 'success', data: [LEGACY_BALANCE_EUR, LEGACY_BALANCE_USD], ...LEGACY_TOTALS });
    expect(transform('balanceList', 'v2', [BALANCES])).toStrictEqual({
      status: 'success',
      message: 'Balances retrieved successfully',
      data: [LEGACY_BALANCE_EUR, LEGACY_BALANCE_USD],
      ...LEGACY_TOTALS,
    });
  });

  it('writes the amounts as exact JSON numbers, negative ones too', () => {
    for (const [generation, mapping] of [['v1', V1_ENDPOINTS.balances], ['v2', V2_ENDPOINTS.balances]] as const) {
      const text = written('balanceList', generation, mapping, [BALANCES]);
      expect(text).toContain(`{"id":"${UUIDS.balanceUsd}","amount":-12.50,"currency":"USD",`);
      expect(text).toContain('"totalBalanceInUSD":-12.50,"withdrawableBalanceInUSD":0.00,"withdrawableBalance":0.00}');
      expect(text).toContain('"netPositiveBalanceInUSD":54000.00,"netNegativeBalanceInUSD":-12.50,"netBalanceInUSD":53987.50}');
      const big = written('balanceList', generation, mapping, [{ data: [{ ...BALANCE_EUR, amount: BIG, usdValue: BIG }], totals: { ...BALANCES.totals, netUsd: BIG } }]);
      expect(big).toContain(`"amount":${BIG},`);
      expect(big).toContain(`"totalBalanceInUSD":${BIG},`);
      expect(big).toContain(`"netBalanceInUSD":${BIG}}`);
    }
  });

  it('refuses an answer without totals, or a balance id of another kind', () => {
    expect(contractError(() => transform('balanceList', 'v2', [{ data: BALANCES.data }])).problems).toEqual([
      'answers[0].totals: Invalid input: expected object, received undefined',
    ]);
    expect(contractError(() => transform('balanceList', 'v2', [{ ...BALANCES, data: [{ ...BALANCE_EUR, id: 'wac_01a207ce45127c42ad47e31f2cea5c9a' }] }])).problems).toEqual([
      'answers[0].data[0].id: must be a bal_ id',
    ]);
  });
});

describe('depositList', () => {
  const LEGACY_USDC = {
    id: UUIDS.depositUsdc,
    orgId: ORG_ID,
    currency: 'USDC',
    amount: '100000.000000',
    status: 'COMPLETED',
    transactionHash: '0xd77a3c5b1e0f',
    comments: null,
    referenceId: null,
    network: 'ETHEREUM',
    createdAt: '2026-11-23T09:30:00.000Z',
  };

  it('answers the deposits (spec 2.6): a fiat deposit shows network FIAT', () => {
    expect(transform('depositList', 'v1', [{ data: [DEPOSIT_USDC, DEPOSIT_USD] }])).toStrictEqual({
      status: 'success',
      data: [
        LEGACY_USDC,
        {
          id: UUIDS.depositUsd,
          orgId: ORG_ID,
          currency: 'USD',
          amount: '75.25',
          status: 'PENDING',
          transactionHash: null,
          comments: 'March top-up',
          referenceId: 'wire-42',
          network: 'FIAT',
          createdAt: '2026-11-23T09:30:00.000Z',
        },
      ],
    });
    expect(transform('depositList', 'v2', [{ data: [DEPOSIT_USDC] }])).toStrictEqual({ status: 'success', message: 'Deposits retrieved successfully', data: [LEGACY_USDC] });
  });

  it('writes the amounts as exact JSON numbers', () => {
    for (const [generation, mapping] of [['v1', V1_ENDPOINTS.deposits], ['v2', V2_ENDPOINTS.deposits]] as const) {
      const text = written('depositList', generation, mapping, [{ data: [DEPOSIT_USDC, { ...DEPOSIT_USD, amount: BIG }] }]);
      expect(text).toContain('"amount":100000.000000,');
      expect(text).toContain(`"amount":${BIG},`);
    }
  });

  it('refuses a stablecoin deposit without a network, and an amount as a number', () => {
    expect(contractError(() => transform('depositList', 'v1', [{ data: [{ ...DEPOSIT_USDC, network: null }] }])).problems).toEqual([
      'answers[0].data[0].network: must be a network for a non-FIAT deposit',
    ]);
    expect(contractError(() => transform('depositList', 'v1', [{ data: [{ ...DEPOSIT_USD, amount: 75.25 }] }])).problems).toEqual([
      'answers[0].data[0].amount: Invalid input: expected string, received number',
    ]);
  });
});

describe('fiatWithdrawalAccountList', () => {
  const LEGACY_FIAT = {
    id: UUIDS.fiatAccount,
    currency: 'USD',
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

  it('answers the fiat accounts (spec 2.5) with lower-case status, and leaves out any wallet', () => {
    expect(transform('fiatWithdrawalAccountList', 'v1', [{ data: [FIAT_ACCOUNT, WALLET_ACCOUNT] }])).toStrictEqual({ status: 'success', data: [LEGACY_FIAT] });
    const swift = { ...FIAT_ACCOUNT, transferType: 'SWIFT', routingNumber: null, swiftCode: 'CHASUS33', memo: 'ref', status: 'PENDING_VERIFICATION', verified: false };
    expect(transform('fiatWithdrawalAccountList', 'v2', [{ data: [swift] }])).toStrictEqual({
      status: 'success',
      message: 'Fiat withdrawal addresses retrieved successfully',
      data: [{ ...LEGACY_FIAT, transferType: 'SWIFT', routingNumber: null, swiftCode: 'CHASUS33', memo: 'ref', status: 'pending_verification', verified: false }],
    });
  });

  it('has no amounts: every number stays where it is, strings stay strings', () => {
    for (const [generation, mapping] of [['v1', V1_ENDPOINTS.fiat_withdrawal_addresses], ['v2', V2_ENDPOINTS.fiat_withdrawal_addresses]] as const) {
      expect(written('fiatWithdrawalAccountList', generation, mapping, [{ data: [FIAT_ACCOUNT] }])).toContain('"accountNumber":"000123456789","bankName"');
    }
  });

  it('refuses a creatorId that is not a usr_ id, and a verified flag as text', () => {
    expect(contractError(() => transform('fiatWithdrawalAccountList', 'v1', [{ data: [{ ...FIAT_ACCOUNT, creatorId: 'key_1', verified: 'true' }] }])).problems).toEqual([
      'answers[0].data[0].verified: Invalid input: expected boolean, received string',
      'answers[0].data[0].creatorId: must be a usr_ id',
    ]);
  });
});

describe('withdrawalAddressList', () => {
  const LEGACY_WALLET = {
    id: UUIDS.walletAccount,
    currency: 'USDC',
    network: 'ETHEREUM',
    address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    accountName: 'Treasury wallet',
    status: 'active',
    verified: true,
    creatorId: UUIDS.user,
    orgId: ORG_ID,
    comments: 'cold storage',
    createdAt: '2026-11-23T09:41:00.000Z',
    updatedAt: '2026-11-23T09:42:00.000Z',
  };

  it('answers the stablecoin addresses with lower-case status, and leaves out any bank account', () => {
    expect(transform('withdrawalAddressList', 'v1', [{ data: [WALLET_ACCOUNT, FIAT_ACCOUNT] }])).toStrictEqual({ status: 'success', data: [LEGACY_WALLET] });
    expect(transform('withdrawalAddressList', 'v2', [{ data: [{ ...WALLET_ACCOUNT, status: 'DISABLED' }] }])).toStrictEqual({
      status: 'success',
      message: 'Withdrawal addresses retrieved successfully',
      data: [{ ...LEGACY_WALLET, status: 'disabled' }],
    });
  });

  it('has no amounts: the text is plain JSON', () => {
    for (const [generation, mapping] of [['v1', V1_ENDPOINTS.withdrawal_addresses], ['v2', V2_ENDPOINTS.withdrawal_addresses]] as const) {
      expect(written('withdrawalAddressList', generation, mapping, [{ data: [WALLET_ACCOUNT] }])).toContain('"address":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"');
    }
  });

  it('refuses a list that is not a list', () => {
    expect(contractError(() => transform('withdrawalAddressList', 'v2', [{ data: WALLET_ACCOUNT }])).problems).toEqual([
      'answers[0].data: Invalid input: expected array, received object',
    ]);
  });
});

describe('marketList', () => {
  it('answers the pairs with their limits', () => {
    expect(transform('marketList', 'v2', [{ data: [PAIR] }])).toStrictEqual({
      status: 'success',
      message: 'Available markets retrieved successfully',
      data: [{ symbol: 'EUR/GBP', baseCurrency: 'EUR', quoteCurrency: 'GBP', minAmount: '1.00', maxAmount: '1000000.00' }],
    });
  });

  it('writes the limits as exact JSON numbers', () => {
    expect(written('marketList', 'v2', V2_ENDPOINTS.available_markets, [{ data: [PAIR] }])).toBe(
      '{"status":"success","message":"Available markets retrieved successfully","data":[{"symbol":"EUR/GBP","baseCurrency":"EUR","quoteCurrency":"GBP","minAmount":1.00,"maxAmount":1000000.00}]}',
    );
    expect(written('marketList', 'v2', V2_ENDPOINTS.available_markets, [{ data: [{ ...PAIR, maxAmount: BIG }] }])).toContain(`"maxAmount":${BIG}}`);
  });

  it('refuses a limit as a number', () => {
    expect(contractError(() => transform('marketList', 'v2', [{ data: [{ ...PAIR, minAmount: 1 }] }])).problems).toEqual([
      'answers[0].data[0].minAmount: Invalid input: expected string, received number',
    ]);
  });
});

describe('withdrawalResult', () => {
  const LEGACY_WITHDRAWAL = {
    id: UUIDS.withdrawal,
    currency: 'USDC',
    amount: '12.500000',
    status: 'PENDING',
    network: 'ETHEREUM',
    withdrawalAddressId: UUIDS.walletAccount,
    transactionHash: null,
    paymentDetails: {},
    comments: '',
    createdAt: '2026-11-23T10:00:00.000Z',
    updatedAt: '2026-11-23T10:00:00.000Z',
  };

  it('answers the withdrawal in legacy words (amount, withdrawalAddressId)', () => {
    expect(transform('withdrawalResult', 'v2', [{ data: WITHDRAWAL }])).toStrictEqual({ status: 'success', message: 'Withdrawal created successfully', data: LEGACY_WITHDRAWAL });
  });

  it('writes the amount as an exact JSON number, for both rails', () => {
    expect(written('withdrawalResult', 'v2', V2_ENDPOINTS.withdrawal, [{ data: WITHDRAWAL }])).toContain('"amount":12.500000,');
    const fiat = written('withdrawalResult', 'v2', V2_ENDPOINTS.fiat_withdrawal, [{ data: FIAT_WITHDRAWAL }]);
    expect(fiat).toContain('"amount":100.00,"status":"COMPLETED","network":null,');
    expect(fiat).toContain('"paymentDetails":{"FEDWIRE":{"imad":"20261123MMQFMP2L000001","omad":"20261123QMGFT015000001"}}');
    expect(written('withdrawalResult', 'v2', V2_ENDPOINTS.withdrawal, [{ data: { ...WITHDRAWAL, withdrawalAmount: BIG } }])).toContain(`"amount":${BIG},`);
  });

  it('refuses an account id of another kind and payment details with a number', () => {
    expect(
      contractError(() =>
        transform('withdrawalResult', 'v2', [{ data: { ...WITHDRAWAL, withdrawalAccountId: WITHDRAWAL.id, paymentDetails: { FEDWIRE: { imad: 1.5 } } } }]),
      ).problems,
    ).toEqual(['answers[0].data.withdrawalAccountId: must be a wac_ id', 'answers[0].data.paymentDetails.FEDWIRE.imad: Invalid input: expected string, received number']);
  });
});

describe('withdrawalList', () => {
  it('answers every withdrawal of the page in the legacy shape', () => {
    expect(transform('withdrawalList', 'v2', [{ data: [FIAT_WITHDRAWAL] }])).toStrictEqual({
      status: 'success',
      message: 'Withdrawals retrieved successfully',
      data: [
        {
          id: '01a207ce-7000-7000-8000-00000000f002',
          currency: 'USD',
          amount: '100.00',
          status: 'COMPLETED',
          network: null,
          withdrawalAddressId: UUIDS.fiatAccount,
          transactionHash: null,
          paymentDetails: { FEDWIRE: { imad: '20261123MMQFMP2L000001', omad: '20261123QMGFT015000001' } },
          comments: '',
          createdAt: '2026-11-23T10:00:00.000Z',
          updatedAt: '2026-11-23T10:05:00.000Z',
        },
      ],
    });
  });

  it('writes the amounts as exact JSON numbers', () => {
    const text = written('withdrawalList', 'v2', V2_ENDPOINTS.withdrawals, [{ data: [WITHDRAWAL, { ...FIAT_WITHDRAWAL, withdrawalAmount: BIG }] }]);
    expect(text).toContain('"amount":12.500000,');
    expect(text).toContain(`"amount":${BIG},`);
  });

  it('refuses a withdrawal id without its prefix', () => {
    expect(contractError(() => transform('withdrawalList', 'v2', [{ data: [{ ...WITHDRAWAL, id: UUIDS.withdrawal }] }])).problems).toEqual([
      'answers[0].data[0].id: must be a wtd_ id',
    ]);
  });
});

describe('every response transform', () => {
  it('is a function of its input only: the v3 answers are not changed', () => {
    const answers = structuredClone([{ data: TRADE }, BALANCES, EXPOSURE]);
    transform('v2TradeResult', 'v2', answers);
    expect(answers).toStrictEqual([{ data: TRADE }, BALANCES, EXPOSURE]);
  });
});
