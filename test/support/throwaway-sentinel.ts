/**
 * A throwaway Redis that fails over: a primary, a replica and one or more Sentinels, each the
 * local redis-server (Sentinel is `redis-server --sentinel`, Debian's redis-sentinel is the same
 * binary) as a child process on a free loopback port with its own temporary folder. Tests use it
 * to run the store through Sentinel and to kill the primary for real.
 *
 * It may touch: the processes it starts and their folders; nothing else.
 *
 * Replication can be cut on purpose (cutReplication): the replica authenticates to the primary as
 * its own ACL user, and turning that user off and dropping the link keeps the replica from
 * receiving anything written after the cut. That makes "a write the old primary had not
 * replicated" deterministic, where a sleep or a paused process would still leave the bytes in
 * the replica's socket buffer.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { Redis } from 'ioredis';

import { captureOutput, hasEnded, stopChild } from './child-processes.js';
import { cleanupOnExit, findExecutableDir, freePort, waitUntil } from './local-processes.js';
import type { TestCertificates } from './test-certificates.js';
import { exitDescription, REDIS_INSTALL_HINT } from './throwaway-redis.js';

export interface SentinelSetOptions {
  /** How many Sentinels watch the primary (quorum: a majority of them). */
  readonly sentinels?: number;
  /** The data nodes' password (`requirepass`), which clients and the Sentinels give. */
  readonly password?: string;
  /** An ACL user of the data nodes besides `default`: its ACL rules, every permission unless given. */
  readonly user?: { readonly name: string; readonly password: string; readonly rules?: string };
  /** The Sentinels' own password (`requirepass` on each Sentinel). */
  readonly sentinelPassword?: string;
  readonly masterName?: string;
  /** Sentinel's down-after-milliseconds: how long the primary must be silent to be down. */
  readonly downAfterMs?: number;
  /** Sentinel's failover-timeout. */
  readonly failoverTimeoutMs?: number;
  /** TLS only, on every node and between them: each listens on a TLS port with this certificate. */
  readonly tls?: TestCertificates;
}

export const SENTINEL_SET_DEFAULTS = {
  sentinels: 1,
  /** Made unique per set: Sentinels that watch the same name take each other's word for where its primary is. */
  masterName: 'fxgate-test',
  downAfterMs: 1_000,
  failoverTimeoutMs: 5_000,
} as const;

/** The replica's own user on the primary; its password is a test constant, never a secret. */
const REPLICATION_USER = 'replicator';
const REPLICATION_PASSWORD = 'replicator-test-password';

/** Long enough for a Sentinel that falls into TILT on a busy machine (30 s) to come out and fail over. */
const PROMOTION_TIMEOUT_MS = 60_000;

export interface SentinelAddress {
  readonly host: string;
  readonly port: number;
}

export interface RedisNode {
  readonly port: number;
  readonly dir: string;
  readonly child: ChildProcess;
  /** Everything the process printed, for failure messages. */
  output(): string;
}

export class ThrowawaySentinelSet {
  private readonly exitHooks: (() => void)[] = [];

  private constructor(
    readonly options: Required<Omit<SentinelSetOptions, 'password' | 'sentinelPassword' | 'user' | 'tls'>> &
      Pick<SentinelSetOptions, 'password' | 'sentinelPassword' | 'user' | 'tls'>,
    private readonly binary: string,
    readonly dataNodes: RedisNode[],
    readonly sentinelNodes: RedisNode[],
  ) {}

  get masterName(): string {
    return this.options.masterName;
  }

  get sentinels(): SentinelAddress[] {
    return this.sentinelNodes.map((node) => ({ host: '127.0.0.1', port: node.port }));
  }

  /** `host:port,...`, as FXGATE_REDIS_SENTINELS takes them. */
  get sentinelList(): string {
    return this.sentinels.map((s) => `${s.host}:${s.port}`).join(',');
  }

  static async start(options: SentinelSetOptions = {}): Promise<ThrowawaySentinelSet> {
    const resolved = {
      ...SENTINEL_SET_DEFAULTS,
      ...options,
      masterName: options.masterName ?? `${SENTINEL_SET_DEFAULTS.masterName}-${randomBytes(4).toString('hex')}`,
    };
    const binDir = findExecutableDir(['redis-server'], ['/usr/bin', '/usr/local/bin', '/usr/sbin']);
    if (binDir === null) throw new Error(`no redis-server in PATH, /usr/bin or /usr/local/bin: ${REDIS_INSTALL_HINT}`);
    const set = new ThrowawaySentinelSet(resolved, path.join(binDir, 'redis-server'), [], []);
    try {
      const primary = await set.startDataNode(null);
      const replica = await set.startDataNode(primary.port);
      await set.waitForReplicaLink(replica, 'up');
      for (let i = 0; i < resolved.sentinels; i++) await set.startSentinel(primary.port);
      await set.waitForSentinelsToKnowEachOther();
    } catch (error) {
      await set.stop();
      throw error;
    }
    return set;
  }

