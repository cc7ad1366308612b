/**
 * How the CLI ends: exit codes, and the one error class commands throw to end with a message.
 * 0 success; 1 the command failed (a dependency, a conflict); 2 the input was wrong (arguments,
 * configuration), so running it again unchanged cannot help.
 */
export const EXIT_CODES = { ok: 0, failure: 1, usage: 2 } as const;
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT_CODES.failure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, EXIT_CODES.usage);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
