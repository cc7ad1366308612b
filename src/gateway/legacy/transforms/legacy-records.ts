/**
 * The legacy records, one function per shape, built from v3 records already read by readV3
 * (so their ids are legacy UUIDs and their amounts decimal text). Every response transform
 * builds its records here, so each legacy shape is written once. Amounts stay decimal strings;
 * the mapping's `amounts.response` paths make the writer emit them as JSON numbers.
 *
 * Which side is which (the legacy clients only ever named one currency, the referenced one):
 *   - a trade's or quote's referenced side is the one its amount was given in (v3
 *     `referencedCurrency` of a trade, `amountCurrency` of a quote); the other side is computed;
 *   - v1 trade (spec 2.4): `tradingPair` is `BASE/QUOTE` with BASE the referenced currency and
 *     QUOTE the other one; `tradeDirection` is BUY when the referenced currency is the bought
 *     one, else SELL; `amount` is the referenced amount and `computedAmount` the other side's
 *     amount (the sell amount when the referenced currency is bought, else the buy amount);
 *   - v2 trade (spec 2.3): `referencedAmount` is the referenced amount, `amount` the other side's;
 *   - legacy quote (DESIGN 4): `referencedAmount` is the amount in `amountCurrency`,
 *     `quoteAmount` the other side's.
 */
import type { V3Balance, V3BalanceTotals, V3Deposit, V3Pair, V3Quote, V3Trade, V3Withdrawal, V3WithdrawalAccount } from './v3-records.js';

interface Sides {
  readonly buyCurrency: string;
  readonly sellCurrency: string;
  readonly buyAmount: string;
  readonly sellAmount: string;
}

/** The referenced side and the other one; readV3 has checked the referenced currency is one of the two. */
function split(record: Sides, referencedCurrency: string) {
  const referencedIsBuy = referencedCurrency === record.buyCurrency;
  return {
    referencedIsBuy,
    otherCurrency: referencedIsBuy ? record.sellCurrency : record.buyCurrency,
    referencedAmount: referencedIsBuy ? record.buyAmount : record.sellAmount,
    otherAmount: referencedIsBuy ? record.sellAmount : record.buyAmount,
  };
}

export type V1Trade = {
  id: string;
  tradingPair: string;
  referencedUnit: string;
  tradeDirection: 'BUY' | 'SELL';
  amount: string;
  computedAmount: string;
  createdAtUtc: string;
  updatedAtUtc: string;
  orderType: 'MARKET';
  status: string;
  source: string;
};

export function v1Trade(trade: V3Trade): V1Trade {
  const sides = split(trade, trade.referencedCurrency);
  return {
    id: trade.id,
    tradingPair: `${trade.referencedCurrency}/${sides.otherCurrency}`,
    referencedUnit: trade.referencedCurrency,
    tradeDirection: sides.referencedIsBuy ? 'BUY' : 'SELL',
    amount: trade.referencedAmount,
    computedAmount: sides.otherAmount,
    createdAtUtc: trade.createdAt,
    updatedAtUtc: trade.updatedAt,
    // Every v3 trade executes a quote at once: the legacy "market order".
    orderType: 'MARKET',
    status: trade.status,
    source: trade.source,
  };
}

export type V2Trade = {
  id: string;
  buy: string;
  sell: string;
  referencedUnit: string;
  referencedAmount: string;
  amount: string;
  status: string;
  transactedAt: string;
  quoteId: string;
  clientReferenceId: string | null;
  originalTradeId: string | null;
};

export function v2Trade(trade: V3Trade): V2Trade {
  return {
    id: trade.id,
    buy: trade.buyCurrency,
    sell: trade.sellCurrency,
    referencedUnit: trade.referencedCurrency,
    referencedAmount: trade.referencedAmount,
    amount: split(trade, trade.referencedCurrency).otherAmount,
    status: trade.status,
    transactedAt: trade.createdAt,
    quoteId: trade.quoteId,
    clientReferenceId: trade.clientReferenceId,
    originalTradeId: trade.originalTradeId,
  };
}

export type LegacyQuote = {
  id: string;
  userId: string;
  buy: string;
  sell: string;
  referencedUnit: string;
  referencedAmount: string;
  quoteAmount: string;
  createdAt: string;
  expiryTimeinSeconds: number;
};

/** `userId` is the legacy caller's key id: legacy quotes belonged to the key that asked. */
export function legacyQuote(quote: V3Quote, userId: string): LegacyQuote {
  const sides = split(quote, quote.amountCurrency);
  return {
    id: quote.id,
    userId,
    buy: quote.buyCurrency,
    sell: quote.sellCurrency,
    referencedUnit: quote.amountCurrency,
    referencedAmount: sides.referencedAmount,
    quoteAmount: sides.otherAmount,
    createdAt: quote.createdAt,
    // v3 validities are whole seconds; rounding only absorbs a clock's sub-second jitter.
    expiryTimeinSeconds: Math.round((Date.parse(quote.expiresAt) - Date.parse(quote.createdAt)) / 1000),
  };
}

export type LegacyBalance = {
  id: string;
  amount: string;
  currency: string;
  createdAt: string;
  updatedAt: string;
  totalBalanceInUSD: string;
  withdrawableBalanceInUSD: string;
  withdrawableBalance: string;
};

