/**
 * The IPC messages between the load process (run.ts, through launcher.ts) and a bench server
 * process (server.ts), with the names of the apps a server can serve and what their builders
 * return. IPC rather than stdout, so that the server's own logging cannot be mistaken for a
 * message.
 */
import type { FastifyInstance } from 'fastify';

/** The applications server.ts can serve; the builders are in server-apps.ts. */
export const SERVER_APP_NAMES = [
  'bare',
  'static-v3',
  'static-legacy',
  'core',
  'gateway',
  'upstream-relay',
  'receiver',
  'v3-read-skeleton',
  'v1-read-skeleton',
] as const;
export type ServerAppName = (typeof SERVER_APP_NAMES)[number];

/** What a builder of server-apps.ts returns: server.ts listens and closes through `app`. */
export interface ServedApp {
  readonly app: FastifyInstance;
  /** Sent to the load process with the port. */
  readonly info: Readonly<Record<string, unknown>>;
  /** Releases what the app holds besides its listener (pools, connections). */
  close(): Promise<void>;
}

/** Settings for the server application, passed as JSON in this environment variable. */
export const SERVER_CONFIG_ENV = 'BENCH_SERVER_CONFIG';
export type ServerConfig = Readonly<Record<string, string>>;

/** A setting an app cannot start without. */
export function setting(config: ServerConfig, name: string): string {
  const value = config[name];
  if (value === undefined || value === '') throw new Error(`server config lacks ${name}`);
  return value;
}

export type ToServer =
  { readonly type: 'rss' } | { readonly type: 'cpu' } | { readonly type: 'requests' } | { readonly type: 'shutdown' };

export type FromServer =
  /** Listening on 127.0.0.1:port; `info` is what the load side needs (a key file, say). */
  | { readonly type: 'ready'; readonly port: number; readonly info: Readonly<Record<string, unknown>> }
  /** process.memoryUsage(): the RSS, and of it the V8 heap, so a report can tell the JS heap from the rest. */
  | { readonly type: 'rss'; readonly rss: number; readonly heapTotal: number }
  /** process.cpuUsage(): CPU time of all the process's threads so far, in microseconds. */
  | { readonly type: 'cpu'; readonly micros: number }
  /** HTTP requests the server's listener has received so far, and how many of them it has not finished. */
  | { readonly type: 'requests'; readonly count: number; readonly open: number }
  | { readonly type: 'failed'; readonly message: string };

export function isServerAppName(value: string): value is ServerAppName {
  return (SERVER_APP_NAMES as readonly string[]).includes(value);
}

/** Narrows an IPC payload; anything else is a protocol error. */
export function isFromServer(message: unknown): message is FromServer {
  if (typeof message !== 'object' || message === null || !('type' in message)) return false;
  const { type } = message;
  return type === 'ready' || type === 'rss' || type === 'cpu' || type === 'requests' || type === 'failed';
}

export function isToServer(message: unknown): message is ToServer {
  if (typeof message !== 'object' || message === null || !('type' in message)) return false;
  return message.type === 'rss' || message.type === 'cpu' || message.type === 'requests' || message.type === 'shutdown';
}
