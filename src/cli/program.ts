/**
 * fxgate's command line as a function: `runCli(args, io)` builds the commander program for one
 * run, with every command printing, reading its configuration and ending through io
 * (src/cli/io.ts), and resolves to the exit code instead of ending the process. main.ts runs it
 * for the process; tests run it in process with captured output. The program holds the
 * commands' declarations only (src/cli/definitions/): each action imports its command's work
 * when it runs, so a run loads what its own command needs and no other command's modules.
 */
import { readFileSync } from 'node:fs';

import { Command, CommanderError } from 'commander';

import { CliError, EXIT_CODES, type ExitCode } from '../lib/errors/internal-errors.js';
import { registerAccountsCommand } from './definitions/accounts.js';
import { registerAllCommand } from './definitions/all.js';
import { registerCoreCommand } from './definitions/core.js';
import { registerDiffCommand } from './definitions/diff.js';
import { registerDocsCommand } from './definitions/docs.js';
import { registerGatewayCommand } from './definitions/gateway.js';
import { registerKeysCommand } from './definitions/keys.js';
import { registerMigrateCommand } from './definitions/migrate.js';
import { registerOpenApiCommand } from './definitions/openapi.js';
import { registerOrgsCommand } from './definitions/orgs.js';
import { registerScheduleCommand } from './definitions/schedule.js';
import { registerSecretsCommand } from './definitions/secrets.js';
import { registerSignCommand } from './definitions/sign.js';
import { registerUsageCommand } from './definitions/usage.js';
import { registerWebhooksCommand } from './definitions/webhooks.js';
import { messageOf } from './exit.js';
import { type CliIo, CliRun, type CliWriter } from './io.js';

/** package.json is two folders up from both src/cli and dist/cli. */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** Commander's own width for help that goes to a pipe or a capture. */
const PIPE_HELP_WIDTH = 80;

/** Help is wrapped to a terminal's width. */
function helpWidth(writer: CliWriter): number {
  return writer.isTTY === true && writer.columns !== undefined ? writer.columns : PIPE_HELP_WIDTH;
}

/** Every command, registered on a program for one run. */
const COMMANDS: readonly ((program: Command, run: CliRun) => void)[] = [
  registerAllCommand,
  registerCoreCommand,
  registerGatewayCommand,
  registerKeysCommand,
  registerOrgsCommand,
  registerAccountsCommand,
  registerWebhooksCommand,
  registerSecretsCommand,
  registerMigrateCommand,
  registerSignCommand,
  registerUsageCommand,
  registerScheduleCommand,
  registerDiffCommand,
  registerDocsCommand,
  registerOpenApiCommand,
];

/**
 * The program of one run, every command registered. runCli parses with it; the deployment's test
 * parses the command lines of its manifests with it, each command's action replaced.
 */
export function buildProgram(run: CliRun): Command {
  const { io } = run;
  const program = new Command('fxgate')
    .description('The v3 FX trading and settlement core, and the v1/v2 compatibility gateway in front of it.')
    .version(packageVersion())
    // Both set before the commands are added, which inherit them: commander throws instead of
    // exiting (a usage error ends the run with 2, help and the version with 0), and writes to io.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
    });
  for (const register of COMMANDS) register(program, run);
  return program;
}

/**
 * Runs the command line `args` (the arguments after the program's name) and resolves to its
 * exit code: 0, 1 for a failed command, 2 for bad input (src/cli/exit.ts). A server command
 * resolves once it serves; its run then ends through io.exit when it stops.
 */
export async function runCli(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const run = new CliRun(io);
  try {
    await buildProgram(run).parseAsync([...args], { from: 'user' });
    return run.exitCode;
  } catch (error) {
    // Commander has written its message (or the help, or the version) already.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    run.err(`fxgate: ${messageOf(error)}`);
    return error instanceof CliError ? error.exitCode : EXIT_CODES.failure;
  }
}
