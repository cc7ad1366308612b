/**
 * Every one of the twelve operations legacy clients call, on v1 and on v2, through a client
 * written from the public legacy contract alone (legacy-client.ts): each answer must read
 * through the client's strict typed reader, must carry what the contract says clients rely on
 * (the quote under `quote`, both names of a trade's amount, the v1 trade result at the root,
 * the market as pairs plus one-key limit maps, the v1 trade fields on both lists, completedAt
 * and ERROR on deposits, stable coin and network ids on addresses, FIAT as a fiat
 * withdrawal's network), and must agree with what v3 itself says about the same records: each
 * legacy id is the v3 id's hex with dashes, each amount the same decimal.
 */
import BigNumber from 'bignumber.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { LegacyHarness } from '../../../support/legacy-harness.js';
import { type Generation, GENERATIONS, LegacyClient, legacyIdOf, sameDecimal } from './legacy-client.js';
import {
  EVM_ADDRESSES,
  FEDWIRE_ACCOUNT,
  legacyClients,
  stablecoinAccount,
  type V3Account,
  type V3Balance,
  type V3Deposit,
  type V3Pair,
  V3Side,
  type V3Trade,
  type V3Withdrawal,
} from './v3-setup.js';

const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/;

let h: LegacyHarness;
let key: LoadedKey;
let v3: V3Side;
let clients: Record<Generation, LegacyClient>;
/** Another organisation, which sold GBP it does not hold: trading on credit makes a balance negative. */
let onCredit: { v3: V3Side; clients: Record<Generation, LegacyClient> };

/** The records set up once for every test. */
const setup = {} as {
  fiatAccount: V3Account;
  walletA: V3Account;
  walletB: V3Account;
  tetherWallet: V3Account;
  polygonWallet: V3Account;
  completedFiat: V3Deposit;
  completedCoin: V3Deposit;
  pending: V3Deposit;
  failed: V3Deposit;
  trade: V3Trade;
  fiatWithdrawal: V3Withdrawal;
  coinWithdrawal: V3Withdrawal;
};

beforeAll(async () => {
  h = await LegacyHarness.start();
  key = await h.createKey();
  v3 = new V3Side(h, key);
  clients = legacyClients(h, key);

  const creditKey = await h.createKey();
  onCredit = { v3: new V3Side(h, creditKey), clients: legacyClients(h, creditKey) };
  await onCredit.v3.trade({ buyCurrency: 'USD', sellCurrency: 'GBP', amount: '50.00', amountCurrency: 'USD' });

  setup.completedFiat = await v3.deposit({
    currency: 'USD',
    amount: '100000.00',
    referenceId: 'wire-0001',
    comments: 'opening balance',
  });
  setup.completedCoin = await v3.deposit({ currency: 'USDC', amount: '5000.000000', network: 'ETHEREUM' });
  setup.pending = await v3.deposit({ currency: 'EUR', amount: '250.00', completeAfterSeconds: 3600 });
  // v3 has no way to fail a deposit (the sandbox completes them, nothing fails them), so the
  // failed deposit is a pending one marked FAILED in the database, a state its schema allows.
  const toFail = await v3.deposit({ currency: 'GBP', amount: '10.00', completeAfterSeconds: 3600 });
  await h.core.db.query(`UPDATE deposits SET status = 'FAILED', completes_at = NULL WHERE id = $1`, [toFail.id]);
  setup.failed = (await v3.get<V3Deposit>(`/v3/fx/deposits/${toFail.id}`)).data;
  expect(setup.failed.status).toBe('FAILED');

  setup.fiatAccount = await v3.account(FEDWIRE_ACCOUNT);
  setup.walletA = await v3.account(stablecoinAccount('USDC', 'ETHEREUM', 'ETH USDC Wallet', EVM_ADDRESSES[0]));
  setup.walletB = await v3.account(stablecoinAccount('USDC', 'ETHEREUM', 'Second USDC wallet', EVM_ADDRESSES[1]));
  setup.tetherWallet = await v3.account(stablecoinAccount('USDT', 'ETHEREUM', 'Tether wallet', EVM_ADDRESSES[2]));
  setup.polygonWallet = await v3.account(stablecoinAccount('USDC', 'POLYGON', 'Polygon USDC wallet', EVM_ADDRESSES[3]));

  setup.trade = await v3.trade({ buyCurrency: 'EUR', sellCurrency: 'USD', amount: '40.00', amountCurrency: 'EUR' });
  setup.fiatWithdrawal = await v3.withdraw({
    withdrawalAccountId: setup.fiatAccount.id,
    withdrawalAmount: '10.00',
    currency: 'USD',
  });
  setup.coinWithdrawal = await v3.withdraw({
    withdrawalAccountId: setup.walletA.id,
    withdrawalAmount: '2.5',
    currency: 'USDC',
  });
});
afterAll(async () => {
  await h?.close();
});

