/**
 * Repository hygiene: every reference a reader follows resolves inside the repository. Source,
 * mappings, tests, build files and the manual cite no document outside it (the contract is
 * docs/contract.md, cited by its stable `<a id>` anchors), and every `docs/contract.md#<anchor>`
 * that code or a test cites names an anchor the contract has. Reads files only; touches nothing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

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

describe('references resolve inside the repository', () => {
  const code = filesUnder('src', 'mappings', 'test', ...BUILD_FILES);
  const manual = filesUnder('README.md', 'docs', 'CHANGELOG.md');
  const contract = read(CONTRACT);
  const anchors = explicitAnchors(contract);

  it('reads a non-trivial tree', () => {
    expect(code.length).toBeGreaterThan(100);
    expect(code).toContain('src/lib/errors/catalog.ts');
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

  it('every docs/contract.md#anchor cited in source, mappings and tests exists', () => {
    const known = new Set(anchors);
    const cited = code.flatMap((file) => [...read(file).matchAll(CONTRACT_CITATION)]);
    expect(cited.length).toBeGreaterThan(50);
    expect(report(code.flatMap((file) => unknownContractAnchors(file, read(file), known)))).toBe('');
  });
});
