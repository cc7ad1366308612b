/**
 * src/cli/v8-flags.ts, in a child node that allocates long-lived objects from one site until V8
 * decides to pretenure it, with V8's pretenuring trace on. The same child without the module is
 * the control: it shows that the workload does get a site pretenured, so the first test can fail.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MODULE_URL = new URL('../../src/cli/v8-flags.ts', import.meta.url).href;

/** Two million objects kept from one literal: every one survives, so the site is pretenured. */
function workload(importFlags: boolean): string {
  return [
    importFlags ? `await import(${JSON.stringify(MODULE_URL)});` : '',
    'const kept = [];',
    'const make = (i) => ({ i, next: null });',
    'for (let i = 0; i < 2_000_000; i += 1) kept.push(make(i));',
    "process.stderr.write(`kept ${kept.length}\\n`);",
  ].join('\n');
}

/** The sites V8 decided to pretenure, as its trace reports them. */
async function pretenuredSites(importFlags: boolean): Promise<number> {
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--trace-pretenuring', '--trace-pretenuring-statistics', '--input-type=module', '-e', workload(importFlags)],
    { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 },
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
