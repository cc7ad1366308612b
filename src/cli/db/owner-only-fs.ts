/**
 * PGlite's Node file system, keeping every file and folder it makes its owner's only (0600 and
 * 0700) whatever the process umask: the data folder holds the ledger, the API keys and the sealed
 * secrets. Part of the embedded driver (pglite-database.ts); touches only the folder it is given.
 *
 * Why the umask is not enough: PostgreSQL runs under Emscripten's own file system, which creates
 * a file open to everyone and then chmods it to the mode PostgreSQL asked for less Emscripten's
 * own umask (0022), and unpacks a new cluster's files as 0666; the chmod is not subject to the
 * process umask. So group and other bits are taken off every mode Emscripten creates or sets,
 * from before the first file is written (preRun) to the end.
 */
import { mkdirSync } from 'node:fs';

import { NodeFS } from '@electric-sql/pglite/nodefs';

/** Owner bits only: what no mode set in the folder may exceed. */
const OWNER_ONLY = ~0o077;

/** The two calls of Emscripten's FS every creation and mode change goes through. */
interface EmscriptenModeCalls {
  mknod(path: string, mode: number, dev: number): unknown;
  doChmod(stream: unknown, node: unknown, mode: number, dontFollow?: boolean): unknown;
}

function isModeCalls(fs: unknown): fs is EmscriptenModeCalls {
  const candidate = fs as Partial<EmscriptenModeCalls> | null;
  return typeof candidate?.mknod === 'function' && typeof candidate.doChmod === 'function';
}

/** Takes group and other bits off every mode the file system creates or sets. */
function restrictModes(fs: unknown): void {
  // Refused rather than ignored: a PGlite whose file system changed must not silently write files open to others.
  if (!isModeCalls(fs)) throw new Error("this PGlite's file system has no mknod/doChmod to keep its files owner-only");
  const { mknod, doChmod } = fs;
  fs.mknod = (path, mode, dev) => mknod.call(fs, path, mode & OWNER_ONLY, dev);
  fs.doChmod = (stream, node, mode, dontFollow) => doChmod.call(fs, stream, node, mode & OWNER_ONLY, dontFollow);
}

export class OwnerOnlyNodeFS extends NodeFS {
  constructor(dataDir: string) {
    // NodeFS makes the folder with the default mode; made here first, it is the owner's only.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    super(dataDir);
  }

  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(...args);
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [(mod: { readonly FS: unknown }) => restrictModes(mod.FS), ...(emscriptenOpts.preRun ?? [])],
      },
    };
  }
}
