/**
 * src/cli/node-start-flags.ts: the flags are written wherever fxgate starts node (the bin's
 * first line run as Linux runs it), and they do what they are for, in a child node whose objects
 * survive scavenge after scavenge. The same child allowed a larger young generation is the
 * control: the workload does grow it past the bound, so the bound's test can fail.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { NODE_START_FLAGS } from '../../src/cli/node-start-flags.js';
import { packageBin } from '../deploy/deploy-files.js';

/** The most the young generation held (both halves, in MB) while a window of objects survived scavenge after scavenge. */
async function youngGenerationPeakMb(flags: readonly string[]): Promise<number> {
  const program = [
    "import v8 from 'node:v8';",
    'const window = new Array(400_000);',
    'let most = 0;',
    'for (let i = 0; i < 12_000_000; i += 1) {',
    '  window[i % window.length] = { i, text: `x${i}` };',
    "  if (i % 100_000 === 0) most = Math.max(most, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);",
    '}',
    'process.stdout.write(String(most / 1048576));',
  ].join('\n');
  const { stdout } = await promisify(execFile)(process.execPath, [...flags, '--input-type=module', '-e', program]);
  return Number(stdout);
}

describe('flags node is started with', () => {
  const repository = new URL('../../', import.meta.url);
  const read = (path: string) => readFile(new URL(path, repository), 'utf8');

  it('are given where fxgate starts node: the bin and npm start (the Docker image: test/dockerfile.test.ts)', async () => {
    const flags = NODE_START_FLAGS.join(' ');
    expect((await read('src/cli/main.ts')).split('\n')[0]).toBe(`#!/usr/bin/env -S node ${flags}`);
    const { scripts } = JSON.parse(await read('package.json')) as { scripts: Record<string, string> };
    expect(scripts.start).toBe(`node ${flags} ${packageBin()} all`);
  });

  it("start node from the bin's first line as Linux runs it (env with the rest of the line as one argument)", async () => {
    const [interpreter, argument] = /^#!(\S+) (.+)$/.exec((await read('src/cli/main.ts')).split('\n')[0]!)!.slice(1);
    const { stdout } = await promisify(execFile)(interpreter!, [
      argument!,
      '-e',
      'process.stdout.write(JSON.stringify(process.execArgv))',
    ]);
    expect((JSON.parse(stdout) as string[]).slice(0, NODE_START_FLAGS.length)).toEqual(NODE_START_FLAGS);
  });

  it('bound the young generation at 16 MB a half, however much survives', async () => {
    expect(await youngGenerationPeakMb(NODE_START_FLAGS)).toBeLessThanOrEqual(32);
  });

  it('control: the same workload grows it past that when allowed', async () => {
    expect(await youngGenerationPeakMb(['--max-semi-space-size=64'])).toBeGreaterThan(32);
  });
});