export function legacyBalance(balance: V3Balance): LegacyBalance {
  return {
    id: balance.id,
    amount: balance.amount,
    currency: balance.currency,
    createdAt: balance.createdAt,
    updatedAt: balance.updatedAt,
    totalBalanceInUSD: balance.usdValue,
    withdrawableBalanceInUSD: balance.withdrawableUsdValue,
    withdrawableBalance: balance.withdrawableAmount,
  };
}

/** The top-level totals of the balances body (spec 2.7). */
export function legacyBalanceTotals(totals: V3BalanceTotals) {
  return {
    netPositiveBalanceInUSD: totals.netPositiveUsd,
    netNegativeBalanceInUSD: totals.netNegativeUsd,
    netBalanceInUSD: totals.netUsd,
  };
}

/** The trade result's `balances: {CCY: amount}` (readV3 has checked each currency occurs once). */
export function balancesByCurrency(balances: readonly V3Balance[]): Record<string, string> {
  return Object.fromEntries(balances.map((balance) => [balance.currency, balance.amount]));
}

export type LegacyDeposit = {
  id: string;
  orgId: string;
  currency: string;
  amount: string;
  status: string;
  transactionHash: string | null;
  comments: string | null;
  referenceId: string | null;
  network: string | null;
  createdAt: string;
};

export function legacyDeposit(deposit: V3Deposit, orgId: string): LegacyDeposit {
  return {
    id: deposit.id,
    orgId,
    currency: deposit.currency,
    amount: deposit.amount,
    status: deposit.status,
    transactionHash: deposit.transactionHash,
    comments: deposit.comments,
    referenceId: deposit.referenceId,
    // Spec 2.6: v1 named the rail of a fiat deposit 'FIAT' where a stablecoin one has its chain.
    network: deposit.assetType === 'FIAT' ? 'FIAT' : deposit.network,
    createdAt: deposit.createdAt,
  };
}

export type FiatWithdrawalAccount = {
  id: string;
  currency: string;
  accountName: string;
  accountNumber: string | null;
  bankName: string | null;
  routingNumber: string | null;
  swiftCode: string | null;
  status: string;
  verified: boolean;
  creatorId: string;
  orgId: string;
  comments: string | null;
  transferType: string | null;
  memo: string | null;
  createdAt: string;
  updatedAt: string;
};

/** Spec 2.5; legacy statuses were lower case (`active`). */
export function fiatWithdrawalAccount(account: V3WithdrawalAccount, orgId: string): FiatWithdrawalAccount {
  return {
    id: account.id,
    currency: account.currency,
    accountName: account.accountName,
    accountNumber: account.accountNumber,
    bankName: account.bankName,
    routingNumber: account.routingNumber,
    swiftCode: account.swiftCode,
    status: account.status.toLowerCase(),
    verified: account.verified,
    creatorId: account.creatorId,
    orgId,
    comments: account.comments,
    transferType: account.transferType,
    memo: account.memo,
    createdAt: account.createdAt,
    updatedAt: account.updatedAt,
  };
}

export type WithdrawalAddress = {
  id: string;
  currency: string;
  network: string | null;
  address: string | null;
  accountName: string;
  status: string;
  verified: boolean;
  creatorId: string;
  orgId: string;
  comments: string | null;
  createdAt: string;
  updatedAt: string;
};

/** A stablecoin withdrawal account as the legacy address lists showed it (status as in 2.5). */
export function withdrawalAddress(account: V3WithdrawalAccount, orgId: string): WithdrawalAddress {
  return {
    id: account.id,
    currency: account.currency,
    network: account.network,
    address: account.address,
    accountName: account.accountName,
    status: account.status.toLowerCase(),
    verified: account.verified,
    creatorId: account.creatorId,
    orgId,
    comments: account.comments,
    createdAt: account.createdAt,
    updatedAt: account.updatedAt,
  };
}

export type LegacyWithdrawal = {
  id: string;
  currency: string;
  amount: string;
  status: string;
  network: string | null;
  withdrawalAddressId: string;
  transactionHash: string | null;
  paymentDetails: Record<string, Record<string, string>>;
  comments: string | null;
  createdAt: string;
  updatedAt: string;
};

/** No spec shape: the v3 withdrawal (2.1) in legacy words (`amount`, `withdrawalAddressId`). */
export function legacyWithdrawal(withdrawal: V3Withdrawal): LegacyWithdrawal {
  return {
    id: withdrawal.id,
    currency: withdrawal.currency,
    amount: withdrawal.withdrawalAmount,
    status: withdrawal.status,
    network: withdrawal.network,
    withdrawalAddressId: withdrawal.withdrawalAccountId,
    transactionHash: withdrawal.transactionHash,
    paymentDetails: withdrawal.paymentDetails,
    comments: withdrawal.comments,
    createdAt: withdrawal.createdAt,
    updatedAt: withdrawal.updatedAt,
  };
}

export type LegacyMarket = {
  symbol: string;
  baseCurrency: string;
  quoteCurrency: string;
  minAmount: string;
  maxAmount: string;
};

export function legacyMarket(pair: V3Pair): LegacyMarket {
  return {
    symbol: pair.symbol,
    baseCurrency: pair.baseCurrency,
    quoteCurrency: pair.quoteCurrency,
    minAmount: pair.minAmount,
    maxAmount: pair.maxAmount,
  };
}
