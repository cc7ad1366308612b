/**
 * Repository hygiene: every reference a reader follows resolves inside the repository. Source,
 * mappings, tests, build files and the manual cite no document outside it (the contract is
 * docs/contract.md, cited by its stable `<a id>` anchors), and every `docs/contract.md#<anchor>`
 * that code or a test cites names an anchor the contract has. Every path-like reference in a
 * comment (src/, test/, mappings/) or in the manual (README.md, docs/*.md, mappings/README.md and
 * CHANGELOG.md but its released sections) names a file or folder that exists, and a count of the
 * error catalog the manual states is the catalog's. Reads files only; touches nothing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { ERROR_CATALOG, ERROR_CODES } from '../src/lib/errors/v3-error-catalog.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));
const CONTRACT = 'docs/contract.md';
/** The build and CI files, read with the code. */
const BUILD_FILES = [
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.client.json',
  'eslint.config.js',
  'vitest.config.ts',
  'Dockerfile',
  '.dockerignore',
  '.ci',
];

/** Citations of documents a reader of the repository cannot open, by the form they took. */
const OUTSIDE_CITATIONS: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  { name: 'a numbered spec section', pattern: /\bspec(?:'s)? (?:table )?\d+(?:\.\d+)*/gi },
  { name: 'a numbered DESIGN section', pattern: /\bDESIGN(?:\.md)? \d+(?:\.\d+)*/g },
  { name: 'the legacy contract notes', pattern: /LEGACY-CONTRACT/g },
  { name: 'the interface spec file', pattern: /interface-spec/g },
  { name: 'a path outside the repository', pattern: /\.\.\/shared\b/g },
];

/** A source, test or mappings file as the manual names it, so that a move cannot leave the manual pointing nowhere. */
const REPOSITORY_PATH = /\b(?:src|test|mappings)\/[A-Za-z0-9_./-]+\.(?:ts|js|json|md)\b/g;
/** The examples of the layout rule (`src/x/y.ts` mirrored by `test/x/y.test.ts`) name no file. */
const PLACEHOLDER_PATH = /^(?:src|test)\/x\/y\./;

/**
 * A path-like token: a repository path (`src/...`, `test/...`, `docs/...`, `mappings/...`), a
 * relative module path (`./x.js`, `../x/y.ts`) or a segment of one (`lib/foo.ts`). Not after a
 * word, a dot, a slash, `@`, `:` or `|`: a URL, a package (`@scope/x.js`) or one of the
 * alternatives of a URL pattern (`/v1|v2|v3/openapi.json`) is no file of the repository.
 */
const PATH_TOKEN =
  /(?<![\w./@:|-])(?:(?:src|test|docs|mappings|deploy)\/[\w./-]*[\w-]|(?:\.\.?\/)+[\w./-]*\.(?:ts|js|mjs|json|md|sql|yaml)\b|[a-z][\w-]*\/[\w./-]*\.(?:ts|js|mjs|json|md|sql|yaml)\b)/g;
/** What a path-like token may name without being in the repository, each with its reason. */
const NOT_IN_THE_REPOSITORY: readonly { readonly pattern: RegExp; readonly why: string }[] = [
  { pattern: /^(?:\.\/)?dist\//, why: 'the build output, made by `npm run build`' },
  { pattern: /^(?:\.\/)?data\//, why: "the data folder a running fxgate makes (FXGATE_DATA_DIR's default)" },
  { pattern: /^(?:\.\/)?node_modules\//, why: 'the installed packages' },
  { pattern: PLACEHOLDER_PATH, why: 'the example of the layout rule' },
];
/** The repository's top folders a path may start with. */
const TOP_FOLDER = /^(?:src|test|docs|mappings|deploy)\//;

/** `docs/contract.md#anchor`, the one way code and tests cite the contract. */
const CONTRACT_CITATION = /docs\/contract\.md#([A-Za-z0-9_-]*)/g;

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  readonly why: string;
}

/** Text files under the given paths (files or folders), relative to the root; missing paths are skipped. */
function filesUnder(...paths: string[]): string[] {
  const found: string[] = [];
  const visit = (path: string): void => {
    const absolute = join(ROOT, path);
    if (!existsSync(absolute)) return;
    if (statSync(absolute).isDirectory()) {
      for (const entry of readdirSync(absolute).sort()) if (entry !== 'node_modules') visit(join(path, entry));
      return;
    }
    const bytes = readFileSync(absolute);
    if (!bytes.includes(0)) found.push(path);
  };
  for (const path of paths) visit(path);
  return found.filter((file) => file !== THIS_FILE);
}

/**
 * A comment continued on the next line is read as one line (`(spec` then `* 2.5)` is a citation
 * too): each line is joined to the next with its comment leader dropped, and a match is reported
 * at the line it starts on.
 */
function joinedLines(text: string): { readonly joined: string; readonly lineAt: (offset: number) => number } {
  const lines = text.split('\n');
  const starts: number[] = [];
  let joined = '';
  for (const line of lines) {
    starts.push(joined.length);
    joined += `${line.replace(/^\s*(?:\*|\/\/|#)?\s*/, '')} `;
  }
  const lineAt = (offset: number): number => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (starts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };
  return { joined, lineAt };
}

function outsideCitations(file: string, text: string): Finding[] {
  const { joined, lineAt } = joinedLines(text);
  const findings: Finding[] = [];
  for (const { name, pattern } of OUTSIDE_CITATIONS) {
    for (const match of joined.matchAll(pattern))
      findings.push({ file, line: lineAt(match.index), text: match[0], why: name });
  }
  return findings;
}

/** The `<a id="...">` anchors of a markdown text, in order. */
function explicitAnchors(markdown: string): string[] {
  return [...markdown.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]!);
}

function unknownContractAnchors(file: string, text: string, anchors: ReadonlySet<string>): Finding[] {
  const findings: Finding[] = [];
  text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(CONTRACT_CITATION)) {
      if (!anchors.has(match[1]!))
        findings.push({ file, line: index + 1, text: match[0], why: `no anchor "${match[1]}" in ${CONTRACT}` });
    }
  });
  return findings;
}

