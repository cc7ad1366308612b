import { Command } from 'commander';
import { describe, expect, it } from 'vitest';

import {
  bookOption,
  enabledFrom,
  modeOption,
  orgCommand,
  orgReadCommand,
  switchOptions,
} from '../../../src/cli/definitions/book-options.js';
import { CliError, EXIT_CODES } from '../../../src/lib/errors/internal-errors.js';

const ORG = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';

/** A parent command that throws instead of exiting, and keeps commander's messages to itself. */
function parent(): Command {
  return new Command('books').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
}

describe('book options', () => {
  it('reads the org argument as a lower-case UUID and refuses anything else', async () => {
    const seen: string[] = [];
    const books = parent();
    orgCommand(books, 'show', 'Show.').action((orgId: string) => void seen.push(orgId));
    await books.parseAsync(['show', ORG.toUpperCase()], { from: 'user' });
    expect(seen).toEqual([ORG]);
    await expect(books.parseAsync(['show', 'not-an-org'], { from: 'user' })).rejects.toThrow();
  });

  it('passes a read the book asked for, or none', async () => {
    const seen: unknown[] = [];
    const books = parent();
    orgReadCommand(books, 'show', 'Show.', async (orgId, mode) => void seen.push([orgId, mode]));
    await books.parseAsync(['show', ORG], { from: 'user' });
    await books.parseAsync(['show', ORG, '--mode', 'Live'], { from: 'user' });
    expect(seen).toEqual([
      [ORG, undefined],
      [ORG, 'live'],
    ]);
  });

  it('requires the book of a change, and describes --mode by its role', async () => {
    expect(modeOption('only this book').description).toBe('only this book: sandbox or live');
    expect(bookOption().description).toBe('the book: sandbox or live');
    const books = parent();
    switchOptions(orgCommand(books, 'trading', 'Trading.').addOption(bookOption()), 'allow it', 'forbid it').action(
      () => undefined,
    );
    await expect(books.parseAsync(['trading', ORG, '--enable'], { from: 'user' })).rejects.toThrow(/--mode/);
    await expect(
      books.parseAsync(['trading', ORG, '--mode', 'live', '--enable', '--disable'], { from: 'user' }),
    ).rejects.toThrow(/cannot be used with/);
  });

  it('takes exactly one of --enable and --disable', () => {
    expect(enabledFrom({ mode: 'live', enable: true })).toBe(true);
    expect(enabledFrom({ mode: 'live', disable: true })).toBe(false);
    for (const neither of [{ mode: 'live' as const }, { mode: 'live' as const, enable: true, disable: true }]) {
      expect(() => enabledFrom(neither)).toThrow(CliError);
      try {
        enabledFrom(neither);
      } catch (error) {
        expect((error as CliError).exitCode).toBe(EXIT_CODES.usage);
        expect((error as CliError).message).toBe('give exactly one of --enable and --disable');
      }
    }
  });
});
