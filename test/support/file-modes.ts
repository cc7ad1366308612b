/**
 * File modes for the tests of the data folder's permissions: every entry under a folder that
 * group or others can reach, and the process umask set for one test and put back.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Entries (the folder included) with any group or other bit, as `path: mode` in octal. */
export async function sharedEntries(folder: string): Promise<string[]> {
  const found: string[] = [];
  const paths = [folder, ...(await readdir(folder, { recursive: true })).map((entry) => join(folder, entry))];
  for (const path of paths) {
    const mode = (await lstat(path)).mode & 0o777;
    if ((mode & 0o077) !== 0) found.push(`${path.slice(folder.length) || '.'}: ${mode.toString(8)}`);
  }
  return found;
}

/** Every entry under the folder, the folder included. */
export async function entryCount(folder: string): Promise<number> {
  return 1 + (await readdir(folder, { recursive: true })).length;
}

/** Runs fn with the process umask set to `mask`, then puts the one before back. */
export async function withUmask<T>(mask: number, fn: () => Promise<T>): Promise<T> {
  const before = process.umask(mask);
  try {
    return await fn();
  } finally {
    process.umask(before);
  }
}
