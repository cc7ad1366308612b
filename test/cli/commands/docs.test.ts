import { cp, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generatedFiles, v3Operations } from '../../../src/cli/commands/docs.js';
import { isStale, renderGeneratedFiles } from '../../../src/lib/docs/generated-files.js';
import { killAllCliProcesses, runCli } from '../cli-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('fxgate docs', () => {
  const temporary: string[] = [];
  afterAll(async () => {
    await killAllCliProcesses();
    for (const folder of temporary) await rm(folder, { recursive: true, force: true });
  });

  it('every committed file with generated sections is what `npm run docs` generates', async () => {
    const states = await renderGeneratedFiles(ROOT, await generatedFiles());
    for (const state of states) expect(state.current, `${state.path} is stale: run \`npm run docs\``).toBe(state.generated);
  });

  it('reads the v3 operations from their declarations without a database', async () => {
    const operations = await v3Operations();
    const named = operations.map((operation) => `${operation.method} ${operation.path}`);
    expect(named).toContain('POST /v3/fx/quotes');
    expect(named).toContain('DELETE /v3/fx/webhook-endpoints/:id');
    expect(new Set(named).size).toBe(named.length);
  });

  it('--check names every stale file and exits 1; --write regenerates them and nothing else', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fxgate-docs-'));
    temporary.push(root);
    const files = await generatedFiles();
    for (const file of files) {
      await mkdir(join(root, dirname(file.path)), { recursive: true });
      await cp(join(ROOT, file.path), join(root, file.path));
    }
    const [first, second] = files.filter((file) => file.path !== 'README.md');
    const marker = `<!-- generated:${Object.keys(first!.sections)[0]} -->`;
    const untouched = await readFile(join(root, first!.path), 'utf8');
    await writeFile(join(root, first!.path), untouched.replace(marker, `${marker}\n| a row nothing declares |`));
    const lastMarker = `<!-- /generated:${Object.keys(second!.sections).at(-1)} -->`;
    const secondText = await readFile(join(root, second!.path), 'utf8');
    await writeFile(join(root, second!.path), secondText.replace(lastMarker, `stale text\n${lastMarker}`));

    const check = await runCli(['docs', '--check', '--root', root]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(`${first!.path}, ${second!.path} are stale: run \`npm run docs\``);
    for (const file of files) expect(check.stdout).toContain(`${file.path}: ${file === first || file === second ? 'stale' : 'up to date'}`);

    const write = await runCli(['docs', '--write', '--root', root]);
    expect(write.code).toBe(0);
    expect(write.stdout).toContain(`${first!.path}: regenerated`);
    expect(write.stdout).toContain('README.md: up to date');
    expect(await readFile(join(root, first!.path), 'utf8')).toBe(untouched);
    expect((await renderGeneratedFiles(root, files)).filter(isStale)).toEqual([]);
  });

  it('refuses to run without exactly one of --write and --check', async () => {
    const result = await runCli(['docs']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('give exactly one of --write and --check');
  });
});
