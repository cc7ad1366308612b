/**
 * `fxgate all` started in the test's own process, as src/cli/commands/all.ts starts it: the core
 * on a loopback port, the gateway in front of it sharing its registry, store and provisioned
 * credentials, the sandbox key file written to the data folder and the sandbox seeded. More
 * gateways can be put in front of the same core, e.g. one serving an edited copy of mappings/.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';

import { Closers } from '../../../src/cli/closers.js';
import { Drain } from '../../../src/cli/drain.js';
import { ensureSandboxKey } from '../../../src/cli/sandbox-key.js';
import { seedSandbox } from '../../../src/cli/sandbox-seed.js';
import { startCore, type StartedCore, upstreamKeysDir } from '../../../src/cli/servers.js';
import { buildGatewayApp } from '../../../src/gateway/app.js';
import type { MappingsLocation } from '../../../src/gateway/legacy/declarations/mappings-loader.js';
import { lifecycleOptionsFromConfig } from '../../../src/gateway/legacy/runtime/generation-lifecycle.js';
import { ProvisioningCredentials } from '../../../src/gateway/upstream/signing-credentials.js';
import { type Config, loadConfig, signingIssuer } from '../../../src/lib/config.js';
import type { Database } from '../../../src/lib/db/database.js';
import { generateSealingKey } from '../../../src/lib/secrets/sealing-keys.js';
import { TEST_LIFECYCLE } from '../../support/legacy-lifecycle.js';

export interface InProcessAll {
  /** The gateway's URL: v1, v2 and v3. */
  readonly url: string;
  /** The core's own URL: v3 only. */
  readonly coreUrl: string;
  /** The sandbox key file it wrote. */
  readonly keyPath: string;
  readonly orgId: string;
  readonly issuer: string;
  readonly config: Config;
  /** The core's database, for a test that puts the book in a state v3 cannot. */
  readonly db: Database;
  /** Another gateway in front of the same core, with the declarations of `mappingsLocation`. */
  gateway(options: { mappingsLocation?: MappingsLocation }): Promise<string>;
  close(): Promise<void>;
}

export async function startAllInProcess(env: Readonly<Record<string, string>>): Promise<InProcessAll> {
  const dataDir = await mkdtemp(join(tmpdir(), 'fxgate-diff-all-'));
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    FXGATE_DATA_DIR: dataDir,
    // A key of its own unless the test gives one, as every deployment on PostgreSQL needs.
    FXGATE_SECRETS_KEY: generateSealingKey(),
    ...env,
  });
  const closers = new Closers();
  closers.add('data folder', () => rm(dataDir, { recursive: true, force: true }));
  try {
    // The test services answer: a warning would be a failure to start.
    const core: StartedCore = await startCore(config, closers, {
      drain: new Drain(closers),
      extraTrustedProxies: ['127.0.0.1', '::1'],
      warn: (line) => {
        throw new Error(line);
      },
    });
    const coreUrl = await core.app.listen({ host: '127.0.0.1', port: 0 });
    const credentials = new ProvisioningCredentials({
      registry: core.deps.registry,
      dir: upstreamKeysDir(config),
      issuer: signingIssuer(config),
    });
    const gateway = async (options: { mappingsLocation?: MappingsLocation } = {}): Promise<string> => {
      const app: FastifyInstance = await buildGatewayApp({
        upstreamUrl: coreUrl,
        connectTimeoutMs: config.FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS,
        timeoutMs: config.FXGATE_UPSTREAM_TIMEOUT_MS,
        deadlineMs: config.FXGATE_UPSTREAM_DEADLINE_MS,
        logLevel: config.LOG_LEVEL,
        ...(options.mappingsLocation ? { mappingsLocation: options.mappingsLocation } : {}),
        legacy: {
          registry: core.deps.registry,
          database: core.deps.db,
          store: core.store,
          credentials,
          issuers: config.FXGATE_JWT_ISSUER,
          idempotencyLockTtlMs: config.FXGATE_IDEMPOTENCY_LOCK_TTL_MS,
          rateLimits: {
            reads: config.FXGATE_LEGACY_RATE_LIMIT_READS,
            writes: config.FXGATE_LEGACY_RATE_LIMIT_WRITES,
          },
          lifecycle: { ...lifecycleOptionsFromConfig(config), ...TEST_LIFECYCLE },
          pageTotals: config.FXGATE_LEGACY_PAGE_TOTALS,
        },
      });
      closers.addListener('gateway', () => app.close());
      return app.listen({ host: '127.0.0.1', port: 0 });
    };
    const url = await gateway();
    const sandbox = await ensureSandboxKey(config.FXGATE_DATA_DIR, core.deps.registry);
    await seedSandbox(core.deps.db, sandbox.orgId, sandbox.keyName);
    return {
      url,
      coreUrl,
      keyPath: sandbox.path,
      orgId: sandbox.orgId,
      issuer: signingIssuer(config),
      config,
      db: core.deps.db,
      gateway,
      close: () => closers.closeAll(),
    };
  } catch (error) {
    await closers.closeAll();
    throw error;
  }
}
