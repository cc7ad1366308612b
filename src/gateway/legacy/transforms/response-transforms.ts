/**
 * Response transforms: the v3 answers of a mapping's calls -> the whole legacy success body
 * (without `meta`, which the handler adds to lists). Each reads its answers through readV3, so a
 * v3 answer that breaks the contract is a V3ContractError, and builds its records with
 * legacy-records.ts. Amounts stay decimal strings at the places the mapping's
 * `amounts.response` paths name; the handler writes them as JSON numbers with exactly their
 * digits.
 *
 * Envelopes: v1 `{status: 'success', data, ...}`; v2 adds a short English `message` after
 * `status`, as v2 answers did. A transform serving both generations picks by
 * `input.generation`.
 */
import type { z } from 'zod';
import { parseKeyName } from '../../../lib/auth/credentials.js';
import type { LegacyPrincipal } from '../legacy-auth.js';
import type { LegacyGeneration } from '../operations.js';
import {
  balancesByCurrency,
  fiatWithdrawalAccount,
  legacyBalance,
  legacyBalanceTotals,
  legacyDeposit,
  legacyMarket,
  legacyQuote,
  legacyWithdrawal,
  v1Trade,
  v2Trade,
  withdrawalAddress,
} from './legacy-records.js';
import type { LegacyResponseInput, ResponseTransform } from './transform-types.js';
import { V3_ANSWERS, type V3Trade, readV3 } from './v3-records.js';

function envelope(generation: LegacyGeneration, message: string, fields: Record<string, unknown>): Record<string, unknown> {
  return generation === 'v1' ? { status: 'success', ...fields } : { status: 'success', message, ...fields };
}

/** The answer of the mapping's `index`-th v3 call, read through its schema. */
function answer<T>(input: LegacyResponseInput, index: number, schema: z.ZodType<T>): T {
  return readV3(schema, input.answers[index], input.operation, `answers[${index}]`);
}

/** The caller's key id: legacy quotes carried the id of the user (key) that asked for them. */
function legacyUserId(principal: LegacyPrincipal): string {
  const parts = parseKeyName(principal.keyName);
  // The authenticator only admits registered key names, so this is a gateway defect, not v3's.
  if (parts === null) throw new Error(`the legacy principal's key name is not org/{orgId}/apiKey/{keyId}: ${principal.keyName}`);
  return parts.keyId;
}

function tradeList(message: string, toLegacy: (trade: V3Trade) => Record<string, unknown>): ResponseTransform {
  return (input) => {
    const trades = answer(input, 0, V3_ANSWERS.tradeList);
    return envelope(input.generation, message, { data: trades.data.map(toLegacy) });
  };
}

/** Trade execution answers [trade, balances, exposure]: the trade with the balances and credit after it. */
function tradeResult(toLegacy: (trade: V3Trade) => Record<string, unknown>): ResponseTransform {
  return (input) => {
    const trade = answer(input, 0, V3_ANSWERS.trade);
    const balances = answer(input, 1, V3_ANSWERS.balanceList);
    const exposure = answer(input, 2, V3_ANSWERS.exposure);
    return envelope(input.generation, 'Trade executed successfully', {
      data: {
        balances: balancesByCurrency(balances.data),
        trade: toLegacy(trade.data),
        userCreditLimit: exposure.data.creditLine,
        userCreditUsed: exposure.data.committedAmount,
      },
    });
  };
}

export const RESPONSE_TRANSFORMS: Readonly<Record<string, ResponseTransform>> = Object.freeze({
  fiatWithdrawalAccountList: (input) => {
    const accounts = answer(input, 0, V3_ANSWERS.withdrawalAccountList);
    // The v3 call already asks for FIAT only; kept as a guard so a bank account list can never
    // show a wallet. Dropping here is safe: the handler counts and pages after the transform.
    const fiat = accounts.data.filter((account) => account.assetType === 'FIAT');
    return envelope(input.generation, 'Fiat withdrawal addresses retrieved successfully', {
      data: fiat.map((account) => fiatWithdrawalAccount(account, input.principal.orgId)),
    });
  },

  withdrawalAddressList: (input) => {
    const accounts = answer(input, 0, V3_ANSWERS.withdrawalAccountList);
    // Same guard as the fiat list, the other way round.
    const wallets = accounts.data.filter((account) => account.assetType !== 'FIAT');
    return envelope(input.generation, 'Withdrawal addresses retrieved successfully', {
      data: wallets.map((account) => withdrawalAddress(account, input.principal.orgId)),
    });
  },

  v1TradeList: tradeList('Trades retrieved successfully', v1Trade),

  v1Trade: (input) => {
    const trade = answer(input, 0, V3_ANSWERS.trade);
    return envelope(input.generation, 'Trade retrieved successfully', { data: v1Trade(trade.data) });
  },

  depositList: (input) => {
    const deposits = answer(input, 0, V3_ANSWERS.depositList);
    return envelope(input.generation, 'Deposits retrieved successfully', {
      data: deposits.data.map((deposit) => legacyDeposit(deposit, input.principal.orgId)),
    });
  },

  balanceList: (input) => {
    const balances = answer(input, 0, V3_ANSWERS.balanceList);
    return envelope(input.generation, 'Balances retrieved successfully', {
      data: balances.data.map(legacyBalance),
      ...legacyBalanceTotals(balances.totals),
    });
  },

  legacyQuote: (input) => {
    const quote = answer(input, 0, V3_ANSWERS.quote);
    return envelope(input.generation, 'Quote generated successfully', { data: legacyQuote(quote.data, legacyUserId(input.principal)) });
  },

  v1TradeResult: tradeResult(v1Trade),

  marketList: (input) => {
    const pairs = answer(input, 0, V3_ANSWERS.pairList);
    return envelope(input.generation, 'Available markets retrieved successfully', { data: pairs.data.map(legacyMarket) });
  },

  v2TradeList: tradeList('Trades retrieved successfully', v2Trade),

  withdrawalList: (input) => {
    const withdrawals = answer(input, 0, V3_ANSWERS.withdrawalList);
    return envelope(input.generation, 'Withdrawals retrieved successfully', { data: withdrawals.data.map(legacyWithdrawal) });
  },

  v2TradeResult: tradeResult(v2Trade),

  reverseQuoteResult: (input) => {
    const quote = answer(input, 0, V3_ANSWERS.quote);
    return envelope(input.generation, 'Reverse quote generated successfully', {
      data: { quote: legacyQuote(quote.data, legacyUserId(input.principal)) },
    });
  },

  v2ReversalResult: (input) => {
    const reversal = answer(input, 0, V3_ANSWERS.reversal);
    const { direction, differentialAmount, currency } = reversal.data.reversalDetails;
    return envelope(input.generation, 'Trade reversed successfully', {
      data: { trade: v2Trade(reversal.data.trade), reversalDetails: { direction, differentialAmount, currency } },
    });
  },

  v2SettleResult: (input) => {
    const trade = answer(input, 0, V3_ANSWERS.trade);
    return envelope(input.generation, 'Trade settled successfully', { data: { trade: v2Trade(trade.data) } });
  },

  withdrawalResult: (input) => {
    const withdrawal = answer(input, 0, V3_ANSWERS.withdrawal);
    return envelope(input.generation, 'Withdrawal created successfully', { data: legacyWithdrawal(withdrawal.data) });
  },
});
