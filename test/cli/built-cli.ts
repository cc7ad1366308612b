/**
 * A fresh dist/ for the tests of the built CLI (main.test.ts, and test/fleet/, whose processes
 * run from it): when any input of the build (src/, mappings/, package.json, the tsconfig files)
 * is newer than dist/cli/main.js, or there is no build, `npm run build` runs first, one build at
 * a time, so a stale build can neither pass nor fail them. A checkout just installed with
 * `npm ci` (whose `prepare` builds) is fresh, and nothing is rebuilt.
 *
 * Done here rather than in the global setup: that runs before every vitest run, also one of a
 * single unrelated file, and a build takes tens of seconds; these tests are its only users.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BUILT_ENTRY = join(REPO_ROOT, 'dist', 'cli', 'main.js');

/** Folders whose every file is compiled or copied into dist/, and the files that configure the build. */
const INPUT_FOLDERS = ['src', 'mappings'];
const INPUT_FILES = [
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.client.json',
  'mappings/tsconfig.build.json',
  // Copied to dist/assets/: the gateway's migration guides are generated from it.
  'docs/openapi/v3.json',
];

/** The build writes every output afresh: the entry's time is the build's. */
async function builtAt(): Promise<number | null> {
  try {
    return (await stat(BUILT_ENTRY)).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The newest input, by its path from the repository root, and its time. */
async function newestInput(): Promise<{ path: string; mtimeMs: number }> {
  const paths = [...INPUT_FILES];
  for (const folder of INPUT_FOLDERS) {
    for (const entry of await readdir(join(REPO_ROOT, folder), { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) paths.push(join(entry.parentPath, entry.name).slice(REPO_ROOT.length));
    }
  }
  let newest = { path: '', mtimeMs: 0 };
  for (const path of paths) {
    const { mtimeMs } = await stat(join(REPO_ROOT, path));
    if (mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
  }
  return newest;
}

/** Why the build must run, or null when dist/ is fresh. */
export async function staleBuild(): Promise<string | null> {
  const built = await builtAt();
  if (built === null) return `${BUILT_ENTRY} does not exist`;
  const newest = await newestInput();
  return newest.mtimeMs > built ? `${newest.path} is newer than ${BUILT_ENTRY}` : null;
}

/**
 * A build at a time across the run's test processes: the built CLI's tests and the fleet test
 * (test/fleet/) may find dist/ stale at once, and two builds writing one dist/ break each other.
 * The lock is a file holding its owner's pid; one left by a process that died is taken over.
 */
const BUILD_LOCK = join(REPO_ROOT, 'node_modules', '.fxgate-build.lock');
/** A build takes tens of seconds; a lock held longer than this is not waited for. */
const BUILD_LOCK_WAIT_MS = 10 * 60_000;

async function withBuildLock(work: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + BUILD_LOCK_WAIT_MS;
  for (;;) {
    try {
      await writeFile(BUILD_LOCK, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(await readFile(BUILD_LOCK, 'utf8').catch(() => ''));
    if (!isAlive(owner)) {
      await rm(BUILD_LOCK, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${BUILD_LOCK} is still held by pid ${owner}: another build is running`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  try {
    await work();
  } finally {
    await rm(BUILD_LOCK, { force: true });
  }
}

/** Whether a process of this pid runs (signal 0 only asks); a pid that is not a number is not one. */
function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Builds unless dist/ is fresh; a failed build (type errors too) fails the caller with its output. */
export async function ensureBuiltCli(): Promise<void> {
  if ((await staleBuild()) === null) return;
  await withBuildLock(build);
}

/** The build, unless another process made dist/ fresh while this one waited for the lock. */
async function build(): Promise<void> {
  const reason = await staleBuild();
  if (reason === null) return;
  try {
    await promisify(execFile)('npm', ['run', 'build'], { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`dist/ was stale (${reason}) and \`npm run build\` failed:\n${stdout}${stderr}`, { cause: error });
  }
  const after = await staleBuild();
  if (after !== null)
    throw new Error(`dist/ is still stale after \`npm run build\`: ${after} (changed while it built?)`);
}
