/**
 * Stand-alone gateways as an operator runs them, for tests of what the gateway sends to v3 and
 * how it reads the answers: each with its own key registry (PGlite) holding a sandbox legacy key
 * (view, trade, withdraw), and a key folder holding the gateway's v3 credential for that key's
 * org. Three kinds, by what stands in for v3:
 *   - ScriptedGateway: a real HTTP server on loopback (RecordingUpstream), for what needs a
 *     socket: hangs, timeouts, streamed garbage, byte-exact passthrough;
 *   - StandInGateway: whatever the test itself serves at a URL (a hand-made server that
 *     misbehaves below HTTP, or nothing at all);
 *   - NockedGateway: nock, reached through NodeHttpDispatcher, for the per-operation unit tests.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import type { Dispatcher } from 'undici';

import { MemoryStore } from '../../src/cli/store/memory-store.js';
import { buildGatewayApp, type LegacyGatewayOptions } from '../../src/gateway/app.js';
import { KeyDirectoryCredentials } from '../../src/gateway/upstream/signing-credentials.js';
import { newUuid } from '../../src/lib/ids.js';
import { type LoadedKey, loadKey, writeKeyFile } from '../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import { createTestPglite, type TestDatabase } from '../support/databases.js';
import { legacyToken } from '../support/independent-signing.js';
import { UNLIMITED_LEGACY_RATE } from '../support/legacy-harness.js';
import { TEST_LIFECYCLE } from '../support/legacy-lifecycle.js';
import { NodeHttpDispatcher } from '../support/node-http-dispatcher.js';
import { TEST_ISSUER, TEST_ISSUERS } from '../support/v3-harness.js';
import { RecordingUpstream } from './recording-upstream.js';

interface V3StandIn {
  readonly url: string;
  readonly dispatcher?: Dispatcher;
  /** The connect and the headers/body timeouts. */
  readonly timeoutMs?: number;
  readonly deadlineMs?: number;
  /** More legacy options, given the org of the gateway's key (its lifecycle, its usage report). */
  readonly legacy?: (orgId: string) => Partial<LegacyGatewayOptions>;
}

interface GatewayParts {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly registry: KeyRegistry;
  readonly key: LoadedKey;
  readonly database: TestDatabase;
  readonly dir: string;
}

/** The gateway, its registry and key folder, in front of whatever answers at `v3.url`. */
async function startGateway(v3: V3StandIn): Promise<GatewayParts> {
  const database = await createTestPglite();
  const dir = await mkdtemp(join(tmpdir(), 'fxgate-scripted-'));
  const registry = new KeyRegistry(database.db, { cacheTtlMs: 0 });
  const orgId = newUuid();
  const key = loadKey(await registry.createKey({ orgId, scopes: ['view', 'trade', 'withdraw'], mode: 'sandbox' }));
  // The gateway's own v3 credential for the org: another key of the same org.
  await writeKeyFile(
    join(dir, `${orgId}.sandbox.json`),
    await registry.createKey({ orgId, scopes: ['view', 'trade', 'withdraw'], mode: 'sandbox' }),
  );
  const app = await buildGatewayApp({
    upstreamUrl: v3.url,
    logLevel: 'silent',
    ...(v3.timeoutMs === undefined ? {} : { connectTimeoutMs: v3.timeoutMs, timeoutMs: v3.timeoutMs }),
    ...(v3.deadlineMs === undefined ? {} : { deadlineMs: v3.deadlineMs }),
    ...(v3.dispatcher === undefined ? {} : { upstreamDispatcher: v3.dispatcher }),
    legacy: {
      registry,
      database: database.db,
      store: new MemoryStore(),
      credentials: new KeyDirectoryCredentials(dir, TEST_ISSUER),
      issuers: TEST_ISSUERS,
      lifecycle: TEST_LIFECYCLE,
      rateLimits: UNLIMITED_LEGACY_RATE,
      ...v3.legacy?.(orgId),
    },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url, registry, key, database, dir };
}

abstract class LegacyGateway {
  protected constructor(private readonly parts: GatewayParts) {}

  get app(): FastifyInstance {
    return this.parts.app;
  }
  get url(): string {
    return this.parts.url;
  }
  get registry(): KeyRegistry {
    return this.parts.registry;
  }
  /** The sandbox legacy key (view, trade, withdraw). */
  get key(): LoadedKey {
    return this.parts.key;
  }

  /** The registry's database, which the gateway's usage report is written to too. */
  get database(): TestDatabase {
    return this.parts.database;
  }

  /** A fresh legacy token (docs/contract.md#auth-tokens) for a key, signed with node:crypto. */
  token(key: LoadedKey = this.parts.key): string {
    return legacyToken(key);
  }

  async close(): Promise<void> {
    await this.parts.app.close();
    await this.parts.database.drop();
    await rm(this.parts.dir, { recursive: true, force: true });
  }
}

export class ScriptedGateway extends LegacyGateway {
  private constructor(
    readonly upstream: RecordingUpstream,
    parts: GatewayParts,
  ) {
    super(parts);
  }

  static async start(
    options: {
      timeoutMs?: number;
      deadlineMs?: number;
      legacy?: (orgId: string) => Partial<LegacyGatewayOptions>;
    } = {},
  ): Promise<ScriptedGateway> {
    const upstream = await RecordingUpstream.start();
    return new ScriptedGateway(upstream, await startGateway({ url: upstream.url, ...options }));
  }

  override async close(): Promise<void> {
    await super.close();
    await this.upstream.close();
  }
}

export class StandInGateway extends LegacyGateway {
  private constructor(parts: GatewayParts) {
    super(parts);
  }

  /** The gateway in front of whatever the caller serves (or does not) at `v3.url`; the caller stops that. */
  static async start(v3: { url: string; timeoutMs?: number; deadlineMs?: number }): Promise<StandInGateway> {
    return new StandInGateway(await startGateway(v3));
  }
}

/** Where the nocked v3 lives: a name nothing resolves, so a call nock did not expect fails. */
export const NOCKED_V3_ORIGIN = 'http://v3.nocked.invalid';

export class NockedGateway extends LegacyGateway {
  private constructor(
    parts: GatewayParts,
    private readonly dispatcher: NodeHttpDispatcher,
  ) {
    super(parts);
  }

  static async start(): Promise<NockedGateway> {
    const dispatcher = new NodeHttpDispatcher(NOCKED_V3_ORIGIN);
    return new NockedGateway(await startGateway({ url: NOCKED_V3_ORIGIN, dispatcher }), dispatcher);
  }

  override async close(): Promise<void> {
    await super.close();
    await this.dispatcher.close();
  }
}