/** Which side of a v3 trade is the referenced one, and the amount of the other side. */
function counterOf(trade: V3Trade): { other: string; amount: string; direction: 'BUY' | 'SELL' } {
  return trade.referencedCurrency === trade.buyCurrency
    ? { other: trade.sellCurrency, amount: trade.sellAmount, direction: 'BUY' }
    : { other: trade.buyCurrency, amount: trade.buyAmount, direction: 'SELL' };
}

/** A legacy trade record (trades list, trade/{id}) against the v3 trade it shows. */
function expectTradeRecord(
  legacy: {
    id: string;
    tradingPair: string;
    referencedUnit: string;
    tradeDirection: string;
    amount: string;
    computedAmount: string;
    createdAtUtc: string;
    updatedAtUtc: string;
    orderType: string;
    status: string;
    source: string;
  },
  trade: V3Trade,
): void {
  const counter = counterOf(trade);
  expect(legacy.id).toBe(legacyIdOf(trade.id));
  expect(legacy).toMatchObject({
    tradingPair: `${trade.referencedCurrency}/${counter.other}`,
    referencedUnit: trade.referencedCurrency,
    tradeDirection: counter.direction,
    createdAtUtc: trade.createdAt,
    updatedAtUtc: trade.updatedAt,
    orderType: 'MARKET',
    status: trade.status,
    source: trade.source,
  });
  expect(
    sameDecimal(legacy.amount, trade.referencedAmount),
    `amount ${legacy.amount} = ${trade.referencedAmount}`,
  ).toBe(true);
  expect(
    sameDecimal(legacy.computedAmount, counter.amount),
    `computedAmount ${legacy.computedAmount} = ${counter.amount}`,
  ).toBe(true);
}

function expectSuccessMessage(body: { status: string; message: string }): void {
  expect(body.status).toBe('success');
  expect(body.message.trim().length).toBeGreaterThan(0);
}

