/**
 * A running v3 application for tests: real database (PostgreSQL or PGlite), real ephemeral store
 * (Redis or in-process), a key registry, listening on 127.0.0.1 on a free port, and a client that
 * signs requests with the project's own signer. Everything is torn down by close().
 */
import { randomBytes, randomUUID } from 'node:crypto';

import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { request as httpRequest } from 'undici';

import { MemoryStore } from '../../src/cli/store/memory-store.js';
import { primaryIdentity } from '../../src/cli/store/primary-identity.js';
import { NONCE_EPOCH_KEY, NONCE_EPOCH_PRIMARY_KEY, RedisStore } from '../../src/cli/store/redis-store.js';
import { type CoreDependencies, coreOperations, type CoreOptions, createV3App } from '../../src/core/app.js';
import type { Operation } from '../../src/core/http/operation.js';
import type { RateSource } from '../../src/core/trading/rate-source.js';
import type { Mode, Scope } from '../../src/lib/auth/credential-vocabulary.js';
import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import { DEFAULT_JWT_ISSUERS } from '../../src/lib/config.js';
import type { Database } from '../../src/lib/db/database.js';
import { newUuid } from '../../src/lib/ids.js';
import { type LoadedKey, loadKey } from '../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import { SealingKeyring } from '../../src/lib/secrets/sealing-keyring.js';
import type { EphemeralStore } from '../../src/lib/store/ephemeral-store.js';
import { createTestPglite, createTestPostgres, type TestDatabase } from './databases.js';
import { ResponseLog } from './openapi-responses.js';
import { testServices } from './services.js';
import { testKeyPrefix } from './test-run.js';

/** What the test servers accept, the configuration's default; the first is what the test clients sign with. */
export const TEST_ISSUERS: readonly [string, ...string[]] = DEFAULT_JWT_ISSUERS;
export const TEST_ISSUER = TEST_ISSUERS[0];

export type DriverName = 'postgres' | 'pglite';
export type StoreName = 'redis' | 'memory';

/**
 * The back end a harness uses when a test does not choose: real services, or the embedded
 * defaults when the `embedded` vitest project sets FXGATE_TEST_BACKEND.
 */
function defaultBackend(): { driver: DriverName; storeKind: StoreName } {
  return process.env.FXGATE_TEST_BACKEND === 'embedded'
    ? { driver: 'pglite', storeKind: 'memory' }
    : { driver: 'postgres', storeKind: 'redis' };
}

export interface HarnessOptions {
  readonly driver?: DriverName;
  readonly storeKind?: StoreName;
  /** Use this store instead (e.g. one pointed at a dead Redis). */
  readonly store?: EphemeralStore;
  readonly core?: CoreOptions;
  /** Operations to serve; the core's own by default. */
  readonly operations?: (deps: CoreDependencies) => Operation[] | Promise<Operation[]>;
  readonly keyCacheTtlMs?: number;
  readonly rates?: RateSource;
  readonly now?: () => Date;
  /**
   * The harness's own store starts with this epoch marker instead of its creation time (memory)
   * or its first nonce claim (Redis): for a test that sends a token signed before the harness
   * started, whose store would refuse it (docs/contract.md#auth-tokens-single-use).
   */
  readonly nonceEpochMs?: number;
  /** What webhook secrets are sealed with; a keyring of one random key unless given. */
  readonly keyring?: SealingKeyring;
}

/** A keyring of one random key, as a process is given one at start-up. */
export function randomKeyring(): SealingKeyring {
  return SealingKeyring.of([randomBytes(32)]);
}

export interface TestResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface SendOptions {
  readonly method?: string;
  readonly path: string;
  readonly body?: string | Buffer;
  readonly headers?: Record<string, string | undefined>;
}

export interface SignedSendOptions extends SendOptions {
  readonly key: LoadedKey;
  readonly idempotencyKey?: string;
}

/** Sends exactly what it is given to a server under test; headers flattened, body as text. */
export async function sendTo(baseUrl: string, options: SendOptions): Promise<TestResponse> {
  const headers = Object.fromEntries(
    Object.entries(options.headers ?? {}).filter(([, v]) => v !== undefined),
  ) as Record<string, string>;
  const response = await httpRequest(`${baseUrl}${options.path}`, {
    method: (options.method ?? 'GET') as 'GET',
    headers,
    body: options.body,
  });
  const text = await response.body.text();
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { status: response.statusCode, headers: flat, text, json: <T>() => JSON.parse(text) as T };
}

