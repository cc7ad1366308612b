/**
 * Unchanged v1/v2 clients copied from the public examples send no `X-App-Mode`: on a host of
 * FXGATE_SANDBOX_HOSTS they work on the sandbox book, as on the legacy service's sandbox host,
 * and a live key there is refused with the legacy 401. Elsewhere no header is live. End to end:
 * the gateway in front of the real core, each request with the Host a client would send.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { LegacyHarness } from '../../../support/legacy-harness.js';
import type { TestResponse } from '../../../support/v3-harness.js';

const SANDBOX_HOST = 'sandbox.fxgate.test';
const LIVE_HOST = 'api.fxgate.test';
const AUTH = {
  status: 'error',
  message: 'The authorization key provided is either invalid or expired, please try again',
};

let h: LegacyHarness;
let proxied: LegacyHarness;
let sandboxKey: LoadedKey;
let liveKey: LoadedKey;

beforeAll(async () => {
  h = await LegacyHarness.start({ gateway: { sandboxHosts: [SANDBOX_HOST] } });
  sandboxKey = await h.createKey({ mode: 'sandbox', scopes: ['view'] });
  liveKey = await h.createKey({ mode: 'live', scopes: ['view'], orgId: sandboxKey.file.orgId });
  // The test's own client is the proxy: loopback is trusted, so its X-Forwarded-Host counts.
  proxied = await LegacyHarness.start({ gateway: { sandboxHosts: [SANDBOX_HOST] }, trustedProxies: ['127.0.0.1'] });
});
afterAll(async () => {
  await h?.close();
  await proxied?.close();
});

/** The balances of the key's org, with exactly the Host and X-App-Mode given (undefined: none). */
function balances(
  harness: LegacyHarness,
  generation: 'v1' | 'v2',
  key: LoadedKey,
  host: string,
  appMode: string | undefined,
  extra: Record<string, string> = {},
): Promise<TestResponse> {
  return harness.call(generation, key, { path: 'balances', headers: { host, 'x-app-mode': appMode, ...extra } });
}

function expectServed(response: TestResponse): void {
  expect(response.status, response.text).toBe(200);
  expect(response.json<{ status: string }>().status).toBe('success');
}

function expectRefused(response: TestResponse): void {
  expect(response.status, response.text).toBe(401);
  expect(response.json()).toEqual(AUTH);
}

describe.each(['v1', 'v2'] as const)('%s', (generation) => {
  it('the same sandbox key works without the header on the sandbox host, and with it anywhere', async () => {
    expectServed(await balances(h, generation, sandboxKey, SANDBOX_HOST, undefined));
    expectServed(await balances(h, generation, sandboxKey, SANDBOX_HOST, 'sandbox'));
    expectServed(await balances(h, generation, sandboxKey, LIVE_HOST, 'SANDBOX'));
  });

  it('without the header elsewhere, the sandbox key is refused: no header is live there', async () => {
    expectRefused(await balances(h, generation, sandboxKey, LIVE_HOST, undefined));
    expectRefused(await balances(h, generation, sandboxKey, '127.0.0.1', undefined));
  });

  it('the Host is compared without its port, in any case, a trailing dot ignored', async () => {
    for (const host of [`${SANDBOX_HOST}:8443`, 'Sandbox.FXGATE.test', `${SANDBOX_HOST.toUpperCase()}.:80`])
      expectServed(await balances(h, generation, sandboxKey, host, undefined));
    expectRefused(await balances(h, generation, sandboxKey, `api.${SANDBOX_HOST}`, undefined));
  });

  it('a live key on the sandbox host is refused, with or without a header; elsewhere it works', async () => {
    expectRefused(await balances(h, generation, liveKey, SANDBOX_HOST, undefined));
    expectRefused(await balances(h, generation, liveKey, `${SANDBOX_HOST}:443`, 'live'));
    expectRefused(await balances(h, generation, liveKey, SANDBOX_HOST, 'sandbox'));
    expectServed(await balances(h, generation, liveKey, LIVE_HOST, undefined));
    expectServed(await balances(h, generation, liveKey, LIVE_HOST, 'production'));
  });

  it('a header that contradicts the sandbox host still declares its mode: a sandbox key declaring live is refused', async () => {
    expectRefused(await balances(h, generation, sandboxKey, SANDBOX_HOST, 'live'));
  });

  it('X-Forwarded-Host counts from a trusted proxy only', async () => {
    const forwarded = { 'x-forwarded-host': SANDBOX_HOST };
    expectRefused(await balances(h, generation, sandboxKey, LIVE_HOST, undefined, forwarded));
    const key = await proxied.createKey({ mode: 'sandbox', scopes: ['view'] });
    expectServed(await balances(proxied, generation, key, LIVE_HOST, undefined, forwarded));
    expectRefused(await balances(proxied, generation, key, LIVE_HOST, undefined));
  });
});