describe.each(GENERATIONS)('%s', (generation) => {
  const client = () => clients[generation];

  it('available_markets: {tradingPairs, tradeLimits}, each limit a one-key map keyed BASE/QUOTE, as v3 lists the pairs', async () => {
    const { body } = await client().availableMarkets();
    expectSuccessMessage(body);
    const pairs = (await v3.get<V3Pair[]>('/v3/fx/pairs')).data;
    expect(pairs.length).toBeGreaterThan(0);
    expect(body.data.tradingPairs).toHaveLength(pairs.length);
    expect(body.data.tradeLimits).toHaveLength(pairs.length);
    body.data.tradeLimits.forEach((limits, index) => {
      const pair = body.data.tradingPairs[index]!;
      expect(Object.keys(limits), `tradeLimits[${index}]`).toEqual([`${pair.buy}/${pair.sell}`]);
    });
    const limitsByKey = new Map(body.data.tradeLimits.map((limits) => Object.entries(limits)[0]!));
    for (const pair of pairs) {
      expect(body.data.tradingPairs).toContainEqual({ buy: pair.baseCurrency, sell: pair.quoteCurrency });
      const limits = limitsByKey.get(`${pair.baseCurrency}/${pair.quoteCurrency}`);
      expect(limits, pair.symbol).toBeDefined();
      expect(sameDecimal(limits!.minTradeLimit, pair.minAmount), `${pair.symbol} min`).toBe(true);
      expect(sameDecimal(limits!.maxTradeLimit, pair.maxAmount), `${pair.symbol} max`).toBe(true);
    }
  });

  it('balances: every v3 balance with its USD values, and the three net totals', async () => {
    const { body } = await client().balances();
    expectSuccessMessage(body);
    const answer = await v3.get<V3Balance[]>('/v3/fx/balances');
    const totals = answer.totals as { netPositiveUsd: string; netNegativeUsd: string; netUsd: string };
    expect(body.data.map((balance) => balance.id).sort()).toEqual(
      answer.data.map((balance) => legacyIdOf(balance.id)).sort(),
    );
    for (const balance of answer.data) {
      const legacy = body.data.find((one) => one.id === legacyIdOf(balance.id))!;
      expect(legacy).toMatchObject({
        currency: balance.currency,
        createdAt: balance.createdAt,
        updatedAt: balance.updatedAt,
      });
      expect(sameDecimal(legacy.amount, balance.amount), `${balance.currency} amount`).toBe(true);
      expect(sameDecimal(legacy.totalBalanceInUSD, balance.usdValue), `${balance.currency} totalBalanceInUSD`).toBe(
        true,
      );
      expect(
        sameDecimal(legacy.withdrawableBalanceInUSD, balance.withdrawableUsdValue),
        `${balance.currency} withdrawableBalanceInUSD`,
      ).toBe(true);
      expect(
        sameDecimal(legacy.withdrawableBalance, balance.withdrawableAmount),
        `${balance.currency} withdrawableBalance`,
      ).toBe(true);
    }
    expect(sameDecimal(body.netPositiveBalanceInUSD, totals.netPositiveUsd)).toBe(true);
    expect(sameDecimal(body.netNegativeBalanceInUSD, totals.netNegativeUsd)).toBe(true);
    expect(sameDecimal(body.netBalanceInUSD, totals.netUsd)).toBe(true);
  });

  it('balances: a balance sold on credit is a negative JSON number, and so is the negative net', async () => {
    const { body } = await onCredit.clients[generation].balances();
    const answer = await onCredit.v3.get<V3Balance[]>('/v3/fx/balances');
    const v3Gbp = answer.data.find((balance) => balance.currency === 'GBP')!;
    const gbp = body.data.find((balance) => balance.id === legacyIdOf(v3Gbp.id));
    expect(gbp, 'the GBP balance').toBeDefined();
    expect(new BigNumber(gbp!.amount).isNegative()).toBe(true);
    expect(sameDecimal(gbp!.amount, v3Gbp.amount)).toBe(true);
    expect(new BigNumber(body.netNegativeBalanceInUSD).isNegative()).toBe(true);
    expect(
      sameDecimal(body.netNegativeBalanceInUSD, (answer.totals as { netNegativeUsd: string }).netNegativeUsd),
    ).toBe(true);
  });

  it('generate_quote: the quote under data.quote, valid for the quoteForSeconds sent, and v3 executes it with the same amounts', async () => {
    const { body } = await client().generateQuote({
      amount: '100.50',
      buy: 'EUR',
      sell: 'USD',
      referencedUnit: 'EUR',
      quoteForSeconds: 30,
    });
    expectSuccessMessage(body);
    const { quote } = body.data;
    expect(quote).toMatchObject({
      userId: client().keyId,
      buy: 'EUR',
      sell: 'USD',
      referencedUnit: 'EUR',
      expiryTimeinSeconds: 30,
    });
    expect(quote.id.startsWith('mock-')).toBe(false);
    expect(sameDecimal(quote.referencedAmount, '100.50')).toBe(true);
    expect(Math.abs(Date.parse(quote.createdAt) - Date.now())).toBeLessThan(60_000);

    const executed = await v3.post<V3Trade>('/v3/fx/trades', { quoteId: `qte_${quote.id.replaceAll('-', '')}` });
    expect(legacyIdOf(executed.quoteId)).toBe(quote.id);
    expect(sameDecimal(executed.buyAmount, quote.referencedAmount)).toBe(true);
    expect(sameDecimal(executed.sellAmount, quote.quoteAmount)).toBe(true);
  });

  it('trade: the result with referencedAmount = referenceAmount, amount the counter amount, balances and credit; on v1 also at the root', async () => {
    const quote = (await client().generateQuote({ amount: '50', buy: 'EUR', sell: 'USD', referencedUnit: 'USD' })).body
      .data.quote;
    const { body } = await client().trade(quote.id);
    expectSuccessMessage(body);
    const { trade } = body.data;
    expect(trade).toMatchObject({ buy: 'EUR', sell: 'USD', referencedUnit: 'USD', quoteId: quote.id });
    expect(trade.referencedAmount).toBe(trade.referenceAmount);
    expect(sameDecimal(trade.referencedAmount, '50')).toBe(true);
    expect(
      sameDecimal(trade.amount, quote.quoteAmount),
      `amount ${trade.amount} is the counter amount ${quote.quoteAmount}`,
    ).toBe(true);
    if (generation === 'v1') {
      expect({
        balances: body.balances,
        trade: body.trade,
        userCreditLimit: body.userCreditLimit,
        userCreditUsed: body.userCreditUsed,
      }).toEqual(body.data);
    }

    const executed = (await v3.get<V3Trade>(`/v3/fx/trades/trd_${trade.id.replaceAll('-', '')}`)).data;
    expect(executed).toMatchObject({
      buyCurrency: 'EUR',
      sellCurrency: 'USD',
      referencedCurrency: 'USD',
      status: trade.status,
      createdAt: trade.transactedAt,
    });
    expect(legacyIdOf(executed.quoteId)).toBe(quote.id);
    expect(sameDecimal(trade.referencedAmount, executed.referencedAmount)).toBe(true);
    expect(sameDecimal(trade.amount, executed.buyAmount)).toBe(true);
    const balances = (await v3.get<V3Balance[]>('/v3/fx/balances')).data;
    expect(Object.keys(body.data.balances).sort()).toEqual(balances.map((balance) => balance.currency).sort());
    for (const balance of balances)
      expect(sameDecimal(body.data.balances[balance.currency]!, balance.amount), balance.currency).toBe(true);
    const exposure = (await v3.get<{ creditLine: string; committedAmount: string }>('/v3/fx/exposure')).data;
    expect(sameDecimal(body.data.userCreditLimit, exposure.creditLine)).toBe(true);
    expect(sameDecimal(body.data.userCreditUsed, exposure.committedAmount)).toBe(true);
  });

  it('trades: every trade in the v1 trade record (tradingPair, tradeDirection, computedAmount, createdAtUtc, orderType MARKET, source)', async () => {
    const { body } = await client().trades({ limit: '50' });
    expectSuccessMessage(body);
    const trades = await v3.all<V3Trade>('/v3/fx/trades');
    expect(body.meta.pagination.total).toBe(trades.length);
    expect(body.data.map((trade) => trade.id)).toEqual(trades.map((trade) => legacyIdOf(trade.id)));
    expect(body.data.map((trade) => trade.id)).toContain(legacyIdOf(setup.trade.id));
    body.data.forEach((legacy, index) => expectTradeRecord(legacy, trades[index]!));
  });

  it('trade/{id}: the one trade in the v1 trade record', async () => {
    const { body } = await client().tradeById(legacyIdOf(setup.trade.id));
    expectSuccessMessage(body);
    expectTradeRecord(body.data, (await v3.get<V3Trade>(`/v3/fx/trades/${setup.trade.id}`)).data);
    expect(body.data).toMatchObject({ tradingPair: 'EUR/USD', tradeDirection: 'BUY', referencedUnit: 'EUR' });
  });

  it('deposits: completedAt null while pending and a timestamp once completed, a failed one as ERROR, FIAT or the chain as network', async () => {
    const { body } = await client().deposits({ limit: '50' });
    expectSuccessMessage(body);
    const deposits = await v3.all<V3Deposit>('/v3/fx/deposits');
    expect(body.meta.pagination.total).toBe(deposits.length);
    expect(body.data.map((deposit) => deposit.id)).toEqual(deposits.map((deposit) => legacyIdOf(deposit.id)));
    body.data.forEach((legacy, index) => {
      const deposit = deposits[index]!;
      expect(legacy).toEqual({
        id: legacyIdOf(deposit.id),
        orgId: key.file.orgId,
        currency: deposit.currency,
        amount: expect.any(String),
        status: deposit.status === 'FAILED' ? 'ERROR' : deposit.status,
        network: deposit.assetType === 'FIAT' ? 'FIAT' : deposit.network,
        transactionHash: deposit.transactionHash,
        comments: deposit.comments,
        referenceId: deposit.referenceId,
        createdAt: deposit.createdAt,
        completedAt: deposit.completedAt,
      });
      expect(sameDecimal(legacy.amount, deposit.amount), `${deposit.id} amount`).toBe(true);
    });
    const byId = (deposit: V3Deposit) => body.data.find((one) => one.id === legacyIdOf(deposit.id))!;
    expect(byId(setup.pending)).toMatchObject({ status: 'PENDING', completedAt: null, network: 'FIAT' });
    expect(byId(setup.completedFiat)).toMatchObject({
      status: 'COMPLETED',
      network: 'FIAT',
      referenceId: 'wire-0001',
      comments: 'opening balance',
    });
    expect(byId(setup.completedFiat).completedAt).toMatch(TIMESTAMP);
    expect(byId(setup.completedCoin)).toMatchObject({ status: 'COMPLETED', network: 'ETHEREUM', currency: 'USDC' });
    expect(byId(setup.completedCoin).completedAt).toMatch(TIMESTAMP);
    expect(byId(setup.failed)).toMatchObject({ status: 'ERROR', completedAt: null });
  });

  it('withdrawal_addresses: name, coin and network by name and stable UUID, status Verified, as v3 holds the accounts', async () => {
    const first = (await client().withdrawalAddresses({ limit: '50' })).body;
    expectSuccessMessage(first);
    const second = (await client().withdrawalAddresses({ limit: '50' })).body;
    const other = (await clients[generation === 'v1' ? 'v2' : 'v1'].withdrawalAddresses({ limit: '50' })).body;
    const accounts = (await v3.get<V3Account[]>('/v3/fx/withdrawal-accounts?assetType=STABLECOIN')).data;
    expect(first.meta.pagination.total).toBe(accounts.length);
    expect(first.data.map((address) => address.id)).toEqual(accounts.map((account) => legacyIdOf(account.id)));
    for (const account of accounts) {
      const legacy = first.data.find((one) => one.id === legacyIdOf(account.id))!;
      expect(legacy).toMatchObject({
        name: account.accountName,
        coinName: account.currency,
        coinNetworkName: account.network === 'ETHEREUM' ? 'Ethereum' : 'Polygon',
        address: account.address,
        status: 'Verified',
        verified: true,
        createdAt: account.createdAt,
        updatedAt: account.updatedAt,
        comments: account.comments,
      });
    }
    const find = (list: typeof first, account: V3Account) =>
      list.data.find((one) => one.id === legacyIdOf(account.id))!;
    const a = find(first, setup.walletA);
    expect(a).toMatchObject({
      name: 'ETH USDC Wallet',
      coinName: 'USDC',
      coinNetworkName: 'Ethereum',
      status: 'Verified',
    });
    // The same coin and network: the same ids, on every call and in both generations.
    for (const list of [first, second, other]) {
      for (const wallet of [setup.walletA, setup.walletB]) {
        expect(find(list, wallet).coinId).toBe(a.coinId);
        expect(find(list, wallet).coinNetworkId).toBe(a.coinNetworkId);
      }
    }
    // Another coin on the same network, the same coin on another network.
    expect(find(first, setup.tetherWallet).coinId).not.toBe(a.coinId);
    expect(find(first, setup.tetherWallet).coinNetworkId).toBe(a.coinNetworkId);
    expect(find(first, setup.polygonWallet)).toMatchObject({ coinId: a.coinId, coinNetworkName: 'Polygon' });
    expect(find(first, setup.polygonWallet).coinNetworkId).not.toBe(a.coinNetworkId);
  });

  it('fiat_withdrawal_addresses: the fiat account record with nickname, as v3 holds the account', async () => {
    const { body } = await client().fiatWithdrawalAddresses({ limit: '50' });
    expectSuccessMessage(body);
    const account = setup.fiatAccount;
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toEqual(
      expect.objectContaining({
        id: legacyIdOf(account.id),
        currency: 'USD',
        nickname: 'Operating account',
        accountName: account.accountName,
        accountNumber: account.accountNumber,
        bankName: account.bankName,
        routingNumber: account.routingNumber,
        swiftCode: null,
        transferType: 'FEDWIRE',
        status: 'active',
        verified: true,
        creatorId: legacyIdOf(account.creatorId),
        orgId: key.file.orgId,
        memo: account.memo,
        comments: account.comments,
        createdAt: account.createdAt,
        updatedAt: account.updatedAt,
      }),
    );
  });

  it('withdrawals: network FIAT for a fiat withdrawal and the chain for a stablecoin one, as v3 lists them', async () => {
    const { body } = await client().withdrawals({ limit: '50' });
    expectSuccessMessage(body);
    const withdrawals = await v3.all<V3Withdrawal>('/v3/fx/withdrawals');
    expect(body.meta.pagination.total).toBe(withdrawals.length);
    expect(body.data.map((withdrawal) => withdrawal.id)).toEqual(
      withdrawals.map((withdrawal) => legacyIdOf(withdrawal.id)),
    );
    body.data.forEach((legacy, index) => {
      const withdrawal = withdrawals[index]!;
      expect(legacy).toMatchObject({
        createdAt: withdrawal.createdAt,
        currency: withdrawal.currency,
        network: withdrawal.assetType === 'FIAT' ? 'FIAT' : withdrawal.network,
        status: withdrawal.status,
        transactionHash: withdrawal.transactionHash,
        withdrawalAddressId: legacyIdOf(withdrawal.withdrawalAccountId),
        comments: withdrawal.comments,
      });
      expect(sameDecimal(legacy.amount, withdrawal.withdrawalAmount)).toBe(true);
    });
    const byId = (withdrawal: V3Withdrawal) => body.data.find((one) => one.id === legacyIdOf(withdrawal.id))!;
    expect(byId(setup.fiatWithdrawal)).toMatchObject({
      network: 'FIAT',
      currency: 'USD',
      withdrawalAddressId: legacyIdOf(setup.fiatAccount.id),
    });
    expect(byId(setup.coinWithdrawal)).toMatchObject({
      network: 'ETHEREUM',
      currency: 'USDC',
      withdrawalAddressId: legacyIdOf(setup.walletA.id),
    });
  });

  it('the mode header is read in any case: x-app-mode sandbox works as SANDBOX does', async () => {
    const lowerCase = new LegacyClient({ baseUrl: h.gatewayUrl, generation, key: key.file, appMode: 'sandbox' });
    const { body } = await lowerCase.balances();
    expectSuccessMessage(body);
    expect(body.data.length).toBeGreaterThan(0);
  });

  it('withdrawal: a stablecoin withdrawal answers its withdrawal record, the one v3 now holds', async () => {
    const { body } = await client().withdrawal({
      amount: '3.25',
      currency: 'USDC',
      withdrawalAddressId: legacyIdOf(setup.walletB.id),
    });
    expectSuccessMessage(body);
    expect(body.data).toMatchObject({
      currency: 'USDC',
      network: 'ETHEREUM',
      withdrawalAddressId: legacyIdOf(setup.walletB.id),
    });
    expect(sameDecimal(body.data.amount, '3.25')).toBe(true);
    const held = (await v3.get<V3Withdrawal>(`/v3/fx/withdrawals/wtd_${body.data.id.replaceAll('-', '')}`)).data;
    expect(held).toMatchObject({
      currency: 'USDC',
      network: 'ETHEREUM',
      withdrawalAccountId: setup.walletB.id,
      status: body.data.status,
      createdAt: body.data.createdAt,
    });
    expect(sameDecimal(held.withdrawalAmount, body.data.amount)).toBe(true);
  });

  it('fiat_withdrawal: a fiat withdrawal answers its withdrawal record with network FIAT, the one v3 now holds', async () => {
    const { body } = await client().fiatWithdrawal({
      amount: '125.40',
      currency: 'USD',
      withdrawalAddressId: legacyIdOf(setup.fiatAccount.id),
    });
    expectSuccessMessage(body);
    expect(body.data).toMatchObject({
      currency: 'USD',
      network: 'FIAT',
      withdrawalAddressId: legacyIdOf(setup.fiatAccount.id),
    });
    expect(sameDecimal(body.data.amount, '125.40')).toBe(true);
    const held = (await v3.get<V3Withdrawal>(`/v3/fx/withdrawals/wtd_${body.data.id.replaceAll('-', '')}`)).data;
    expect(held).toMatchObject({
      currency: 'USD',
      assetType: 'FIAT',
      withdrawalAccountId: setup.fiatAccount.id,
      status: body.data.status,
      createdAt: body.data.createdAt,
    });
    expect(sameDecimal(held.withdrawalAmount, body.data.amount)).toBe(true);
  });
});
