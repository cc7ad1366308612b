/**
 * How the CLI ends: the exit codes and CliError, the one error class commands throw to end with a
 * message (both defined in src/lib/errors/internal-errors.ts with every internal error).
 */
import { CliError, EXIT_CODES } from '../lib/errors/internal-errors.js';

export function usageError(message: string): CliError {
  return new CliError(message, EXIT_CODES.usage);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
