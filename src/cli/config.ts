/** The CLI's configuration: read from the environment once per process, a bad value ending it with 2. */
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
