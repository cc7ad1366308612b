/**
 * The Redis EphemeralStore, for any deployment with more than one process: one Redis at a URL,
 * or the primary Redis Sentinel names (redis-connection.ts). Every operation that reads before
 * it writes is one Lua script (redis-scripts.ts), sent by EVALSHA.
 *
 * It fails fast rather than queueing: a caller waiting on a dead Redis holds an HTTP request
 * open, and callers already decide how to degrade on StoreUnavailableError. A call waits at most
 * commandTimeoutMs for the connection to be ready and commandTimeoutMs for the reply. A command
 * that timed out may still have run on the server; the TTLs bound the consequences (a lock that
 * nobody completes expires after lockTtlMs).
 *
 * A connection is ready for callers only once it has checked the epoch marker against the primary
 * it reached (primary-identity.ts, nonceEpochOfPrimary): after a failover or a restart that is a
 * new marker, made before any nonce is claimed on the new primary. The check is one INFO and one
 * script per connection; the per-request claim stays one round trip. Commands issued in the same
 * tick leave in one write to the socket.
 *
 * With tracing on, a call inside a request's span is a CLIENT span of its own, named by the
 * command and the script, never a key or an argument (docs/operations.md#tracing).
 */
import { EventEmitter } from 'node:events';

import type { Redis } from 'ioredis';

import {
  CorruptStoreRecordError,
  InvalidStoreInputError,
  StoreUnavailableError,
} from '../../lib/errors/internal-errors.js';
import {
  type EphemeralStore,
  type IdempotencyBeginInput,
  type IdempotencyBeginResult,
  type NonceClaim,
  type RateLimitInput,
  type RateLimitResult,
  type StoredResponse,
} from '../../lib/store/ephemeral-store.js';
import { ATTR, inClientSpan, insideSpan, TRACERS, tracingActive } from '../../lib/tracing/spans.js';
import { primaryIdentity } from './primary-identity.js';
import { createRedisClient, type RedisEndpoint } from './redis-connection.js';
import { REDIS_SCRIPT_KEY_COUNTS, REDIS_SCRIPTS, type RedisScriptName } from './redis-scripts.js';
import { assertRateLimitInput, assertTtlMs } from './store-input.js';
import { decodeStoredResponse, encodeStoredResponse } from './stored-response.js';

export type RedisStoreOptions = RedisEndpoint & {
  /**
   * Prepended to every key, to share one Redis between deployments. It may not contain braces:
   * Redis Cluster hashes the first {...} of a key, which must stay the caller's hash tag.
   */
  readonly keyPrefix?: string;
  /** How long a call may wait for the connection, and then for the reply. */
  readonly commandTimeoutMs?: number;
  /** How long one TCP connection attempt may take. */
  readonly connectTimeoutMs?: number;
};

export const REDIS_STORE_DEFAULTS = { keyPrefix: '', commandTimeoutMs: 500, connectTimeoutMs: 2_000 } as const;

/** The epoch marker's key (under keyPrefix): one per store, without a TTL (redis-scripts.ts claimNonce). */
export const NONCE_EPOCH_KEY = 'nonce-epoch';
/** The identity of the primary that made or last confirmed the marker (redis-scripts.ts nonceEpochOfPrimary). */
export const NONCE_EPOCH_PRIMARY_KEY = 'nonce-epoch-primary';

/** Reconnect delays grow by this much per failed attempt, up to the cap, so that recovery is quick but not a busy loop. */
const RECONNECT_STEP_MS = 100;
const RECONNECT_MAX_DELAY_MS = 1_000;

/** Reply errors that mean "Redis cannot serve you now" rather than "this command is wrong". */
const UNAVAILABLE_REPLY_PREFIXES = [
  'LOADING',
  'BUSY',
  'READONLY',
  'MASTERDOWN',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'NOREPLICAS',
  'OOM',
];

/** The client's socket to Redis (a TLS socket when the URL says so). */
type RedisStream = Redis['stream'];

type ScriptCommand = (...keysAndArgs: (string | number)[]) => Promise<unknown>;

