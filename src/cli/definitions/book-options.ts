/**
 * The arguments and options the commands on an org's books repeat (orgs, accounts), declared once
 * so that they read and check alike: the org argument, the book (--mode) and the --enable/--disable
 * switch. Declarations only; imports commander and the CLI's argument parsers.
 */
import { Argument, type Command, Option } from 'commander';

import { type Mode, MODES } from '../../lib/auth/credential-vocabulary.js';
import { parseMode, parseOrgId } from '../arguments.js';
import { usageError } from '../exit.js';

/** `--mode`: `the book` a command works on, or `only this book` of those it shows. */
export function modeOption(role: 'the book' | 'only this book'): Option {
  return new Option('--mode <mode>', `${role}: ${MODES.join(' or ')}`).argParser(parseMode);
}

/** A subcommand on the books of the org its first argument names. */
export function orgCommand(parent: Command, name: string, description: string): Command {
  return parent
    .command(name)
    .description(description)
    .addArgument(new Argument('<org>', 'org id (a UUID)').argParser(parseOrgId));
}

/** A read of the org's books: all of them, or with --mode that one only. */
export function orgReadCommand(
  parent: Command,
  name: string,
  description: string,
  read: (orgId: string, mode: Mode | undefined) => Promise<void>,
): Command {
  return orgCommand(parent, name, description)
    .addOption(modeOption('only this book'))
    .action(async (orgId: string, options: { mode?: Mode }) => read(orgId, options.mode));
}

/** What a switch command gets: its book and which way it turns. */
export interface SwitchOptions {
  readonly mode: Mode;
  readonly enable?: boolean;
  readonly disable?: boolean;
}

/** `--mode`, required: the book a change is made in. */
export function bookOption(): Option {
  return modeOption('the book').makeOptionMandatory();
}

/** --enable/--disable, each described by what it does to the thing switched. */
export function switchOptions(command: Command, enable: string, disable: string): Command {
  return command
    .addOption(new Option('--enable', enable).conflicts('disable'))
    .addOption(new Option('--disable', disable).conflicts('enable'));
}

/** The --enable/--disable choice; exactly one is required. */
export function enabledFrom(options: SwitchOptions): boolean {
  if (options.enable === options.disable) throw usageError('give exactly one of --enable and --disable');
  return options.enable === true;
}
