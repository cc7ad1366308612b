/**
 * The core and the gateway on a Redis that fails over (docs/operations.md#redis-sentinel): a
 * primary, a replica and a Sentinel as real processes (test/support/throwaway-sentinel.ts), the
 * core and the gateway each with its own connection through Sentinel, as two processes have.
 *
 * - The primary is SIGKILLed under a stream of v3 and v2 writes and reads sent to the one base
 *   URL clients use: writes answer their generation's 503 until Sentinel promotes the replica and
 *   then succeed again, without a restart; reads answer 200 throughout.
 * - A v2 trade and a v3 trade whose idempotency records and nonces the old primary had not
 *   replicated (replication cut on purpose before them), then the failover, then the retries with
 *   the same Idempotency-Keys: one trade each, and the spent tokens stay refused.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { RedisSentinelEndpoint } from '../../../../src/cli/store/redis-connection.js';
import { NONCE_EPOCH_KEY, RedisStore } from '../../../../src/cli/store/redis-store.js';
import { V3RequestSigner } from '../../../../src/lib/auth/request-signer.js';
import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { postData, recordTestDeposit } from '../../../support/book-fixtures.js';
import { legacyToken } from '../../../support/independent-signing.js';
import { idemKey, LegacyHarness } from '../../../support/legacy-harness.js';
import { ThrowawaySentinelSet } from '../../../support/throwaway-sentinel.js';
import { expectV3Error } from '../../../support/v3-assertions.js';
import { type SendOptions, TEST_ISSUER, type TestResponse } from '../../../support/v3-harness.js';

const PASSWORD = 'data-password';
const SENTINEL_PASSWORD = 'sentinel-password';
const AUTH_MESSAGE = 'The authorization key provided is either invalid or expired, please try again';
const SIGNED_BEFORE_RESET = 'The bearer token was signed before the replay store was reset; sign a new one.';

/** Room for a Sentinel that a busy machine puts into TILT (30 s) before it fails over. */
const FAILOVER_TEST_TIMEOUT_MS = 90_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A deployment's two processes on one Sentinel-watched Redis: the core's and the gateway's connections. */
async function startDeployment(set: ThrowawaySentinelSet, keyPrefix: string): Promise<LegacyHarness> {
  const endpoint: RedisSentinelEndpoint = {
    sentinels: set.sentinels,
    name: set.masterName,
    password: PASSWORD,
    sentinelPassword: SENTINEL_PASSWORD,
  };
  const coreStore = new RedisStore({ sentinel: endpoint, keyPrefix });
  const gatewayStore = new RedisStore({ sentinel: endpoint, keyPrefix });
  await Promise.all([coreStore.nonceEpoch(), gatewayStore.nonceEpoch()]);
  const harness = await LegacyHarness.start({ driver: 'postgres', store: coreStore, gatewayStore });
  const close = harness.close.bind(harness);
  // The core's store is closed with the core; the gateway's is the test's to close.
  harness.close = async () => {
    try {
      await close();
    } finally {
      await gatewayStore.close();
    }
  };
  return harness;
}

/** A signed v3 request as a client sends it, to the gateway's base URL; `signedAt` is when its token was made. */
async function v3Request(
  key: LoadedKey,
  method: 'GET' | 'POST',
  path: string,
  body?: object,
  idempotencyKey: string | undefined = method === 'POST' ? randomUUID() : undefined,
): Promise<SendOptions & { signedAt: number }> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const signedAt = Date.now();
  const headers = await new V3RequestSigner(key, { issuer: TEST_ISSUER }).headers({
    method,
    pathAndQuery: path,
    body: text,
    idempotencyKey,
  });
  return {
    method,
    path,
    body: text,
    headers: {
      ...headers,
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      ...(text === undefined ? {} : { 'content-type': 'application/json' }),
    },
    signedAt,
  };
}

/** A v2 request with a fresh legacy token; `signedAt` is when the token was made. */
function v2Request(
  key: LoadedKey,
  method: 'GET' | 'POST',
  path: string,
  body?: object,
  idempotencyKey?: string,
): SendOptions & { signedAt: number } {
  const signedAt = Date.now();
  return {
    method,
    path: `/v2/brokerage/${key.file.orgId}/${path}`,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: {
      authorization: `Bearer ${legacyToken(key)}`,
      'x-app-mode': 'SANDBOX',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
    },
    signedAt,
  };
}

interface Exchange {
  readonly signedAt: number;
  readonly answeredAt: number;
  readonly response: TestResponse;
}

