import { describe, expect, it } from 'vitest';

import { adminPort, coreOptions, shadowOptions } from '../../src/cli/servers.js';
import { CORE_DEFAULTS } from '../../src/core/app.js';
import { GATEWAY_DEFAULTS } from '../../src/gateway/app.js';
import { SHADOW_DEFAULTS } from '../../src/gateway/shadow/shadow-mode.js';
import { loadConfig } from '../../src/lib/config.js';
import { AllowedNetworks } from '../../src/lib/net/allowed-networks.js';

describe('the servers as the CLI builds them', () => {
  it("give the core FXGATE_REQUEST_TIMEOUT_MS (every command that serves it: core, all), with the apps' own default", () => {
    expect(coreOptions(loadConfig({ FXGATE_REQUEST_TIMEOUT_MS: '1500' })).requestTimeoutMs).toBe(1_500);
    expect(coreOptions(loadConfig({})).requestTimeoutMs).toBe(CORE_DEFAULTS.requestTimeoutMs);
    expect(GATEWAY_DEFAULTS.requestTimeoutMs).toBe(CORE_DEFAULTS.requestTimeoutMs);
  });

  it('give FXGATE_WEBHOOK_ALLOWED_NETWORKS to every outbound caller: the core, the legacy webhooks, the shadow URL', () => {
    const config = loadConfig({
      FXGATE_WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8, fd00::/8',
      FXGATE_SHADOW_URL: 'http://10.1.2.3:8080',
    });
    const cidrs = ['10.0.0.0/8', 'fd00::/8'];
    expect(coreOptions(config).outbound?.networks?.cidrs).toEqual(cidrs);
    expect(shadowOptions(config)?.outbound?.networks?.cidrs).toEqual(cidrs);
    expect(coreOptions(loadConfig({})).outbound?.networks).toBe(AllowedNetworks.NONE);
  });
});

describe('shadow mode and the admin listener as the CLI wires them', () => {
  it('turn shadow mode on only with FXGATE_SHADOW_URL, with the configured sample, server and cut-over orgs', () => {
    expect(shadowOptions(loadConfig({}))).toBeUndefined();
    expect(shadowOptions(loadConfig({ FXGATE_SHADOW_URL: 'http://legacy:8080' }))).toEqual({
      legacyUrl: 'http://legacy:8080',
      sample: SHADOW_DEFAULTS.sample,
      serve: SHADOW_DEFAULTS.serve,
      cutoverOrgs: [],
      outbound: { networks: AllowedNetworks.NONE },
    });
    const org = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';
    expect(
      shadowOptions(
        loadConfig({
          FXGATE_SHADOW_URL: 'http://legacy:8080',
          FXGATE_SHADOW_SAMPLE: '0.1',
          FXGATE_SHADOW_SERVE: 'legacy',
          FXGATE_CUTOVER_ORGS: org,
        }),
      ),
    ).toEqual({
      legacyUrl: 'http://legacy:8080',
      sample: 0.1,
      serve: 'legacy',
      cutoverOrgs: [org],
      outbound: { networks: AllowedNetworks.NONE },
    });
  });

  it('put the admin listener on PORT+1 for `all`, nowhere for `gateway` and `core`, unless FXGATE_ADMIN_PORT says otherwise', () => {
    expect(adminPort(loadConfig({ PORT: '8080' }), 'all')).toBe(8081);
    expect(adminPort(loadConfig({ PORT: '0' }), 'all')).toBe(0);
    expect(adminPort(loadConfig({}), 'gateway')).toBeNull();
    expect(adminPort(loadConfig({}), 'core')).toBeNull();
    expect(adminPort(loadConfig({ FXGATE_ADMIN_PORT: '9000' }), 'gateway')).toBe(9000);
    expect(adminPort(loadConfig({ FXGATE_ADMIN_PORT: '9000' }), 'core')).toBe(9000);
    expect(adminPort(loadConfig({ FXGATE_ADMIN_PORT: 'off' }), 'all')).toBeNull();
    expect(() => adminPort(loadConfig({ PORT: '65535' }), 'all')).toThrow(/FXGATE_ADMIN_PORT/);
  });
});
