/**
 * The legacy records, field by field: what a v1 or v2 client reads and where each value comes
 * from in v3, then v2's record changes (V2_RECORD_CHANGES, at the end): v2 answers the result, v1
 * the result with the record changes among its own (endpoints.v1.ts). The endpoint tables place
 * them in the body. Every field and change names its source and its reason.
 *
 * Sources: `doc` the legacy v1 documentation, `client` the public v2 client, `both`, `spec` the
 * interface specification, `ours` where nothing public speaks. A field is read `from` a v3 field
 * (through a value map of value-maps.ts or a converter when named), `derived` by a named
 * computation, a `constant`, or the caller's `context`. Derived fields and converters are code,
 * in src/gateway/legacy/transforms/derived-fields.ts; the format is
 * src/gateway/legacy/declarations/record-shapes.ts. Pure data.
 */
import type { RecordChange } from '../src/gateway/legacy/declarations/generation-changes.js';
import type { RecordTable } from '../src/gateway/legacy/declarations/record-shapes.js';

const ID = 'Legacy ids are UUIDs: the same 128 bits as the v3 id, without its prefix.';

export const LEGACY_RECORDS = {
  trade: {
    summary: 'A trade as the trades list and trade/{id} show it, on v1 and v2.',
    v3: 'trade',
    fields: {
      id: { type: 'id', from: 'id', source: 'doc', reason: ID },
      tradingPair: {
        type: 'string',
        derived: 'tradingPair',
        source: 'doc',
        reason: 'BASE/QUOTE, BASE being the currency the amount was given in.',
      },
      referencedUnit: {
        type: 'currency',
        from: 'referencedCurrency',
        source: 'doc',
        reason: 'The currency the amount was given in.',
      },
      tradeDirection: {
        type: 'string',
        derived: 'tradeDirection',
        source: 'doc',
        reason: 'BUY when the referenced currency was bought, else SELL.',
      },
      amount: { type: 'amount', from: 'referencedAmount', source: 'doc', reason: 'The amount in referencedUnit.' },
      computedAmount: {
        type: 'amount',
        derived: 'counterAmount',
        source: 'doc',
        reason: 'The amount of the other currency, as the quote computed it.',
      },
      createdAtUtc: { type: 'timestamp', from: 'createdAt', source: 'doc', reason: 'The v1 name of createdAt.' },
      updatedAtUtc: { type: 'timestamp', from: 'updatedAt', source: 'doc', reason: 'The v1 name of updatedAt.' },
      orderType: {
        type: 'string',
        constant: 'MARKET',
        source: 'doc',
        reason: 'Every v3 trade executes a quote at once: the legacy market order.',
      },
      status: {
        type: 'string',
        from: 'status',
        source: 'doc',
        reason: "The same words: EXECUTED and REVERSED are documented; SETTLED is v3's settled trade.",
      },
      source: { type: 'string', from: 'source', source: 'doc', reason: 'API or GUI, as v3 records it.' },
      buy: {
        type: 'currency',
        from: 'buyCurrency',
        source: 'spec',
        reason: "The v2 trade record's name; added because it does not clash with the fields above.",
      },
      sell: {
        type: 'currency',
        from: 'sellCurrency',
        source: 'spec',
        reason: "The v2 trade record's name; added because it does not clash with the fields above.",
      },
      referencedAmount: {
        type: 'amount',
        from: 'referencedAmount',
        source: 'spec',
        reason: "The v2 trade record's name of amount; the same value.",
      },
      transactedAt: {
        type: 'timestamp',
        from: 'createdAt',
        source: 'spec',
        reason: "The v2 trade record's name of the execution time.",
      },
      quoteId: { type: 'id', from: 'quoteId', source: 'spec', reason: ID },
      clientReferenceId: {
        type: 'string',
        nullable: true,
        from: 'clientReferenceId',
        source: 'spec',
        reason: 'As the client sent it, or null.',
      },
      originalTradeId: {
        type: 'id',
        nullable: true,
        from: 'originalTradeId',
        source: 'spec',
        reason: 'For a reversal, the trade it reversed; else null.',
      },
    },
  },
  tradeResult: {
    summary: 'The trade a trade, reverse or settle operation answers.',
    v3: 'trade',
    fields: {
      id: { type: 'id', from: 'id', source: 'both', reason: ID },
      buy: { type: 'currency', from: 'buyCurrency', source: 'both', reason: 'The currency bought.' },
      sell: { type: 'currency', from: 'sellCurrency', source: 'both', reason: 'The currency sold.' },
      referencedUnit: {
        type: 'currency',
        from: 'referencedCurrency',
        source: 'both',
        reason: 'The currency the amount was given in.',
      },
      referencedAmount: {
        type: 'amount',
        from: 'referencedAmount',
        source: 'client',
        reason: 'The v2 client reads this name.',
      },
      referenceAmount: {
        type: 'amount',
        from: 'referencedAmount',
        source: 'doc',
        reason: 'The v1 documentation names the same amount so; both names are written.',
      },
      amount: {
        type: 'amount',
        derived: 'counterAmount',
        source: 'doc',
        reason: "The counter amount (the documentation's example: referenced 123 USD, amount 122).",
      },
      status: {
        type: 'string',
        from: 'status',
        source: 'both',
        reason: 'EXECUTED, REVERSED on a reversal, SETTLED once settled.',
      },
      transactedAt: { type: 'timestamp', from: 'createdAt', source: 'both', reason: 'The execution time.' },
      quoteId: { type: 'id', from: 'quoteId', source: 'both', reason: ID },
      clientReferenceId: {
        type: 'string',
        nullable: true,
        from: 'clientReferenceId',
        source: 'spec',
        reason: 'As the client sent it, or null.',
      },
      originalTradeId: {
        type: 'id',
        nullable: true,
        from: 'originalTradeId',
        source: 'spec',
        reason: 'For a reversal, the trade it reversed; else null.',
      },
    },
  },
  reversalDetails: {
    summary: 'What a reversal moved, beside the reversal trade.',
    v3: 'reversalDetails',
    fields: {
      direction: {
        type: 'string',
        from: 'direction',
        source: 'spec',
        reason: "CREDIT or DEBIT, from the organisation's side.",
      },
      differentialAmount: {
        type: 'amount',
        from: 'differentialAmount',
        source: 'spec',
        reason: 'The difference the reversal settled.',
      },
      currency: { type: 'currency', from: 'currency', source: 'spec', reason: 'The currency of the difference.' },
    },
  },
  quote: {
    summary: 'A quote, from generate_quote and trade/reverse-quote.',
    v3: 'quote',
    fields: {
      id: { type: 'id', from: 'id', source: 'both', reason: ID },
      userId: {
        type: 'id',
        context: 'keyId',
        source: 'both',
        reason: 'Legacy quotes belonged to the user (API key) that asked; the key id of the caller.',
      },
      buy: { type: 'currency', from: 'buyCurrency', source: 'both', reason: 'The currency bought.' },
      sell: { type: 'currency', from: 'sellCurrency', source: 'both', reason: 'The currency sold.' },
      referencedUnit: {
        type: 'currency',
        from: 'amountCurrency',
        source: 'both',
        reason: 'The currency the amount was given in.',
      },
      referencedAmount: {
        type: 'amount',
        derived: 'referencedAmount',
        source: 'both',
        reason: 'The amount in referencedUnit.',
      },
      quoteAmount: {
        type: 'amount',
        derived: 'counterAmount',
        source: 'both',
        reason: 'The computed amount of the other currency.',
      },
      createdAt: { type: 'timestamp', from: 'createdAt', source: 'both', reason: 'When the quote was made.' },
      expiryTimeinSeconds: {
        type: 'integer',
        derived: 'validitySeconds',
        source: 'both',
        reason: 'The quote\'s real validity in seconds (lower-case "in", as clients read it).',
      },
    },
  },
  balance: {
    summary: "One currency's balance.",
    v3: 'balance',
    fields: {
      id: { type: 'id', from: 'id', source: 'both', reason: ID },
      amount: { type: 'amount', from: 'amount', source: 'both', reason: 'May be negative: trades on credit.' },
      currency: { type: 'currency', from: 'currency', source: 'both', reason: "The balance's currency." },
      createdAt: { type: 'timestamp', from: 'createdAt', source: 'both', reason: 'When the balance was opened.' },
      updatedAt: { type: 'timestamp', from: 'updatedAt', source: 'both', reason: 'When it last moved.' },
      totalBalanceInUSD: { type: 'amount', from: 'usdValue', source: 'client', reason: 'The amount valued in USD.' },
      withdrawableBalanceInUSD: {
        type: 'amount',
        from: 'withdrawableUsdValue',
        source: 'client',
        reason: 'The withdrawable amount valued in USD.',
      },
      withdrawableBalance: {
        type: 'amount',
        from: 'withdrawableAmount',
        source: 'client',
        reason: 'The balance less pending withdrawals, never below 0.',
      },
    },
  },
  tradingPair: {
    summary: 'A tradable pair of available_markets.',
    v3: 'pair',
    fields: {
      buy: { type: 'currency', from: 'baseCurrency', source: 'client', reason: 'The base currency of the pair.' },
      sell: { type: 'currency', from: 'quoteCurrency', source: 'client', reason: 'The quote currency of the pair.' },
    },
  },
  tradeLimit: {
    summary: 'The trade limits of one pair, keyed by the pair as BASE/QUOTE.',
    v3: 'pair',
    fields: {
      minTradeLimit: {
        type: 'amount',
        from: 'minAmount',
        source: 'client',
        reason: 'The smallest trade, in the base currency.',
      },
      maxTradeLimit: {
        type: 'amount',
        from: 'maxAmount',
        source: 'client',
        reason: 'The largest trade, in the base currency.',
      },
    },
  },
  deposit: {
    summary: 'A fiat or stablecoin deposit.',
    v3: 'deposit',
    fields: {
      id: { type: 'id', from: 'id', source: 'both', reason: ID },
      orgId: { type: 'id', context: 'orgId', source: 'both', reason: 'The organisation of the path.' },
      currency: { type: 'currency', from: 'currency', source: 'both', reason: "The deposit's currency." },
      amount: { type: 'amount', from: 'amount', source: 'both', reason: 'The amount deposited.' },
      status: {
        type: 'string',
        from: 'status',
        map: 'depositStatus',
        source: 'client',
        reason: 'PENDING, COMPLETED or ERROR.',
      },
      network: {
        type: 'string',
        derived: 'networkOrFiat',
        source: 'both',
        reason: '"FIAT" for a fiat deposit, else its chain.',
      },
      transactionHash: {
        type: 'string',
        nullable: true,
        from: 'transactionHash',
        source: 'both',
        reason: 'The chain transaction of a stablecoin deposit.',
      },
      comments: { type: 'string', nullable: true, from: 'comments', source: 'both', reason: 'Free text.' },
      referenceId: {
        type: 'string',
        nullable: true,
        from: 'referenceId',
        source: 'both',
        reason: "The payer's reference.",
      },
      createdAt: { type: 'timestamp', from: 'createdAt', source: 'both', reason: 'When the deposit was seen.' },
      completedAt: {
        type: 'timestamp',
        nullable: true,
        from: 'completedAt',
        source: 'doc',
        reason: 'The webhook record names it; null until completed.',
      },
    },
  },
  withdrawalAddress: {
    summary: 'A stablecoin withdrawal address.',
    v3: 'withdrawalAccount',
    fields: {
      id: { type: 'id', from: 'id', source: 'both', reason: ID },
      name: {
        type: 'string',
        from: 'accountName',
        source: 'doc',
        reason: 'The name given to the address ("ETH USDC Wallet").',
      },
      coinId: {
        type: 'id',
        from: 'currency',
        convert: 'coinUuid',
        source: 'doc',
        reason: 'A stable UUID of the currency, the same on every call and instance.',
      },
      coinName: { type: 'currency', from: 'currency', source: 'doc', reason: 'The currency code ("USDC").' },
      coinNetworkId: {
        type: 'id',
        from: 'network',
        convert: 'networkUuid',
        source: 'doc',
        reason: 'A stable UUID of the network, the same on every call and instance.',
      },
      coinNetworkName: {
        type: 'string',
        from: 'network',
        map: 'networkName',
        source: 'doc',
        reason: 'The network\'s display name ("Ethereum").',
      },
      address: { type: 'string', from: 'address', source: 'both', reason: 'The wallet address.' },
      status: {
        type: 'string',
        derived: 'verificationStatus',
        map: 'addressStatus',
        source: 'doc',
        reason: 'Verified, Pending (an active address not yet verified counts as pending) or Disabled.',
      },
      verified: { type: 'boolean', from: 'verified', source: 'both', reason: 'Whether withdrawals may use it.' },
      createdAt: { type: 'timestamp', from: 'createdAt', source: 'doc', reason: 'When it was added.' },
      updatedAt: { type: 'timestamp', from: 'updatedAt', source: 'doc', reason: 'When it last changed.' },
      comments: { type: 'string', nullable: true, from: 'comments', source: 'doc', reason: 'Free text.' },
    },
  },
  fiatWithdrawalAddress: {
    summary: 'A fiat withdrawal (bank) account.',
    v3: 'withdrawalAccount',
    fields: {
      id: { type: 'id', from: 'id', source: 'spec', reason: ID },
      currency: { type: 'currency', from: 'currency', source: 'spec', reason: "The account's currency." },
      nickname: {
        type: 'string',
        nullable: true,
        from: 'accountName',
        source: 'ours',
        reason: "The v2 client shows it as the account's label; v3 keeps one name per account.",
      },
      accountName: { type: 'string', from: 'accountName', source: 'spec', reason: "The account's name." },
      accountNumber: {
        type: 'string',
        nullable: true,
        from: 'accountNumber',
        source: 'spec',
        reason: 'The bank account number or IBAN.',
      },
      bankName: { type: 'string', nullable: true, from: 'bankName', source: 'spec', reason: 'The bank.' },
      routingNumber: {
        type: 'string',
        nullable: true,
        from: 'routingNumber',
        source: 'spec',
        reason: 'FEDWIRE accounts: the ABA routing number.',
      },
      swiftCode: {
        type: 'string',
        nullable: true,
        from: 'swiftCode',
        source: 'spec',
        reason: 'SWIFT accounts: the BIC.',
      },
      status: {
        type: 'string',
        from: 'status',
        map: 'fiatAccountStatus',
        source: 'spec',
        reason: 'Lower case, "active" when usable.',
      },
      verified: { type: 'boolean', from: 'verified', source: 'spec', reason: 'Whether withdrawals may use it.' },
      creatorId: { type: 'id', from: 'creatorId', source: 'spec', reason: ID },
      orgId: { type: 'id', context: 'orgId', source: 'spec', reason: 'The organisation of the path.' },
      comments: { type: 'string', nullable: true, from: 'comments', source: 'spec', reason: 'Free text.' },
      transferType: {
        type: 'string',
        nullable: true,
        from: 'transferType',
        source: 'spec',
        reason: 'FEDWIRE or SWIFT.',
      },
      memo: {
        type: 'string',
        nullable: true,
        from: 'memo',
        source: 'spec',
        reason: 'The reference sent with each payment.',
      },
      createdAt: { type: 'timestamp', from: 'createdAt', source: 'spec', reason: 'When it was added.' },
      updatedAt: { type: 'timestamp', from: 'updatedAt', source: 'spec', reason: 'When it last changed.' },
    },
  },
  withdrawal: {
    summary: 'A withdrawal, fiat or stablecoin, as the list and both withdrawal operations answer it.',
    v3: 'withdrawal',
    fields: {
      id: { type: 'id', from: 'id', source: 'client', reason: ID },
      createdAt: { type: 'timestamp', from: 'createdAt', source: 'client', reason: 'When it was requested.' },
      amount: {
        type: 'amount',
        from: 'withdrawalAmount',
        source: 'client',
        reason: 'The legacy name of withdrawalAmount.',
      },
      currency: { type: 'currency', from: 'currency', source: 'client', reason: "The withdrawal's currency." },
      network: {
        type: 'string',
        derived: 'networkOrFiat',
        source: 'client',
        reason: '"FIAT" for a fiat withdrawal, never null; else its chain.',
      },
      status: {
        type: 'string',
        from: 'status',
        source: 'client',
        reason: 'The same words: PENDING, PROCESSING, COMPLETED, FAILED, CANCELLED.',
      },
      transactionHash: {
        type: 'string',
        nullable: true,
        from: 'transactionHash',
        source: 'client',
        reason: 'The chain transaction of a stablecoin withdrawal.',
      },
      withdrawalAddressId: {
        type: 'id',
        from: 'withdrawalAccountId',
        source: 'client',
        reason: 'The legacy name of withdrawalAccountId.',
      },
      comments: { type: 'string', nullable: true, from: 'comments', source: 'client', reason: 'Free text.' },
      completedAt: {
        type: 'timestamp',
        nullable: true,
        from: 'completedAt',
        source: 'doc',
        reason: 'The webhook record names it; null until completed.',
      },
    },
  },
} as const satisfies RecordTable;

/**
 * v2's record changes, applied to the records above in order: v2's records are the result, and
 * v1's are v2's with the record changes among v1's (endpoints.v1.ts). Each is one field of one
 * record renamed, added, removed, retyped or read through a value map, with its source and reason.
 */
export const V2_RECORD_CHANGES = [] as const satisfies readonly RecordChange[];
