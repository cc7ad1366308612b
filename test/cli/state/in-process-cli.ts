/**
 * The state commands run in the test's own process, as src/cli/main.ts runs them: the same
 * commander registrations, a usage error ending with 2, a CliError with its exit code and
 * `fxgate: message` on stderr, anything else with 1. What they print is captured.
 *
 * They read their configuration from process.env once per process (src/cli/config.ts), so a
 * test file sets FXGATE_DATA_DIR (and clears DATABASE_URL) before its first command.
 */
import { Command, CommanderError } from 'commander';
import { vi } from 'vitest';
import { registerAccountsCommand } from '../../../src/cli/commands/accounts.js';
import { registerKeysCommand } from '../../../src/cli/commands/keys.js';
import { registerOrgsCommand } from '../../../src/cli/commands/orgs.js';
import { registerUsageCommand } from '../../../src/cli/commands/usage.js';
import { registerWebhooksCommand } from '../../../src/cli/commands/webhooks.js';
import { CliError, EXIT_CODES, messageOf } from '../../../src/cli/exit.js';

export interface InProcessResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function program(out: { stdout: string; stderr: string }): Command {
  const root = new Command('fxgate')
    .exitOverride()
    .configureOutput({ writeOut: (text) => void (out.stdout += text), writeErr: (text) => void (out.stderr += text) });
  // Set before the commands are added, which inherit both settings, as in main.ts.
  for (const register of [registerKeysCommand, registerOrgsCommand, registerAccountsCommand, registerWebhooksCommand, registerUsageCommand]) register(root);
  return root;
}

/** Commands run one at a time: console is captured for the one running. */
let queue: Promise<unknown> = Promise.resolve();

export function fxgate(...args: string[]): Promise<InProcessResult> {
  const run = async (): Promise<InProcessResult> => {
    const out = { stdout: '', stderr: '' };
    const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void (out.stdout += `${parts.join(' ')}\n`));
    const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void (out.stderr += `${parts.join(' ')}\n`));
    // `usage` writes its report to stdout itself.
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    });
    let code: number = EXIT_CODES.ok;
    try {
      await program(out).parseAsync(args, { from: 'user' });
    } catch (caught) {
      if (caught instanceof CommanderError) code = caught.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
      else {
        out.stderr += `fxgate: ${messageOf(caught)}\n`;
        code = caught instanceof CliError ? caught.exitCode : EXIT_CODES.failure;
      }
    } finally {
      log.mockRestore();
      error.mockRestore();
      write.mockRestore();
    }
    return { code, ...out };
  };
  const result = queue.then(run, run);
  queue = result.catch(() => undefined);
  return result;
}
