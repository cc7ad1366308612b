import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, describe, expect, it } from 'vitest';

import { generatedFiles } from '../../../src/cli/commands/docs.js';
import { isStale, renderGeneratedFiles } from '../../../src/cli/docs/generated-files.js';
import { headingAnchors } from '../../../src/core/openapi/anchors.js';
import { fxgate } from '../in-process-cli.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The manual: the README, the changelog, every page of docs/ and the deployment's README. */
async function manualFiles(): Promise<string[]> {
  const pages = (await readdir(join(ROOT, 'docs')))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', 'CHANGELOG.md', ...pages.sort(), 'deploy/README.md'];
}

/** Markdown without its fenced blocks, and each inline code span replaced, so that neither is read as a link. */
function prose(markdown: string): string {
  return markdown.replace(/^\s*(```|~~~)[\s\S]*?^\s*\1.*$/gm, '').replace(/`[^`\n]*`/g, 'code');
}

/** Every anchor a page offers: its headings' and the explicit `<a id>` ones. */
async function anchorsOf(file: string): Promise<Set<string>> {
  const text = await readFile(file, 'utf8');
  return new Set([...headingAnchors(text), ...[...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]!)]);
}

/** The links of one page of the checkout at `root` that lead nowhere: a file that does not exist or lies outside the checkout, or an anchor its page lacks. */
async function deadLinks(page: string, root = ROOT): Promise<string[]> {
  const text = prose(await readFile(join(root, page), 'utf8'));
  const dead: string[] = [];
  for (const match of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
    const target = match[1]!;
    if (/^[a-z]+:/i.test(target)) continue;
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const file = path === '' ? join(root, page) : resolve(root, dirname(page), path);
    if (relative(root, file).startsWith('..')) {
      dead.push(`${page}: ${target} (outside the repository)`);
      continue;
    }
    const found = await stat(file).catch(() => undefined);
    if (!found) dead.push(`${page}: ${target} (no such file)`);
    else if (anchor !== undefined && !(found.isFile() && file.endsWith('.md') && (await anchorsOf(file)).has(anchor)))
      dead.push(`${page}: ${target} (no such anchor)`);
  }
  return dead;
}

describe('fxgate docs', () => {
  const temporary: string[] = [];
  afterAll(async () => {
    for (const folder of temporary) await rm(folder, { recursive: true, force: true });
  });

  it('every committed file with generated sections is what `npm run docs` generates', async () => {
    const states = await renderGeneratedFiles(ROOT, await generatedFiles());
    for (const state of states)
      expect(state.current, `${state.path} is stale: run \`npm run docs\``).toBe(state.generated);
  });

  it('every link of the manual leads to a file of the repository, and to an anchor that page has', async () => {
    const files = await manualFiles();
    expect(files).toEqual(
      expect.arrayContaining(['docs/contract.md', 'docs/architecture.md', 'docs/v3-api.md', 'docs/legacy-api.md']),
    );
    const dead = (await Promise.all(files.map((file) => deadLinks(file)))).flat();
    expect(dead).toEqual([]);
  });

  it('the link check finds a dead file, a dead anchor and a path outside the repository', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fxgate-links-'));
    temporary.push(root);
    await mkdir(join(root, 'docs'));
    for (const file of ['docs/contract.md', 'docs/v3-api.md']) await cp(join(ROOT, file), join(root, file));
    const page = 'docs/page.md';
    await writeFile(
      join(root, page),
      [
        '# Page',
        '[fine](contract.md#errors-catalog) [self](#page) [gone](missing.md) [anchor](v3-api.md#nowhere) [out](../../etc/hosts)',
        '`[in code](missing.md)`',
        '```',
        '[fenced](missing.md)',
        '```',
      ].join('\n'),
    );
    expect(await deadLinks(page, root)).toEqual([
      `${page}: missing.md (no such file)`,
      `${page}: v3-api.md#nowhere (no such anchor)`,
      `${page}: ../../etc/hosts (outside the repository)`,
    ]);
  });

  it('--check names every stale file and exits 1; --write regenerates them and nothing else', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fxgate-docs-'));
    temporary.push(root);
    const files = await generatedFiles();
    // Each file as generated now, so that this test does not depend on the checkout being up to date (the test above checks that).
    for (const state of await renderGeneratedFiles(ROOT, files)) {
      await mkdir(join(root, dirname(state.path)), { recursive: true });
      await writeFile(join(root, state.path), state.generated);
    }
    const [first, second] = files.filter((file) => file.path !== 'README.md');
    const marker = `<!-- generated:${Object.keys(first!.sections)[0]} -->`;
    const untouched = await readFile(join(root, first!.path), 'utf8');
    await writeFile(join(root, first!.path), untouched.replace(marker, `${marker}\n| a row nothing declares |`));
    const lastMarker = `<!-- /generated:${Object.keys(second!.sections).at(-1)} -->`;
    const secondText = await readFile(join(root, second!.path), 'utf8');
    await writeFile(join(root, second!.path), secondText.replace(lastMarker, `stale text\n${lastMarker}`));

    const check = await fxgate(['docs', '--check', '--root', root]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(`${first!.path}, ${second!.path} are stale: run \`npm run docs\``);
    for (const file of files)
      expect(check.stdout).toContain(`${file.path}: ${file === first || file === second ? 'stale' : 'up to date'}`);

    const write = await fxgate(['docs', '--write', '--root', root]);
    expect(write.code).toBe(0);
    expect(write.stdout).toContain(`${first!.path}: regenerated`);
    expect(write.stdout).toContain('README.md: up to date');
    expect(await readFile(join(root, first!.path), 'utf8')).toBe(untouched);
    expect((await renderGeneratedFiles(root, files)).filter(isStale)).toEqual([]);
  });

  it('checks the checkout it runs from, whatever the working folder', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'fxgate-docs-cwd-'));
    temporary.push(elsewhere);
    const check = await fxgate(['docs', '--check'], {}, { cwd: elsewhere });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toBe((await generatedFiles()).map((file) => `${file.path}: up to date\n`).join(''));
    expect(check.stderr).toBe('');
  });

  it('names the files a --root lacks, resolved against the working folder, in one line and without ENOENT', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'fxgate-docs-root-'));
    temporary.push(elsewhere);
    const check = await fxgate(['docs', '--check', '--root', '.'], {}, { cwd: elsewhere });
    expect(check.code).toBe(2);
    expect(check.stderr).toBe(
      `fxgate: ${elsewhere} has no README.md, docs/v3-api.md, docs/legacy-api.md, docs/legacy-gateway.md, docs/migrate-v1-to-v2.md, docs/migrate-v2-to-v3.md, CHANGELOG.md: give --root a checkout of the fxgate repository
`,
    );
    const fromRoot = await fxgate(['docs', '--check', '--root', '.'], {}, { cwd: ROOT });
    expect(fromRoot.code, fromRoot.stderr).toBe(0);
  });

  it('as a process started in another folder, checks the checkout it runs from: no ENOENT, every file up to date', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'fxgate-docs-process-'));
    try {
      // tsx by its own path: the other folder has no node_modules to find it in.
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/cli/main.ts'), 'docs', '--check'],
        { cwd: elsewhere, env: { PATH: process.env.PATH } },
      );
      expect(stderr).toBe('');
      expect(stdout).not.toContain('stale');
      expect(stdout).toContain(': up to date');
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('refuses to run without exactly one of --write and --check', async () => {
    const result = await fxgate(['docs']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('give exactly one of --write and --check');
  });
});