/** A harness's own store: in-process, or on the test Redis under a prefix of its own; with the epoch marker asked for. */
async function ownStore(kind: StoreName, epochMs: number | undefined): Promise<EphemeralStore> {
  if (kind === 'memory') return new MemoryStore({ epochMs });
  const url = testServices().redisUrl;
  const keyPrefix = testKeyPrefix();
  if (epochMs !== undefined) {
    // The marker as RedisStore would have made it on this server, on this prefix only: with this
    // primary's identity, or the store's first connection would take it for another server's.
    const admin = new Redis(url);
    try {
      const identity = primaryIdentity(await admin.info('server'), await admin.info('replication'));
      await admin.set(`${keyPrefix}${NONCE_EPOCH_KEY}`, String(epochMs));
      await admin.set(`${keyPrefix}${NONCE_EPOCH_PRIMARY_KEY}`, identity);
    } finally {
      await admin.quit();
    }
  }
  const store = new RedisStore({ url, keyPrefix });
  // As a server does at start-up: the marker dates from before any token the test signs.
  await store.nonceEpoch();
  return store;
}

export class V3Harness {
  private constructor(
    readonly app: FastifyInstance,
    readonly db: Database,
    readonly store: EphemeralStore,
    readonly registry: KeyRegistry,
    /** The keyring the core seals webhook endpoint secrets with. */
    readonly keyring: SealingKeyring,
    readonly baseUrl: string,
    private readonly teardown: () => Promise<void>,
  ) {}

  static async start(options: HarnessOptions = {}): Promise<V3Harness> {
    const driver = options.driver ?? defaultBackend().driver;
    const storeKind = options.storeKind ?? defaultBackend().storeKind;
    const database: TestDatabase = driver === 'pglite' ? await createTestPglite() : await createTestPostgres();
    const store = options.store ?? (await ownStore(storeKind, options.nonceEpochMs));
    const registry = new KeyRegistry(database.db, { cacheTtlMs: options.keyCacheTtlMs ?? 0 });
    const keyring = options.keyring ?? randomKeyring();
    const deps: CoreDependencies = {
      db: database.db,
      store,
      registry,
      keyring,
      rates: options.rates,
      now: options.now,
    };
    const operations = await (options.operations ? options.operations(deps) : coreOperations(deps, options.core));
    const app = await createV3App(deps, { logLevel: 'silent', issuers: TEST_ISSUERS, ...options.core }, operations);
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    return new V3Harness(app, database.db, store, registry, keyring, address, async () => {
      await app.close();
      await store.close();
      await database.drop();
    });
  }

  async createKey(
    input: { scopes?: Scope[]; mode?: Mode; ipAllowlist?: string[]; orgId?: string } = {},
  ): Promise<LoadedKey> {
    const file = await this.registry.createKey({
      orgId: input.orgId ?? newUuid(),
      scopes: input.scopes ?? ['view', 'trade', 'withdraw', 'webhooks'],
      mode: input.mode ?? 'sandbox',
      ipAllowlist: input.ipAllowlist ?? [],
    });
    return loadKey(file);
  }

  /** Every answer this harness saw, held against the v3 document when it closes (openapi-responses.ts). */
  readonly responses = new ResponseLog(['v3']);

  /** Sends exactly what it is given: no auth added. */
  async send(options: SendOptions): Promise<TestResponse> {
    const response = await sendTo(this.baseUrl, options);
    this.responses.add(options.method ?? 'GET', options.path, response);
    return response;
  }

  /** Signs with the key (fresh token and signature) and sends; extra headers override. */
  async signed(options: SignedSendOptions): Promise<TestResponse> {
    const method = options.method ?? 'GET';
    const signer = new V3RequestSigner(options.key, { issuer: TEST_ISSUER });
    const auth = await signer.headers({
      method,
      pathAndQuery: options.path,
      body: options.body,
      idempotencyKey: options.idempotencyKey,
    });
    return this.send({ ...options, method, headers: { ...auth, ...options.headers } });
  }

  /** A signed POST of `body` as JSON (none when absent), with an Idempotency-Key (a fresh one unless given). */
  post(key: LoadedKey, path: string, body?: unknown, idempotencyKey: string = randomUUID()): Promise<TestResponse> {
    return this.signed({
      key,
      method: 'POST',
      path,
      body: body === undefined ? undefined : JSON.stringify(body),
      idempotencyKey,
    });
  }

  /** Tears everything down, then holds every answer seen against the v3 document (and throws naming any it does not describe). */
  async close(): Promise<void> {
    await this.teardown();
    await this.responses.verify();
  }
}
