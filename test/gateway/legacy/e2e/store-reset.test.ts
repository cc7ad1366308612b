/**
 * Single use survives the loss of the nonce store (docs/contract.md#auth-tokens-single-use): a
 * token used once, then the store emptied, then the same token again is refused on v1, v2 and
 * v3, and makes no second withdrawal; a token signed after the loss works at once.
 *
 * Two losses, each on the back end it happens to: a Redis emptied under the running core and
 * gateway (FLUSHDB on the test's own redis-server, as a restart without persistence leaves it),
 * and `fxgate all` on the embedded defaults restarted on its data folder, with a new in-process
 * store. Every request goes to the one base URL a client uses: v1 and v2 to the gateway, v3
 * through its passthrough to the core, which claims the v3 nonce in the same store.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RedisStore } from '../../../../src/cli/store/redis-store.js';
import { V3RequestSigner } from '../../../../src/lib/auth/request-signer.js';
import { idToLegacyUuid } from '../../../../src/lib/ids.js';
import { type LoadedKey, readKeyFile } from '../../../../src/lib/keys/key-file.js';
import { startFxgate, stopInProcessServers } from '../../../cli/in-process-cli.js';
import { FEDWIRE_ACCOUNT, postData, postEmpty, recordTestDeposit } from '../../../support/book-fixtures.js';
import { legacyToken } from '../../../support/independent-signing.js';
import { LegacyHarness } from '../../../support/legacy-harness.js';
import type { ThrowawayServer } from '../../../support/local-processes.js';
import { startThrowawayRedis } from '../../../support/throwaway-redis.js';
import { type SendOptions, sendTo, TEST_ISSUER, type TestResponse } from '../../../support/v3-harness.js';

const AUTH_MESSAGE = 'The authorization key provided is either invalid or expired, please try again';
const SIGNED_BEFORE_RESET = 'The bearer token was signed before the replay store was reset; sign a new one.';

/** Where the requests go, and the book they withdraw from. */
interface Deployment {
  send(options: SendOptions): Promise<TestResponse>;
  readonly key: LoadedKey;
  /** A verified USD FEDWIRE account of the key's sandbox book, by its v3 id. */
  readonly accountId: string;
}

/** The three first uses: one withdrawal a generation, each with a token of its own. */
interface SpentRequests {
  readonly v1: SendOptions;
  readonly v2: SendOptions;
  readonly v3: SendOptions;
  /** No token among them was signed in this second or later. */
  readonly signedBeforeMs: number;
}

function legacyWithdrawal(deployment: Deployment, generation: 'v1' | 'v2', idempotencyKey?: string): SendOptions {
  const { key, accountId } = deployment;
  return {
    method: 'POST',
    path: `/${generation}/brokerage/${key.file.orgId}/fiat_withdrawal`,
    body: JSON.stringify({
      amount: 5,
      currency: 'USD',
      withdrawalAddressId: idToLegacyUuid('withdrawalAccount', accountId),
    }),
    headers: {
      authorization: `Bearer ${legacyToken(key)}`,
      'x-app-mode': 'SANDBOX',
      'content-type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
    },
  };
}

/** A signed v3 POST /v3/fx/withdrawals, exactly as a client sends it (and as a captured copy replays it). */
async function v3Withdrawal(deployment: Deployment): Promise<SendOptions> {
  const path = '/v3/fx/withdrawals';
  const body = JSON.stringify({ withdrawalAccountId: deployment.accountId, withdrawalAmount: '5.00', currency: 'USD' });
  const idempotencyKey = randomUUID();
  const headers = await new V3RequestSigner(deployment.key, { issuer: TEST_ISSUER }).headers({
    method: 'POST',
    pathAndQuery: path,
    body,
    idempotencyKey,
  });
  return {
    method: 'POST',
    path,
    body,
    headers: { ...headers, 'idempotency-key': idempotencyKey, 'content-type': 'application/json' },
  };
}

async function withdrawalCount(deployment: Deployment): Promise<number> {
  const path = '/v3/fx/withdrawals?limit=100';
  const headers = await new V3RequestSigner(deployment.key, { issuer: TEST_ISSUER }).headers({
    method: 'GET',
    pathAndQuery: path,
  });
  const response = await deployment.send({ path, headers });
  expect(response.status, response.text).toBe(200);
  return response.json<{ data: unknown[] }>().data.length;
}

async function expectOk(deployment: Deployment, request: SendOptions): Promise<void> {
  const response = await deployment.send(request);
  expect(response.status, `${request.path}: ${response.text}`).toBe(200);
}

/** Uses a fresh token on each generation, once: three withdrawals. */
async function spendTokens(deployment: Deployment): Promise<SpentRequests> {
  const v1 = legacyWithdrawal(deployment, 'v1');
  const v2 = legacyWithdrawal(deployment, 'v2', `k-${randomUUID()}`);
  const v3 = await v3Withdrawal(deployment);
  const signedBeforeMs = (Math.floor(Date.now() / 1000) + 1) * 1000;
  for (const request of [v1, v2, v3]) await expectOk(deployment, request);
  return { v1, v2, v3, signedBeforeMs };
}

