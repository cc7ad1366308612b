/**
 * docs/v3-client.md's program, run as an integrator runs it: its code block is written to a
 * folder outside the checkout, beside the sandbox key file it reads, with fxgate installed there
 * as a package (a link to this checkout, built), so that `fxgate/client` resolves through the
 * package's exports. Its baseUrl is pointed at a real core on loopback; its output is checked.
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
});