/** Custom commands live on the client under these names; prefixed so they can never shadow a Redis command. */
function commandName(script: RedisScriptName): string {
  return `fxgate_${script}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function toStoreError(error: unknown): Error {
  if (error instanceof StoreUnavailableError || error instanceof CorruptStoreRecordError) return error;
  if (error instanceof Error && error.name === 'ReplyError') {
    if (!UNAVAILABLE_REPLY_PREFIXES.some((prefix) => error.message.startsWith(prefix))) return error;
  }
  return new StoreUnavailableError(`Redis is unavailable: ${messageOf(error)}`, { cause: error });
}

/** The epoch marker as a script replies it: ms since the epoch, in decimal digits. */
function epochOf(script: string, marker: unknown, reply: unknown): number {
  const epochMs = typeof marker === 'string' && /^\d+$/.test(marker) ? Number(marker) : Number.NaN;
  if (!Number.isSafeInteger(epochMs)) throw unexpectedReply(script, reply);
  return epochMs;
}

function unexpectedReply(script: string, reply: unknown): CorruptStoreRecordError {
  return new CorruptStoreRecordError(`Unexpected reply from ${script}: ${JSON.stringify(reply)}`);
}

/**
 * Resolves when the connection has checked the marker against its primary (the store's 'checked'
 * event); rejects when that check fails, at the first connection error, or after timeoutMs.
 */
function waitForChecked(client: Redis, events: EventEmitter, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (error?: StoreUnavailableError): void => {
      clearTimeout(timer);
      events.off('checked', onChecked);
      events.off('check-failed', onCheckFailed);
      client.off('error', onError);
      client.off('end', onEnd);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onChecked = (): void => settle();
    const onError = (error: Error): void =>
      settle(new StoreUnavailableError(`Redis is unreachable: ${error.message}`, { cause: error }));
    // Whatever stopped the check (a timeout, a replica, an ACL user without INFO), the store cannot serve.
    const onCheckFailed = (error: unknown): void =>
      settle(
        error instanceof StoreUnavailableError
          ? error
          : new StoreUnavailableError(`Redis's primary could not be checked: ${messageOf(error)}`, { cause: error }),
      );
    const onEnd = (): void => settle(new StoreUnavailableError('The Redis connection has ended'));
    const timer = setTimeout(
      () => settle(new StoreUnavailableError(`Redis was not ready within ${timeoutMs} ms`)),
      timeoutMs,
    );
    events.on('checked', onChecked);
    events.on('check-failed', onCheckFailed);
    client.on('error', onError);
    client.on('end', onEnd);
  });
}

export class RedisStore implements EphemeralStore {
  private readonly client: Redis;
  private readonly commandTimeoutMs: number;
  /** One shared wait for the connection, so that a burst of calls adds one set of listeners, not hundreds. */
  private readiness: Promise<void> | undefined;
  private closed = false;
  /** 'checked' when this connection's marker check succeeded, 'check-failed' with the error when not. */
  private readonly primaryChecks = new EventEmitter();
  /** Counts connections, so that a check finishing late speaks only for the connection it ran on. */
  private connection = 0;
  /** The connection whose marker check succeeded, if it is still the current one. */
  private checkedConnection = -1;
  /** The connection whose check is running. */
  private checkingConnection = -1;
  /** The socket whose writes are held until the next tick (coalesceWrites), if any. */
  private corkedStream: RedisStream | null = null;

