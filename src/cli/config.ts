/** The CLI's configuration: read from the environment once per process, a bad value ending it with 2. */
import { join } from 'node:path';
import { type Config, ConfigError, loadConfig } from '../lib/config.js';
import { usageError } from './exit.js';

let resolved: Config | null = null;

export function cliConfig(): Config {
  if (resolved === null) {
    try {
      resolved = loadConfig();
    } catch (error) {
      if (error instanceof ConfigError) throw usageError(error.message);
      throw error;
    }
  }
  return resolved;
}

/** Where the gateway keeps its own v3 key files. */
export function upstreamKeysDir(config: Config): string {
  return config.FXGATE_UPSTREAM_KEYS_DIR ?? join(config.FXGATE_DATA_DIR, 'gateway-keys');
}