type StreamName = 'v3 write' | 'v2 write' | 'v3 read' | 'v2 read';

describe('a primary killed under a stream of writes and reads', () => {
  let set: ThrowawaySentinelSet;
  let h: LegacyHarness;
  let key: LoadedKey;
  const keyPrefix = `failover-${randomUUID().slice(0, 8)}:`;

  beforeAll(async () => {
    set = await ThrowawaySentinelSet.start({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD });
    h = await startDeployment(set, keyPrefix);
    key = await h.createKey();
    await recordTestDeposit(h.core.db, {
      orgId: key.file.orgId,
      environment: 'sandbox',
      currency: 'USD',
      amount: '100000.00',
    });
  });
  afterAll(async () => {
    await h?.close();
    await set?.stop();
  });

  it(
    'writes answer their generation’s 503 until the replica is promoted and then succeed by themselves; reads go on',
    { timeout: FAILOVER_TEST_TIMEOUT_MS },
    async () => {
      const quote = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10.00', amountCurrency: 'EUR' };
      const streams: Record<StreamName, () => Promise<SendOptions & { signedAt: number }>> = {
        'v3 write': () => v3Request(key, 'POST', '/v3/fx/quotes', quote),
        'v2 write': async () =>
          v2Request(
            key,
            'POST',
            'generate_quote',
            { amount: 10, buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' },
            idemKey(),
          ),
        'v3 read': () => v3Request(key, 'GET', '/v3/fx/balances'),
        'v2 read': async () => v2Request(key, 'GET', 'trades?page=1&limit=10'),
      };
      const exchanges = new Map<StreamName, Exchange[]>();
      let running = true;
      const loops = Object.entries(streams).map(async ([name, make]) => {
        const log: Exchange[] = [];
        exchanges.set(name as StreamName, log);
        while (running) {
          const request = await make();
          const response = await h.send(request);
          log.push({ signedAt: request.signedAt, answeredAt: Date.now(), response });
          await sleep(20);
        }
      });

      let killedAt = 0;
      let promotedPort = 0;
      try {
        await sleep(1_000);
        const formerPort = await set.killPrimary();
        // From here on no request can reach the old primary; one sent just before may have.
        killedAt = set.killSentAt;
        promotedPort = await set.waitForPromotion(formerPort);
        // Until every write stream has succeeded ten times in a row after the kill.
        const deadline = Date.now() + 20_000;
        for (;;) {
          const recovered = (['v3 write', 'v2 write'] as const).every((name) => {
            const recent = exchanges.get(name)!.slice(-10);
            return recent.length === 10 && recent.every((e) => e.signedAt > killedAt && e.response.status === 200);
          });
          if (recovered) break;
          if (Date.now() > deadline) throw new Error('the writes did not recover within 20 s of the promotion');
          await sleep(100);
        }
      } finally {
        running = false;
        await Promise.all(loops);
      }

      // The marker the new primary made: a token signed in an earlier second may be refused, once.
      const marker = Number(await set.onNode(promotedPort, (client) => client.get(`${keyPrefix}${NONCE_EPOCH_KEY}`)));
      expect(marker).toBeGreaterThanOrEqual(killedAt);
      const signedBeforeMarker = (e: Exchange): boolean => Math.floor(e.signedAt / 1000) < Math.floor(marker / 1000);

      /** A write refused for the failover: the generation's 503, or the 401 of a token signed before the new marker. */
      const expectRefused = (name: 'v3 write' | 'v2 write', e: Exchange): void => {
        if (e.response.status === 401) {
          // Signed before the new primary's marker and checked after it: sign again.
          expect(signedBeforeMarker(e), `${name}: a 401 for a token signed after the marker`).toBe(true);
          if (name === 'v3 write') expect(e.response.json()).toMatchObject({ error: { message: SIGNED_BEFORE_RESET } });
          else expect(e.response.json()).toEqual({ status: 'error', message: AUTH_MESSAGE });
        } else if (name === 'v3 write') {
          expectV3Error(e.response, 'IDEMPOTENCY_UNAVAILABLE', { details: {} });
        } else {
          expect(e.response.status, e.response.text).toBe(503);
          expect(e.response.json()).toMatchObject({
            status: 'error',
            error: { code: 'IDEMPOTENCY_SERVICE_UNAVAILABLE' },
          });
        }
      };

      const windows: string[] = [];
      for (const name of ['v3 write', 'v2 write'] as const) {
        const log = exchanges.get(name)!;
        expect(
          log.filter((e) => e.answeredAt < killedAt && e.response.status !== 200).map((e) => e.response.text),
          `${name}: answered before the kill`,
        ).toEqual([]);
        // Sent before the kill and answered after it: done on the old primary, or refused.
        for (const e of log.filter((e) => e.signedAt < killedAt && e.answeredAt >= killedAt)) {
          if (e.response.status !== 200) expectRefused(name, e);
        }
        const after = log.filter((e) => e.signedAt >= killedAt);
        const firstOk = after.findIndex((e) => e.response.status === 200);
        expect(firstOk, `${name}: writes refused during the failover`).toBeGreaterThan(0);
        for (const e of after.slice(0, firstOk)) expectRefused(name, e);
        // Once a write succeeded on the new primary, every later one did: no flapping.
        expect(after.slice(firstOk).map((e) => e.response.status)).toEqual(after.slice(firstOk).map(() => 200));
        windows.push(`${name}: ${((after[firstOk]!.answeredAt - killedAt) / 1000).toFixed(1)} s`);
      }
      for (const name of ['v3 read', 'v2 read'] as const) {
        const log = exchanges.get(name)!;
        // A read's token is claimed too: one signed before the new marker and checked after it is refused.
        const refused = log.filter(
          (e) => e.response.status !== 200 && !(e.response.status === 401 && signedBeforeMarker(e)),
        );
        expect(
          refused.map((e) => `${e.response.status} ${e.response.text.slice(0, 200)}`),
          name,
        ).toEqual([]);
        for (const e of log.filter((e) => e.response.status === 401)) {
          if (name === 'v3 read') expect(e.response.json()).toMatchObject({ error: { message: SIGNED_BEFORE_RESET } });
          else expect(e.response.json()).toEqual({ status: 'error', message: AUTH_MESSAGE });
        }
        expect(log.filter((e) => e.answeredAt > killedAt && e.answeredAt < killedAt + 2_000).length).toBeGreaterThan(0);
        const slowest = Math.max(...log.map((e) => e.answeredAt - e.signedAt));
        const reSign = log.filter((e) => e.response.status === 401).length;
        windows.push(`${name}: every answer 200 but ${reSign} to re-sign, slowest ${slowest} ms`);
      }
      process.stdout.write(
        `Redis failover, from SIGKILL of the primary to the first write that succeeded:\n  ${windows.join('\n  ')}\n`,
      );
    },
  );
});

describe('writes the old primary had not replicated, retried after the failover', () => {
  let set: ThrowawaySentinelSet;
  let h: LegacyHarness;
  let key: LoadedKey;
  const keyPrefix = `failover-${randomUUID().slice(0, 8)}:`;

  beforeAll(async () => {
    set = await ThrowawaySentinelSet.start({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD });
    h = await startDeployment(set, keyPrefix);
    key = await h.createKey();
    await recordTestDeposit(h.core.db, {
      orgId: key.file.orgId,
      environment: 'sandbox',
      currency: 'USD',
      amount: '10000.00',
    });
  });
  afterAll(async () => {
    await h?.close();
    await set?.stop();
  });

  /** Keys under the deployment's prefix on a data node. */
  async function keysOn(port: number): Promise<Set<string>> {
    return set.onNode(port, async (client) => new Set(await client.keys(`${keyPrefix}*`)));
  }

  async function tradeIds(): Promise<string[]> {
    const { rows } = await h.core.db.query<{ id: string }>('SELECT id FROM trades WHERE org_id = $1 ORDER BY id', [
      key.file.orgId,
    ]);
    return rows.map((row) => row.id);
  }

  it(
    'moves money once for each: the retries with the same Idempotency-Key find the trades, and the spent tokens stay refused',
    { timeout: FAILOVER_TEST_TIMEOUT_MS },
    async () => {
      // Quotes made and replicated while all is well.
      const v2Quote = await h.send(
        v2Request(
          key,
          'POST',
          'generate_quote',
          { amount: 10, buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' },
          idemKey(),
        ),
      );
      expect(v2Quote.status, v2Quote.text).toBe(200);
      const v2QuoteId = v2Quote.json<{ data: { quote: { id: string } } }>().data.quote.id;
      const v3Quote = await postData(h.core, key, '/v3/fx/quotes', {
        buyCurrency: 'EUR',
        sellCurrency: 'USD',
        amount: '20.00',
        amountCurrency: 'EUR',
      });
      await set.waitForReplication();
      await set.cutReplication();
      const formerPort = await set.primaryPort();
      const replicaPort = set.other(formerPort).port;
      const onReplicaBefore = await keysOn(replicaPort);

      // The two trades, on the old primary only.
      const v2Key = idemKey();
      const v2Trade = v2Request(key, 'POST', 'trade', { quoteId: v2QuoteId }, v2Key);
      const v2First = await h.send(v2Trade);
      expect(v2First.status, v2First.text).toBe(200);
      const v2TradeId = v2First.json<{ data: { trade: { id: string } } }>().data.trade.id;
      const v3Key = randomUUID();
      const v3Trade = await v3Request(key, 'POST', '/v3/fx/trades', { quoteId: v3Quote.id }, v3Key);
      const v3First = await h.send(v3Trade);
      expect(v3First.status, v3First.text).toBe(200);
      const v3TradeId = v3First.json<{ data: { id: string } }>().data.id;
      const trades = await tradeIds();
      expect(trades).toHaveLength(2);

      // What the old primary had and the replica has not: both trades' records and their nonces.
      const unreplicated = [...(await keysOn(formerPort))].filter((name) => !onReplicaBefore.has(name));
      expect(unreplicated.some((name) => name.startsWith(`${keyPrefix}lidem:`) && name.endsWith(`:${v2Key}`))).toBe(
        true,
      );
      expect(unreplicated.some((name) => name.startsWith(`${keyPrefix}idem:`) && name.includes(':fxgw2.'))).toBe(true);
      expect(unreplicated.some((name) => name.startsWith(`${keyPrefix}idem:`) && name.endsWith(`:${v3Key}`))).toBe(
        true,
      );
      expect(unreplicated.filter((name) => name.startsWith(`${keyPrefix}nonce:`)).length).toBeGreaterThanOrEqual(2);
      const onReplica = await keysOn(replicaPort);
      expect(unreplicated.filter((name) => onReplica.has(name))).toEqual([]);

      // The tokens' second has passed before the failover: the residual window is not what is tested.
      await sleep((Math.floor(Math.max(v2Trade.signedAt, v3Trade.signedAt) / 1000) + 1) * 1000 - Date.now());
      await set.killPrimary();
      expect(await set.waitForPromotion(formerPort)).toBe(replicaPort);

      // The retries, with new tokens and the same keys: each finds its trade; none is made. A client
      // retries a 503, and signs again after the 401 of a token signed before the new marker.
      const retryUntilUp = async (make: () => Promise<SendOptions>): Promise<TestResponse> => {
        for (let attempt = 0; ; attempt++) {
          const response = await h.send(await make());
          if ((response.status !== 503 && response.status !== 401) || attempt >= 100) return response;
          await sleep(100);
        }
      };
      const v2Retry = await retryUntilUp(async () => v2Request(key, 'POST', 'trade', { quoteId: v2QuoteId }, v2Key));
      expect(v2Retry.status, v2Retry.text).toBe(200);
      expect(v2Retry.json<{ data: { trade: { id: string } } }>().data.trade.id).toBe(v2TradeId);
      const v3Retry = await retryUntilUp(() => v3Request(key, 'POST', '/v3/fx/trades', { quoteId: v3Quote.id }, v3Key));
      expect(v3Retry.status, v3Retry.text).toBe(200);
      expect(v3Retry.json<{ data: { id: string } }>().data.id).toBe(v3TradeId);
      expect(await tradeIds()).toEqual(trades);

      // The first requests again, tokens and all: their nonces were lost with the old primary, and
      // the marker made on the new one refuses them.
      const v2Replay = await h.send(v2Trade);
      expect(v2Replay.status, v2Replay.text).toBe(401);
      expect(v2Replay.json()).toEqual({ status: 'error', message: AUTH_MESSAGE });
      const v3Replay = await h.send(v3Trade);
      expect(v3Replay.status, v3Replay.text).toBe(401);
      expect(v3Replay.json()).toMatchObject({ error: { code: 'AUTH_TOKEN_INVALID', message: SIGNED_BEFORE_RESET } });
      expect(await tradeIds()).toEqual(trades);

      // One ledger movement a trade.
      const { rows } = await h.core.db.query<{ count: string }>(
        `SELECT count(*)::text AS count FROM ledger_transactions WHERE org_id = $1 AND kind = 'trade'`,
        [key.file.orgId],
      );
      expect(rows[0]?.count).toBe('2');
    },
  );
});
