/**
 * The CLI's configuration: read from a run's environment (src/cli/io.ts), a bad value or an
 * unknown name ending the run with 2 (its warning going to the run's stderr when allowed), and
 * its folders resolved against the run's working folder.
 */
import { join, resolve } from 'node:path';

import { type Config, loadConfig } from '../lib/config.js';
import { ConfigError } from '../lib/errors/internal-errors.js';
import { AllowedNetworks } from '../lib/net/allowed-networks.js';
import { usageError } from './exit.js';

export function cliConfig(
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  warn?: (line: string) => void,
): Config {
  let config: Config;
  try {
    config = loadConfig(env, { warn });
  } catch (error) {
    if (error instanceof ConfigError) throw usageError(error.message);
    throw error;
  }
  return {
    ...config,
    FXGATE_DATA_DIR: resolve(cwd, config.FXGATE_DATA_DIR),
    ...(config.FXGATE_UPSTREAM_KEYS_DIR === undefined
      ? {}
      : { FXGATE_UPSTREAM_KEYS_DIR: resolve(cwd, config.FXGATE_UPSTREAM_KEYS_DIR) }),
  };
}

/** Where the gateway keeps its own v3 key files. */
export function upstreamKeysDir(config: Config): string {
  return config.FXGATE_UPSTREAM_KEYS_DIR ?? join(config.FXGATE_DATA_DIR, 'gateway-keys');
}

/** The private networks outbound calls may reach (FXGATE_WEBHOOK_ALLOWED_NETWORKS, checked when the configuration was read). */
export function allowedNetworks(config: Config): AllowedNetworks {
  return AllowedNetworks.of(config.FXGATE_WEBHOOK_ALLOWED_NETWORKS);
}
