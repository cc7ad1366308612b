import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { lockDataDir } from '../../src/cli/data-dir-lock.js';
import { DataDirLockedError } from '../../src/lib/errors/internal-errors.js';

describe('lockDataDir', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'fxgate-lock-'));
  });
  afterAll(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('writes its pid and removes the file on release', async () => {
    const path = join(folder, 'a.lock');
    const release = await lockDataDir(path);
    expect(await readFile(path, 'utf8')).toBe(`${process.pid}\n`);
    await release();
    await expect(readFile(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses while another live process holds the lock, and takes it over once that process is gone', async () => {
    const path = join(folder, 'b.lock');
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    try {
      await writeFile(path, `${holder.pid}\n`);
      const error = await lockDataDir(path).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DataDirLockedError);
      expect(error).toMatchObject({ pid: holder.pid, lockPath: path });
    } finally {
      const exited = new Promise((resolve) => holder.once('exit', resolve));
      holder.kill('SIGKILL');
      await exited;
    }
    const release = await lockDataDir(path);
    expect(await readFile(path, 'utf8')).toBe(`${process.pid}\n`);
    await release();
  });

  it('takes over a lock file that names no process', async () => {
    const path = join(folder, 'c.lock');
    await writeFile(path, 'garbage');
    const release = await lockDataDir(path);
    await release();
  });

  it('refuses a second lock in the process that holds it, and takes over one naming this pid that it does not hold', async () => {
    const path = join(folder, 'd.lock');
    const release = await lockDataDir(path);
    const error = await lockDataDir(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect(error).toMatchObject({ pid: process.pid });
    await release();
    // A dead process's lock whose pid this process now has (a container's pid 1 on every start).
    await writeFile(path, `${process.pid}\n`);
    const again = await lockDataDir(path);
    expect(await readFile(path, 'utf8')).toBe(`${process.pid}\n`);
    await again();
  });
});
