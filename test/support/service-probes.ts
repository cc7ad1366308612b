/**
 * Does a PostgreSQL or Redis server answer at a URL? The answer tells the global setup
 * whether to use it, to start a throwaway one (nothing listens), or to stop with the server's
 * own complaint (it listens but refuses us, e.g. a wrong password or a missing database).
 */
import { connect } from 'node:net';

import pg from 'pg';

export type ProbeResult =
  | { readonly state: 'up' }
  /** Nothing answered: refused, timed out, unknown host. */
  | { readonly state: 'unreachable'; readonly reason: string }
  /** A server answered, with an error. */
  | { readonly state: 'refused'; readonly reason: string };

export const PROBE_TIMEOUT_MS = 3_000;

export async function probePostgres(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A connection that fails later would otherwise crash the process with an unhandled 'error'.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { state: 'up' };
  } catch (error) {
    // Only the server sends SQLSTATE errors; everything else is the network.
    const state = error instanceof pg.DatabaseError ? 'refused' : 'unreachable';
    return { state, reason: describe(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A raw RESP exchange rather than a Redis client: ioredis reports a refused connection only
 * as "Connection is closed", and the log line should say why a throwaway server was needed.
 */
export function probeRedis(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const target = new URL(url);
  const commands = [...authCommand(target), ['PING']];
  return new Promise((resolve) => {
    const socket = connect({ host: target.hostname || '127.0.0.1', port: Number(target.port || 6379) });
    let replies = '';
    const finish = (result: ProbeResult): void => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => finish({ state: 'unreachable', reason: `no answer within ${timeoutMs} ms` }));
    socket.once('error', (error) => finish({ state: 'unreachable', reason: describe(error) }));
    socket.once('connect', () => socket.write(commands.map(encodeCommand).join('')));
    socket.on('data', (chunk: Buffer) => {
      replies += chunk.toString('utf8');
      const lines = replies.split('\r\n').slice(0, -1);
      const failed = lines.find((line) => line.startsWith('-'));
      if (failed !== undefined) finish({ state: 'refused', reason: failed.slice(1) });
      else if (lines.length >= commands.length) finish({ state: 'up' });
    });
  });
}

function authCommand(target: URL): string[][] {
  if (target.password === '') return [];
  const password = decodeURIComponent(target.password);
  return [target.username ? ['AUTH', decodeURIComponent(target.username), password] : ['AUTH', password]];
}

function encodeCommand(parts: readonly string[]): string {
  return `*${parts.length}\r\n${parts.map((part) => `$${Buffer.byteLength(part)}\r\n${part}\r\n`).join('')}`;
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  if (!(error instanceof Error)) return String(error);
  return error.message || ('code' in error ? String(error.code) : error.name);
}

/** The URL without its password, for log lines. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
