/**
 * The gateway in front of the real core, as `fxgate all` runs them, for end-to-end legacy tests: a
 * V3Harness (real database and store), the gateway listening on its own port with the shared key
 * registry and provisioned upstream credentials, and a legacy v1/v2 client that signs its JWTs with
 * node:crypto straight from docs/contract.md#auth-tokens (not through the project's signer).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';

import { buildGatewayApp, type LegacyGatewayOptions } from '../../src/gateway/app.js';
import type { LegacyMappings } from '../../src/gateway/legacy/declarations/mappings-loader.js';
import { ProvisioningCredentials } from '../../src/gateway/upstream/signing-credentials.js';
import type { LegacyWebhooks } from '../../src/gateway/webhooks/legacy-webhooks.js';
import type { Mode, Scope } from '../../src/lib/auth/credential-vocabulary.js';
import type { LoadedKey } from '../../src/lib/keys/key-file.js';
import type { EphemeralStore } from '../../src/lib/store/ephemeral-store.js';
import { legacyToken } from './independent-signing.js';
import { TEST_LIFECYCLE } from './legacy-lifecycle.js';
import { ResponseLog } from './openapi-responses.js';
import {
  type HarnessOptions,
  type SendOptions,
  sendTo,
  TEST_ISSUER,
  TEST_ISSUERS,
  type TestResponse,
  V3Harness,
} from './v3-harness.js';

export interface LegacyRequest {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Below the generation's org path, e.g. `trades?page=2`, or a full path starting with `/`. */
  readonly path: string;
  readonly body?: string;
  readonly headers?: Record<string, string | undefined>;
  /** Omit the Authorization header entirely. */
  readonly unsigned?: boolean;
  /** Override the org in the path (defaults to the key's org). */
  readonly orgId?: string;
  /** Token lifetime in seconds (at most 120: docs/contract.md#auth-tokens-lifetime). */
  readonly lifetimeSeconds?: number;
}

export interface LegacyHarnessOptions extends HarnessOptions {
  /** The gateway's store; the core's own by default (as in `fxgate all`). */
  readonly gatewayStore?: EphemeralStore;
  readonly gateway?: Partial<LegacyGatewayOptions> & {
    readonly timeoutMs?: number;
    readonly requestTimeoutMs?: number;
  };
  /** The gateway's FXGATE_TRUSTED_PROXIES; none by default. */
  readonly trustedProxies?: readonly string[];
  /** The declarations the gateway serves (compileLegacyMappings of an edited copy); the shipped ones by default. */
  readonly mappings?: LegacyMappings;
  /** Legacy webhooks on the gateway, made once the core (and so the database) exists. */
  readonly webhooks?: (core: V3Harness) => LegacyWebhooks;
}

/** Legacy rate limits no test reaches by accident: a test of the limits sets its own. */
export const UNLIMITED_LEGACY_RATE = { reads: 1_000_000, writes: 1_000_000 } as const;

export class LegacyHarness {
  private constructor(
    readonly core: V3Harness,
    readonly gateway: FastifyInstance,
    readonly gatewayUrl: string,
    private readonly keysDir: string,
  ) {}

  static async start(options: LegacyHarnessOptions = {}): Promise<LegacyHarness> {
    const core = await V3Harness.start({
      ...options,
      core: { rateLimits: { reads: 1_000_000, writes: 1_000_000 }, ...options.core },
    });
    const keysDir = await mkdtemp(join(tmpdir(), 'fxgate-gateway-keys-'));
    const gateway = await buildGatewayApp({
      upstreamUrl: core.baseUrl,
      logLevel: 'silent',
      timeoutMs: options.gateway?.timeoutMs ?? 10_000,
      ...(options.mappings === undefined ? {} : { mappings: options.mappings }),
      ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies }),
      ...(options.gateway?.requestTimeoutMs === undefined
        ? {}
        : { requestTimeoutMs: options.gateway.requestTimeoutMs }),
      legacy: {
        registry: core.registry,
        database: core.db,
        store: options.gatewayStore ?? core.store,
        credentials: new ProvisioningCredentials({ registry: core.registry, dir: keysDir, issuer: TEST_ISSUER }),
        issuers: TEST_ISSUERS,
        lifecycle: TEST_LIFECYCLE,
        // Raised as the core's are, unless the test sets its own.
        rateLimits: UNLIMITED_LEGACY_RATE,
        ...(options.webhooks ? { webhooks: options.webhooks(core) } : {}),
        ...options.gateway,
      },
    });
    const gatewayUrl = await gateway.listen({ host: '127.0.0.1', port: 0 });
    return new LegacyHarness(core, gateway, gatewayUrl, keysDir);
  }

  /** A legacy API key (the same registry serves v3): all legacy scopes, sandbox, unless told. */
  createKey(input: { scopes?: Scope[]; mode?: Mode; ipAllowlist?: string[]; orgId?: string } = {}): Promise<LoadedKey> {
    return this.core.createKey({ scopes: ['view', 'trade', 'withdraw'], ...input });
  }

  token(key: LoadedKey, lifetimeSeconds?: number): string {
    return legacyToken(key, lifetimeSeconds);
  }

  /** Sends a legacy request to the gateway, signed with a fresh token; sandbox keys declare SANDBOX. */
  async call(generation: 'v1' | 'v2', key: LoadedKey, request: LegacyRequest): Promise<TestResponse> {
    const path = request.path.startsWith('/')
      ? request.path
      : `/${generation}/brokerage/${request.orgId ?? key.file.orgId}/${request.path}`;
    const headers: Record<string, string | undefined> = {
      ...(request.unsigned ? {} : { authorization: `Bearer ${this.token(key, request.lifetimeSeconds)}` }),
      ...(key.file.mode === 'sandbox' ? { 'x-app-mode': 'SANDBOX' } : {}),
      ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...request.headers,
    };
    return this.send({
      method: request.method ?? (request.body === undefined ? 'GET' : 'POST'),
      path,
      body: request.body,
      headers,
    });
  }

  v1(key: LoadedKey, request: LegacyRequest): Promise<TestResponse> {
    return this.call('v1', key, request);
  }

  v2(key: LoadedKey, request: LegacyRequest): Promise<TestResponse> {
    return this.call('v2', key, request);
  }

  /** Every answer the gateway gave this harness, held against its generation's document when it closes (openapi-responses.ts). */
  readonly responses = new ResponseLog(['v3', 'v2', 'v1']);

  /** Sends exactly what it is given to the gateway. */
  async send(options: SendOptions): Promise<TestResponse> {
    const response = await sendTo(this.gatewayUrl, options);
    this.responses.add(options.method ?? 'GET', options.path, response);
    return response;
  }

  /** Tears everything down, then holds every answer the gateway gave against its generation's document (the core's own in core.close). */
  async close(): Promise<void> {
    try {
      await this.gateway.close();
      await this.core.close();
    } finally {
      await rm(this.keysDir, { recursive: true, force: true });
    }
    await this.responses.verify();
  }
}

/** A fresh v2 idempotency key. */
export function idemKey(): string {
  return `k-${randomBytes(8).toString('hex')}`;
}
