/**
 * v1 operations onto v3 (DESIGN 4; spec 4.6, 2.4-2.7): the static part of each mapping. The
 * format is described in mappings/README.md and typed and validated by
 * src/gateway/legacy/endpoint-mappings.ts. Transforms are referred to by name only; they are
 * registered by the gateway's legacy layer.
 *
 * v1 has no idempotency: reads have none, writes get a fresh v3 key per request. Lists take
 * `page` and `limit` (spec 4.6: every v1 list). Response amount paths are relative to the whole
 * legacy body, `{status: 'success', data, meta?}`.
 */
import type { EndpointTable } from '../src/gateway/legacy/endpoint-mappings.js';

/** The v2-style balances body (spec 2.7) that v1 balances answers too. */
const BALANCE_AMOUNTS = [
  'data[].amount',
  'data[].totalBalanceInUSD',
  'data[].withdrawableBalanceInUSD',
  'data[].withdrawableBalance',
  'netPositiveBalanceInUSD',
  'netNegativeBalanceInUSD',
  'netBalanceInUSD',
];

export const V1_ENDPOINTS = {
  fiat_withdrawal_addresses: {
    summary: 'Approved fiat withdrawal accounts (spec 2.5), page by page.',
    legacy: { method: 'GET', path: '/v1/brokerage/:orgId/fiat_withdrawal_addresses' },
    v3: [{ method: 'GET', path: '/v3/fx/withdrawal-accounts', query: { assetType: 'FIAT', status: 'ACTIVE', verified: 'true' } }],
    scope: 'view',
    idempotency: { kind: 'none' },
    pagination: 'page-limit/bounded',
    filters: {},
    amounts: { request: [], response: [] },
    transforms: { request: null, response: 'fiatWithdrawalAccountList' },
  },
  withdrawal_addresses: {
    summary: 'Approved stablecoin withdrawal addresses, page by page.',
    legacy: { method: 'GET', path: '/v1/brokerage/:orgId/withdrawal_addresses' },
    v3: [{ method: 'GET', path: '/v3/fx/withdrawal-accounts', query: { assetType: 'STABLECOIN', status: 'ACTIVE', verified: 'true' } }],
    scope: 'view',
    idempotency: { kind: 'none' },
    pagination: 'page-limit/bounded',
    filters: {},
    amounts: { request: [], response: [] },
    transforms: { request: null, response: 'withdrawalAddressList' },
  },
  trades: {
    summary: 'Trades (spec 2.4: tradingPair, tradeDirection, computedAmount), newest first, page by page.',
    legacy: { method: 'GET', path: '/v1/brokerage/:orgId/trades' },
    v3: [{ method: 'GET', path: '/v3/fx/trades' }],
    scope: 'view',
    idempotency: { kind: 'none' },
    pagination: 'page-limit/cursor',
    filters: {},
    amounts: { request: [], response: ['data[].amount', 'data[].computedAmount'] },
    transforms: { request: null, response: 'v1TradeList' },
  },
  'trade/{id}': {
    summary: 'One trade (spec 2.4); a malformed id is the v1 400 without an upstream call.',
    legacy: { method: 'GET', path: '/v1/brokerage/:orgId/trade/:id' },
    v3: [{ method: 'GET', path: '/v3/fx/trades/:id', params: { id: { from: 'path', field: 'id', idKind: 'trade' } } }],
    scope: 'view',
    idempotency: { kind: 'none' },
    pagination: 'none',
    filters: {},
    amounts: { request: [], response: ['data.amount', 'data.computedAmount'] },
    transforms: { request: null, response: 'v1Trade' },
  },
  deposits: {
    summary: 'Fiat and stablecoin deposits (spec 2.6), newest first, page by page, optionally of one currency.',
    legacy: { method: 'GET', path: '/v1/brokerage/:orgId/deposits' },
    v3: [{ method: 'GET', path: '/v3/fx/deposits' }],
    scope: 'view',
    idempotency: { kind: 'none' },
    pagination: 'page-limit/cursor',
    filters: { currency: 'currency' },
    amounts: { request: [], response: ['data[].amount'] },
    transforms: { request: null, response: 'depositList' },
  },
  balances: {
    summary: 'Balances with their USD values and the net USD totals (spec 2.7).',
    legacy: { method: 'GET', path: '/v1/brokerage/:orgId/balances' },
    v3: [{ method: 'GET', path: '/v3/fx/balances' }],
    scope: 'view',
    idempotency: { kind: 'none' },
    pagination: 'none',
    filters: {},
    amounts: { request: [], response: BALANCE_AMOUNTS },
    transforms: { request: null, response: 'balanceList' },
  },
  generate_quote: {
    summary: 'A quote, body {amount, buy, sell, referencedUnit, quoteForSeconds?}, answered in the legacy quote shape.',
    legacy: { method: 'POST', path: '/v1/brokerage/:orgId/generate_quote' },
    v3: [{ method: 'POST', path: '/v3/fx/quotes' }],
    scope: 'trade',
    idempotency: { kind: 'fresh-v3-key' },
    pagination: 'none',
    filters: {},
    amounts: { request: ['amount'], response: ['data.referencedAmount', 'data.quoteAmount'] },
    transforms: { request: 'quoteRequest', response: 'legacyQuote' },
  },
  trade: {
    summary: 'Execute a quote, body {quoteId}; answers the trade with the balances and the credit used.',
    legacy: { method: 'POST', path: '/v1/brokerage/:orgId/trade' },
    v3: [
      { method: 'POST', path: '/v3/fx/trades' },
      { method: 'GET', path: '/v3/fx/balances' },
      { method: 'GET', path: '/v3/fx/exposure' },
    ],
    scope: 'trade',
    idempotency: { kind: 'fresh-v3-key' },
    pagination: 'none',
    filters: {},
    amounts: {
      request: [],
      response: ['data.balances.*', 'data.trade.amount', 'data.trade.computedAmount', 'data.userCreditLimit', 'data.userCreditUsed'],
    },
    transforms: { request: 'tradeRequest', response: 'v1TradeResult' },
  },
} as const satisfies EndpointTable<'v1'>;
