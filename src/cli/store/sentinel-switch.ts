/**
 * Leaving a primary the Sentinels have replaced. A listener on every Sentinel's `+switch-master`
 * channel drops the store's connection when a Sentinel announces, for the store's group, a
 * primary other than the server the connection is on: a primary cut off from the Sentinels but
 * not from this process is left as soon as they elect another. ioredis's own failoverDetector
 * drops the connection at every announcement, and each Sentinel makes its own announcement when
 * it learns of the switch, so a late one dropped a connection already made to the new primary and
 * writes failed again after they had recovered. It may touch ioredis only: no command is sent on
 * the store's connection here.
 */
import { Redis } from 'ioredis';

import type { SentinelAddress } from '../../lib/store/sentinel-list.js';

/** The channel every Sentinel publishes a failover's outcome on. */
export const SWITCH_MASTER_CHANNEL = '+switch-master';
/** A Sentinel that cannot be reached is tried again after this long (ioredis's own default for its detector). */
const SENTINEL_RECONNECT_MS = 60_000;

/** A `+switch-master` message: `<group> <old ip> <old port> <new ip> <new port>`. */
export interface SwitchAnnouncement {
  readonly name: string;
  readonly newHost: string;
  readonly newPort: number;
}

export function parseSwitchAnnouncement(message: string): SwitchAnnouncement | null {
  const parts = message.split(' ');
  if (parts.length !== 5) return null;
  const [name, , , newHost, newPortText] = parts as [string, string, string, string, string];
  const newPort = Number(newPortText);
  return Number.isInteger(newPort) && newPort > 0 ? { name, newHost, newPort } : null;
}

/** What the listener made of an announcement: left the primary, stayed on it (it is the new one), or not the store's group. */
export type SwitchAction = 'left' | 'stayed' | 'other-group';

export interface SwitchListenerOptions {
  readonly sentinels: readonly SentinelAddress[];
  /** The group the store's client follows. */
  readonly name: string;
  readonly sentinelPassword?: string | undefined;
  readonly tls?: boolean | undefined;
  /** Called after each announcement is acted on. */
  readonly onAnnouncement?: (announcement: SwitchAnnouncement, action: SwitchAction) => void;
}

/**
 * Whether the client's socket is connected to the announced primary (the address the Sentinels
 * announce it at). A connection still being made has no peer yet: it is dropped and made again
 * from the Sentinels' answer, as ioredis's detector did.
 */
function isOn(client: Redis, announcement: SwitchAnnouncement): boolean {
  const socket = client.stream as { remoteAddress?: string; remotePort?: number } | undefined;
  return socket?.remoteAddress === announcement.newHost && socket.remotePort === announcement.newPort;
}

/**
 * Listens for as long as `client` lives: from its first connection (a client that never connects
 * never reaches a Sentinel) until it ends. Returns a stop for callers that end it earlier.
 */
export function leaveReplacedPrimary(client: Redis, options: SwitchListenerOptions): () => void {
  const listeners: Redis[] = [];
  let stopped = false;
  const onMessage = (channel: string, message: string): void => {
    if (channel !== SWITCH_MASTER_CHANNEL) return;
    const announcement = parseSwitchAnnouncement(message);
    if (announcement === null) return;
    let action: SwitchAction = 'other-group';
    if (announcement.name === options.name) {
      action = isOn(client, announcement) ? 'stayed' : 'left';
      // Reconnecting asks the Sentinels for the primary again.
      if (action === 'left' && client.status !== 'end') client.disconnect(true);
    }
    options.onAnnouncement?.(announcement, action);
  };
  const start = (): void => {
    if (stopped) return;
    for (const { host, port } of options.sentinels) {
      const listener = new Redis({
        host,
        port,
        ...(options.sentinelPassword === undefined ? {} : { password: options.sentinelPassword }),
        ...(options.tls === true ? { tls: {} } : {}),
        retryStrategy: () => SENTINEL_RECONNECT_MS,
        maxRetriesPerRequest: null,
      });
      // A Sentinel that is down is retried; the others carry on. Nothing to report per attempt.
      listener.on('error', () => {});
      listener.on('message', onMessage);
      listener.subscribe(SWITCH_MASTER_CHANNEL).catch(() => {});
      listeners.push(listener);
    }
  };
  const stop = (): void => {
    stopped = true;
    client.off('connect', start);
    for (const listener of listeners.splice(0)) listener.disconnect();
  };
  client.once('connect', start);
  client.once('end', stop);
  return stop;
}