  constructor(options: RedisStoreOptions) {
    const keyPrefix = options.keyPrefix ?? REDIS_STORE_DEFAULTS.keyPrefix;
    if (/[{}]/.test(keyPrefix)) throw new InvalidStoreInputError(`keyPrefix may not contain braces, got ${keyPrefix}`);
    this.commandTimeoutMs = options.commandTimeoutMs ?? REDIS_STORE_DEFAULTS.commandTimeoutMs;
    // The listeners are the readiness waits of concurrent callers, each removed when it settles.
    this.primaryChecks.setMaxListeners(0);
    this.client = createRedisClient(options, {
      keyPrefix,
      commandTimeout: this.commandTimeoutMs,
      connectTimeout: options.connectTimeoutMs ?? REDIS_STORE_DEFAULTS.connectTimeoutMs,
      enableOfflineQueue: false,
      // 0: commands in flight when the connection drops fail at once instead of waiting for a reconnect.
      maxRetriesPerRequest: 0,
      // A resent script could run after its caller was told it failed (a second lock, a second hit).
      autoResendUnfulfilledCommands: false,
      // Each command is written at once. ioredis's auto-pipelining holds every command back to a
      // setImmediate to batch it with others: a wait on every request's latency, for no
      // throughput gained at saturation.
      enableAutoPipelining: false,
      retryStrategy: (attempt: number) => Math.min(attempt * RECONNECT_STEP_MS, RECONNECT_MAX_DELAY_MS),
    });
    // Connection errors reach callers through their failing calls; without a listener ioredis logs each one.
    this.client.on('error', () => {});
    // Every connection checks the marker against the primary it reached before it serves a call:
    // a Redis met new or emptied gets its marker now rather than at its first nonce claim (a token
    // signed in between would be refused for nothing), and a promoted replica or a restarted server
    // gets a new one before a nonce it may have lost is claimed again.
    this.client.on('ready', () => {
      this.connection += 1;
      this.checkPrimary();
    });
    this.client.on('close', () => {
      this.connection += 1;
    });
    // ioredis ends a client for good in a few races (its Sentinel failover detector dropping a
    // connection that is still being made is one): a store that was not closed connects again.
    this.client.on('end', () => {
      if (this.closed) return;
      setTimeout(() => {
        if (!this.closed && this.client.status === 'end') this.client.connect().catch(() => {});
      }, RECONNECT_MAX_DELAY_MS).unref();
    });
    for (const [name, lua] of Object.entries(REDIS_SCRIPTS)) {
      const script = name as RedisScriptName;
      this.client.defineCommand(commandName(script), { numberOfKeys: REDIS_SCRIPT_KEY_COUNTS[script], lua });
    }
  }

  async idempotencyBegin(input: IdempotencyBeginInput): Promise<IdempotencyBeginResult> {
    assertTtlMs('lockTtlMs', input.lockTtlMs);
    const reply = await this.script('idempotencyBegin', [input.key], input.fingerprint, input.owner, input.lockTtlMs);
    if (!Array.isArray(reply)) throw unexpectedReply('idempotencyBegin', reply);
    const [outcome, detail] = reply as unknown[];
    if (outcome === 'acquired') return { outcome: 'acquired' };
    if (outcome === 'mismatch' && typeof detail === 'string')
      return { outcome: 'mismatch', originalFingerprint: detail };
    if (outcome === 'completed' && typeof detail === 'string')
      return { outcome: 'completed', response: decodeStoredResponse(detail) };
    if (outcome === 'in_flight' && typeof detail === 'number') return { outcome: 'in_flight', retryAfterMs: detail };
    throw unexpectedReply('idempotencyBegin', reply);
  }

  async idempotencyComplete(key: string, owner: string, response: StoredResponse, ttlMs: number): Promise<boolean> {
    assertTtlMs('ttlMs', ttlMs);
    const reply = await this.script('idempotencyComplete', [key], owner, encodeStoredResponse(response), ttlMs);
    return reply === 1;
  }

  async idempotencyRelease(key: string, owner: string): Promise<void> {
    await this.script('idempotencyRelease', [key], owner);
  }

  async claimNonce(key: string, ttlMs: number): Promise<NonceClaim> {
    assertTtlMs('ttlMs', ttlMs);
    const reply = await this.script('claimNonce', [key, NONCE_EPOCH_KEY], ttlMs);
    if (!Array.isArray(reply) || reply.length !== 2) throw unexpectedReply('claimNonce', reply);
    const [fresh, marker] = reply as unknown[];
    if (fresh !== 0 && fresh !== 1) throw unexpectedReply('claimNonce', reply);
    return { fresh: fresh === 1, epochMs: epochOf('claimNonce', marker, reply) };
  }

  async nonceEpoch(): Promise<number> {
    const reply = await this.script('nonceEpoch', [NONCE_EPOCH_KEY]);
    return epochOf('nonceEpoch', reply, reply);
  }

  async rateLimit(input: RateLimitInput): Promise<RateLimitResult> {
    assertRateLimitInput(input);
    const reply = await this.script('rateLimit', [input.key], input.limit, input.periodMs);
    if (!Array.isArray(reply) || reply.length !== 4 || !reply.every((n) => typeof n === 'number')) {
      throw unexpectedReply('rateLimit', reply);
    }
    const [allowed, remaining, resetMs, retryAfterMs] = reply as number[];
    return {
      allowed: allowed === 1,
      remaining: remaining ?? 0,
      resetMs: resetMs ?? 0,
      retryAfterMs: retryAfterMs ?? 0,
    };
  }

