/**
 * docs/v3-client.md's program, run as an integrator runs it: its code block is written to a
 * folder outside the checkout, beside the sandbox key file it reads, with fxgate installed there
 * as a package (a link to this checkout, built), so that `fxgate/client` resolves through the
 * package's exports. Its baseUrl is pointed at a real core on loopback; its output is checked.
 * The program also type-checks against the package's declarations, where an amount given as a
 * number does not.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensureBuiltCli } from '../../cli/built-cli.js';
import { V3Harness } from '../../support/v3-harness.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PAGE = 'docs/v3-client.md';
/** The address the page's program names: the sandbox of `npm start`. */
const PAGE_BASE_URL = "'http://127.0.0.1:8080'";

/** The page's ```ts blocks, in order. */
async function codeBlocks(): Promise<string[]> {
  const text = await readFile(join(ROOT, PAGE), 'utf8');
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** tsc on `file` in `folder`, as an integrator's strict project compiles it; its diagnostics, empty when it compiles. */
async function typeErrors(folder: string, file: string): Promise<string> {
  try {
    await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--target',
        'es2023',
        '--skipLibCheck',
        '--typeRoots',
        join(ROOT, 'node_modules/@types'),
        '--types',
        'node',
        file,
      ],
      { cwd: folder },
    );
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

describe('docs/v3-client.md', () => {
  let harness: V3Harness;
  let folder: string;
  beforeAll(async () => {
    await ensureBuiltCli();
    harness = await V3Harness.start({ core: { rateLimits: { reads: 100_000, writes: 100_000 } } });
    folder = await mkdtemp(join(tmpdir(), 'fxgate-client-page-'));
    await mkdir(join(folder, 'node_modules'));
    await symlink(ROOT, join(folder, 'node_modules', 'fxgate'), 'dir');
  });
  afterAll(async () => {
    await harness?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('runs its program: a quote, a trade and the paginated list, against a real core', async () => {
    const [program] = await codeBlocks();
    expect(program).toContain("from 'fxgate/client'");
    expect(program).toContain(PAGE_BASE_URL);
    const key = await harness.createKey();
    await writeFile(join(folder, 'sandbox-key.json'), JSON.stringify(key.file, null, 2));
    await writeFile(join(folder, 'program.mts'), program!.replace(PAGE_BASE_URL, `'${harness.baseUrl}'`));

    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['program.mts'], {
      cwd: folder,
      env: { PATH: process.env.PATH },
    });
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^quote qte_[0-9a-f]{32}: [0-9]+\.[0-9]+ EUR at [0-9]+\.[0-9]+$/);
    expect(lines[1]).toMatch(/^trade trd_[0-9a-f]{32}: EXECUTED$/);
    const tradeId = lines[1]!.split(' ')[1]!.replace(/:$/, '');
    expect(lines.slice(2)).toEqual([
      expect.stringMatching(new RegExp(`^${tradeId} 250\\.00 USD -> [0-9]+\\.[0-9]+ EUR$`)),
    ]);
  });

  it('type-checks against fxgate/client’s declarations, which refuse an amount given as a number', async () => {
    const [program] = await codeBlocks();
    await writeFile(join(folder, 'typed.mts'), program!);
    expect(await typeErrors(folder, 'typed.mts')).toBe('');
    await writeFile(join(folder, 'untyped.mts'), program!.replace("amount: '250.00'", 'amount: 250'));
    expect(await typeErrors(folder, 'untyped.mts')).toMatch(
      /error TS2322: Type 'number' is not assignable to type 'string'/,
    );
  });
});
