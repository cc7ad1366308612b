import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { newUuid } from '../../../src/lib/ids.js';
import { loadKey, readKeyFile } from '../../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { generateSealingKey } from '../../../src/lib/secrets/sealing-keys.js';
import { createTestPostgres } from '../../support/databases.js';
import { legacyToken } from '../../support/independent-signing.js';
import { expectRawLegacyError, rawExchange } from '../../support/raw-http.js';
import { killAllCliProcesses, startCli } from '../cli-process.js';
import { fxgate, startFxgate, stopInProcessServers } from '../in-process-cli.js';

/** `Name: value` lines, as `fxgate sign` prints them, to a headers object. */
function parseHeaderLines(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((line) => {
        const colon = line.indexOf(': ');
        return [line.slice(0, colon), line.slice(colon + 2)];
      }),
  );
}

describe('fxgate all on the embedded defaults', () => {
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-all-'));
    env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', FXGATE_REQUEST_TIMEOUT_MS: '1500' };
  });
  afterAll(async () => {
    await killAllCliProcesses();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  // PGlite's first start creates its database cluster (initdb), which takes seconds on a busy machine.
  it(
    'starts on a fresh data folder, makes a sandbox key, and serves v3 and the legacy prefixes on one port',
    { timeout: 180_000 },
    async () => {
      const server = startCli(['all'], env);
      const [, url] = await server.waitFor(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m);
      const [, keyPath] = server.stdout.match(/^fxgate: sandbox key created: (\S+)$/m)!;
      expect(keyPath).toMatch(new RegExp(`^${dataDir}/keys/[0-9a-f-]{36}\\.json$`));
      expect(server.stdout).toContain(
        `curl -H @<(npx fxgate sign --key ${keyPath} --method GET --path /v3/fx/pairs) ${url}/v3/fx/pairs`,
      );
      // The admin listener (PORT+1; the OS picks it when PORT is 0) serves the shadow report, the public listener does not.
      const [, adminUrl] = server.stdout.match(
        /^fxgate: admin listener on (http:\/\/\S+) \(GET \/metrics, \/admin\/schedule, \/admin\/usage, \/admin\/shadow\/report\)$/m,
      )!;
      expect(await (await request(`${adminUrl}/admin/shadow/report`)).body.json()).toEqual({
        since: null,
        operations: [],
      });
      expect((await request(`${url}/admin/shadow/report`)).statusCode).toBe(404);

      const signed = await fxgate(['sign', '--key', keyPath!, '--method', 'GET', '--path', '/v3/fx/pairs']);
      expect(signed.code).toBe(0);
      const headers = parseHeaderLines(signed.stdout);
      expect(Object.keys(headers)).toEqual(['Authorization', 'X-Request-Signature', 'X-App-Mode']);
      const pairs = await request(`${url}/v3/fx/pairs`, { headers });
      expect(pairs.statusCode).toBe(200);
      expect(((await pairs.body.json()) as { data: unknown[] }).data).toHaveLength(42);

      // The same key works on v2: the gateway provisions its own v3 credential for the org.
      const sandboxKey = await readKeyFile(keyPath!);
      const legacy = await request(`${url}/v2/brokerage/${sandboxKey.file.orgId}/balances`, {
        headers: { authorization: `Bearer ${legacyToken(sandboxKey)}`, 'x-app-mode': 'SANDBOX' },
      });
      expect(legacy.statusCode).toBe(200);
      const balances = (await legacy.body.json()) as { status: string; data: { currency: string; amount: number }[] };
      expect(balances.status).toBe('success');
      expect(balances.data.map((balance) => balance.currency).sort()).toEqual(['EUR', 'USD', 'USDC']);
      await access(join(dataDir, 'gateway-keys', `${sandboxKey.file.orgId}.sandbox.json`));

      // FXGATE_REQUEST_TIMEOUT_MS bounds a request's arrival: a v2 body trickled in is cut with v2's answer.
      const slow = await rawExchange(url!, {
        steps: [
          `POST /v2/brokerage/${sandboxKey.file.orgId}/generate_quote HTTP/1.1\r\nHost: fxgate\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
        ],
        trickle: { chunk: ' ', everyMs: 250 },
      });
      expectRawLegacyError(slow, 'v2', 500, 'The request did not arrive in time, please try again');
      expect(slow.answeredAfterMs).toBeGreaterThanOrEqual(1_480);
      expect(slow.answeredAfterMs).toBeLessThanOrEqual(2_500);

      // A state command goes through the admin listener (test/cli/state); one that is not one of them is refused.
      const blocked = await fxgate(['migrate'], env);
      expect(blocked.code).toBe(1);
      expect(blocked.stderr).toContain(
        `${dataDir} (FXGATE_DATA_DIR) is in use by another fxgate process (pid ${server.child.pid})`,
      );

      const stopped = await server.stop('SIGTERM');
      expect(stopped.code).toBe(0);
      await expect(access(join(dataDir, 'pglite.lock'))).rejects.toMatchObject({ code: 'ENOENT' });

      const restarted = startCli(['all'], env);
      await restarted.waitFor(/^fxgate: listening on /m);
      expect(restarted.stdout).toContain(`fxgate: sandbox key reused: ${keyPath}\n`);
      expect((await restarted.stop('SIGINT')).code).toBe(0);

      const migrated = await fxgate(['migrate'], env);
      expect(migrated.code).toBe(0);
      expect(migrated.stdout).toMatch(/^up to date: 0001_\w+\.sql/m);
    },
  );
});

describe('fxgate all on PostgreSQL', () => {
  afterAll(stopInProcessServers);

  it("checks IP allowlists against the client's address as the gateway saw it", async () => {
    const database = await createTestPostgres();
    const dataDir = await mkdtemp(join(tmpdir(), 'fxgate-all-pg-'));
    const registry = new KeyRegistry(database.db);
    const orgId = newUuid();
    /** A signed GET through the gateway with a new key of this allowlist; the status and error code. */
    const get = async (
      url: string,
      ipAllowlist: string[],
      headers: Record<string, string>,
    ): Promise<[number, string | undefined]> => {
      const key = loadKey(await registry.createKey({ orgId, scopes: ['view'], mode: 'live', ipAllowlist }));
      const auth = await new V3RequestSigner(key, { issuer: 'fx-service' }).headers({
        method: 'GET',
        pathAndQuery: '/v3/fx/pairs',
      });
      const response = await request(`${url}/v3/fx/pairs`, { headers: { ...auth, ...headers } });
      const body = (await response.body.json()) as { error?: { code: string } };
      return [response.statusCode, body.error?.code];
    };
    const start = async (trustedProxies: string): Promise<{ url: string; stop: () => Promise<unknown> }> => {
      const server = await startFxgate(['all'], {
        DATABASE_URL: database.url!,
        FXGATE_SECRETS_KEY: generateSealingKey(),
        FXGATE_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: '0',
        FXGATE_TRUSTED_PROXIES: trustedProxies,
      });
      const [, url] = server.stdout.match(/^fxgate: listening on (http:\/\/\S+) /m)!;
      // On PostgreSQL no sandbox is provided unless asked for (FXGATE_SANDBOX_SEED).
      expect(server.stdout).toContain('fxgate: no sandbox org provided (FXGATE_SANDBOX_SEED=on provides one)');
      expect(server.stdout).not.toContain('sandbox key');
      return { url: url!, stop: () => server.stop() };
    };
    try {
      // The test client is 127.0.0.1. Untrusted, the address it claims is replaced by its own.
      const untrusting = await start('10.0.0.0/8');
      expect(await get(untrusting.url, ['127.0.0.1'], { 'x-forwarded-for': '203.0.113.9' })).toEqual([200, undefined]);
      expect(await get(untrusting.url, ['203.0.113.0/24'], { 'x-forwarded-for': '203.0.113.9' })).toEqual([
        403,
        'AUTH_FORBIDDEN_IP',
      ]);
      await untrusting.stop();
      // Trusted as a proxy, the client it names reaches the core's allowlist check.
      const trusting = await start('127.0.0.1');
      expect(await get(trusting.url, ['203.0.113.0/24'], { 'x-forwarded-for': '203.0.113.9' })).toEqual([
        200,
        undefined,
      ]);
      expect(await get(trusting.url, ['127.0.0.1'], { 'x-forwarded-for': '203.0.113.9' })).toEqual([
        403,
        'AUTH_FORBIDDEN_IP',
      ]);
      await trusting.stop();
    } finally {
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('fxgate all as the image runs it: every interface, no sandbox', () => {
  let dataDir: string;
  afterAll(async () => {
    await stopInProcessServers();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'prints the addresses it is bound to and a loopback URL for each, and seeds nothing with FXGATE_SANDBOX_SEED=off',
    { timeout: 120_000 },
    async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'fxgate-all-image-'));
      const token = 'all-image-test-admin-token-0123456789abcdef';
      // Bound to every interface; the test connects over loopback only.
      const server = await startFxgate(['all'], {
        FXGATE_DATA_DIR: dataDir,
        HOST: '0.0.0.0',
        PORT: '0',
        FXGATE_ADMIN_HOST: '0.0.0.0',
        FXGATE_ADMIN_PORT: '0',
        FXGATE_ADMIN_TOKEN: token,
        FXGATE_SANDBOX_SEED: 'off',
      });
      const [, port, localPort] = server.stdout.match(
        /^fxgate: listening on http:\/\/0\.0\.0\.0:(\d+) \(v1, v2 and v3; every interface; on this host http:\/\/127\.0\.0\.1:(\d+)\)$/m,
      )!;
      expect(localPort).toBe(port);
      const [, adminPort, localAdminPort] = server.stdout.match(
        /^fxgate: admin listener on http:\/\/0\.0\.0\.0:(\d+) \(GET \/metrics, \/admin\/schedule, \/admin\/usage, \/admin\/shadow\/report; every interface; on this host http:\/\/127\.0\.0\.1:(\d+)\)$/m,
      )!;
      expect(localAdminPort).toBe(adminPort);
      const health = await request(`http://127.0.0.1:${port}/healthz`);
      expect(health.statusCode).toBe(200);
      await health.body.dump();
      const schedule = await request(`http://127.0.0.1:${adminPort}/admin/schedule`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(schedule.statusCode).toBe(200);
      expect(((await schedule.body.json()) as { generations: object }).generations).toHaveProperty('v1');

      expect(server.stdout).toContain(
        'fxgate: no sandbox org provided (FXGATE_SANDBOX_SEED=on provides one); make orgs and keys with `fxgate keys create --org <uuid> ...`',
      );
      expect(server.stdout).not.toMatch(/sandbox key|sandbox deposits|try: curl/);
      // The gateway's migration schedule, among the start-up lines (the clock is the real one here).
      expect(server.stdout).toMatch(
        /^fxgate: v1: deprecated since 2026-01-01T00:00:00Z, sunset 2026-12-31T23:59:59Z \((in|.* ago)[^)]*\), (then|now) refused \(410\)$/m,
      );
      expect(server.stdout).toMatch(/^fxgate: v2: not deprecated, no sunset$/m);
      expect(server.stdout).toMatch(/^fxgate: shadow mode: off$/m);
      for (const made of ['sandbox.json', 'keys']) await expect(access(join(dataDir, made))).rejects.toThrow(/ENOENT/);
      expect((await server.stop()).code).toBe(0);
      const keys = await fxgate(['keys', 'list'], { FXGATE_DATA_DIR: dataDir });
      expect(keys.code, keys.stderr).toBe(0);
      expect(keys.stdout).toBe('no keys\n');
    },
  );
});
