/**
 * v1 writes and the Idempotency-Key, as the legacy contract has them: v1 never had idempotency,
 * so a v1 write without a key is a new write every time (two identical withdrawals are two
 * withdrawals), while a v1 client that does send a key (the public client sends one on every
 * POST) gets v2's behaviour: the same key with the same body replays the first answer, marked
 * `Idempotency-Replayed: true`, and moves money once in v3; the same key with another body is
 * the 422 IDEMPOTENCY_MISMATCH.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { LegacyHarness } from '../../../support/legacy-harness.js';
import { type LegacyClient, legacyIdOf } from './legacy-client.js';
import {
  EVM_ADDRESSES,
  FEDWIRE_ACCOUNT,
  legacyClients,
  refusal,
  stablecoinAccount,
  V3Side,
  type V3Trade,
  type V3Withdrawal,
} from './v3-setup.js';

let h: LegacyHarness;
let key: LoadedKey;
let v3: V3Side;
let v1: LegacyClient;
let fiatAddress: string;
let coinAddress: string;

beforeAll(async () => {
  h = await LegacyHarness.start();
  key = await h.createKey();
  v3 = new V3Side(h, key);
  v1 = legacyClients(h, key).v1;
  await v3.deposit({ currency: 'USD', amount: '50000.00' });
  await v3.deposit({ currency: 'USDC', amount: '5000', network: 'ETHEREUM' });
  fiatAddress = legacyIdOf((await v3.account(FEDWIRE_ACCOUNT)).id);
  coinAddress = legacyIdOf(
    (await v3.account(stablecoinAccount('USDC', 'ETHEREUM', 'ETH USDC Wallet', EVM_ADDRESSES[0]))).id,
  );
});
afterAll(async () => {
  await h?.close();
});

const v3Withdrawals = () => v3.all<V3Withdrawal>('/v3/fx/withdrawals');
const v3Trades = () => v3.all<V3Trade>('/v3/fx/trades');

const WITHDRAWALS = [
  {
    operation: 'withdrawal',
    send: (key: string | null, amount: string) =>
      v1.withdrawal({ amount, currency: 'USDC', withdrawalAddressId: coinAddress }, { idempotencyKey: key }),
  },
  {
    operation: 'fiat_withdrawal',
    send: (key: string | null, amount: string) =>
      v1.fiatWithdrawal({ amount, currency: 'USD', withdrawalAddressId: fiatAddress }, { idempotencyKey: key }),
  },
] as const;

describe.each(WITHDRAWALS)('v1 $operation', ({ send }) => {
  it('the same key and body replays the first answer with Idempotency-Replayed: true; one withdrawal in v3', async () => {
    const before = (await v3Withdrawals()).length;
    const idempotencyKey = randomUUID();
    const first = await send(idempotencyKey, '7.00');
    const second = await send(idempotencyKey, '7.00');
    expect(first.headers['idempotency-replayed']).toBeUndefined();
    expect(second.headers['idempotency-replayed']).toBe('true');
    expect(second.text).toBe(first.text);
    const after = await v3Withdrawals();
    expect(after).toHaveLength(before + 1);
    expect(legacyIdOf(after[0]!.id)).toBe(first.body.data.id);
  });

  it('the same key with another body is 422 IDEMPOTENCY_MISMATCH and moves nothing', async () => {
    const idempotencyKey = randomUUID();
    await send(idempotencyKey, '8.00');
    const before = (await v3Withdrawals()).length;
    const mismatch = await refusal(send(idempotencyKey, '9.00'));
    expect(mismatch.status).toBe(422);
    expect(mismatch.body).toMatchObject({
      status: 'error',
      message: expect.any(String),
      error: { code: 'IDEMPOTENCY_MISMATCH', details: expect.any(String) },
    });
    expect(await v3Withdrawals()).toHaveLength(before);
  });

  it('without a key, two identical requests are two withdrawals', async () => {
    const before = (await v3Withdrawals()).length;
    const first = await send(null, '6.00');
    const second = await send(null, '6.00');
    expect(second.body.data.id).not.toBe(first.body.data.id);
    expect(second.headers['idempotency-replayed']).toBeUndefined();
    const ids = (await v3Withdrawals()).map((withdrawal) => legacyIdOf(withdrawal.id));
    expect(ids).toHaveLength(before + 2);
    expect(ids).toEqual(expect.arrayContaining([first.body.data.id, second.body.data.id]));
  });
});

describe('v1 generate_quote and trade', () => {
  it('a quote with a key replays the same quote; without one each request is a new quote', async () => {
    const request = { amount: '20', buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' } as const;
    const idempotencyKey = randomUUID();
    const first = await v1.generateQuote(request, { idempotencyKey });
    const second = await v1.generateQuote(request, { idempotencyKey });
    expect(second.headers['idempotency-replayed']).toBe('true');
    expect(second.body.data.quote.id).toBe(first.body.data.quote.id);
    const fresh = await v1.generateQuote(request, { idempotencyKey: null });
    const another = await v1.generateQuote(request, { idempotencyKey: null });
    expect(new Set([first.body.data.quote.id, fresh.body.data.quote.id, another.body.data.quote.id]).size).toBe(3);
  });

  it('a trade with a key replays its answer; one trade in v3', async () => {
    const quote = (await v1.generateQuote({ amount: '15', buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' })).body.data
      .quote;
    const before = (await v3Trades()).length;
    const idempotencyKey = randomUUID();
    const first = await v1.trade(quote.id, { idempotencyKey });
    const second = await v1.trade(quote.id, { idempotencyKey });
    expect(second.headers['idempotency-replayed']).toBe('true');
    expect(second.text).toBe(first.text);
    const after = await v3Trades();
    expect(after).toHaveLength(before + 1);
    expect(legacyIdOf(after[0]!.id)).toBe(first.body.data.trade.id);
  });
});
