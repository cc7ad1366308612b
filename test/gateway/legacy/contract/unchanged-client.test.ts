/**
 * A legacy integration runs unchanged against fxgate: on each generation, the calls a real
 * client makes, in the order it makes them and reading each answer the way it reads it, with no
 * workaround anywhere. It quotes, trades the quote by the id the quote answer gave, finds the
 * trade in its trade list, reads balances and markets, lists both kinds of withdrawal address
 * (with the `limit=50` it always sends), withdraws to a stablecoin address and to a bank account
 * taken from those lists, and finds both withdrawals in its withdrawal list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LegacyHarness } from '../../../support/legacy-harness.js';
import { GENERATIONS, LegacyClient, sameDecimal } from './legacy-client.js';
import { EVM_ADDRESSES, FEDWIRE_ACCOUNT, stablecoinAccount, V3Side } from './v3-setup.js';

let h: LegacyHarness;

beforeAll(async () => {
  h = await LegacyHarness.start();
});
afterAll(async () => {
  await h?.close();
});

describe.each(GENERATIONS)('%s', (generation) => {
  it('quote, trade, trades, balances, markets, both address lists, both withdrawals, the withdrawal list', async () => {
    // An organisation that has been funded and has verified its withdrawal accounts.
    const key = await h.createKey();
    const v3 = new V3Side(h, key);
    await v3.deposit({ currency: 'USD', amount: '20000.00' });
    await v3.deposit({ currency: 'USDC', amount: '1000', network: 'ETHEREUM' });
    await v3.account(FEDWIRE_ACCOUNT);
    await v3.account(stablecoinAccount('USDC', 'ETHEREUM', 'ETH USDC Wallet', EVM_ADDRESSES[0]));

    const client = new LegacyClient({ baseUrl: h.gatewayUrl, generation, key: key.file });

    const quote = await client.generateQuote({
      amount: '120',
      buy: 'EUR',
      sell: 'USD',
      referencedUnit: 'EUR',
      quoteForSeconds: 60,
    });
    const quoteId = quote.body.data.quote.id;

    const trade = await client.trade(quoteId);
    expect(trade.body.data.trade.quoteId).toBe(quoteId);
    const tradeId = trade.body.data.trade.id;

    const trades = await client.trades();
    expect(trades.body.data.map((one) => one.id)).toContain(tradeId);

    const balances = await client.balances();
    const eur = balances.body.data.find((balance) => balance.currency === 'EUR');
    expect(eur).toBeDefined();
    expect(sameDecimal(eur!.amount, '120')).toBe(true);

    const markets = await client.availableMarkets();
    expect(markets.body.data.tradingPairs).toContainEqual({ buy: 'EUR', sell: 'USD' });

    const addresses = await client.withdrawalAddresses({ limit: '50' });
    const fiatAddresses = await client.fiatWithdrawalAddresses({ limit: '50' });
    const wallet = addresses.body.data[0]!;
    const bank = fiatAddresses.body.data[0]!;

    const coinWithdrawal = await client.withdrawal({
      amount: '10',
      currency: wallet.coinName,
      withdrawalAddressId: wallet.id,
    });
    const fiatWithdrawal = await client.fiatWithdrawal({
      amount: '25.00',
      currency: bank.currency,
      withdrawalAddressId: bank.id,
    });

    const withdrawals = await client.withdrawals();
    expect(withdrawals.body.data.map((one) => one.id)).toEqual(
      expect.arrayContaining([coinWithdrawal.body.data.id, fiatWithdrawal.body.data.id]),
    );
    expect(withdrawals.body.meta.pagination.total).toBe(2);
  });
});
