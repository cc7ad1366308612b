/**
 * Crash safety of the v2 idempotency bridge: a stand-alone `fxgate gateway` process is killed
 * (SIGKILL) right after v3 executed its write and before the answer reached it, so the gateway
 * never stored anything. It is restarted, the client retries with the same v2 key, and v3 holds
 * exactly one trade (one withdrawal): the derived v3 key made v3 replay instead of execute.
 *
 * Between the gateway and the core sits an interposer, a plain forwarding HTTP server that does
 * the killing when it sees the write's answer come back: no hook in the gateway's own code.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { idToLegacyUuid, newUuid } from '../../../../src/lib/ids.js';
import { type LoadedKey, loadKey, writeKeyFile } from '../../../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../../../src/lib/keys/key-registry.js';
import { generateSealingKey } from '../../../../src/lib/secrets/sealing-keys.js';
import { type CliProcess, killAllCliProcesses, startCli } from '../../../cli/cli-process.js';
import { postData, postEmpty, recordTestDeposit } from '../../../support/book-fixtures.js';
import { createTestPostgres, type TestDatabase } from '../../../support/databases.js';
import { legacyToken } from '../../../support/independent-signing.js';
import { idemKey } from '../../../support/legacy-harness.js';
import { testRedisEnv } from '../../../support/test-run.js';
import { TEST_ISSUER, V3Harness } from '../../../support/v3-harness.js';

let core: V3Harness;
let gatewayDb: TestDatabase;
let keysDir: string;
let interposer: Server;
let interposerUrl: string;
/** v3 writes whose answer makes the interposer kill the gateway (then the answer is dropped). */
const killOn = new Set<string>();
let gateway: CliProcess | null = null;
let legacyKey: LoadedKey;
let v3Key: LoadedKey;

const SECRETS_KEY = generateSealingKey();

async function startGateway(): Promise<string> {
  gateway = startCli(['gateway', '--upstream', interposerUrl], {
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: gatewayDb.url!,
    ...testRedisEnv(),
    FXGATE_UPSTREAM_KEYS_DIR: keysDir,
    FXGATE_IDEMPOTENCY_LOCK_TTL_MS: '1000',
    FXGATE_JWT_ISSUER: TEST_ISSUER,
    // The same key at every start, as a deployment gives it.
    FXGATE_SECRETS_KEY: SECRETS_KEY,
  });
  const [, url] = await gateway.waitFor(/^fxgate gateway: listening on (http:\/\/\S+),/m);
  return url!;
}