  async cacheGet(key: string): Promise<string | null> {
    return this.run('GET', () => this.client.get(key));
  }

  async cacheSet(key: string, value: string, ttlMs: number): Promise<void> {
    assertTtlMs('ttlMs', ttlMs);
    await this.run('SET', () => this.client.set(key, value, 'PX', ttlMs));
  }

  async ping(): Promise<void> {
    await this.run('PING', () => this.client.ping());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // QUIT went unanswered: drop the socket instead.
      }
    }
    this.client.disconnect();
  }

  /** Runs a script; ioredis takes the first REDIS_SCRIPT_KEY_COUNTS[name] arguments as KEYS (and prefixes them). */
  private script(name: RedisScriptName, keys: readonly string[], ...args: (string | number)[]): Promise<unknown> {
    const command = this.scriptCommand(name);
    return this.run('EVALSHA', () => command(...keys, ...args), name);
  }

  /** The client's command for a script, bound to it. */
  private scriptCommand(name: RedisScriptName): ScriptCommand {
    // defineCommand adds methods that ioredis's types cannot know about.
    const command = (this.client as unknown as Record<string, ScriptCommand>)[commandName(name)];
    if (command === undefined) throw new Error(`Script ${name} is not defined`);
    return command.bind(this.client);
  }

  /**
   * Runs a command once the connection is ready; with tracing on and a span to be its parent,
   * inside a CLIENT span named by the command (and the script's name): never a key or an argument.
   */
  private run<T>(operation: string, command: () => Promise<T>, script?: RedisScriptName): Promise<T> {
    if (!tracingActive() || !insideSpan()) return this.runReady(command);
    const summary = script === undefined ? operation : `${operation} ${script}`;
    return inClientSpan(
      TRACERS.redis,
      summary,
      { attributes: { [ATTR.dbSystem]: 'redis', [ATTR.dbOperation]: operation, [ATTR.dbSummary]: summary } },
      () => this.runReady(command),
    );
  }

  private async runReady<T>(command: () => Promise<T>): Promise<T> {
    await this.ready();
    try {
      this.coalesceWrites();
      return await command();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /**
   * Holds the socket's writes until the next tick and sends them as one: the commands one request
   * issues together (the rate-limit charge beside the nonce claim) cost one write, not one each.
   * Released before the event loop goes on, so no command waits for a later turn of it.
   */
  private coalesceWrites(): void {
    const stream = this.client.stream;
    if (this.corkedStream === stream) return;
    this.corkedStream = stream;
    stream.cork();
    process.nextTick(() => {
      if (this.corkedStream === stream) this.corkedStream = null;
      stream.uncork();
    });
  }

  /** Resolves once the connection is up and has checked the marker against its primary. */
  private ready(): Promise<void> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('The Redis store is closed'));
    if (this.client.status === 'ready' && this.checkedConnection === this.connection) return Promise.resolve();
    // A connection whose check failed (a timeout, a replica) checks again for the next caller.
    if (this.client.status === 'ready' && this.checkingConnection !== this.connection) this.checkPrimary();
    this.readiness ??= waitForChecked(this.client, this.primaryChecks, this.commandTimeoutMs).finally(() => {
      this.readiness = undefined;
    });
    return this.readiness;
  }

  /**
   * Compares the marker's primary with the one this connection reached and makes a new marker when
   * they differ (redis-scripts.ts nonceEpochOfPrimary); callers wait for it (ready()). Its outcome
   * is announced only while its connection is the current one.
   */
  private checkPrimary(): void {
    const connection = this.connection;
    this.checkingConnection = connection;
    const current = (): boolean => connection === this.connection && this.client.status === 'ready';
    void (async () => {
      const [server, replication] = await Promise.all([this.client.info('server'), this.client.info('replication')]);
      const identity = primaryIdentity(server, replication);
      const reply = await this.scriptCommand('nonceEpochOfPrimary')(NONCE_EPOCH_KEY, NONCE_EPOCH_PRIMARY_KEY, identity);
      epochOf('nonceEpochOfPrimary', reply, reply);
    })().then(
      () => {
        if (!current()) return;
        this.checkedConnection = connection;
        this.primaryChecks.emit('checked');
      },
      (error: unknown) => {
        if (this.checkingConnection === connection) this.checkingConnection = -1;
        if (current()) this.primaryChecks.emit('check-failed', error);
      },
    );
  }
}
