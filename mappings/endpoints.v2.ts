/**
 * v2 operations onto v3 (DESIGN 4; spec 4.4, 4.5, 2.3, 2.7): the static part of each mapping.
 * The format is described in mappings/README.md and typed and validated by
 * src/gateway/legacy/endpoint-mappings.ts. Transforms are referred to by name only; they are
 * registered by the gateway's legacy layer.
 *
 * Idempotency (spec 8, 9): every POST requires Idempotency-Key, kept 24 h for trade operations,
 * 7 days for withdrawal and fiat_withdrawal, 30 minutes for quote keys (generate_quote and
 * trade/reverse-quote, 7.5's "retry with a new key" rows); trade/settle has no lifetime in the
 * spec and keeps the trade's 24 h. GETs honour a key if one is sent, for the same 24 h.
 * Response amount paths are relative to the whole legacy body, `{status, message?, data, ...}`.
 */
import type { EndpointTable } from '../src/gateway/legacy/endpoint-mappings.js';

const HOUR = 3600;
const TRADE_KEY = { kind: 'required', lifetimeSeconds: 24 * HOUR } as const;
const WITHDRAWAL_KEY = { kind: 'required', lifetimeSeconds: 7 * 24 * HOUR } as const;
const QUOTE_KEY = { kind: 'required', lifetimeSeconds: 30 * 60 } as const;
const READ_KEY = { kind: 'honoured-if-sent', lifetimeSeconds: 24 * HOUR } as const;

const TRADE_AMOUNTS = ['referencedAmount', 'amount'] as const;
const tradeAmountsAt = (prefix: string) => TRADE_AMOUNTS.map((field) => `${prefix}.${field}`);

