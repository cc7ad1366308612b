/**
 * POST /v3/fx/webhook-endpoints and the destination policy: every URL of a server-side request
 * forgery (cloud metadata, private and loopback addresses however written, the admin listener,
 * names that are never public) answered 422 WEBHOOK_URL_INVALID with a reason an integrator can
 * act on; loopback accepted in the sandbox; the operator's allowed networks and exact
 * destinations accepted in both modes. Registration only: nothing here is delivered.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { AllowedNetworks } from '../../../src/lib/net/allowed-networks.js';
import { ExactDestinations } from '../../../src/lib/net/destination-policy.js';
import { expectV3Error } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

const ENDPOINTS = '/v3/fx/webhook-endpoints';
const LIVE = 'live webhooks must reach a public address';
const SANDBOX = 'sandbox webhooks must reach a public or loopback address';
/** Many writes per key, none of them about the rate limit. */
const RATE_LIMITS = { reads: 100_000, writes: 100_000 };
/** An admin listener's port, as `fxgate all` puts it beside PORT. */
const ADMIN_PORT = 8081;

/** The attacks of a key with the webhooks scope, and the kind each reaches. */
const ATTACKS: readonly (readonly [string, string])[] = [
  ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address (cloud metadata)'],
  ['https://10.0.0.1/', '10.0.0.1 is a private address'],
  ['https://192.168.1.1/', '192.168.1.1 is a private address'],
  ['https://[fd00::1]/', 'fd00::1 is a unique local address (private IPv6)'],
  [
    'http://[::ffff:a9fe:a9fe]/',
    '::ffff:a9fe:a9fe is 169.254.169.254 (IPv4-mapped), a link-local address (cloud metadata)',
  ],
  ['https://metadata.google.internal/', 'metadata.google.internal is a private name (.internal is never public)'],
];

/** Loopback, the admin listener included, however written: refused in live, accepted in the sandbox. */
const LOOPBACK: readonly (readonly [string, string])[] = [
  [`http://127.0.0.1:${ADMIN_PORT}/metrics`, '127.0.0.1 is a loopback address'],
  ['http://2130706433/', '127.0.0.1 is a loopback address'],
  ['http://0x7f000001/', '127.0.0.1 is a loopback address'],
  ['http://0177.0.0.1/', '127.0.0.1 is a loopback address'],
  ['http://127.1/', '127.0.0.1 is a loopback address'],
  ['http://%31%32%37.0.0.1/', '127.0.0.1 is a loopback address'],
  ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1 is 127.0.0.1 (IPv4-mapped), a loopback address'],
  ['http://LocalHost./', 'localhost is a loopback name (localhost)'],
];

function createEndpoint(harness: V3Harness, key: LoadedKey, url: string) {
  return harness.signed({
    key,
    method: 'POST',
    path: ENDPOINTS,
    body: JSON.stringify({ url }),
    idempotencyKey: randomUUID(),
  });
}

async function created(harness: V3Harness, key: LoadedKey, url: string): Promise<string> {
  const response = await createEndpoint(harness, key, url);
  expect(response.status, `${url}: ${response.text}`).toBe(200);
  return response.json<{ data: { url: string } }>().data.url;
}

describe('webhook endpoint URLs without an operator allowance', () => {
  let harness: V3Harness;
  const keys = {} as Record<Mode, LoadedKey>;

  beforeAll(async () => {
    harness = await V3Harness.start({ core: { rateLimits: RATE_LIMITS } });
    // One book per key: the 20-endpoint cap never comes near.
    keys.live = await harness.createKey({ mode: 'live' });
    keys.sandbox = await harness.createKey({ mode: 'sandbox' });
  });
  afterAll(async () => harness?.close());

  it('refuses every attack with 422 WEBHOOK_URL_INVALID and its reason, in both modes', async () => {
    for (const [url, reason] of ATTACKS) {
      expectV3Error(await createEndpoint(harness, keys.live, url), 'WEBHOOK_URL_INVALID', {
        details: { url, reason: `${reason}; ${LIVE}` },
      });
      expectV3Error(await createEndpoint(harness, keys.sandbox, url), 'WEBHOOK_URL_INVALID', {
        details: { url, reason: `${reason}; ${SANDBOX}` },
      });
    }
  });

  it('refuses loopback in live, however written, and accepts it in the sandbox, normalised', async () => {
    for (const [url, reason] of LOOPBACK) {
      expectV3Error(await createEndpoint(harness, keys.live, url), 'WEBHOOK_URL_INVALID', {
        details: { url, reason: `${reason}; ${LIVE}` },
      });
      expect(await created(harness, keys.sandbox, url)).toBe(new URL(url).href);
    }
    expect(await created(harness, keys.sandbox, 'http://2130706433/')).toBe('http://127.0.0.1/');
  });

  it('accepts public addresses and names in both modes (a name is checked again at every delivery)', async () => {
    for (const url of ['https://8.8.8.8/hook', 'https://[2606:4700:4700::1111]/hook', 'https://hooks.example.com/'])
      for (const mode of ['live', 'sandbox'] as const) expect(await created(harness, keys[mode], url)).toBe(url);
  });
});

describe('webhook endpoint URLs with allowed networks and an exact destination', () => {
  let harness: V3Harness;
  const exact = new ExactDestinations();

  beforeAll(async () => {
    const networks = AllowedNetworks.of(['10.0.0.0/8', 'fd00::/8']);
    harness = await V3Harness.start({ core: { rateLimits: RATE_LIMITS, outbound: { networks, exact } } });
    exact.allow('http://127.0.0.1:8080/_fxgate/webhooks/v3');
  });
  afterAll(async () => harness?.close());

  it('accepts the allowed networks and .internal names in both modes, and refuses the rest', async () => {
    for (const mode of ['live', 'sandbox'] as const) {
      const key = await harness.createKey({ mode });
      for (const url of ['https://10.0.0.1/', 'https://[fd00::1]/', 'https://metadata.google.internal/'])
        expect(await created(harness, key, url)).toBe(url);
      const requirement = mode === 'live' ? LIVE : SANDBOX;
      expectV3Error(await createEndpoint(harness, key, 'https://169.254.169.254/'), 'WEBHOOK_URL_INVALID', {
        details: {
          url: 'https://169.254.169.254/',
          reason: `169.254.169.254 is a link-local address (cloud metadata); ${requirement} or an allowed in-house network`,
        },
      });
    }
  });

  it('accepts the exact destination in live, over http, and nothing else of loopback', async () => {
    const key = await harness.createKey({ mode: 'live' });
    const own = 'http://127.0.0.1:8080/_fxgate/webhooks/v3/0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c/live';
    expect(await created(harness, key, own)).toBe(own);
    const admin = `http://127.0.0.1:${ADMIN_PORT}/metrics`;
    expectV3Error(await createEndpoint(harness, key, admin), 'WEBHOOK_URL_INVALID', {
      details: { url: admin, reason: `127.0.0.1 is a loopback address; ${LIVE} or an allowed in-house network` },
    });
    // An allowed network is still not the sender's own machine: live events go there over https.
    expectV3Error(await createEndpoint(harness, key, 'http://10.0.0.1/'), 'WEBHOOK_URL_INVALID', {
      details: { url: 'http://10.0.0.1/', reason: 'live endpoints must use https' },
    });
  });
});
