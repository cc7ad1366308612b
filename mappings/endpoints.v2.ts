/**
 * The v2 operations on v3: for each, the v3 calls by name, the key scope, idempotency,
 * pagination, the query filters, the request body field by field and where each legacy record
 * goes in the answer. v1 is written as its changes from this table (endpoints.v1.ts).
 * Records are in records.ts, value maps in value-maps.ts, page defaults in conventions.ts.
 * Format and validator: src/gateway/legacy/declarations/endpoint-mappings.ts. Pure data.
 *
 * Idempotency: every POST requires Idempotency-Key, kept 24 h for trade operations, 7 days for
 * withdrawals and 30 minutes for quotes (whose failures tell the client to retry with a new
 * key); settle has no documented lifetime and keeps the trade's 24 h. GETs honour a key if sent.
 */
import type { EndpointTable, Message } from '../src/gateway/legacy/declarations/endpoint-mappings.js';

const HOUR = 3600;
const TRADE_KEY = { kind: 'required', lifetimeSeconds: 24 * HOUR } as const;
const WITHDRAWAL_KEY = { kind: 'required', lifetimeSeconds: 7 * 24 * HOUR } as const;
const QUOTE_KEY = { kind: 'required', lifetimeSeconds: 30 * 60 } as const;
const READ_KEY = { kind: 'honoured-if-sent', lifetimeSeconds: 24 * HOUR } as const;

const FETCHED: Message = {
  text: 'Data fetched successfully',
  source: 'doc',
  reason: 'The message of every v1 documentation page that reads.',
};
const written = (text: string): Message => ({
  text,
  source: 'ours',
  reason: 'Every success carries a message; the wording of writes is not public.',
});

const AMOUNT_IN = {
  type: 'amount',
  required: true,
  source: 'both',
  reason: 'A JSON number greater than 0, read from its text; at most 8 decimals.',
} as const;
const TRADE_ID = {
  type: 'id',
  idKind: 'trade',
  required: true,
  source: 'spec',
  reason: 'The trade, by its legacy UUID; v3 takes it in the path.',
} as const;
const CLIENT_REFERENCE = {
  type: 'string',
  maxLength: 128,
  required: false,
  to: 'clientReferenceId',
  source: 'spec',
  reason: "A reference of the client's own, kept with the trade.",
} as const;
const WITHDRAWAL_BODY = {
  fields: {
    amount: { ...AMOUNT_IN, to: 'withdrawalAmount' },
    currency: {
      type: 'currency',
      required: true,
      to: 'currency',
      source: 'client',
      reason: "Must be the account's currency.",
    },
    withdrawalAddressId: {
      type: 'id',
      idKind: 'withdrawalAccount',
      required: true,
      to: 'withdrawalAccountId',
      source: 'client',
      reason: 'The legacy name of the withdrawal account; v3 resolves rail and network from it.',
    },
  },
} as const;

