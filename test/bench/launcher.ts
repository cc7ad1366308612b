/**
 * Starts a bench server process (server.ts) and talks to it over IPC. The server runs in its
 * own Node process so that it and the load generator never share an event loop; its output is
 * forwarded to our stderr, prefixed, so that warnings it logs are seen but never parsed.
 *
 * Servers run compiled, as the product ships (`node dist/...`): buildServers() compiles
 * server.ts and what it imports once per run. Run through tsx instead, a server carries tsx's
 * loader thread (about 100 MB more RSS at idle, measured on the gateway) and is not what is
 * deployed.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cp, mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { NODE_START_FLAGS } from '../../src/cli/node-start-flags.js';
import { limitServerMemory, serverMemoryLimitBytes } from './memory-limit.js';
import {
  type FromServer,
  isFromServer,
  SERVER_CONFIG_ENV,
  type ServerAppName,
  type ServerConfig,
  type ToServer,
} from './protocol.js';

const REPOSITORY = new URL('../../', import.meta.url);
/** Inside the repository, so that the compiled files resolve node_modules. Git-ignored. */
const BUILD_DIR = new URL('.bench-build/', REPOSITORY);
const SERVER_ENTRY = fileURLToPath(new URL('test/bench/server.js', BUILD_DIR));
/** Migrations and key creation included; generous because other work may share the machine. */
const READY_TIMEOUT_MS = 60_000;
/** How long a server may take to answer a query (its RSS, its CPU time). */
const QUERY_TIMEOUT_MS = 5_000;
/** How long a server may take to close after `shutdown` before it is killed. */
const STOP_GRACE_MS = 5_000;

export interface ServerMemory {
  readonly rss: number;
  readonly heapTotal: number;
}

export interface ServerProcess {
  readonly app: ServerAppName;
  readonly pid: number;
  readonly url: string;
  readonly info: Readonly<Record<string, unknown>>;
  /** The server's resident set size and the V8 heap's share of it, in bytes, as it reports them. */
  memory(): Promise<ServerMemory>;
  /** CPU time the server has used so far (user and system, all threads), in microseconds, as it reports it. */
  cpuMicros(): Promise<number>;
  /** HTTP requests the server has received so far, as it counts them. */
  requests(): Promise<number>;
  /** Requests it has received and not finished (answered, or closed by the client) yet. */
  inFlight(): Promise<number>;
  /** Asks the server to close, kills it if it does not; resolves once it has exited. */
  stop(): Promise<void>;
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function forwardOutput(child: ChildProcess, label: string): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    createInterface({ input: stream }).on('line', (line) => console.error(`[${label}] ${line}`));
  }
}

