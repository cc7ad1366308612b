/**
 * src/cli/v8-flags.ts, in a child node that allocates long-lived objects from one site until V8
 * decides to pretenure it, with V8's pretenuring trace on. The same child without the module is
 * the control: it shows that the workload does get a site pretenured, so the first test can fail.
 *
 * The child is plain node running the module as TypeScript emits it, and without V8's optimising
 * tiers, so that V8's decision depends on the workload alone. With tsx's loader in the child and
 * the optimising tiers on, the control's count went from 10 sites to 0 from one run to the next,
 * and it failed a CI rehearsal.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MODULE_PATH = fileURLToPath(new URL('../../src/cli/v8-flags.ts', import.meta.url));
const DETERMINISTIC_TIERS = ['--no-opt', '--no-maglev'];

let dir: string;
let moduleUrl: string;

beforeAll(async () => {
  dir = await mkdtemp(join(os.tmpdir(), 'fxgate-v8-flags-'));
  const { outputText } = ts.transpileModule(await readFile(MODULE_PATH, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
  });
  const file = join(dir, 'v8-flags.mjs');
  await writeFile(file, outputText);
  moduleUrl = pathToFileURL(file).href;
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Two million objects kept from one literal: every one survives, so the site is pretenured. */
function workload(importFlags: boolean): string {
  return [
    importFlags ? `await import(${JSON.stringify(moduleUrl)});` : '',
    'const kept = [];',
    'const make = (i) => ({ i, next: null });',
    'for (let i = 0; i < 2_000_000; i += 1) kept.push(make(i));',
    'process.stderr.write(`kept ${kept.length}\\n`);',
  ].join('\n');
}

/** The sites V8 decided to pretenure, as its trace reports them. */
async function pretenuredSites(importFlags: boolean): Promise<number> {
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [
      ...DETERMINISTIC_TIERS,
      '--trace-pretenuring',
      '--trace-pretenuring-statistics',
      '--input-type=module',
      '-e',
      workload(importFlags),
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  expect(stderr).toContain('kept 2000000');
  return stdout.split('\n').filter((line) => line.includes('=> tenure')).length;
}

describe('process V8 flags', () => {
  it('turns allocation-site pretenuring off for the rest of the process', async () => {
    expect(await pretenuredSites(true)).toBe(0);
  });

  it('control: the same workload without them gets a site pretenured', async () => {
    expect(await pretenuredSites(false)).toBeGreaterThan(0);
  });
});
