/**
 * The embedded data folder is its owner's only: it holds the ledger, the API keys, the key that
 * opens the sealed secrets. A folder found open to group or others (made by an earlier version,
 * copied, unpacked under a wide umask) is tightened when it is opened: group and other bits come
 * off the folder and every entry under it. Symbolic links are neither followed nor changed.
 * Touches only the folder it is given.
 */
import { chmod, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Group and other bits. */
const SHARED_BITS = 0o077;

export interface Tightened {
  /** Entries (the folder included) whose mode lost group or other bits. */
  readonly entries: number;
}

async function tightenEntry(path: string, mode: number): Promise<boolean> {
  if ((mode & SHARED_BITS) === 0) return false;
  try {
    await chmod(path, mode & 0o7777 & ~SHARED_BITS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  return true;
}

/** Takes group and other access off `folder` and everything under it; says how many entries had it. */
export async function restrictToOwner(folder: string): Promise<Tightened> {
  // Windows has no such mode bits; its ACLs are the operator's.
  if (process.platform === 'win32') return { entries: 0 };
  let entries = 0;
  const visit = async (path: string): Promise<void> => {
    let stats;
    try {
      stats = await lstat(path);
    } catch (error) {
      // Removed while walking (PGlite renames and deletes its own files): nothing to tighten.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    if (stats.isSymbolicLink()) return;
    // Closed first, so that nothing below is reachable by others while the walk goes on.
    if (await tightenEntry(path, stats.mode)) entries++;
    if (!stats.isDirectory()) return;
    let names: string[];
    try {
      names = await readdir(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const name of names) await visit(join(path, name));
  };
  await visit(folder);
  return { entries };
}