/** The comments of a TypeScript or JavaScript text, each with its offset; `//` after `:` is a URL's. */
function commentsOf(text: string): { readonly text: string; readonly index: number }[] {
  return [...text.matchAll(/\/\*[\s\S]*?\*\/|(?<!:)\/\/[^\n]*/g)].map((match) => ({
    text: match[0],
    index: match.index,
  }));
}

/** The text of CHANGELOG.md a reader follows today: its released sections are history, kept as written. */
function unreleasedChangelog(text: string): string {
  const lines = text.split('\n');
  let released = false;
  return lines
    .map((line) => {
      if (/^## /.test(line)) released = false;
      else if (/^### /.test(line)) released = !/^### Unreleased\b/.test(line);
      return released ? '' : line;
    })
    .join('\n');
}

/**
 * Whether a path-like token names something that exists: a relative path against the citing
 * file's folder (`./test/...` as a command line gives it, against the root), a repository path
 * against the root, a segment against the folder, the root or as the end of a repository path;
 * `.js` names its `.ts` source.
 */
function resolves(file: string, token: string, repositoryPaths: readonly string[]): boolean {
  const path = token.replace(/\/$/, '');
  const exists = (candidate: string): boolean =>
    [candidate, candidate.replace(/\.js$/, '.ts'), candidate.replace(/\.mjs$/, '.mts')].some((name) =>
      existsSync(join(ROOT, name)),
    );
  const folder = dirname(file);
  if (/^\.\.?\//.test(path))
    return exists(normalize(join(folder, path))) || (TOP_FOLDER.test(path.slice(2)) && exists(path.slice(2)));
  if (TOP_FOLDER.test(path)) return exists(path);
  if (exists(normalize(join(folder, path))) || exists(path)) return true;
  const ends = [`/${path}`, `/${path.replace(/\.js$/, '.ts')}`];
  return repositoryPaths.some((known) => ends.some((end) => known.endsWith(end)));
}

function stalePaths(file: string, text: string, repositoryPaths: readonly string[]): Finding[] {
  const parts = /\.(?:ts|js|mjs|mts)$/.test(file) ? commentsOf(text) : [{ text, index: 0 }];
  const findings: Finding[] = [];
  for (const part of parts) {
    for (const match of part.text.matchAll(PATH_TOKEN)) {
      const token = match[0];
      if (NOT_IN_THE_REPOSITORY.some(({ pattern }) => pattern.test(token))) continue;
      // A pattern (`docs/migrate-<name>.md`, `docs/migrate-*.md`): some path must start with its fixed part.
      const pattern = /^[<*{]/.test(part.text.charAt(match.index + token.length));
      if (pattern ? repositoryPaths.some((known) => known.startsWith(token)) : resolves(file, token, repositoryPaths))
        continue;
      const line = text.slice(0, part.index + match.index).split('\n').length;
      findings.push({ file, line, text: token, why: 'no such file or folder; name what exists now' });
    }
  }
  return findings;
}

/**
 * The counts of the error catalog the manual states, each in its one phrasing and checked against
 * the catalog; any other "N codes" (HTTP statuses aside) is a count nothing checks.
 */
function catalogCounts(file: string, text: string): Finding[] {
  const codes = ERROR_CODES as readonly string[];
  const server = codes.filter((code) => code.startsWith('REQUEST_')).length;
  const rows = Object.values(ERROR_CATALOG);
  const phrasings: readonly { readonly pattern: RegExp; readonly counts: readonly number[] }[] = [
    {
      pattern: /(\d+) codes: the (\d+) codes of the v3 contract, and (\d+) that the HTTP server/g,
      counts: [codes.length, codes.length - server, server],
    },
    {
      pattern: /one of the (\d+) codes v3 was first published with/g,
      counts: [rows.filter((row) => row.origin === 'spec').length],
    },
    { pattern: /The v3 catalog has (\d+) codes/g, counts: [codes.length] },
    { pattern: /one of the (\d+) codes fxgate added/g, counts: [rows.filter((row) => row.origin === 'fxgate').length] },
  ];
  const { joined, lineAt } = joinedLines(text);
  const findings: Finding[] = [];
  const checked = new Set<number>();
  for (const { pattern, counts } of phrasings) {
    for (const match of joined.matchAll(pattern)) {
      const stated = match.slice(1).map(Number);
      for (let at = match.index; at < match.index + match[0].length; at += 1) checked.add(at);
      if (stated.join() !== counts.join())
        findings.push({
          file,
          line: lineAt(match.index),
          text: match[0],
          why: `the catalog's counts are ${counts.join(', ')}`,
        });
    }
  }
  for (const match of joined.matchAll(/\b(\d+)(?: codes\b|-code\b)/g)) {
    if (checked.has(match.index) || /^[1-5]\d\d$/.test(match[1]!)) continue;
    findings.push({
      file,
      line: lineAt(match.index),
      text: match[0],
      why: 'a count of codes no test checks: drop it or state it in a phrasing catalogCounts checks',
    });
  }
  return findings;
}

function report(findings: readonly Finding[]): string {
  return findings.map((finding) => `${finding.file}:${finding.line}: ${finding.text} (${finding.why})`).join('\n');
}

function read(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}

describe('the detectors', () => {
  it('find outside citations, on one line or continued on the next', () => {
    const text = [
      '/** The body (spec 2.2) and the lock (DESIGN 3.4). */',
      ' * as the v1 account (spec',
      ' * 2.5) does;',
      '// see ../shared/LEGACY-CONTRACT.md and Spec 7.4 rule 1',
    ].join('\n');
    const found = outsideCitations('x.ts', text).map((finding) => `${finding.line}: ${finding.text}`);
    expect(found.sort()).toEqual([
      '1: DESIGN 3.4',
      '1: spec 2.2',
      '2: spec 2.5',
      '4: ../shared',
      '4: LEGACY-CONTRACT',
      '4: Spec 7.4',
    ]);
  });

  it('leave the contract, identifiers and version numbers alone', () => {
    const text = [
      '/** Recovery (docs/contract.md#errors-recovery). */',
      "const spec = { basis: 'spec' };",
      'paginate(spec, 2);',
      'RFC 9110 section 5.6.7, Node 20.19',
    ].join('\n');
    expect(outsideCitations('x.ts', text)).toEqual([]);
  });

  it('find a cited contract anchor that does not exist, and accept one that does', () => {
    const anchors = new Set(explicitAnchors('<a id="errors-recovery"></a>\n### 8.6 Recovery rules'));
    expect([...anchors]).toEqual(['errors-recovery']);
    const text = '// docs/contract.md#errors-recovery and docs/contract.md#errors-recover and docs/contract.md#';
    expect(unknownContractAnchors('x.ts', text, anchors).map((finding) => finding.text)).toEqual([
      'docs/contract.md#errors-recover',
      'docs/contract.md#',
    ]);
  });
});

describe('the path and count detectors', () => {
  const known = ['src/gateway/upstream/pool.ts', 'src/lib/errors/v3-error-catalog.ts'];

  it('find a stale path in a comment, relative or from the root, and leave code, URLs and build output alone', () => {
    const text = [
      "import { x } from '../upstream.js'; // the pool (../upstream.js), now ./pool.js",
      '/** See src/gateway/legacy/transforms/request-checks.ts and src/lib/errors/v3-error-catalog.ts,',
      ' * lib/errors/v3-error-catalog.js, https://example.com/src/nothing.ts, dist/cli/main.js, data/x.json,',
      ' * `/v1|v2|v3/openapi.json` and src/gateway/legacy/ and src/nowhere/, src/lib/errors/v3-*.ts, src/no-<x>.ts. */',
    ].join('\n');
    const found = stalePaths('src/gateway/upstream/v3-client.ts', text, known).map(
      (finding) => `${finding.line}: ${finding.text}`,
    );
    expect(found).toEqual([
      '1: ../upstream.js',
      '2: src/gateway/legacy/transforms/request-checks.ts',
      '4: src/nowhere',
      '4: src/no-',
    ]);
  });

  it('read every path of a markdown text, and only the unreleased part of the changelog', () => {
    expect(stalePaths('docs/x.md', 'In `./gone.md` and [b](../src/lib/ids.ts).', known).map((f) => f.text)).toEqual([
      './gone.md',
    ]);
    const changelog = '## Releases\n\n### Unreleased\n\n- a\n\n### 0.1.0\n\n- b\n\n## Generations\n\n- c\n';
    expect(unreleasedChangelog(changelog).match(/- [abc]/g)).toEqual(['- a', '- c']);
  });

  it('check each count of the catalog the manual states, and refuse one stated otherwise', () => {
    const right = `It has ${ERROR_CODES.length} codes: the ${ERROR_CODES.length - 3} codes of the v3 contract, and 3 that the HTTP server raises`;
    expect(catalogCounts('docs/x.md', right)).toEqual([]);
    const wrong =
      'It has 64 codes: the 61 codes of the v3 contract, and 3 that the HTTP server raises; each of the 62 codes. Its 401 codes.';
    expect(catalogCounts('docs/x.md', wrong).map((finding) => finding.text)).toEqual([
      '64 codes: the 61 codes of the v3 contract, and 3 that the HTTP server',
      '62 codes',
    ]);
  });
});

describe('references resolve inside the repository', () => {
  const code = filesUnder('src', 'mappings', 'test', ...BUILD_FILES);
  const manual = filesUnder('README.md', 'docs', 'CHANGELOG.md');
  const contract = read(CONTRACT);
  const anchors = explicitAnchors(contract);

  it('reads a non-trivial tree', () => {
    expect(code.length).toBeGreaterThan(100);
    expect(code).toContain('src/lib/errors/v3-error-catalog.ts');
    expect(code).toContain('.ci/run');
    expect(manual).toContain(CONTRACT);
  });

  it('source, mappings, tests and build files cite no outside document', () => {
    expect(report(code.flatMap((file) => outsideCitations(file, read(file))))).toBe('');
  });

  it('README, docs/ and CHANGELOG.md cite no outside document', () => {
    expect(report(manual.flatMap((file) => outsideCitations(file, read(file))))).toBe('');
  });

  it('the contract names each anchor once', () => {
    expect(anchors.length).toBeGreaterThan(100);
    expect(anchors.filter((anchor, index) => anchors.indexOf(anchor) !== index)).toEqual([]);
  });

  it('every path of the repository the manual names (src/..., test/..., mappings/...) exists, placeholders aside', () => {
    const named = manual.flatMap((file) =>
      [...read(file).matchAll(REPOSITORY_PATH)].map((match) => ({ file, path: match[0] })),
    );
    expect(named.length).toBeGreaterThan(50);
    const missing = named.filter(({ path }) => !PLACEHOLDER_PATH.test(path) && !existsSync(join(ROOT, path)));
    expect(missing.map(({ file, path }) => `${file}: ${path}`)).toEqual([]);
  });

  it('every path-like reference in a comment of src/, test/ and mappings/, and in the manual, exists', () => {
    const repositoryPaths = filesUnder('src', 'test', 'mappings', 'docs', 'deploy');
    const commented = filesUnder('src', 'test', 'mappings').filter((file) => /\.(?:ts|js|mjs|mts)$/.test(file));
    const written = [...manual.filter((file) => file.endsWith('.md')), 'mappings/README.md'];
    const textOf = (file: string): string => (file === 'CHANGELOG.md' ? unreleasedChangelog(read(file)) : read(file));
    const findings = [
      ...commented.flatMap((file) => stalePaths(file, read(file), repositoryPaths)),
      ...written.flatMap((file) => stalePaths(file, textOf(file), repositoryPaths)),
    ];
    expect(report(findings)).toBe('');
  });

  it("every count of the error catalog the manual states is the catalog's", () => {
    const written = [...manual.filter((file) => file.endsWith('.md')), 'mappings/README.md'];
    const textOf = (file: string): string => (file === 'CHANGELOG.md' ? unreleasedChangelog(read(file)) : read(file));
    expect(report(written.flatMap((file) => catalogCounts(file, textOf(file))))).toBe('');
    expect(read(CONTRACT)).toMatch(/\d+ codes: the \d+ codes of the v3 contract/);
  });

  it('every docs/contract.md#anchor cited in source, mappings and tests exists', () => {
    const known = new Set(anchors);
    const cited = code.flatMap((file) => [...read(file).matchAll(CONTRACT_CITATION)]);
    expect(cited.length).toBeGreaterThan(50);
    expect(report(code.flatMap((file) => unknownContractAnchors(file, read(file), known)))).toBe('');
  });
});