export const V2_ENDPOINTS = {
  available_markets: {
    summary: 'The tradable currency pairs and the trade limits of each.',
    method: 'GET',
    v3: { pairs: { method: 'GET', path: '/v3/fx/pairs' } },
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'none',
    filters: {},
    request: null,
    response: {
      message: FETCHED,
      data: {
        object: {
          tradingPairs: { list: 'tradingPair', from: 'pairs' },
          tradeLimits: {
            list: 'tradeLimit',
            from: 'pairs',
            keyedBy: 'symbol',
            source: 'ours',
            reason:
              'The key of each limit is not public: the pair as BASE/QUOTE, as the trade record writes tradingPair.',
          },
        },
      },
    },
  },
  balances: {
    summary: 'Balances with their USD values, and the net USD totals.',
    method: 'GET',
    v3: { balances: { method: 'GET', path: '/v3/fx/balances' } },
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'none',
    filters: {},
    request: null,
    response: {
      message: FETCHED,
      data: { list: 'balance', from: 'balances' },
      root: {
        netPositiveBalanceInUSD: {
          field: 'totals.netPositiveUsd',
          from: 'balances',
          type: 'amount',
          source: 'client',
          reason: 'The sum of the positive balances in USD.',
        },
        netNegativeBalanceInUSD: {
          field: 'totals.netNegativeUsd',
          from: 'balances',
          type: 'amount',
          source: 'client',
          reason: 'The sum of the negative balances in USD.',
        },
        netBalanceInUSD: {
          field: 'totals.netUsd',
          from: 'balances',
          type: 'amount',
          source: 'client',
          reason: 'The net of all balances in USD.',
        },
      },
    },
  },
  generate_quote: {
    summary: 'A quote, answered under data.quote.',
    method: 'POST',
    v3: { quote: { method: 'POST', path: '/v3/fx/quotes' } },
    scope: 'trade',
    idempotency: QUOTE_KEY,
    pagination: 'none',
    filters: {},
    request: {
      fields: {
        amount: { ...AMOUNT_IN, to: 'amount' },
        buy: { type: 'currency', required: true, to: 'buyCurrency', source: 'both', reason: 'The currency to buy.' },
        sell: { type: 'currency', required: true, to: 'sellCurrency', source: 'both', reason: 'The currency to sell.' },
        referencedUnit: {
          type: 'currency',
          required: true,
          to: 'amountCurrency',
          source: 'both',
          reason: 'The currency the amount is given in: buy or sell.',
        },
        quoteForSeconds: {
          type: 'integer',
          oneOf: [3, 15, 30, 45, 60],
          required: false,
          to: 'validForSeconds',
          source: 'client',
          reason: 'How long the quote holds; v3 takes the same values.',
        },
      },
      checks: ['buyDiffersFromSell', 'referencedUnitIsASide'],
    },
    response: {
      message: written('Quote generated successfully'),
      data: { object: { quote: { record: 'quote', from: 'quote' } } },
    },
  },
  trade: {
    summary: 'Execute a quote; answers the trade, the balances after it and the credit used.',
    method: 'POST',
    v3: {
      trade: { method: 'POST', path: '/v3/fx/trades' },
      balances: { method: 'GET', path: '/v3/fx/balances' },
      exposure: { method: 'GET', path: '/v3/fx/exposure' },
    },
    scope: 'trade',
    idempotency: TRADE_KEY,
    pagination: 'none',
    filters: {},
    request: {
      fields: {
        quoteId: {
          type: 'id',
          idKind: 'quote',
          required: true,
          to: 'quoteId',
          source: 'both',
          reason: 'The quote to execute, once.',
        },
        clientReferenceId: CLIENT_REFERENCE,
      },
    },
    response: {
      message: written('Trade executed successfully'),
      data: {
        object: {
          balances: {
            entries: 'balance',
            from: 'balances',
            key: 'currency',
            value: 'amount',
            type: 'amount',
            source: 'both',
            reason: "Each currency's balance after the trade.",
          },
          trade: { record: 'tradeResult', from: 'trade' },
          userCreditLimit: {
            field: 'data.creditLine',
            from: 'exposure',
            type: 'amount',
            source: 'both',
            reason: 'The credit line, in USD.',
          },
          userCreditUsed: {
            field: 'data.committedAmount',
            from: 'exposure',
            type: 'amount',
            source: 'both',
            reason: 'What unsettled trades commit of it, in USD.',
          },
        },
      },
    },
  },
  trades: {
    summary: 'Trades, newest first, page by page.',
    method: 'GET',
    v3: { trades: { method: 'GET', path: '/v3/fx/trades' } },
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit',
    filters: {},
    request: null,
    response: { message: FETCHED, data: { list: 'trade', from: 'trades' } },
  },
  'trade/{id}': {
    summary: 'One trade; a malformed id is the legacy 400 without an upstream call.',
    method: 'GET',
    v3: {
      trade: {
        method: 'GET',
        path: '/v3/fx/trades/:id',
        params: { id: { from: 'path', field: 'id', idKind: 'trade' } },
      },
    },
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'none',
    filters: {},
    request: null,
    response: { message: FETCHED, data: { record: 'trade', from: 'trade' } },
  },
  deposits: {
    summary: 'Fiat and stablecoin deposits, newest first, page by page.',
    method: 'GET',
    v3: { deposits: { method: 'GET', path: '/v3/fx/deposits' } },
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit',
    filters: {
      currency: {
        v3Query: 'currency',
        value: 'currency',
        source: 'both',
        reason: 'Only the deposits of one currency.',
      },
    },
    request: null,
    response: { message: FETCHED, data: { list: 'deposit', from: 'deposits' } },
  },
  withdrawal_addresses: {
    summary: 'Stablecoin withdrawal addresses, page by page.',
    method: 'GET',
    v3: { accounts: { method: 'GET', path: '/v3/fx/withdrawal-accounts', query: { assetType: 'STABLECOIN' } } },
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit',
    filters: {
      verified: {
        field: 'verified',
        value: 'boolean',
        source: 'doc',
        reason: 'Only verified (true) or unverified (false) addresses.',
      },
      status: {
        field: 'status',
        value: 'word',
        map: 'addressStatus',
        closed: true,
        source: 'doc',
        reason: 'Only addresses in this status (Verified, Pending, Disabled; v3 words too).',
      },
      coinNetwork: {
        field: 'coinNetworkName',
        value: 'word',
        map: 'networkName',
        source: 'doc',
        reason: 'Only addresses on this network, by display name or code.',
      },
      coin: { field: 'coinName', value: 'currency', source: 'doc', reason: 'Only addresses of this currency.' },
    },
    request: null,
    response: { message: FETCHED, data: { list: 'withdrawalAddress', from: 'accounts' } },
  },
  fiat_withdrawal_addresses: {
    summary: 'Approved fiat withdrawal accounts, page by page.',
    method: 'GET',
    v3: {
      accounts: {
        method: 'GET',
        path: '/v3/fx/withdrawal-accounts',
        query: { assetType: 'FIAT', status: 'ACTIVE', verified: 'true' },
      },
    },
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit',
    filters: {
      verified: {
        field: 'verified',
        value: 'boolean',
        source: 'ours',
        reason: 'As on the stablecoin list; the list holds approved accounts only, so false lists none.',
      },
      status: {
        field: 'status',
        value: 'word',
        map: 'fiatAccountStatus',
        closed: true,
        source: 'ours',
        reason: 'As on the stablecoin list, over the approved accounts.',
      },
      currency: { field: 'currency', value: 'currency', source: 'ours', reason: 'Only the accounts of one currency.' },
    },
    request: null,
    response: { message: FETCHED, data: { list: 'fiatWithdrawalAddress', from: 'accounts' } },
  },
  withdrawals: {
    summary: 'Withdrawals, fiat and stablecoin, newest first, page by page.',
    method: 'GET',
    v3: { withdrawals: { method: 'GET', path: '/v3/fx/withdrawals' } },
    scope: 'view',
    idempotency: READ_KEY,
    pagination: 'page-limit',
    filters: {},
    request: null,
    response: { message: FETCHED, data: { list: 'withdrawal', from: 'withdrawals' } },
  },
  withdrawal: {
    summary: 'A stablecoin withdrawal to an address.',
    method: 'POST',
    v3: { withdrawal: { method: 'POST', path: '/v3/fx/withdrawals' } },
    scope: 'withdraw',
    idempotency: WITHDRAWAL_KEY,
    pagination: 'none',
    filters: {},
    request: WITHDRAWAL_BODY,
    response: {
      message: written('Withdrawal created successfully'),
      data: { record: 'withdrawal', from: 'withdrawal' },
    },
  },
  fiat_withdrawal: {
    summary: 'A fiat withdrawal to a bank account.',
    method: 'POST',
    v3: { withdrawal: { method: 'POST', path: '/v3/fx/withdrawals' } },
    scope: 'withdraw',
    idempotency: WITHDRAWAL_KEY,
    pagination: 'none',
    filters: {},
    request: WITHDRAWAL_BODY,
    response: {
      message: written('Withdrawal created successfully'),
      data: { record: 'withdrawal', from: 'withdrawal' },
    },
  },
  'trade/reverse-quote': {
    summary: 'A quote for reversing a trade, answered under data.quote.',
    method: 'POST',
    v3: {
      quote: {
        method: 'POST',
        path: '/v3/fx/trades/:id/reverse-quote',
        params: { id: { from: 'body', field: 'tradeId', idKind: 'trade' } },
      },
    },
    scope: 'trade',
    idempotency: QUOTE_KEY,
    pagination: 'none',
    filters: {},
    request: { fields: { tradeId: TRADE_ID } },
    response: {
      message: written('Reverse quote generated successfully'),
      data: { object: { quote: { record: 'quote', from: 'quote' } } },
    },
  },
  'trade/reverse': {
    summary: 'Reverse a trade with an approved reverse quote.',
    method: 'POST',
    v3: {
      reversal: {
        method: 'POST',
        path: '/v3/fx/trades/:id/reverse',
        params: { id: { from: 'body', field: 'tradeId', idKind: 'trade' } },
      },
    },
    scope: 'trade',
    idempotency: TRADE_KEY,
    pagination: 'none',
    filters: {},
    request: {
      fields: {
        tradeId: TRADE_ID,
        quoteId: {
          type: 'id',
          idKind: 'quote',
          required: true,
          to: 'quoteId',
          source: 'spec',
          reason: 'The approved reverse quote.',
        },
        clientReferenceId: CLIENT_REFERENCE,
      },
    },
    response: {
      message: written('Trade reversed successfully'),
      data: {
        object: {
          trade: { record: 'tradeResult', from: 'reversal', at: 'data.trade' },
          reversalDetails: {
            record: 'reversalDetails',
            from: 'reversal',
            at: 'data.reversalDetails',
            answerOnly: {
              source: 'spec',
              reason: 'v3 answers the reversal details once, with the reversal; no v3 read serves them again.',
            },
          },
        },
      },
    },
  },
  'trade/settle': {
    summary: 'Settle an executed trade.',
    method: 'POST',
    v3: {
      settlement: {
        method: 'POST',
        path: '/v3/fx/trades/:id/settle',
        params: { id: { from: 'body', field: 'tradeId', idKind: 'trade' } },
      },
    },
    scope: 'trade',
    idempotency: TRADE_KEY,
    pagination: 'none',
    filters: {},
    request: { fields: { tradeId: TRADE_ID } },
    response: {
      message: written('Trade settled successfully'),
      data: { object: { trade: { record: 'tradeResult', from: 'settlement' } } },
    },
  },
} as const satisfies EndpointTable<'v2'>;