  /** A client of a data node, with the data password. */
  client(port: number): Redis {
    const client = new Redis({
      ...this.tlsOption(),
      host: '127.0.0.1',
      port,
      password: this.options.password,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    return client;
  }

  /** A client of a Sentinel, with the Sentinels' password. */
  sentinelClient(address: SentinelAddress = this.sentinels[0]!): Redis {
    const client = new Redis({
      ...this.tlsOption(),
      host: address.host,
      port: address.port,
      password: this.options.sentinelPassword,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    return client;
  }

  /** The client side of TLS when the set speaks it: the test authority trusted. */
  private tlsOption(): { tls?: { ca: string } } {
    return this.options.tls === undefined ? {} : { tls: { ca: this.options.tls.ca } };
  }

  /** Runs one command on a data node and closes the connection. */
  async onNode<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
    const client = this.client(port);
    try {
      await client.connect();
      return await command(client);
    } finally {
      client.disconnect();
    }
  }

  /** The primary's port as the first Sentinel names it. */
  async primaryPort(): Promise<number> {
    const client = this.sentinelClient();
    try {
      await client.connect();
      const reply = (await client.call('SENTINEL', 'get-master-addr-by-name', this.masterName)) as [string, string];
      return Number(reply[1]);
    } finally {
      client.disconnect();
    }
  }

  node(port: number): RedisNode {
    const node = this.dataNodes.find((candidate) => candidate.port === port);
    if (node === undefined) throw new Error(`no data node on port ${port}`);
    return node;
  }

  /** The data node that is not the one on `port`. */
  other(port: number): RedisNode {
    const node = this.dataNodes.find((candidate) => candidate.port !== port && !hasEnded(candidate.child));
    if (node === undefined) throw new Error(`no live data node other than ${port}`);
    return node;
  }

  /**
   * Stops replication from the primary for good: the replica's user is turned off and its link
   * dropped, so it can neither receive nor catch up. Resolves once the replica says its link is down.
   */
  async cutReplication(): Promise<void> {
    const primary = await this.primaryPort();
    await this.onNode(primary, async (client) => {
      await client.call('ACL', 'SETUSER', REPLICATION_USER, 'off');
      await client.call('CLIENT', 'KILL', 'TYPE', 'replica');
    });
    await this.waitForReplicaLink(this.other(primary), 'down');
  }

  /**
   * Waits until every write made so far on the primary is on the replica (WAIT), so that a test
   * knows what the replica holds before it cuts the link.
   */
  async waitForReplication(): Promise<void> {
    const primary = await this.primaryPort();
    const acknowledged = await this.onNode(primary, (client) => client.call('WAIT', '1', '5000'));
    if (acknowledged !== 1) throw new Error(`the replica acknowledged ${String(acknowledged)} of 1 within 5 s`);
  }

  /**
   * When the last killPrimary sent its signal (Date.now()): an answer recorded before it was made
   * by the old primary. Taken before the signal, since the exit event may be seen only after answers
   * that came from the outage.
   */
  killSentAt = 0;

  /** SIGKILLs the primary; returns its port. */
  async killPrimary(): Promise<number> {
    const port = await this.primaryPort();
    const node = this.node(port);
    const exited = new Promise<void>((resolve) => node.child.once('exit', () => resolve()));
    this.killSentAt = Date.now();
    node.child.kill('SIGKILL');
    await exited;
    return port;
  }

  /** Resolves with the new primary's port once a Sentinel names another node and that node is a primary. */
  async waitForPromotion(formerPort: number, timeoutMs = PROMOTION_TIMEOUT_MS): Promise<number> {
    let promoted = formerPort;
    await waitUntil(
      'Sentinel failover',
      async () => {
        try {
          promoted = await this.primaryPort();
          if (promoted === formerPort) return false;
          const role = await this.onNode(promoted, (client) => client.call('ROLE'));
          return Array.isArray(role) && role[0] === 'master';
        } catch {
          return false;
        }
      },
      timeoutMs,
      () => {
        const dead = this.sentinelNodes.find((node) => hasEnded(node.child));
        return dead ? exitDescription(dead.child, dead.output()) : null;
      },
    ).catch((error: unknown) => {
      const logs = this.sentinelNodes.map((node) => node.output()).join('\n---\n');
      throw new Error(`${error instanceof Error ? error.message : String(error)}\nSentinel output:\n${logs}`, {
        cause: error,
      });
    });
    return promoted;
  }

  async stop(): Promise<void> {
    for (const hook of this.exitHooks.splice(0)) hook();
    const nodes = [...this.sentinelNodes, ...this.dataNodes];
    await Promise.all(nodes.map((node) => stopChild(node.child)));
    await Promise.all(nodes.map((node) => rm(node.dir, { recursive: true, force: true })));
  }

  private async startDataNode(primaryPort: number | null): Promise<RedisNode> {
    const { password, user } = this.options;
    const lines = [
      // Nothing on disk: the data dies with the process, as a crashed cache's does.
      'save ""',
      'appendonly no',
      // A replica is synchronised at once rather than after the default 5 s wait for others.
      'repl-diskless-sync-delay 0',
      // The replica's own user, which cutReplication turns off; `default` stays the clients'.
      `user ${REPLICATION_USER} on >${REPLICATION_PASSWORD} ~* &* +@all`,
      ...(user === undefined ? [] : [`user ${user.name} on >${user.password} ${user.rules ?? '~* &* +@all'}`]),
      ...(password === undefined ? [] : [`requirepass ${password}`]),
      ...(primaryPort === null
        ? []
        : [
            `replicaof 127.0.0.1 ${primaryPort}`,
            `masteruser ${REPLICATION_USER}`,
            `masterauth ${REPLICATION_PASSWORD}`,
          ]),
    ];
    const node = await this.spawnNode(primaryPort === null ? 'primary' : 'replica', lines, []);
    this.dataNodes.push(node);
    return node;
  }

  private async startSentinel(primaryPort: number): Promise<RedisNode> {
    const { masterName, password, sentinelPassword, downAfterMs, failoverTimeoutMs, sentinels } = this.options;
    const quorum = Math.floor(sentinels / 2) + 1;
    const lines = [
      `sentinel monitor ${masterName} 127.0.0.1 ${primaryPort} ${quorum}`,
      `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
      `sentinel failover-timeout ${masterName} ${failoverTimeoutMs}`,
      `sentinel parallel-syncs ${masterName} 1`,
      ...(password === undefined ? [] : [`sentinel auth-pass ${masterName} ${password}`]),
      ...(sentinelPassword === undefined
        ? []
        : [`requirepass ${sentinelPassword}`, `sentinel sentinel-pass ${sentinelPassword}`]),
    ];
    const node = await this.spawnNode('sentinel', lines, ['--sentinel']);
    this.sentinelNodes.push(node);
    return node;
  }

  /** Writes the node's config file (Sentinel rewrites its own) and starts it; resolves once it answers PING. */
  private async spawnNode(role: string, lines: string[], extraArgs: string[]): Promise<RedisNode> {
    const dir = await mkdtemp(path.join(os.tmpdir(), `fxgate-test-${role}-`));
    const port = await freePort();
    const config = path.join(dir, 'redis.conf');
    // Loopback only; in the foreground, so that the test holds the pid.
    const { tls } = this.options;
    // With TLS, the plain port is off and the nodes reach each other over TLS too.
    const listen =
      tls === undefined
        ? [`port ${port}`]
        : [
            'port 0',
            `tls-port ${port}`,
            `tls-cert-file ${tls.certFile}`,
            `tls-key-file ${tls.keyFile}`,
            `tls-ca-cert-file ${tls.caFile}`,
            'tls-auth-clients no',
            'tls-replication yes',
          ];
    await writeFile(
      config,
      [...listen, 'bind 127.0.0.1', 'daemonize no', `dir ${dir}`, 'logfile ""', ...lines, ''].join('\n'),
    );
    const child = spawn(this.binary, [config, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = captureOutput(child);
    const node: RedisNode = { port, dir, child, output };
    this.exitHooks.push(
      cleanupOnExit(() => {
        child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }),
    );
    const password = role === 'sentinel' ? this.options.sentinelPassword : this.options.password;
    try {
      await waitUntil(
        `throwaway Redis ${role}`,
        async () => {
          const client = new Redis({
            ...this.tlsOption(),
            host: '127.0.0.1',
            port,
            password,
            lazyConnect: true,
            retryStrategy: () => null,
          });
          client.on('error', () => {});
          try {
            await client.connect();
            return (await client.ping()) === 'PONG';
          } catch {
            return false;
          } finally {
            client.disconnect();
          }
        },
        30_000,
        () => exitDescription(child, output()),
      );
    } catch (error) {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    return node;
  }

  private async waitForReplicaLink(replica: RedisNode, state: 'up' | 'down'): Promise<void> {
    await waitUntil(
      `replica link ${state}`,
      async () => {
        const info = await this.onNode(replica.port, (client) => client.info('replication'));
        return info.includes(`master_link_status:${state}`);
      },
      30_000,
    );
  }

  /**
   * Until every Sentinel lists the replica as healthy (without it a failover has no candidate)
   * and knows every other Sentinel (without them no majority elects a leader).
   */
  private async waitForSentinelsToKnowEachOther(): Promise<void> {
    for (const address of this.sentinels) {
      await waitUntil(
        'Sentinel to discover the replica and the other Sentinels',
        async () => {
          const client = this.sentinelClient(address);
          try {
            await client.connect();
            const replicas = (await client.call('SENTINEL', 'replicas', this.masterName)) as string[][];
            const peers = (await client.call('SENTINEL', 'sentinels', this.masterName)) as unknown[];
            const healthy = replicas.some((fields) => fields[fields.indexOf('flags') + 1] === 'slave');
            return healthy && peers.length === this.sentinelNodes.length - 1;
          } catch {
            return false;
          } finally {
            client.disconnect();
          }
        },
        30_000,
      );
    }
  }
}
