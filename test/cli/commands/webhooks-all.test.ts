/**
 * Legacy webhooks under `fxgate all` on the embedded defaults: a subscription added with the CLI
 * before the start (the data folder is the server's only while it runs) is registered by the
 * gateway at start-up on its own listener, with no FXGATE_GATEWAY_WEBHOOK_URL; a sandbox deposit
 * reaches the receiver with the default poll intervals. Removed while the server is stopped, the
 * v3 endpoint goes at the next start. A live book's registration is allowed on that listener alone,
 * where loopback is otherwise refused in live.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LEGACY_WEBHOOK_PATH } from '../../../src/gateway/webhooks/registrations.js';
import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { idToLegacyUuid, newUuid } from '../../../src/lib/ids.js';
import { readKeyFile } from '../../../src/lib/keys/key-file.js';
import { verifyLegacyWebhook } from '../../../src/lib/webhooks/signature.js';
import { LegacyWebhookReceiver } from '../../support/legacy-webhook-receiver.js';
import { TEST_ISSUER } from '../../support/v3-harness.js';
import { fxgate, startFxgate, stopInProcessServers } from '../in-process-cli.js';

let dataDir: string;
let env: Record<string, string>;
let receiver: LegacyWebhookReceiver;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'fxgate-webhooks-all-'));
  env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
  receiver = await LegacyWebhookReceiver.start();
});
afterAll(async () => {
  await stopInProcessServers();
  await receiver?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function v3(url: string, keyPath: string, method: 'GET' | 'POST', path: string, body?: object) {
  const key = await readKeyFile(keyPath);
  const text = body === undefined ? undefined : JSON.stringify(body);
  const idempotencyKey = method === 'POST' ? newUuid() : undefined;
  const headers = await new V3RequestSigner(key, { issuer: TEST_ISSUER }).headers({
    method,
    pathAndQuery: path,
    body: text === undefined ? undefined : Buffer.from(text),
    idempotencyKey,
  });
  const response = await request(`${url}${path}`, {
    method,
    headers: {
      ...headers,
      ...(key.file.mode === 'sandbox' ? { 'x-app-mode': 'SANDBOX' } : {}),
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: text,
  });
  return {
    status: response.statusCode,
    json: (await response.body.json()) as {
      data: Record<string, unknown> & Record<string, unknown>[];
      error?: { code: string; details: Record<string, unknown> };
    },
  };
}

describe('fxgate all with legacy webhooks', () => {
  it(
    'registers at start-up on its own listener and delivers a sandbox deposit; a removal takes the endpoint at the next start',
    { timeout: 180_000 },
    async () => {
      const orgId = newUuid();
      const keyPath = join(dataDir, 'integrator.json');
      const created = await fxgate(
        ['keys', 'create', '--org', orgId, '--mode', 'sandbox', '--scopes', 'view,trade,webhooks', '--out', keyPath],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      const added = await fxgate(
        ['webhooks', 'add', '--org', orgId, '--mode', 'sandbox', '--url', receiver.url('/hooks/all')],
        env,
      );
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toContain(
        'v3 registration: left to the gateway (at start-up, and every 30 s while it runs)',
      );
      const secret = /^secret: (whsec_\S+)$/m.exec(added.stdout)![1]!;
      const subscriptionId = /^id: (\S+)$/m.exec(added.stdout)![1]!;

      let server = await startFxgate(['all'], env);
      let [, url] = server.stdout.match(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m)!;
      const port = new URL(url!).port;
      // The registration runs beside serving: the endpoint appears shortly after the start.
      await expect
        .poll(
          async () =>
            (await v3(url!, keyPath, 'GET', '/v3/fx/webhook-endpoints')).json.data.map((endpoint) => endpoint.url),
          { timeout: 15_000 },
        )
        .toEqual([`http://127.0.0.1:${port}${LEGACY_WEBHOOK_PATH}/${orgId}/sandbox`]);

      const started = Date.now();
      const deposit = await v3(url!, keyPath, 'POST', '/v3/fx/sandbox/deposits', { currency: 'EUR', amount: '250.00' });
      expect(deposit.status).toBe(200);
      const legacyId = idToLegacyUuid('deposit', deposit.json.data.id as string);
      await receiver.waitFor(() => receiver.received.some((hit) => hit.body.data[0]?.id === legacyId), 20_000);
      const hit = receiver.received.find((candidate) => candidate.body.data[0]?.id === legacyId)!;
      if (process.env.FXGATE_PRINT_TIMINGS === '1')
        process.stdout.write(
          `fxgate all, default poll intervals: deposit delivered ${hit.at - started} ms after POST /v3/fx/sandbox/deposits\n`,
        );
      expect(hit.body).toMatchObject({
        type: 'deposits',
        message: 'Completed Deposits',
        data: [{ orgId, amount: 250, currency: 'EUR', status: 'COMPLETED', network: 'FIAT' }],
      });
      expect(verifyLegacyWebhook(hit.rawBody, hit.headers['x-webhook-signature'], secret)).toEqual({ ok: true });
      expect((await server.stop('SIGTERM')).code).toBe(0);

      const removed = await fxgate(['webhooks', 'remove', subscriptionId], env);
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stdout).toContain(`removed: ${subscriptionId}\nv3 endpoint removal: left to the gateway`);
      server = await startFxgate(['all'], env);
      [, url] = server.stdout.match(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m)!;
      await expect
        .poll(async () => (await v3(url!, keyPath, 'GET', '/v3/fx/webhook-endpoints')).json.data, { timeout: 15_000 })
        .toEqual([]);
      expect((await server.stop('SIGTERM')).code).toBe(0);
    },
  );

  it(
    'registers its own public listener for live books too, where loopback is otherwise refused, and nothing else of loopback',
    { timeout: 120_000 },
    async () => {
      // The live subscription's receiver is an in-house one on 127.0.0.2; 127.0.0.1, where fxgate listens, is not allowed.
      const allowing = { ...env, FXGATE_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.2' };
      const orgId = newUuid();
      const keyPath = join(dataDir, 'live-integrator.json');
      const created = await fxgate(
        ['keys', 'create', '--org', orgId, '--mode', 'live', '--scopes', 'view,webhooks', '--out', keyPath],
        allowing,
      );
      expect(created.code, created.stderr).toBe(0);
      const added = await fxgate(
        ['webhooks', 'add', '--org', orgId, '--mode', 'live', '--url', 'http://127.0.0.2:9/hooks/live'],
        allowing,
      );
      expect(added.code, added.stderr).toBe(0);

      const server = await startFxgate(['all'], allowing);
      const [, url] = server.stdout.match(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m)!;
      const [, adminUrl] = server.stdout.match(/^fxgate: admin listener on (http:\/\/\S+) /m)!;
      const port = new URL(url!).port;
      await expect
        .poll(
          async () =>
            (await v3(url!, keyPath, 'GET', '/v3/fx/webhook-endpoints')).json.data.map((endpoint) => endpoint.url),
          { timeout: 15_000 },
        )
        .toEqual([`http://127.0.0.1:${port}${LEGACY_WEBHOOK_PATH}/${orgId}/live`]);
      // The allowance is that listener alone: its admin listener, on loopback too, is refused like any other port.
      const admin = `${adminUrl}/metrics`;
      const refused = await v3(url!, keyPath, 'POST', '/v3/fx/webhook-endpoints', { url: admin });
      expect(refused.status).toBe(422);
      expect(refused.json.error).toMatchObject({
        code: 'WEBHOOK_URL_INVALID',
        details: {
          url: admin,
          reason:
            '127.0.0.1 is a loopback address; live webhooks must reach a public address or an allowed in-house network',
        },
      });
      expect((await server.stop('SIGTERM')).code).toBe(0);
    },
  );
});
