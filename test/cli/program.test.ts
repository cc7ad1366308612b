/**
 * runCli (src/cli/program.ts) in process: commander's own output and exit codes through the
 * run's io, a command's CliError as `fxgate: message` with its code, and a run that reads its
 * environment and folder from its io, not from the test process.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EXIT_CODES } from '../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../src/lib/ids.js';
import { createTestPostgres, type TestDatabase } from '../support/databases.js';
import { fxgate } from './in-process-cli.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('runCli', () => {
  it('prints the version and the help to stdout with exit 0', async () => {
    expect(await fxgate(['--version'])).toEqual({ code: EXIT_CODES.ok, stdout: `${VERSION}\n`, stderr: '' });
    const help = await fxgate(['--help']);
    expect(help).toMatchObject({ code: EXIT_CODES.ok, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: fxgate \[options\] \[command\]\n/);
    // Not a terminal: wrapped at commander's width for a pipe.
    for (const line of help.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it("ends commander's usage errors with exit 2, its message on stderr", async () => {
    expect(await fxgate(['cores'])).toEqual({
      code: EXIT_CODES.usage,
      stdout: '',
      stderr: "error: unknown command 'cores'\n(Did you mean core?)\n",
    });
    expect(await fxgate(['migrate', '--force'])).toEqual({
      code: EXIT_CODES.usage,
      stdout: '',
      stderr: "error: unknown option '--force'\n",
    });
    // A group without its subcommand shows its help, on stderr.
    const group = await fxgate(['keys']);
    expect(group).toMatchObject({ code: EXIT_CODES.usage, stdout: '' });
    expect(group.stderr).toMatch(/^Usage: fxgate keys \[options\] \[command\]\n/);
  });

  it("ends a command's CliError with its exit code and `fxgate: message` on stderr", async () => {
    const missing = join(tmpdir(), `fxgate-absent-${newUuid()}.json`);
    const refused = await fxgate(['sign', '--key', missing, '--legacy']);
    expect(refused.code).toBe(EXIT_CODES.usage);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(new RegExp(`^fxgate: cannot use the key file ${missing}: .*\\n$`));
  });
});

describe('runCli reads its environment and folder from its io', () => {
  let database: TestDatabase;
  let cwd: string;
  beforeAll(async () => {
    database = await createTestPostgres();
    cwd = await mkdtemp(join(tmpdir(), 'fxgate-cwd-'));
  });
  afterAll(async () => {
    await database?.drop();
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  it("resolves a relative FXGATE_DATA_DIR and --out against the run's folder", async () => {
    const env = { DATABASE_URL: database.url!, FXGATE_DATA_DIR: 'state' };
    const intoDataDir = await fxgate(
      ['keys', 'create', '--org', newUuid(), '--mode', 'live', '--scopes', 'view'],
      env,
      { cwd },
    );
    expect(intoDataDir).toMatchObject({ code: 0, stderr: '' });
    const [, name, path] = /^name: (\S+)\nfile: (\S+)\n$/.exec(intoDataDir.stdout)!;
    expect(path).toBe(join(cwd, 'state', 'keys', `${name!.split('/')[3]}.json`));

    const out = await fxgate(
      ['keys', 'create', '--org', newUuid(), '--mode', 'live', '--scopes', 'view', '--out', 'mine.json'],
      env,
      { cwd },
    );
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout).toContain(`file: ${join(cwd, 'mine.json')}\n`);
    expect((await stat(join(cwd, 'mine.json'))).mode & 0o777).toBe(0o600);
  });

  it("uses the run's environment only: without DATABASE_URL there, the embedded database in its folder", async () => {
    expect(process.env.DATABASE_URL).toBeDefined();
    // A file where the embedded data folder (./data by default) would go: opening it fails at once, naming the path.
    const folder = await mkdtemp(join(tmpdir(), 'fxgate-cwd-'));
    try {
      await writeFile(join(folder, 'data'), 'not a folder');
      const refused = await fxgate(['migrate'], {}, { cwd: folder });
      expect(refused).toMatchObject({ code: EXIT_CODES.failure, stdout: '' });
      expect(refused.stderr).toMatch(new RegExp(`^fxgate: .*'${join(folder, 'data')}'`));
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
