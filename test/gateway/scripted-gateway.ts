/**
 * A stand-alone gateway in front of a scripted v3 (RecordingUpstream), as an operator runs it:
 * its own key registry (PGlite) holding a legacy key, and a key folder holding the gateway's v3
 * credential for that key's org. For tests of what the gateway sends and how it reads answers
 * that the real core never gives.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildGatewayApp } from '../../src/gateway/app.js';
import { KeyDirectoryCredentials } from '../../src/gateway/upstream/credentials.js';
import { newUuid } from '../../src/lib/ids.js';
import { loadKey, writeKeyFile, type LoadedKey } from '../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import { MemoryStore } from '../../src/lib/store/memory-store.js';
import { createTestPglite, type TestDatabase } from '../support/databases.js';
import { legacyToken } from '../support/independent-signing.js';
import { TEST_ISSUER } from '../support/v3-harness.js';
import { RecordingUpstream } from './recording-upstream.js';

export class ScriptedGateway {
  private constructor(
    readonly upstream: RecordingUpstream,
    readonly app: FastifyInstance,
    readonly url: string,
    readonly registry: KeyRegistry,
    /** A sandbox legacy key with view, trade and withdraw. */
    readonly key: LoadedKey,
    private readonly database: TestDatabase,
    private readonly dir: string,
  ) {}

  static async start(options: { timeoutMs?: number } = {}): Promise<ScriptedGateway> {
    const upstream = await RecordingUpstream.start();
    const database = await createTestPglite();
    const dir = await mkdtemp(join(tmpdir(), 'fxgate-scripted-'));
    const registry = new KeyRegistry(database.db, { cacheTtlMs: 0 });
    const orgId = newUuid();
    const key = loadKey(await registry.createKey({ orgId, scopes: ['view', 'trade', 'withdraw'], mode: 'sandbox' }));
    // The gateway's own v3 credential for the org: another key of the same org.
    await writeKeyFile(join(dir, `${orgId}.sandbox.json`), await registry.createKey({ orgId, scopes: ['view', 'trade', 'withdraw'], mode: 'sandbox' }));
    const app = await buildGatewayApp({
      upstreamUrl: upstream.url,
      logLevel: 'silent',
      ...(options.timeoutMs === undefined ? {} : { connectTimeoutMs: options.timeoutMs, timeoutMs: options.timeoutMs }),
      legacy: { registry, store: new MemoryStore(), credentials: new KeyDirectoryCredentials(dir, TEST_ISSUER), issuer: TEST_ISSUER },
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return new ScriptedGateway(upstream, app, url, registry, key, database, dir);
  }

  /** A fresh legacy token (spec 5.2) for a key, signed with node:crypto. */
  token(key: LoadedKey = this.key): string {
    return legacyToken(key);
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.upstream.close();
    await this.database.drop();
    await rm(this.dir, { recursive: true, force: true });
  }
}
