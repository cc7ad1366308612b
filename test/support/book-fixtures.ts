/**
 * Fixtures that put a book into a state the tests need, through the same code paths as the
 * service: money arriving as the ledger records a deposit, and a Redis that forgot its
 * idempotency records (a failover), so that the database's own keys are what stops duplicates.
 */
import { randomUUID } from 'node:crypto';

import { Redis } from 'ioredis';
import { expect } from 'vitest';

import { RedisStore } from '../../src/cli/store/redis-store.js';
import { postMovement } from '../../src/core/ledger/ledger.js';
import type { Mode } from '../../src/lib/auth/credential-vocabulary.js';
import type { Database } from '../../src/lib/db/database.js';
import type { LoadedKey } from '../../src/lib/keys/key-file.js';
import { parseDecimal } from '../../src/lib/money.js';
import { testServices } from './services.js';
import { testKeyPrefix } from './test-run.js';
import { V3Harness } from './v3-harness.js';

export interface TestDeposit {
  readonly orgId: string;
  readonly environment: Mode;
  readonly currency: string;
  /** Decimal text. */
  readonly amount: string;
  readonly at?: Date;
}

/** Credits the book as a completed deposit does: rail in transit → client, one balanced movement. */
export async function recordTestDeposit(db: Database, deposit: TestDeposit): Promise<void> {
  const value = parseDecimal(deposit.amount);
  await db.transaction((tx) =>
    postMovement(tx, {
      orgId: deposit.orgId,
      environment: deposit.environment,
      kind: 'deposit',
      referenceId: `test-deposit-${randomUUID()}`,
      at: deposit.at ?? new Date(),
      postings: [
        { account: 'rail_in_transit', currency: deposit.currency, amount: value.negated() },
        { account: 'client', currency: deposit.currency, amount: value },
      ],
    }),
  );
}

/**
 * A Redis store under its own key prefix, with a second connection that can delete the store's
 * idempotency records while the service runs.
 */
export class ForgetfulRedis {
  readonly prefix = testKeyPrefix('lost');
  /**
   * A generous reply timeout: beside PGlite, whose queries run on the event loop, a reply can sit
   * unread for a while when 100 requests run at once, and a busy CI machine stretches that; the
   * store's own timeout behaviour is tested in test/cli/store/redis-store.test.ts.
   */
  readonly store = new RedisStore({ url: testServices().redisUrl, keyPrefix: this.prefix, commandTimeoutMs: 5_000 });
  private readonly admin = new Redis(testServices().redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });

  async connect(): Promise<void> {
    await this.admin.connect();
  }

  /** Deletes every idempotency record of the store; returns how many. */
  async loseIdempotencyRecords(): Promise<number> {
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await this.admin.scan(cursor, 'MATCH', `${this.prefix}idem:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await this.admin.del(...keys);
    } while (cursor !== '0');
    return deleted;
  }

  /** Closes the admin connection; the store itself is closed by the harness that uses it. */
  async close(): Promise<void> {
    await this.admin.quit();
  }
}

export interface TradeRequest {
  readonly buyCurrency: string;
  readonly sellCurrency: string;
  readonly amount: string;
  readonly amountCurrency: string;
}

/** POSTs with a fresh Idempotency-Key, expects 200, and returns `data`. */
export async function postData(
  harness: V3Harness,
  key: LoadedKey,
  path: string,
  body: object,
): Promise<Record<string, string>> {
  const response = await harness.signed({
    key,
    method: 'POST',
    path,
    body: JSON.stringify(body),
    idempotencyKey: randomUUID(),
  });
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: Record<string, string> }>().data;
}

/** POSTs with no body (the sandbox drivers take none) and a fresh Idempotency-Key; expects 200. */
export async function postEmpty(harness: V3Harness, key: LoadedKey, path: string): Promise<Record<string, string>> {
  const response = await harness.signed({ key, method: 'POST', path, idempotencyKey: randomUUID() });
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: Record<string, string> }>().data;
}

/** Quotes and executes one trade over HTTP; returns the trade record. */
export async function quoteAndTrade(
  harness: V3Harness,
  key: LoadedKey,
  request: TradeRequest,
): Promise<Record<string, string>> {
  const quote = await postData(harness, key, '/v3/fx/quotes', request);
  return postData(harness, key, '/v3/fx/trades', { quoteId: quote.id });
}

/** A valid US wire account. */
export const FEDWIRE_ACCOUNT = {
  currency: 'USD',
  assetType: 'FIAT',
  accountName: 'Operating account',
  transferType: 'FEDWIRE',
  bankName: 'JPMorgan Chase Bank, N.A.',
  accountNumber: '000123456789',
  routingNumber: '021000021',
} as const;

/** A valid SWIFT account (the standard German IBAN example). */
export const SWIFT_ACCOUNT = {
  currency: 'EUR',
  assetType: 'FIAT',
  accountName: 'Euro account',
  transferType: 'SWIFT',
  bankName: 'Deutsche Bank',
  accountNumber: 'DE89370400440532013000',
  swiftCode: 'DEUTDEFF',
} as const;

/**
 * A harness for suites that send a hundred requests at once: its store is `redis`'s (so they can
 * make it forget), keys stay cached for the run, and the rate limits are out of the way.
 */
export async function startParallelHarness(redis: ForgetfulRedis): Promise<V3Harness> {
  const harness = await V3Harness.start({
    store: redis.store,
    keyCacheTtlMs: 60_000,
    core: { rateLimits: { reads: 100_000, writes: 100_000 } },
  });
  await redis.connect();
  return harness;
}
