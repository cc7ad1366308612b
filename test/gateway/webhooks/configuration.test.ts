/**
 * How legacy webhooks are configured: FXGATE_GATEWAY_WEBHOOK_URL (where v3 reaches the
 * receiver), and what the CLI makes of it and of FXGATE_WEBHOOK_WORKER / _POLL_MS: a stand-alone
 * gateway registers only at the configured URL, `fxgate all` at its own listener unless told.
 */
import { describe, expect, it } from 'vitest';

import { legacyWebhooks, ownWebhookBase } from '../../../src/cli/servers.js';
import { LEGACY_WEBHOOK_PATH, registrationUrl } from '../../../src/gateway/webhooks/registrations.js';
import { loadConfig } from '../../../src/lib/config.js';
import type { Database } from '../../../src/lib/db/database.js';
import { ConfigError } from '../../../src/lib/errors/internal-errors.js';
import { randomKeyring } from '../../support/v3-harness.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('FXGATE_GATEWAY_WEBHOOK_URL', () => {
  it('is unset by default', () => {
    expect(loadConfig({}).FXGATE_GATEWAY_WEBHOOK_URL).toBeUndefined();
  });

  it('takes an http or https URL with a path, without its trailing slashes', () => {
    expect(
      loadConfig({ FXGATE_GATEWAY_WEBHOOK_URL: 'https://gateway.example.com/_fxgate/webhooks/v3/' })
        .FXGATE_GATEWAY_WEBHOOK_URL,
    ).toBe('https://gateway.example.com/_fxgate/webhooks/v3');
    expect(loadConfig({ FXGATE_GATEWAY_WEBHOOK_URL: 'http://10.0.0.5:8080/hooks' }).FXGATE_GATEWAY_WEBHOOK_URL).toBe(
      'http://10.0.0.5:8080/hooks',
    );
  });

  it.each([
    ['ftp://gateway.example.com/hooks', /must start with http:\/\/ or https:\/\//],
    ['not a url', /URL/i],
    ['https://gateway.example.com/hooks?token=1', /no query or fragment/],
    ['https://gateway.example.com/hooks#x', /no query or fragment/],
    ['https://user:secret@gateway.example.com/hooks', /must not contain credentials/],
  ])('refuses %s, naming the variable', (value, message) => {
    const found = problems({ FXGATE_GATEWAY_WEBHOOK_URL: value });
    expect(found.every((problem) => problem.startsWith('FXGATE_GATEWAY_WEBHOOK_URL: '))).toBe(true);
    expect(found.join('\n')).toMatch(message);
  });

  it('is where each org and mode is registered: <url>/<orgId>/<mode>', () => {
    const base = loadConfig({
      FXGATE_GATEWAY_WEBHOOK_URL: 'https://Gateway.example.com/_fxgate/webhooks/v3/',
    }).FXGATE_GATEWAY_WEBHOOK_URL!;
    expect(registrationUrl(base, '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c', 'live')).toBe(
      'https://gateway.example.com/_fxgate/webhooks/v3/0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c/live',
    );
  });
});

describe("the CLI's legacy webhooks", () => {
  const deps = {
    database: { driver: 'postgres' } as unknown as Database,
    registry: null!,
    store: null!,
    keyring: { keyring: randomKeyring(), source: 'FXGATE_SECRETS_KEY' },
    credentials: null!,
  };

  it("fxgate all: the gateway's own listener, over loopback, unless FXGATE_GATEWAY_WEBHOOK_URL says otherwise", () => {
    expect(ownWebhookBase('127.0.0.1', 8080)).toBe(`http://127.0.0.1:8080${LEGACY_WEBHOOK_PATH}`);
    expect(ownWebhookBase('0.0.0.0', 8080)).toBe(`http://127.0.0.1:8080${LEGACY_WEBHOOK_PATH}`);
    expect(ownWebhookBase('::', 8080)).toBe(`http://127.0.0.1:8080${LEGACY_WEBHOOK_PATH}`);
    expect(ownWebhookBase('localhost', 8080)).toBe(`http://127.0.0.1:8080${LEGACY_WEBHOOK_PATH}`);
    expect(ownWebhookBase('::1', 9000)).toBe(`http://[::1]:9000${LEGACY_WEBHOOK_PATH}`);
    expect(ownWebhookBase('10.0.0.5', 9000)).toBe(`http://10.0.0.5:9000${LEGACY_WEBHOOK_PATH}`);
    const own = (port: number) => ownWebhookBase('0.0.0.0', port);
    expect(legacyWebhooks(loadConfig({}), { ...deps, ownWebhookBase: own }).options.callbackBaseUrl).toBe(own);
    expect(
      legacyWebhooks(loadConfig({ FXGATE_GATEWAY_WEBHOOK_URL: 'https://gw.example.com/hooks' }), {
        ...deps,
        ownWebhookBase: own,
      }).options.callbackBaseUrl,
    ).toBe('https://gw.example.com/hooks');
  });

  it('fxgate gateway: only the configured URL; the worker as FXGATE_WEBHOOK_WORKER and _POLL_MS say', () => {
    expect(legacyWebhooks(loadConfig({}), deps).options).toMatchObject({
      callbackBaseUrl: null,
      worker: { enabled: true, pollIntervalMs: 1000 },
    });
    expect(
      legacyWebhooks(loadConfig({ FXGATE_WEBHOOK_WORKER: 'off', FXGATE_WEBHOOK_POLL_MS: '250' }), deps).options.worker,
    ).toEqual({ enabled: false, pollIntervalMs: 250 });
  });

  it('the delivery worker as FXGATE_WEBHOOK_ALLOWED_NETWORKS allows, none by default', () => {
    expect(legacyWebhooks(loadConfig({}), deps).options.outbound?.networks?.empty).toBe(true);
    expect(
      legacyWebhooks(loadConfig({ FXGATE_WEBHOOK_ALLOWED_NETWORKS: '10.20.0.0/16' }), deps).options.outbound?.networks
        ?.cidrs,
    ).toEqual(['10.20.0.0/16']);
  });
});