/**
 * Waits until the tokens' last second has passed. A store reset within the second a token was
 * signed in does not refuse it (iat is in whole seconds): the residual window the docs describe.
 */
async function untilSignedInAnEarlierSecond(spent: SpentRequests): Promise<void> {
  const wait = spent.signedBeforeMs - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/** The same tokens again after the loss: each refused, the v2 one under a new Idempotency-Key, and no withdrawal made. */
async function expectSpentTokensRefused(deployment: Deployment, spent: SpentRequests): Promise<void> {
  const before = await withdrawalCount(deployment);
  const v1 = await deployment.send(spent.v1);
  expect(v1.status, v1.text).toBe(401);
  expect(v1.json()).toEqual({ status: 'error', message: AUTH_MESSAGE });
  const v2 = await deployment.send({
    ...spent.v2,
    headers: { ...spent.v2.headers, 'idempotency-key': `k-${randomUUID()}` },
  });
  expect(v2.status, v2.text).toBe(401);
  expect(v2.json()).toEqual({ status: 'error', message: AUTH_MESSAGE });
  const v3 = await deployment.send(spent.v3);
  expect(v3.status, v3.text).toBe(401);
  expect(v3.json()).toMatchObject({ error: { code: 'AUTH_TOKEN_INVALID', message: SIGNED_BEFORE_RESET } });
  expect(await withdrawalCount(deployment)).toBe(before);
}

/** Fresh tokens on every generation work at once, each making its withdrawal. */
async function expectFreshTokensWork(deployment: Deployment): Promise<void> {
  const before = await withdrawalCount(deployment);
  await expectOk(deployment, legacyWithdrawal(deployment, 'v1'));
  await expectOk(deployment, legacyWithdrawal(deployment, 'v2', `k-${randomUUID()}`));
  await expectOk(deployment, await v3Withdrawal(deployment));
  expect(await withdrawalCount(deployment)).toBe(before + 3);
}

describe('a Redis emptied under the running core and gateway', () => {
  let redis: ThrowawayServer;
  let admin: Redis;
  /** The gateway's own connection: a second process's view of the same store. */
  let gatewayStore: RedisStore;
  let h: LegacyHarness;
  let deployment: Deployment;

  beforeAll(async () => {
    redis = await startThrowawayRedis();
    admin = new Redis(redis.url);
    gatewayStore = new RedisStore({ url: redis.url });
    h = await LegacyHarness.start({ driver: 'postgres', store: new RedisStore({ url: redis.url }), gatewayStore });
    const key = await h.createKey();
    await recordTestDeposit(h.core.db, {
      orgId: key.file.orgId,
      environment: 'sandbox',
      currency: 'USD',
      amount: '1000.00',
    });
    const account = await postData(h.core, key, '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT);
    await postEmpty(h.core, key, `/v3/fx/sandbox/withdrawal-accounts/${account.id}/verify`);
    deployment = { send: (options) => h.send(options), key, accountId: account.id! };
  });
  afterAll(async () => {
    await h?.close();
    await gatewayStore?.close();
    await admin?.quit();
    await redis?.stop();
  });

  it('refuses every token used before FLUSHDB on v1, v2 and v3, with no second withdrawal; fresh tokens work at once', async () => {
    const spent = await spendTokens(deployment);
    await untilSignedInAnEarlierSecond(spent);
    await admin.flushdb();
    await expectSpentTokensRefused(deployment, spent);
    await expectFreshTokensWork(deployment);
  });
});

describe('fxgate all on the embedded defaults, restarted', () => {
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-store-reset-'));
    env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
  });
  afterAll(async () => {
    await stopInProcessServers();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** `fxgate all` (what `npm start` runs) on the data folder: its URL and the sandbox book it seeded. */
  async function start() {
    const server = await startFxgate(['all'], env);
    const [, url] = server.stdout.match(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m)!;
    const [, keyPath] = server.stdout.match(/^fxgate: sandbox key (?:created|reused): (\S+)$/m)!;
    return { server, url: url!, keyPath: keyPath! };
  }

  // PGlite's first start on a new folder creates its database cluster, which takes seconds.
  it(
    'refuses every token used before the restart on v1, v2 and v3, with no second withdrawal; fresh tokens work at once',
    { timeout: 180_000 },
    async () => {
      const first = await start();
      const [, accountId] = first.server.stdout.match(
        /verified withdrawal accounts: .*?(wac_[0-9a-f]+) \(USD FEDWIRE\)/,
      )!;
      const key = await readKeyFile(first.keyPath);
      let url = first.url;
      const deployment: Deployment = { send: (options) => sendTo(url, options), key, accountId: accountId! };

      const spent = await spendTokens(deployment);
      expect((await first.server.stop('SIGTERM')).code).toBe(0);
      await untilSignedInAnEarlierSecond(spent);
      const restarted = await start();
      expect(restarted.keyPath).toBe(first.keyPath);
      url = restarted.url;

      await expectSpentTokensRefused(deployment, spent);
      await expectFreshTokensWork(deployment);
      expect((await restarted.server.stop('SIGTERM')).code).toBe(0);
    },
  );
});
