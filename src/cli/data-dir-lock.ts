/**
 * One process at a time on an embedded database. PGlite does not lock its folder itself, and two
 * processes writing the same folder corrupt it, so fxgate takes a lock file beside it holding
 * its pid. A lock whose process is gone (killed, crashed) is taken over.
 *
 * A lock naming this very process is held when this process took it and has not released it
 * (two PGlite instances on one folder corrupt it as surely as two processes do); otherwise it
 * is a dead process's whose pid was reused (a container's pid 1 on every start), and is stale.
 */
import { open, readFile, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';

import { DataDirLockedError } from '../lib/errors/internal-errors.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The lock files this process holds now. */
const heldHere = new Set<string>();

async function holderOf(lockPath: string): Promise<number | null> {
  try {
    const pid = Number.parseInt(await readFile(lockPath, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Takes the lock; resolves to its release. Throws DataDirLockedError while a live process holds it. */
export async function lockDataDir(lockPath: string): Promise<() => Promise<void>> {
  // Two attempts: the second after removing a stale lock. Losing that race to another
  // process starting at the same moment ends in DataDirLockedError, as it should.
  if (heldHere.has(resolve(lockPath))) throw new DataDirLockedError(lockPath, process.pid);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      heldHere.add(resolve(lockPath));
      return async () => {
        heldHere.delete(resolve(lockPath));
        if ((await holderOf(lockPath)) === process.pid) await unlink(lockPath);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = await holderOf(lockPath);
      if (holder !== null && holder !== process.pid && isAlive(holder)) throw new DataDirLockedError(lockPath, holder);
      await unlink(lockPath).catch(() => undefined);
    }
  }
  throw new DataDirLockedError(lockPath, (await holderOf(lockPath)) ?? 0);
}
