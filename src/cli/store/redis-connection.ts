/**
 * Where the Redis store connects: one server at a URL, or the primary that Redis Sentinel names.
 * It turns either into an ioredis client with the store's fail-fast options. It may touch ioredis
 * only: no command is sent on the store's connection here.
 */
import { Redis, type RedisOptions } from 'ioredis';

import { formatSentinelAddress, type SentinelAddress } from '../../lib/store/sentinel-list.js';
import { leaveReplacedPrimary } from './sentinel-switch.js';

/** The primary of a Sentinel-watched group, found through any of its Sentinels. */
export interface RedisSentinelEndpoint {
  readonly sentinels: readonly SentinelAddress[];
  /** The group's name, as the Sentinels' `sentinel monitor <name> ...` gives it. */
  readonly name: string;
  /** The Sentinels' own password (their `requirepass`). */
  readonly sentinelPassword?: string | undefined;
  /** The data nodes' ACL user; the `default` user when absent. */
  readonly username?: string | undefined;
  /** The data nodes' password. */
  readonly password?: string | undefined;
  /** TLS to the data nodes and to the Sentinels, checked against the system's CAs. */
  readonly tls?: boolean | undefined;
}

/** One server at a `redis://` or `rediss://` URL, which carries its own user, password, db and TLS. */
export interface RedisUrlEndpoint {
  readonly url: string;
  readonly sentinel?: undefined;
}

export interface RedisSentinelConnection {
  readonly sentinel: RedisSentinelEndpoint;
  readonly url?: undefined;
}

export type RedisEndpoint = RedisUrlEndpoint | RedisSentinelConnection;

/** How a caller wants ioredis to behave; the endpoint adds where to connect. */
export type RedisClientBehaviour = Omit<
  RedisOptions,
  | keyof RedisSentinelEndpoint
  | 'host'
  | 'port'
  | 'path'
  | 'sentinelPassword'
  | 'sentinelTLS'
  | 'enableTLSForSentinelMode'
>;

/** Where a store's Redis is, for messages: the URL without its password, or the group and its Sentinels. */
export function describeEndpoint(endpoint: RedisEndpoint): string {
  if (endpoint.sentinel === undefined) {
    if (!URL.canParse(endpoint.url)) return 'Redis';
    const url = new URL(endpoint.url);
    url.password = '';
    url.username = '';
    return url.toString();
  }
  const { name, sentinels } = endpoint.sentinel;
  return `the primary of ${name} (Sentinels ${sentinels.map(formatSentinelAddress).join(', ')})`;
}

/**
 * A client for the endpoint. Through Sentinel it asks the Sentinels for the primary at every
 * connection, checks that the server it reaches is a primary (ioredis's role check), and drops
 * the connection when a Sentinel announces another primary (`+switch-master`, sentinel-switch.ts),
 * so that a primary cut off from the Sentinels but not from this process is left as soon as they
 * fail over.
 */
export function createRedisClient(endpoint: RedisEndpoint, behaviour: RedisClientBehaviour): Redis {
  if (endpoint.sentinel === undefined) return new Redis(endpoint.url, behaviour);
  const { sentinels, name, sentinelPassword, username, password, tls } = endpoint.sentinel;
  const client = new Redis({
    ...behaviour,
    sentinels: sentinels.map(({ host, port }) => ({ host, port })),
    name,
    role: 'master',
    ...(sentinelPassword === undefined ? {} : { sentinelPassword }),
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    ...(tls === true ? { tls: {}, enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    // Asking the Sentinels is bounded like any other command, and retried as the connection is.
    ...(behaviour.commandTimeout === undefined ? {} : { sentinelCommandTimeout: behaviour.commandTimeout }),
    ...(typeof behaviour.retryStrategy === 'function' ? { sentinelRetryStrategy: behaviour.retryStrategy } : {}),
    // ioredis's detector leaves the primary at every announcement, the new primary's included.
    failoverDetector: false,
  });
  leaveReplacedPrimary(client, { sentinels, name, sentinelPassword, tls });
  return client;
}
