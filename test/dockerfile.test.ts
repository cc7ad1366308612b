/**
 * The Docker image held to the product by reading its Dockerfile (no Docker engine runs here):
 * its ENTRYPOINT is the package's fxgate (node started with src/cli/node-start-flags.ts), so the
 * command is the role, and CMD a real fxgate command; it exposes the ports its settings listen
 * on; every ENV is a setting of src/lib/config.ts (or Node's) that loadConfig accepts; its admin
 * listener is scrapable in every role and refuses to start off loopback without a token; and it
 * seeds no sandbox.
 */
import { describe, expect, it } from 'vitest';

import { Closers } from '../src/cli/closers.js';
import { NODE_START_FLAGS } from '../src/cli/node-start-flags.js';
import { adminPort, createAdminListener } from '../src/cli/servers.js';
import { type Config, configSchema, loadConfig, sandboxSeeded } from '../src/lib/config.js';
import { containerArgv, packageBin, readImage } from './deploy/deploy-files.js';
import { NODE_SETTINGS, parseCommand } from './deploy/fxgate-containers.js';

const image = readImage();
const TOKEN = 'dockerfile-test-admin-token-0123456789abcdef';

/** The configuration a container of the image starts with, given these settings besides the image's. */
function containerConfig(extra: Record<string, string> = {}): Config {
  return loadConfig({ ...image.env, ...extra });
}

describe('the Dockerfile', () => {
  it('runs fxgate as its ENTRYPOINT, node started with its flags, so the command is the role, `fxgate all` by default', async () => {
    expect(image.entrypoint).toEqual(['node', ...NODE_START_FLAGS, packageBin()]);
    expect(image.cmd).toEqual(['all']);
    for (const [command, expected] of [
      [undefined, 'all'],
      [['gateway', '--upstream', 'http://core.internal:8080'], 'gateway'],
      [['core'], 'core'],
      [['schedule', '--json'], 'schedule'],
    ] as const) {
      const parsed = await parseCommand({
        where: `docker run IMAGE ${command?.join(' ') ?? ''}`,
        argv: containerArgv(image, undefined, command),
        env: {},
        files: new Map(),
      });
      expect(parsed).toEqual({ parsed: expect.objectContaining({ name: expected }) });
    }
  });

  it('sets only settings of src/lib/config.ts (or Node), all accepted by loadConfig', () => {
    const known = new Set(Object.keys(configSchema.shape));
    expect(Object.keys(image.env).filter((name) => !known.has(name) && !NODE_SETTINGS.has(name))).toEqual([]);
    expect(() => containerConfig()).not.toThrow();
  });

  it('exposes the public port and the admin port its settings listen on, in every role', () => {
    const config = containerConfig();
    expect(image.exposed).toEqual([String(config.PORT), String(config.FXGATE_ADMIN_PORT)]);
    expect(config.HOST).toBe('0.0.0.0');
    for (const role of ['all', 'gateway', 'core'] as const) expect(adminPort(config, role)).toBe(8081);
  });

  it('binds the admin listener off loopback only with a token: without one, start-up stops naming the fixes', () => {
    expect(containerConfig().FXGATE_ADMIN_HOST).toBe('0.0.0.0');
    for (const role of ['all', 'gateway', 'core'] as const) {
      expect(() => createAdminListener(containerConfig(), role, new Closers())).toThrow(
        /FXGATE_ADMIN_TOKEN is not set.*Set FXGATE_ADMIN_TOKEN .*or FXGATE_ADMIN_TOKEN_FILE .*or bind it to 127\.0\.0\.1 \(FXGATE_ADMIN_HOST\), or turn it off \(FXGATE_ADMIN_PORT=off\)/,
      );
      expect(createAdminListener(containerConfig({ FXGATE_ADMIN_TOKEN: TOKEN }), role, new Closers())).not.toBeNull();
      expect(
        createAdminListener(containerConfig({ FXGATE_ADMIN_HOST: '127.0.0.1' }), role, new Closers()),
      ).not.toBeNull();
    }
  });

  it('seeds no sandbox unless asked for, on the embedded database too', () => {
    expect(sandboxSeeded(containerConfig())).toBe(false);
    expect(sandboxSeeded(containerConfig({ FXGATE_SANDBOX_SEED: 'on' }))).toBe(true);
  });

  it('runs as the unprivileged node user', () => {
    expect(image.user).toBe('node');
  });
});
