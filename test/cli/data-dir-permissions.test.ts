/**
 * restrictToOwner: group and other bits come off a folder and everything under it, and no more;
 * the count says how many entries had them; a symbolic link is neither followed nor changed.
 */
import { chmod, lstat, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { restrictToOwner } from '../../src/cli/data-dir-permissions.js';
import { sharedEntries } from '../support/file-modes.js';

const modeOf = async (path: string): Promise<number> => (await lstat(path)).mode & 0o7777;

describe.skipIf(process.platform === 'win32')('restrictToOwner', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'fxgate-restrict-'));
  });
  afterAll(async () => {
    if (parent) await rm(parent, { recursive: true, force: true });
  });

  it("takes group and other bits off the folder and every entry below it, keeping the owner's own", async () => {
    const folder = join(parent, 'data');
    await mkdir(join(folder, 'pglite', 'base'), { recursive: true });
    await writeFile(join(folder, 'pglite', 'base', 'relation'), 'x');
    await writeFile(join(folder, 'secrets.key'), 'x');
    await writeFile(join(folder, 'read-only'), 'x');
    await writeFile(join(folder, 'already'), 'x');
    await writeFile(join(folder, 'script'), 'x');
    for (const [path, mode] of [
      [folder, 0o777],
      [join(folder, 'pglite'), 0o755],
      [join(folder, 'pglite', 'base'), 0o750],
      [join(folder, 'pglite', 'base', 'relation'), 0o666],
      [join(folder, 'secrets.key'), 0o644],
      [join(folder, 'read-only'), 0o444],
      [join(folder, 'already'), 0o600],
      [join(folder, 'script'), 0o775],
    ] as const)
      await chmod(path, mode);
    expect(await restrictToOwner(folder)).toEqual({ entries: 7 });
    expect(await sharedEntries(folder)).toEqual([]);
    expect(await modeOf(folder)).toBe(0o700);
    expect(await modeOf(join(folder, 'pglite', 'base', 'relation'))).toBe(0o600);
    expect(await modeOf(join(folder, 'read-only'))).toBe(0o400);
    expect(await modeOf(join(folder, 'script'))).toBe(0o700);
    expect(await restrictToOwner(folder)).toEqual({ entries: 0 });
  });

  it('leaves what a symbolic link points at alone', async () => {
    const folder = join(parent, 'linked');
    const outside = join(parent, 'outside');
    await mkdir(folder);
    await writeFile(outside, 'x', { mode: 0o644 });
    await chmod(outside, 0o644);
    await symlink(outside, join(folder, 'link'));
    await chmod(folder, 0o700);
    expect(await restrictToOwner(folder)).toEqual({ entries: 0 });
    expect((await stat(outside)).mode & 0o777).toBe(0o644);
  });
});
