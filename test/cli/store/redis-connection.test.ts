import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

import { createRedisClient, describeEndpoint } from '../../../src/cli/store/redis-connection.js';

/** Clients made with lazyConnect: their options are read, nothing is sent. */
const made: Redis[] = [];
function client(...args: Parameters<typeof createRedisClient>): Redis {
  const redis = createRedisClient(args[0], { lazyConnect: true, ...args[1] });
  made.push(redis);
  return redis;
}

afterEach(() => {
  for (const redis of made.splice(0)) redis.disconnect();
});

const retryStrategy = (attempt: number): number => attempt * 100;

describe('createRedisClient', () => {
  it('through Sentinel: the group, its Sentinels, both passwords, the user, and the failover detector', () => {
    const redis = client(
      {
        sentinel: {
          sentinels: [
            { host: '127.0.0.1', port: 26379 },
            { host: '::1', port: 26380 },
          ],
          name: 'fxgate',
          sentinelPassword: 'sentinel-secret',
          username: 'fxgate-app',
          password: 'data-secret',
        },
      },
      { commandTimeout: 500, retryStrategy, keyPrefix: 'p:' },
    );
    expect(redis.options).toMatchObject({
      sentinels: [
        { host: '127.0.0.1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'fxgate',
      role: 'master',
      sentinelPassword: 'sentinel-secret',
      username: 'fxgate-app',
      password: 'data-secret',
      failoverDetector: false,
      sentinelCommandTimeout: 500,
      sentinelRetryStrategy: retryStrategy,
      keyPrefix: 'p:',
      enableTLSForSentinelMode: false,
    });
    expect(redis.options.tls).toBeUndefined();
    expect(redis.options.sentinelTLS).toBeUndefined();
  });

  it('through Sentinel with TLS: to the Sentinels and to the primary, with the system CAs', () => {
    const redis = client({ sentinel: { sentinels: [{ host: 's1', port: 26379 }], name: 'fxgate', tls: true } }, {});
    expect(redis.options).toMatchObject({ tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true });
  });

  it('at a URL: what the URL says, TLS for rediss://', () => {
    const redis = client({ url: 'rediss://app:secret@127.0.0.1:6390/2' }, { keyPrefix: 'p:' });
    expect(redis.options).toMatchObject({
      host: '127.0.0.1',
      port: 6390,
      username: 'app',
      password: 'secret',
      db: 2,
      tls: {},
      keyPrefix: 'p:',
    });
    expect(redis.options.sentinels).toBeNull();
  });
});

describe('describeEndpoint', () => {
  it('names a URL without its credentials, and a Sentinel group by its name and Sentinels', () => {
    expect(describeEndpoint({ url: 'redis://app:secret@127.0.0.1:6379/0' })).toBe('redis://127.0.0.1:6379/0');
    expect(
      describeEndpoint({
        sentinel: {
          sentinels: [
            { host: '10.0.0.1', port: 26379 },
            { host: '::1', port: 26379 },
          ],
          name: 'fxgate',
          password: 'secret',
        },
      }),
    ).toBe('the primary of fxgate (Sentinels 10.0.0.1:26379, [::1]:26379)');
  });
});
