import { describe, expect, it } from 'vitest';
import { CORE_DEFAULTS } from '../../src/core/app.js';
import { GATEWAY_DEFAULTS } from '../../src/gateway/app.js';
import { coreOptions } from '../../src/cli/servers.js';
import { loadConfig } from '../../src/lib/config.js';

describe('the servers as the CLI builds them', () => {
  it('give the core FXGATE_REQUEST_TIMEOUT_MS (every command that serves it: core, all), with the apps\' own default', () => {
    expect(coreOptions(loadConfig({ FXGATE_REQUEST_TIMEOUT_MS: '1500' })).requestTimeoutMs).toBe(1_500);
    expect(coreOptions(loadConfig({})).requestTimeoutMs).toBe(CORE_DEFAULTS.requestTimeoutMs);
    expect(GATEWAY_DEFAULTS.requestTimeoutMs).toBe(CORE_DEFAULTS.requestTimeoutMs);
  });
});