export const V2_ENDPOINTS = {
  balances: {
    summary: 'Balances with their USD values and the net USD totals (spec 2.7).',
    legacy: { method: 'GET', path: '/v2/brokerage/:orgId/balances' },
    v3: [{ method: 'GET', path: '/v3/fx/balances' }],
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'none',
    filters: {},
    amounts: {
      request: [],
      response: [
        'data[].amount',
        'data[].totalBalanceInUSD',
        'data[].withdrawableBalanceInUSD',
        'data[].withdrawableBalance',
        'netPositiveBalanceInUSD',
        'netNegativeBalanceInUSD',
        'netBalanceInUSD',
      ],
    },
    transforms: { request: null, response: 'balanceList' },
  },
  available_markets: {
    summary: 'Tradable currency pairs with their trade amount limits.',
    legacy: { method: 'GET', path: '/v2/brokerage/:orgId/available_markets' },
    v3: [{ method: 'GET', path: '/v3/fx/pairs' }],
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'none',
    filters: {},
    amounts: { request: [], response: ['data[].minAmount', 'data[].maxAmount'] },
    transforms: { request: null, response: 'marketList' },
  },
  trades: {
    summary: 'Trades (spec 2.3), newest first, page by page.',
    legacy: { method: 'GET', path: '/v2/brokerage/:orgId/trades' },
    v3: [{ method: 'GET', path: '/v3/fx/trades' }],
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit/cursor',
    filters: {},
    amounts: { request: [], response: tradeAmountsAt('data[]') },
    transforms: { request: null, response: 'v2TradeList' },
  },
  deposits: {
    summary: 'Deposits (spec 2.6), newest first, page by page, optionally of one currency.',
    legacy: { method: 'GET', path: '/v2/brokerage/:orgId/deposits' },
    v3: [{ method: 'GET', path: '/v3/fx/deposits' }],
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit/cursor',
    filters: { currency: 'currency' },
    amounts: { request: [], response: ['data[].amount'] },
    transforms: { request: null, response: 'depositList' },
  },
  withdrawals: {
    summary: 'Withdrawals, newest first, page by page.',
    legacy: { method: 'GET', path: '/v2/brokerage/:orgId/withdrawals' },
    v3: [{ method: 'GET', path: '/v3/fx/withdrawals' }],
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit/cursor',
    filters: {},
    amounts: { request: [], response: ['data[].amount'] },
    transforms: { request: null, response: 'withdrawalList' },
  },
  withdrawal_addresses: {
    summary: 'Approved stablecoin withdrawal addresses, page by page.',
    legacy: { method: 'GET', path: '/v2/brokerage/:orgId/withdrawal_addresses' },
    v3: [{ method: 'GET', path: '/v3/fx/withdrawal-accounts', query: { assetType: 'STABLECOIN', status: 'ACTIVE', verified: 'true' } }],
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit/bounded',
    filters: {},
    amounts: { request: [], response: [] },
    transforms: { request: null, response: 'withdrawalAddressList' },
  },
  fiat_withdrawal_addresses: {
    summary: 'Approved fiat withdrawal accounts (spec 2.5), page by page.',
    legacy: { method: 'GET', path: '/v2/brokerage/:orgId/fiat_withdrawal_addresses' },
    v3: [{ method: 'GET', path: '/v3/fx/withdrawal-accounts', query: { assetType: 'FIAT', status: 'ACTIVE', verified: 'true' } }],
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit/bounded',
    filters: {},
    amounts: { request: [], response: [] },
    transforms: { request: null, response: 'fiatWithdrawalAccountList' },
  },
  generate_quote: {
    summary: 'A quote, body {amount, buy, sell, referencedUnit, quoteForSeconds?}, answered in the legacy quote shape.',
    legacy: { method: 'POST', path: '/v2/brokerage/:orgId/generate_quote' },
    v3: [{ method: 'POST', path: '/v3/fx/quotes' }],
    scope: 'trade',
    idempotency: QUOTE_KEY,
    pagination: 'none',
    filters: {},
    amounts: { request: ['amount'], response: ['data.referencedAmount', 'data.quoteAmount'] },
    transforms: { request: 'quoteRequest', response: 'legacyQuote' },
  },
  trade: {
    summary: 'Execute a quote, body {quoteId}; answers {balances, trade (2.3), userCreditLimit, userCreditUsed}.',
    legacy: { method: 'POST', path: '/v2/brokerage/:orgId/trade' },
    v3: [
      { method: 'POST', path: '/v3/fx/trades' },
      { method: 'GET', path: '/v3/fx/balances' },
      { method: 'GET', path: '/v3/fx/exposure' },
    ],
    scope: 'trade',
    idempotency: TRADE_KEY,
    pagination: 'none',
    filters: {},
    amounts: { request: [], response: ['data.balances.*', ...tradeAmountsAt('data.trade'), 'data.userCreditLimit', 'data.userCreditUsed'] },
    transforms: { request: 'tradeRequest', response: 'v2TradeResult' },
  },
  'trade/reverse-quote': {
    summary: 'A quote for reversing a trade, body {tradeId}; answers {quote} in the legacy quote shape.',
    legacy: { method: 'POST', path: '/v2/brokerage/:orgId/trade/reverse-quote' },
    v3: [{ method: 'POST', path: '/v3/fx/trades/:id/reverse-quote', params: { id: { from: 'body', field: 'tradeId', idKind: 'trade' } } }],
    scope: 'trade',
    idempotency: QUOTE_KEY,
    pagination: 'none',
    filters: {},
    amounts: { request: [], response: ['data.quote.referencedAmount', 'data.quote.quoteAmount'] },
    transforms: { request: 'reverseQuoteRequest', response: 'reverseQuoteResult' },
  },
  'trade/reverse': {
    summary: 'Reverse a trade with an approved reverse quote, body {tradeId, quoteId, clientReferenceId?} (spec 4.4).',
    legacy: { method: 'POST', path: '/v2/brokerage/:orgId/trade/reverse' },
    v3: [{ method: 'POST', path: '/v3/fx/trades/:id/reverse', params: { id: { from: 'body', field: 'tradeId', idKind: 'trade' } } }],
    scope: 'trade',
    idempotency: TRADE_KEY,
    pagination: 'none',
    filters: {},
    amounts: { request: [], response: [...tradeAmountsAt('data.trade'), 'data.reversalDetails.differentialAmount'] },
    transforms: { request: 'reverseRequest', response: 'v2ReversalResult' },
  },
  'trade/settle': {
    summary: 'Settle an executed trade, body {tradeId}.',
    legacy: { method: 'POST', path: '/v2/brokerage/:orgId/trade/settle' },
    v3: [{ method: 'POST', path: '/v3/fx/trades/:id/settle', params: { id: { from: 'body', field: 'tradeId', idKind: 'trade' } } }],
    scope: 'trade',
    idempotency: TRADE_KEY,
    pagination: 'none',
    filters: {},
    amounts: { request: [], response: tradeAmountsAt('data.trade') },
    transforms: { request: 'settleRequest', response: 'v2SettleResult' },
  },
  withdrawal: {
    summary: 'Stablecoin withdrawal, body {amount, currency, withdrawalAddressId}.',
    legacy: { method: 'POST', path: '/v2/brokerage/:orgId/withdrawal' },
    v3: [{ method: 'POST', path: '/v3/fx/withdrawals' }],
    scope: 'withdraw',
    idempotency: WITHDRAWAL_KEY,
    pagination: 'none',
    filters: {},
    amounts: { request: ['amount'], response: ['data.amount'] },
    transforms: { request: 'withdrawalRequest', response: 'withdrawalResult' },
  },
  fiat_withdrawal: {
    summary: 'Fiat withdrawal, body {amount, currency, withdrawalAddressId}.',
    legacy: { method: 'POST', path: '/v2/brokerage/:orgId/fiat_withdrawal' },
    v3: [{ method: 'POST', path: '/v3/fx/withdrawals' }],
    scope: 'withdraw',
    idempotency: WITHDRAWAL_KEY,
    pagination: 'none',
    filters: {},
    amounts: { request: ['amount'], response: ['data.amount'] },
    transforms: { request: 'withdrawalRequest', response: 'withdrawalResult' },
  },
} as const satisfies EndpointTable<'v2'>;
