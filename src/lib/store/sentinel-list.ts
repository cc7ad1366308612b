/**
 * The Sentinel address list of FXGATE_REDIS_SENTINELS, read and checked. A module of its own so
 * that the configuration reads it without loading a Redis client. It may touch its text only.
 */

/** One Sentinel, as `host:port` (an IPv6 address in brackets). */
export interface SentinelAddress {
  readonly host: string;
  readonly port: number;
}

export function formatSentinelAddress(address: SentinelAddress): string {
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

/** The addresses read, and every problem found, each naming its entry. */
export interface SentinelListReading {
  readonly addresses: SentinelAddress[];
  readonly problems: string[];
}

const BRACKETED = /^\[([0-9A-Fa-f:.]+)\]:(\d+)$/;
const PLAIN = /^([A-Za-z0-9.-]+):(\d+)$/;

/**
 * FXGATE_REDIS_SENTINELS: `host:port` entries, comma-separated, an IPv6 address in brackets.
 * The port is required: a Sentinel listens on 26379 by default, a data node on 6379, and a
 * missing port would silently pick one of them.
 */
export function readSentinelList(text: string): SentinelListReading {
  const entries = text.split(',').map((entry) => entry.trim());
  const addresses: SentinelAddress[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const shown = JSON.stringify(entry.slice(0, 64));
    if (entry === '') {
      problems.push(`entry ${index + 1} is empty; write host:port pairs separated by single commas`);
      return;
    }
    const match = BRACKETED.exec(entry) ?? PLAIN.exec(entry);
    if (match === null) {
      problems.push(`${shown} is not host:port (an IPv6 address goes in brackets: [::1]:26379)`);
      return;
    }
    const port = Number(match[2]);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      problems.push(`${shown}: the port must be 1 to 65535`);
      return;
    }
    const address = { host: match[1]!, port };
    const key = formatSentinelAddress(address).toLowerCase();
    if (seen.has(key)) {
      problems.push(`${shown} is listed twice`);
      return;
    }
    seen.add(key);
    addresses.push(address);
  });
  return { addresses, problems };
}