async function v2(url: string, path: string, body: string, key: string) {
  const token = legacyToken(legacyKey);
  return request(`${url}/v2/brokerage/${legacyKey.file.orgId}/${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'x-app-mode': 'SANDBOX',
      'content-type': 'application/json',
      'idempotency-key': key,
    },
    body,
  });
}

/**
 * The retry a client makes: the dead process's lock lives FXGATE_IDEMPOTENCY_LOCK_TTL_MS (1 s),
 * and until then the answer is 409 IDEMPOTENCY_IN_FLIGHT; the client waits and retries, same key.
 */
async function retryWhileInFlight(
  url: string,
  path: string,
  body: string,
  key: string,
): Promise<{ status: number; text: string }> {
  for (let attempt = 0; ; attempt++) {
    const response = await v2(url, path, body, key);
    const text = await response.body.text();
    if (response.statusCode !== 409 || attempt >= 20) return { status: response.statusCode, text };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function count(path: string): Promise<number> {
  const response = await core.signed({ key: v3Key, path: `${path}?limit=100` });
  return response.json<{ data: unknown[] }>().data.length;
}

beforeAll(async () => {
  core = await V3Harness.start({ driver: 'postgres', storeKind: 'redis' });
  gatewayDb = await createTestPostgres();
  keysDir = await mkdtemp(join(tmpdir(), 'fxgate-crash-keys-'));

  // The stand-alone gateway's own registry holds the legacy key; the core knows only the
  // gateway's v3 credential for the same org (docs/contract.md#auth-legacy).
  const gatewayRegistry = new KeyRegistry(gatewayDb.db, { cacheTtlMs: 0 });
  legacyKey = loadKey(
    await gatewayRegistry.createKey({ orgId: newUuid(), scopes: ['view', 'trade', 'withdraw'], mode: 'sandbox' }),
  );
  const credential = await core.registry.createKey({
    orgId: legacyKey.file.orgId,
    scopes: ['view', 'trade', 'withdraw'],
    mode: 'sandbox',
  });
  await writeKeyFile(join(keysDir, `${legacyKey.file.orgId}.sandbox.json`), credential);
  v3Key = loadKey(credential);
  await recordTestDeposit(core.db, {
    orgId: legacyKey.file.orgId,
    environment: 'sandbox',
    currency: 'USDC',
    amount: '1000.000000',
  });

  interposer = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(incoming.headers).filter(([name]) => name !== 'host' && name !== 'connection'),
      );
      request(`${core.baseUrl}${incoming.url}`, {
        method: incoming.method as 'GET',
        headers: headers as Record<string, string>,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      })
        .then(async (answer) => {
          const body = Buffer.from(await answer.body.arrayBuffer());
          const path = `${incoming.method} ${(incoming.url ?? '').split('?')[0]}`;
          if (killOn.has(path) && answer.statusCode === 200) {
            killOn.delete(path);
            gateway?.child.kill('SIGKILL');
            incoming.socket.destroy();
            return;
          }
          outgoing.writeHead(answer.statusCode, answer.headers as Record<string, string>).end(body);
        })
        .catch(() => outgoing.destroy());
    });
  });
  await new Promise<void>((resolve) => interposer.listen(0, '127.0.0.1', resolve));
  interposerUrl = `http://127.0.0.1:${(interposer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await killAllCliProcesses();
  await new Promise((resolve) => interposer?.close(resolve));
  await core?.close();
  await gatewayDb?.drop();
  if (keysDir) await rm(keysDir, { recursive: true, force: true });
});

describe('a gateway killed after the upstream write', () => {
  it('trade: restarted, the retry with the same v2 key makes no second trade', async () => {
    let url = await startGateway();
    const quote = await postData(core, v3Key, '/v3/fx/quotes', {
      buyCurrency: 'EUR',
      sellCurrency: 'USDC',
      amount: '10.00',
      amountCurrency: 'EUR',
    });
    const body = JSON.stringify({ quoteId: idToLegacyUuid('quote', quote.id!) });
    const key = idemKey();
    const before = await count('/v3/fx/trades');

    killOn.add('POST /v3/fx/trades');
    await expect(v2(url, 'trade', body, key).then((r) => r.body.text())).rejects.toThrow();
    expect((await gateway!.exited).signal).toBe('SIGKILL');
    expect(await count('/v3/fx/trades')).toBe(before + 1);

    url = await startGateway();
    const retry = await retryWhileInFlight(url, 'trade', body, key);
    expect(retry.status, retry.text).toBe(200);
    expect(await count('/v3/fx/trades')).toBe(before + 1);
    await gateway!.stop();
  });

  it('withdrawal: restarted, the retry with the same v2 key makes no second withdrawal', async () => {
    const account = await postData(core, v3Key, '/v3/fx/withdrawal-accounts', {
      currency: 'USDC',
      assetType: 'STABLECOIN',
      accountName: 'Wallet',
      network: 'ETHEREUM',
      address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    });
    await postEmpty(core, v3Key, `/v3/fx/sandbox/withdrawal-accounts/${account.id}/verify`);
    const body = JSON.stringify({
      amount: 25,
      currency: 'USDC',
      withdrawalAddressId: idToLegacyUuid('withdrawalAccount', account.id!),
    });
    const key = idemKey();
    let url = await startGateway();

    killOn.add('POST /v3/fx/withdrawals');
    await expect(v2(url, 'withdrawal', body, key).then((r) => r.body.text())).rejects.toThrow();
    expect(await count('/v3/fx/withdrawals')).toBe(1);

    url = await startGateway();
    const retry = await retryWhileInFlight(url, 'withdrawal', body, key);
    expect(retry.status, retry.text).toBe(200);
    expect(await count('/v3/fx/withdrawals')).toBe(1);
    await gateway!.stop();
  });
});
