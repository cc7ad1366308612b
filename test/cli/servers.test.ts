import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { Closers } from '../../src/cli/closers.js';
import { adminPort, coreOptions, createAdminListener, shadowOptions } from '../../src/cli/servers.js';
import { CORE_DEFAULTS } from '../../src/core/app.js';
import { GATEWAY_DEFAULTS } from '../../src/gateway/app.js';
import { SHADOW_DEFAULTS } from '../../src/gateway/shadow/shadow-mode.js';
import { loadConfig } from '../../src/lib/config.js';
import { EXIT_CODES } from '../../src/lib/errors/internal-errors.js';
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

describe('the admin listener off loopback', () => {
  const TOKEN = 'Zp4Lk9Qw2Er7Ty1Ui8Op3As6Df0Gh5Jk';

  it.each(['0.0.0.0', '::', '10.20.30.40', 'admin.example.test'])(
    'FXGATE_ADMIN_HOST=%s without FXGATE_ADMIN_TOKEN stops start-up with a usage error, before any listener exists',
    (host) => {
      for (const command of ['all', 'gateway', 'core'] as const) {
        const config = loadConfig({ FXGATE_ADMIN_HOST: host, FXGATE_ADMIN_PORT: '0' });
        expect(() => createAdminListener(config, command, new Closers())).toThrow(
          expect.objectContaining({
            exitCode: EXIT_CODES.usage,
            message: expect.stringContaining(
              `would bind ${host}, which is not a loopback address, and FXGATE_ADMIN_TOKEN is not set`,
            ),
          }),
        );
      }
    },
  );

  it('is made with a token off loopback, without one on loopback, and not at all when off, wherever it would bind', () => {
    expect(
      createAdminListener(
        loadConfig({ FXGATE_ADMIN_HOST: '0.0.0.0', FXGATE_ADMIN_TOKEN: TOKEN }),
        'all',
        new Closers(),
      ),
    ).not.toBeNull();
    expect(createAdminListener(loadConfig({ FXGATE_ADMIN_HOST: '::1' }), 'all', new Closers())).not.toBeNull();
    expect(
      createAdminListener(loadConfig({ FXGATE_ADMIN_HOST: '0.0.0.0', FXGATE_ADMIN_PORT: 'off' }), 'all', new Closers()),
    ).toBeNull();
    expect(createAdminListener(loadConfig({ FXGATE_ADMIN_HOST: '0.0.0.0' }), 'gateway', new Closers())).toBeNull();
  });

  it('asks for the token of FXGATE_ADMIN_TOKEN_FILE, which lets it bind off loopback', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fxgate-admin-token-file-'));
    const closers = new Closers();
    try {
      const file = path.join(dir, 'admin-token');
      await writeFile(file, `${TOKEN}\n`, { mode: 0o600 });
      const config = loadConfig({
        FXGATE_ADMIN_HOST: '0.0.0.0',
        FXGATE_ADMIN_PORT: '0',
        FXGATE_ADMIN_TOKEN_FILE: file,
      });
      const admin = createAdminListener(config, 'core', closers);
      expect(admin).not.toBeNull();
      admin!.add({ method: 'GET', url: '/admin/usage', handler: async () => ({ rows: [] }) });
      // Bound on loopback here: the setting above is what decided whether a token is needed.
      const url = await admin!.listen('127.0.0.1', 0);
      const statusWith = async (authorization?: string): Promise<number> => {
        const answer = await fetch(
          `${url}/admin/usage`,
          authorization === undefined ? {} : { headers: { authorization } },
        );
        await answer.arrayBuffer();
        return answer.status;
      };
      expect([await statusWith(), await statusWith(`Bearer ${TOKEN}x`), await statusWith(`Bearer ${TOKEN}`)]).toEqual([
        401, 401, 200,
      ]);
    } finally {
      await closers.closeAll();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['shorter than 32 characters', 'a'.repeat(31), 'at least 32'],
    ['with a space', `${'a'.repeat(20)} ${'b'.repeat(20)}`, 'visible ASCII without spaces'],
    ['with a non-ASCII letter', `${'a'.repeat(32)}é`, 'visible ASCII without spaces'],
  ])('refuses a token %s, without printing it', (_name, token, problem) => {
    let message = '';
    try {
      loadConfig({ FXGATE_ADMIN_TOKEN: token });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(new RegExp(`FXGATE_ADMIN_TOKEN.*${problem}`));
    expect(message).not.toContain(token);
  });
});
