/**
 * How the contract suite puts data in place and reads what v3 itself says about it: through the
 * core's public v3 API (its sandbox endpoints for deposits and account verification), signed
 * with the project's v3 signer. Only the setup and the cross-checks use v3; the operations under
 * test are called through the legacy client.
 */

import { expect } from 'vitest';

import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import type { LegacyHarness } from '../../../support/legacy-harness.js';
import { type Generation, LegacyApiError, LegacyClient } from './legacy-client.js';

export { FEDWIRE_ACCOUNT, SWIFT_ACCOUNT } from '../../../support/book-fixtures.js';

/** The v3 records the cross-checks read (the fields they compare). */
export interface V3Pair {
  readonly symbol: string;
  readonly baseCurrency: string;
  readonly quoteCurrency: string;
  readonly minAmount: string;
  readonly maxAmount: string;
}
export interface V3Balance {
  readonly id: string;
  readonly currency: string;
  readonly amount: string;
  readonly withdrawableAmount: string;
  readonly usdValue: string;
  readonly withdrawableUsdValue: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}
export interface V3Trade {
  readonly id: string;
  readonly quoteId: string;
  readonly buyCurrency: string;
  readonly sellCurrency: string;
  readonly buyAmount: string;
  readonly sellAmount: string;
  readonly referencedCurrency: string;
  readonly referencedAmount: string;
  readonly status: string;
  readonly source: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}
export interface V3Deposit {
  readonly id: string;
  readonly currency: string;
  readonly amount: string;
  readonly network: string;
  readonly assetType: string;
  readonly status: string;
  readonly transactionHash: string | null;
  readonly referenceId: string | null;
  readonly comments: string | null;
  readonly createdAt: string;
  readonly completedAt: string | null;
}
export interface V3Account {
  readonly id: string;
  readonly currency: string;
  readonly assetType: string;
  readonly accountName: string;
  readonly status: string;
  readonly verified: boolean;
  readonly transferType: string | null;
  readonly bankName: string | null;
  readonly accountNumber: string | null;
  readonly routingNumber: string | null;
  readonly swiftCode: string | null;
  readonly memo: string | null;
  readonly network: string | null;
  readonly address: string | null;
  readonly comments: string | null;
  readonly creatorId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}
export interface V3Withdrawal {
  readonly id: string;
  readonly currency: string;
  readonly withdrawalAmount: string;
  readonly status: string;
  readonly assetType: string;
  readonly network: string | null;
  readonly withdrawalAccountId: string;
  readonly transactionHash: string | null;
  readonly comments: string | null;
  readonly createdAt: string;
}

/** v3 over HTTP for one key: the setup's writes and the cross-checks' reads. */
export class V3Side {
  constructor(
    private readonly h: LegacyHarness,
    readonly key: LoadedKey,
  ) {}

  /** GET, expects 200, returns the whole body. */
  async get<T = unknown>(path: string): Promise<{ data: T } & Record<string, unknown>> {
    const response = await this.h.core.signed({ key: this.key, path });
    expect(response.status, `GET ${path}: ${response.text}`).toBe(200);
    return response.json<{ data: T } & Record<string, unknown>>();
  }

  /** POST with a fresh Idempotency-Key, expects 200, returns `data`. */
  async post<T = Record<string, unknown>>(path: string, body?: object): Promise<T> {
    const response = await this.h.core.post(this.key, path, body);
    expect(response.status, `POST ${path}: ${response.text}`).toBe(200);
    return response.json<{ data: T }>().data;
  }

  /** Every record of a cursor list, newest first. */
  async all<T>(path: string): Promise<T[]> {
    return (await this.get<T[]>(`${path}${path.includes('?') ? '&' : '?'}limit=100`)).data;
  }

  /** A sandbox deposit: completed at once unless it is told to wait. */
  deposit(body: {
    currency: string;
    amount: string;
    network?: string;
    completeAfterSeconds?: number;
    referenceId?: string;
    comments?: string;
  }): Promise<V3Deposit> {
    return this.post<V3Deposit>('/v3/fx/sandbox/deposits', body);
  }

  /** Registers a withdrawal account and, unless told otherwise, verifies it through the sandbox. */
  async account(body: Record<string, unknown>, options: { verify?: boolean } = {}): Promise<V3Account> {
    const account = await this.post<V3Account>('/v3/fx/withdrawal-accounts', body);
    return options.verify === false
      ? account
      : this.post<V3Account>(`/v3/fx/sandbox/withdrawal-accounts/${account.id}/verify`);
  }

  /** The sandbox's switch: status, verified, withdrawalsEnabled. */
  setAccount(id: string, changes: { status?: string; verified?: boolean }): Promise<V3Account> {
    return this.post<V3Account>(`/v3/fx/sandbox/withdrawal-accounts/${id}`, changes);
  }

  async trade(request: {
    buyCurrency: string;
    sellCurrency: string;
    amount: string;
    amountCurrency: string;
  }): Promise<V3Trade> {
    const quote = await this.post<{ id: string }>('/v3/fx/quotes', request);
    return this.post<V3Trade>('/v3/fx/trades', { quoteId: quote.id });
  }

  withdraw(body: { withdrawalAccountId: string; withdrawalAmount: string; currency: string }): Promise<V3Withdrawal> {
    return this.post<V3Withdrawal>('/v3/fx/withdrawals', body);
  }
}

/** EIP-55 checksummed addresses (the standard's own examples). */
export const EVM_ADDRESSES = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
] as const;

export function stablecoinAccount(currency: string, network: string, accountName: string, address: string) {
  return { currency, assetType: 'STABLECOIN', accountName, network, address };
}

/** The legacy client of each generation for one key file, pointed at the gateway. */
export function legacyClients(h: LegacyHarness, key: LoadedKey): Record<Generation, LegacyClient> {
  return {
    v1: new LegacyClient({ baseUrl: h.gatewayUrl, generation: 'v1', key: key.file }),
    v2: new LegacyClient({ baseUrl: h.gatewayUrl, generation: 'v2', key: key.file }),
  };
}

/** Awaits an operation the test expects the client to count as an error, and returns that error. */
export async function refusal(
  promise: Promise<unknown>,
): Promise<{ status: number; body: unknown; headers: Readonly<Record<string, string>> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LegacyApiError)
      return { status: error.answer.status, body: error.body, headers: error.answer.headers };
    throw error;
  }
  throw new Error('the operation succeeded where an error answer was expected');
}
