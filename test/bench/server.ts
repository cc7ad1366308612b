/**
 * A bench server process: `node .bench-build/test/bench/server.js <app>` (compiled by
 * launcher.ts buildServers()), spawned by launcher.ts with an IPC channel. It serves one application on 127.0.0.1 (a free port), says
 * `ready` with the port, reports its RSS, CPU time and request count when asked, and exits on `shutdown` or when the load
 * process goes away (the channel closes), so that no server outlives a bench run.
 */
import {
  type FromServer,
  isServerAppName,
  isToServer,
  type ServedApp,
  SERVER_CONFIG_ENV,
  type ServerConfig,
} from './protocol.js';
import { STALL_PROBE_DIR_ENV, startStallProbe } from './stall-probe.js';

/** Set to 1 to run the servers on V8's own defaults instead of the product's flags, to measure what those do. */
const V8_DEFAULTS_ENV = 'BENCH_V8_DEFAULTS';

/**
 * The load generator drops its connections with requests still in flight; their handlers run
 * on after the listener closes. This is longer than any of them takes, so that they finish
 * before the database and Redis connections close under them (and log errors that mean nothing).
 */
const DRAIN_MS = 1_000;

function send(message: FromServer): void {
  process.send?.(message);
}

function readConfig(): ServerConfig {
  const parsed: unknown = JSON.parse(process.env[SERVER_CONFIG_ENV] ?? '{}');
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`${SERVER_CONFIG_ENV} must be a JSON object`);
  return Object.fromEntries(Object.entries(parsed).map(([key, value]) => [key, String(value)]));
}

async function main(): Promise<void> {
  if (!process.send) throw new Error('server.ts runs as a child of test/bench/run.ts, with an IPC channel');
  const name = process.argv[2] ?? '';
  if (!isServerAppName(name)) throw new Error(`unknown server app ${JSON.stringify(name)}`);
  const probeDir = process.env[STALL_PROBE_DIR_ENV];
  if (probeDir) startStallProbe(probeDir, name);
  // The product's V8 flags, as src/cli/main.ts sets them: before any application module runs.
  if (process.env[V8_DEFAULTS_ENV] !== '1') await import('../../src/cli/v8-flags.js');
  const { SERVER_APPS } = await import('./server-apps.js');
  const served: ServedApp = await SERVER_APPS[name](readConfig());

  // Counted for the report: the requests of a row (those the load generator dropped in flight
  // too), how many v3 calls a gateway's request made of the core behind it, and when the
  // requests of a round have all finished.
  let requests = 0;
  let open = 0;
  served.app.server.on('request', (_request, response) => {
    requests += 1;
    open += 1;
    response.once('close', () => (open -= 1));
  });

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await served.app.close().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, DRAIN_MS));
    await served.close().catch(() => undefined);
    process.exit(0);
  };
  process.on('message', (message: unknown) => {
    if (!isToServer(message)) return;
    if (message.type === 'rss') {
      const { rss, heapTotal } = process.memoryUsage();
      send({ type: 'rss', rss, heapTotal });
    } else if (message.type === 'cpu') {
      const usage = process.cpuUsage();
      send({ type: 'cpu', micros: usage.user + usage.system });
    } else if (message.type === 'requests') send({ type: 'requests', count: requests, open });
    else void stop();
  });
  process.on('disconnect', () => void stop());
  process.on('SIGTERM', () => void stop());
  // Ctrl-C reaches the whole process group; the load process decides when servers stop.
  process.on('SIGINT', () => {});

  await served.app.listen({ host: '127.0.0.1', port: 0 });
  const address = served.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the server did not listen on a TCP port');
  send({ type: 'ready', port: address.port, info: served.info });
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  send({ type: 'failed', message });
  // Exit only once the message is out (process.exit could cut the IPC write short), and at
  // the latest after a grace period, in case a half-built app still holds a handle.
  process.exitCode = 1;
  process.disconnect?.();
  setTimeout(() => process.exit(1), 2_000).unref();
});