/** The next message of this type, or a rejection when the server fails, exits or takes too long. */
function nextMessage<T extends FromServer['type']>(
  child: ChildProcess,
  type: T,
  timeoutMs: number,
  what: string,
): Promise<Extract<FromServer, { type: T }>> {
  return new Promise((resolve, reject) => {
    const settle = (error: Error | null, message?: Extract<FromServer, { type: T }>): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', onError);
      if (error) reject(error);
      else resolve(message!);
    };
    const onMessage = (message: unknown): void => {
      if (!isFromServer(message)) return;
      if (message.type === 'failed') settle(new Error(`${what} failed:\n${message.message}`));
      else if (message.type === type) settle(null, message as Extract<FromServer, { type: T }>);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      settle(new Error(`${what}: server exited (${code ?? signal})`));
    const onError = (error: Error): void => settle(new Error(`${what}: ${error.message}`));
    const timer = setTimeout(() => settle(new Error(`${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

function exited(child: ChildProcess): Promise<void> {
  return hasExited(child) ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const done = exited(child);
  // A server that failed is closing its channel: the send can fail, and says so to the callback.
  if (child.connected)
    child.send({ type: 'shutdown' } satisfies ToServer, (error) => {
      if (error) child.kill('SIGTERM');
    });
  else child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  try {
    await done;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Extra node options for server processes only (BENCH_SERVER_NODE_ARGS, space-separated), to
 * profile the server without the load generator: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
 */
function extraNodeArgs(): string[] {
  return (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
}

/** BENCH_V8_DEFAULTS=1: the servers on V8's defaults, without fxgate's flags (server.ts skips the ones it sets). */
function onV8Defaults(): boolean {
  return process.env.BENCH_V8_DEFAULTS === '1';
}

/** How the servers' node is started where it differs from how the product starts it, for the report. */
export function serverStartDifferences(): string[] {
  const limitBytes = serverMemoryLimitBytes();
  const nodeArgs = extraNodeArgs();
  return [
    onV8Defaults() ? "on V8's defaults, without fxgate's flags" : '',
    limitBytes === undefined ? '' : `each in a memory cgroup of ${limitBytes / 1024 / 1024} MB`,
    nodeArgs.length === 0 ? '' : `with ${nodeArgs.join(' ')}`,
  ].filter((difference) => difference !== '');
}

/**
 * Compiles the server entry into .bench-build/ in the layout the sources have, with what the
 * compiled code reads beside it: the mapping tables where the gateway's loader looks for built
 * ones, the SQL migrations and v3's OpenAPI snapshot.
 */
export async function buildServers(): Promise<void> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = promisify(execFile);
  await rm(BUILD_DIR, { recursive: true, force: true });
  const compile = async (...args: string[]) => {
    try {
      await run(process.execPath, [tsc, ...args], { cwd: fileURLToPath(REPOSITORY) });
    } catch (error) {
      const output = (error as { stdout?: string }).stdout ?? '';
      throw new Error(`compiling the bench servers (tsc ${args.join(' ')}) failed:\n${output}`, { cause: error });
    }
  };
  await compile('-p', 'test/bench/tsconfig.servers.json');
  await compile('-p', 'mappings/tsconfig.build.json', '--outDir', fileURLToPath(new URL('src/mappings/', BUILD_DIR)));
  await cp(new URL('src/cli/db/migrations/', REPOSITORY), new URL('src/cli/db/migrations/', BUILD_DIR), {
    recursive: true,
  });
  // The gateway reads v3's OpenAPI snapshot at start, from where `npm run build` puts it.
  await mkdir(new URL('src/assets/', BUILD_DIR), { recursive: true });
  await cp(new URL('docs/openapi/v3.json', REPOSITORY), new URL('src/assets/v3-openapi.json', BUILD_DIR));
}

export async function launchServer(app: ServerAppName, config: ServerConfig = {}): Promise<ServerProcess> {
  // As the product starts node (src/cli/node-start-flags.ts), unless the run asks for V8's defaults.
  const startFlags = onV8Defaults() ? [] : NODE_START_FLAGS;
  const args = [...startFlags, ...extraNodeArgs(), SERVER_ENTRY, app];
  const limitBytes = serverMemoryLimitBytes();
  const limit = limitBytes === undefined ? undefined : await limitServerMemory(app, limitBytes, process.execPath, args);
  const child = spawn(limit?.command ?? process.execPath, limit?.args ?? args, {
    env: { ...process.env, [SERVER_CONFIG_ENV]: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  forwardOutput(child, `server ${app}`);
  const stop = async () => {
    await stopChild(child);
    await limit?.release();
  };
  let ready: Extract<FromServer, { type: 'ready' }>;
  try {
    ready = await nextMessage(child, 'ready', READY_TIMEOUT_MS, `starting the ${app} server`);
  } catch (error) {
    await stop();
    throw error;
  }
  const pid = child.pid!;
  /** One question to the server and its answer, or a rejection when it takes too long. */
  const ask = <T extends 'rss' | 'cpu' | 'requests'>(type: T, what: string) => {
    const answer = nextMessage(child, type, QUERY_TIMEOUT_MS, `asking the ${app} server (pid ${pid}) for ${what}`);
    child.send({ type } satisfies ToServer);
    return answer;
  };
  return {
    app,
    pid,
    url: `http://127.0.0.1:${ready.port}`,
    info: ready.info,
    memory: async () => {
      const { rss, heapTotal } = await ask('rss', 'its memory');
      return { rss, heapTotal };
    },
    cpuMicros: async () => (await ask('cpu', 'its CPU time')).micros,
    requests: async () => (await ask('requests', 'its request count')).count,
    inFlight: async () => (await ask('requests', 'its request count')).open,
    stop,
  };
}
