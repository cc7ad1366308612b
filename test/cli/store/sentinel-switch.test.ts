/**
 * The `+switch-master` listener (src/cli/store/sentinel-switch.ts) on real connections: the test
 * Redis stands in for a Sentinel (it takes SUBSCRIBE and PUBLISH alike) and for the primary the
 * store's client is on, so each announcement names that client's real socket or another address.
 */
import { randomUUID } from 'node:crypto';

import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

import {
  leaveReplacedPrimary,
  parseSwitchAnnouncement,
  SWITCH_MASTER_CHANNEL,
  type SwitchAction,
} from '../../../src/cli/store/sentinel-switch.js';
import { testServices } from '../../support/services.js';

const { redisUrl } = testServices();
const standIn = new URL(redisUrl);
const SENTINELS = [{ host: standIn.hostname, port: Number(standIn.port || 6379) }];
const WAIT_MS = 5_000;

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${WAIT_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const opened: Redis[] = [];
function connection(options: { lazyConnect?: boolean } = {}): Redis {
  const client = new Redis(redisUrl, { maxRetriesPerRequest: 0, retryStrategy: () => 10, ...options });
  opened.push(client);
  return client;
}

afterEach(() => {
  for (const client of opened.splice(0)) client.disconnect();
});

async function listenersOnStandIn(publisher: Redis): Promise<number> {
  const [, count] = (await publisher.pubsub('NUMSUB', SWITCH_MASTER_CHANNEL)) as [string, number];
  return count;
}

describe('parseSwitchAnnouncement', () => {
  it('reads the group and the new primary of a Sentinel message', () => {
    expect(parseSwitchAnnouncement('fxgate 127.0.0.3 6379 127.0.0.2 6380')).toEqual({
      name: 'fxgate',
      newHost: '127.0.0.2',
      newPort: 6380,
    });
  });

  it.each(['fxgate 127.0.0.3 6379 127.0.0.2', 'fxgate 127.0.0.3 6379 127.0.0.2 x', 'fxgate a b c 0', ''])(
    'takes %j for no announcement',
    (message) => {
      expect(parseSwitchAnnouncement(message)).toBeNull();
    },
  );
});

describe('leaveReplacedPrimary', () => {
  it("stays on the primary a Sentinel announces, ignores another group's, and leaves for any other", async () => {
    const name = `group-${randomUUID()}`;
    const client = connection();
    const publisher = connection();
    const closes: number[] = [];
    client.on('close', () => closes.push(Date.now()));
    const actions: SwitchAction[] = [];
    await until(() => client.status === 'ready', 'the client connects');
    const before = await listenersOnStandIn(publisher);
    leaveReplacedPrimary(client, {
      sentinels: SENTINELS,
      name,
      onAnnouncement: (_announcement, action) => actions.push(action),
    });
    // Listening starts at the client's next connection: make one.
    client.disconnect(true);
    await until(() => client.status === 'ready', 'the client reconnects');
    await until(async () => (await listenersOnStandIn(publisher)) === before + 1, 'the listener subscribes');
    const closesBefore = closes.length;

    const socket = client.stream as { remoteAddress?: string; remotePort?: number };
    const here = `${socket.remoteAddress} ${socket.remotePort}`;
    await publisher.publish(SWITCH_MASTER_CHANNEL, `other-${name} 127.0.0.3 6379 127.0.0.2 6379`);
    await publisher.publish(SWITCH_MASTER_CHANNEL, `${name} 127.0.0.3 6379 ${here}`);
    await until(() => actions.length === 2, 'the first two announcements are handled');
    expect(actions).toEqual(['other-group', 'stayed']);
    expect(closes.length).toBe(closesBefore);

    await publisher.publish(SWITCH_MASTER_CHANNEL, `${name} ${here} 127.0.0.2 6379`);
    await until(() => actions.length === 3, 'the third announcement is handled');
    expect(actions[2]).toBe('left');
    await until(() => closes.length === closesBefore + 1, 'the connection is dropped');
    await until(() => client.status === 'ready', 'the client connects again');
  });

  it('reaches no Sentinel before its client connects, and lets go of them when the client ends', async () => {
    const name = `group-${randomUUID()}`;
    const publisher = connection();
    const client = connection({ lazyConnect: true });
    const before = await listenersOnStandIn(publisher);
    leaveReplacedPrimary(client, { sentinels: SENTINELS, name });
    await publisher.ping();
    expect(await listenersOnStandIn(publisher)).toBe(before);

    await client.connect();
    await until(async () => (await listenersOnStandIn(publisher)) === before + 1, 'the listener subscribes');
    await client.quit();
    await until(async () => (await listenersOnStandIn(publisher)) === before, 'the listener unsubscribes');
  });

  it('stops listening at once when told to', async () => {
    const publisher = connection();
    const client = connection();
    await until(() => client.status === 'ready', 'the client connects');
    const before = await listenersOnStandIn(publisher);
    const stop = leaveReplacedPrimary(client, { sentinels: SENTINELS, name: `group-${randomUUID()}` });
    client.disconnect(true);
    await until(async () => (await listenersOnStandIn(publisher)) === before + 1, 'the listener subscribes');
    stop();
    await until(async () => (await listenersOnStandIn(publisher)) === before, 'the listener unsubscribes');
  });
});
