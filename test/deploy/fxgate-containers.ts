/**
 * What every fxgate container of a deployment must be, on Compose and on Kubernetes alike: its
 * command a real `fxgate` command line, parsed by the CLI's own program; every setting it is
 * given one that src/lib/config.ts declares; its whole environment accepted by loadConfig, the
 * secret files it names replaced by the files make-secrets.sh wrote; and the settings a fleet
 * shares the same in every process. Each check returns the problems it found, each naming the
 * container, so that a planted mistake shows as exactly its problem. Reads files; runs nothing.
 */
import { EventEmitter } from 'node:events';

import type { Command } from 'commander';
import { CommanderError } from 'commander';

import { CliRun } from '../../src/cli/io.js';
import { NODE_START_FLAGS } from '../../src/cli/node-start-flags.js';
import { buildProgram } from '../../src/cli/program.js';
import { type Config, configSchema, loadConfig } from '../../src/lib/config.js';
import { ConfigError } from '../../src/lib/errors/internal-errors.js';
import { packageBin } from './deploy-files.js';

/** Node's own settings a container may set beside fxgate's: where the TLS CAs come from. */
export const NODE_SETTINGS: ReadonlySet<string> = new Set(['NODE_EXTRA_CA_CERTS', 'NODE_ENV', 'NODE_OPTIONS']);

/** The `fxgate` commands that serve. */
export const SERVER_COMMANDS: ReadonlySet<string> = new Set(['core', 'gateway']);

export interface FxgateContainer {
  /** Where it is declared, for the messages: `compose service gateway-1`. */
  readonly where: string;
  /** Its whole command line (`node dist/cli/main.js gateway --upstream ...`). */
  readonly argv: readonly string[];
  /** Its environment as written, secrets given the values the deploy README gives them. */
  readonly env: Readonly<Record<string, string>>;
  /** A file mounted into it, by its path inside, to the local file with the same contents. */
  readonly files: ReadonlyMap<string, string>;
}

export interface ParsedCommand {
  /** The fxgate command: `core`, `gateway`, ... */
  readonly name: string;
  readonly options: Readonly<Record<string, unknown>>;
}

/**
 * The fxgate command line of a container as the CLI parses it (options checked by their own
 * parsers), its action replaced so that nothing runs; or the problem the CLI reports.
 */
export async function parseCommand(
  container: FxgateContainer,
): Promise<{ parsed: ParsedCommand } | { problem: string }> {
  // The image's fxgate, node started with the flags it needs (src/cli/node-start-flags.ts).
  const start = ['node', ...NODE_START_FLAGS, packageBin()];
  const head = container.argv.slice(0, start.length);
  if (head.some((word, index) => word !== start[index]))
    return {
      problem: `${container.where}: the command starts ${JSON.stringify(head)}, not ${JSON.stringify(start)}, the image's fxgate`,
    };
  const args = container.argv.slice(start.length);
  let stderr = '';
  const run = new CliRun({
    stdout: { write: () => true },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    cwd: '/app',
    signals: new EventEmitter(),
    exit: () => undefined,
  });
  const program = buildProgram(run);
  // `fxgate --help` (a one-off container's default) prints and ends with 0; a command is a name.
  const optionsOnly = args[0]?.startsWith('-') === true;
  const command = program.commands.find((candidate) => candidate.name() === args[0]);
  if (command === undefined && !optionsOnly)
    return { problem: `${container.where}: ${JSON.stringify(args[0])} is not an fxgate command` };
  let parsed: ParsedCommand | null = null;
  command?.action((options: Record<string, unknown>, self: Command) => {
    parsed = { name: self.name(), options };
  });
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (optionsOnly && error.exitCode === 0) return { parsed: { name: 'fxgate', options: {} } };
    return { problem: `${container.where}: fxgate ${args.join(' ')}: ${stderr.trim() || error.message}` };
  }
  return parsed === null ? { problem: `${container.where}: fxgate ${args.join(' ')} ran no command` } : { parsed };
}

/** Every setting of a container that is neither fxgate's nor Node's. */
export function unknownSettings(container: FxgateContainer): string[] {
  const known = new Set(Object.keys(configSchema.shape));
  return Object.keys(container.env)
    .filter((name) => !known.has(name) && !NODE_SETTINGS.has(name))
    .map((name) => `${container.where}: ${name} is not a setting of src/lib/config.ts (nor one of Node's)`);
}

/** The environment with every path of a mounted file replaced by the local file holding the same. */
export function localEnv(container: FxgateContainer): Record<string, string> {
  return Object.fromEntries(
    Object.entries(container.env).map(([name, value]) => [name, container.files.get(value) ?? value]),
  );
}

/** The container's configuration as fxgate loads it at start-up, or why it would refuse to start. */
export function loadContainerConfig(container: FxgateContainer): { config: Config } | { problem: string } {
  try {
    return { config: loadConfig(localEnv(container)) };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { problem: `${container.where}: fxgate would refuse to start: ${error.problems.join('; ')}` };
  }
}

/** What a production fleet needs of every server: PostgreSQL through PgBouncer, Redis through Sentinel, the secrets from files. */
export function fleetSettingProblems(container: FxgateContainer, config: Config): string[] {
  const problems: string[] = [];
  const say = (text: string): void => void problems.push(`${container.where}: ${text}`);
  if (config.DATABASE_URL === undefined) say('DATABASE_URL is unset: a fleet shares one PostgreSQL');
  if (config.FXGATE_DB_POOL_MODE !== 'transaction')
    say(
      'FXGATE_DB_POOL_MODE is not transaction: the fleet reaches PostgreSQL through PgBouncer in transaction pooling',
    );
  if (config.FXGATE_REDIS_SENTINELS === undefined)
    say('FXGATE_REDIS_SENTINELS is unset: the store follows its primary through Sentinel');
  if (config.FXGATE_ADMIN_PORT === undefined || config.FXGATE_ADMIN_PORT === 'off')
    say('FXGATE_ADMIN_PORT is off: Prometheus scrapes every admin listener');
  for (const literal of ['FXGATE_SECRETS_KEY', 'FXGATE_ADMIN_TOKEN'] as const)
    if (container.env[literal] !== undefined)
      say(`${literal} is written in the file: give it as ${literal}_FILE from a secret`);
  if (container.env.FXGATE_SECRETS_KEY_FILE === undefined)
    say('FXGATE_SECRETS_KEY_FILE is unset: on PostgreSQL the servers need the sealing key');
  return problems;
}

/** Settings every process of a fleet must share (one database, one store, one sealing key, one issuer). */
export const FLEET_WIDE_SETTINGS = [
  'DATABASE_URL',
  'FXGATE_DB_POOL_MODE',
  'FXGATE_REDIS_SENTINELS',
  'FXGATE_REDIS_SENTINEL_NAME',
  'FXGATE_SECRETS_KEY_FILE',
  'FXGATE_JWT_ISSUER',
  'FXGATE_ADMIN_TOKEN_FILE',
] as const;

/** A setting that differs between the containers: each distinct value with who has it. */
export function sharedSettingProblems(containers: readonly FxgateContainer[], names: readonly string[]): string[] {
  const problems: string[] = [];
  for (const name of names) {
    const values = new Map<string, string[]>();
    for (const container of containers) {
      const value = container.env[name] ?? '(unset)';
      values.set(value, [...(values.get(value) ?? []), container.where]);
    }
    if (values.size > 1)
      problems.push(
        `${name} differs across the fleet: ${[...values].map(([value, where]) => `${value} in ${where.join(', ')}`).join('; ')}`,
      );
  }
  return problems;
}
