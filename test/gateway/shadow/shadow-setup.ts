/**
 * The shadow mode's test bench: the core, a second fxgate gateway in front of it standing in for
 * the legacy service (with its own nonce store, as the real one has), the legacy double in front
 * of that, and the gateway under test in shadow mode beside it, with its admin listener. Clients
 * sign their legacy tokens with node:crypto (independent-signing.ts).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

import { MemoryStore } from '../../../src/cli/store/memory-store.js';
import type { RateSource } from '../../../src/core/trading/rate-source.js';
import { buildGatewayApp, type GatewayOptions } from '../../../src/gateway/app.js';
import type { ShadowOptions } from '../../../src/gateway/shadow/shadow-mode.js';
import {
  readShadowReport,
  type ShadowReport,
  type ShadowReportOperation,
} from '../../../src/gateway/shadow/shadow-recorder.js';
import { ProvisioningCredentials } from '../../../src/gateway/upstream/signing-credentials.js';
import { AdminListener } from '../../../src/lib/admin/admin-listener.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { legacyToken } from '../../support/independent-signing.js';
import { LegacyDouble, type LegacyDoubleOptions } from '../../support/legacy-double.js';
import { LegacyHarness, UNLIMITED_LEGACY_RATE } from '../../support/legacy-harness.js';
import { TEST_LIFECYCLE } from '../../support/legacy-lifecycle.js';
import { sendTo, TEST_ISSUER, TEST_ISSUERS, type TestResponse } from '../../support/v3-harness.js';

export type Generation = 'v1' | 'v2';

/** The core and the legacy stand-in (a gateway of its own, its own nonce store) with the double in front of it. */
export interface LegacySide {
  readonly h: LegacyHarness;
  readonly double: LegacyDouble;
  close(): Promise<void>;
}

export async function startLegacySide(
  options: { rates?: RateSource; double?: Omit<LegacyDoubleOptions, 'target'> & { target?: false } } = {},
): Promise<LegacySide> {
  const h = await LegacyHarness.start({
    gatewayStore: new MemoryStore(),
    ...(options.rates === undefined ? {} : { rates: options.rates }),
  });
  const { target, ...rest } = options.double ?? {};
  const double = await LegacyDouble.start({ ...(target === false ? {} : { target: h.gatewayUrl }), ...rest });
  return {
    h,
    double,
    async close() {
      await double.close();
      await h.close();
    },
  };
}

/** A URL where nothing listens: a port the OS gave and took back. */
export async function freePortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** The report's tables emptied, for a test that counts from zero. */
export async function clearReport(h: LegacyHarness): Promise<void> {
  await h.core.db.query('DELETE FROM shadow_fields');
  await h.core.db.query('DELETE FROM shadow_operations');
}

export interface TimedResponse extends TestResponse {
  readonly ms: number;
}

/** A gateway under test (shadow mode or not) on the core of a LegacySide, with its admin listener. */
export class GatewayUnderTest {
  private constructor(
    readonly app: FastifyInstance,
    readonly url: string,
    readonly admin: AdminListener,
    readonly adminUrl: string,
    readonly keysDir: string,
    private readonly h: LegacyHarness,
  ) {}

  private closing: Promise<void> | null = null;

  static async start(
    side: LegacySide,
    shadow: ShadowOptions | undefined,
    extra: Partial<GatewayOptions> = {},
  ): Promise<GatewayUnderTest> {
    const { h } = side;
    const keysDir = await mkdtemp(join(tmpdir(), 'fxgate-shadow-keys-'));
    const admin = new AdminListener({ logLevel: 'silent' });
    const app = await buildGatewayApp({
      upstreamUrl: h.core.baseUrl,
      logLevel: 'silent',
      admin,
      ...extra,
      legacy: {
        registry: h.core.registry,
        database: h.core.db,
        store: h.core.store,
        credentials: new ProvisioningCredentials({ registry: h.core.registry, dir: keysDir, issuer: TEST_ISSUER }),
        issuers: TEST_ISSUERS,
        lifecycle: TEST_LIFECYCLE,
        rateLimits: UNLIMITED_LEGACY_RATE,
        ...(shadow === undefined ? {} : { shadow: { flushIntervalMs: 100, ...shadow } }),
      },
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const adminUrl = await admin.listen('127.0.0.1', 0);
    return new GatewayUnderTest(app, url, admin, adminUrl, keysDir, h);
  }

  /** A legacy request as a client sends it, with a fresh token; its answer and how long it took. */
  async call(
    generation: Generation,
    key: LoadedKey,
    path: string,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<TimedResponse> {
    const started = performance.now();
    const response = await sendTo(this.url, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      path: `/${generation}/brokerage/${key.file.orgId}/${path}`,
      ...(init.body === undefined ? {} : { body: init.body }),
      headers: {
        authorization: `Bearer ${legacyToken(key)}`,
        ...(key.file.mode === 'sandbox' ? { 'x-app-mode': 'SANDBOX' } : {}),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...init.headers,
      },
    });
    return { ...response, ms: performance.now() - started };
  }

  async report(): Promise<ShadowReport> {
    const response = await sendTo(this.adminUrl, { path: '/admin/shadow/report' });
    expect(response.status, response.text).toBe(200);
    return response.json<ShadowReport>();
  }

  /** The report once `done` holds of it (the comparisons run after the answers). */
  async reportWhen(done: (report: ShadowReport) => boolean, timeoutMs = 20_000): Promise<ShadowReport> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const report = await this.report();
      if (done(report)) return report;
      if (Date.now() > until)
        throw new Error(`the shadow report did not get there in ${timeoutMs} ms: ${JSON.stringify(report, null, 1)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Whether the gateway ever made a v3 credential (so called v3) for an org. */
  async calledV3For(orgId: string): Promise<boolean> {
    return (await readdir(this.keysDir)).some((file) => file.startsWith(orgId));
  }

  /**
   * The barrier before asserting that the gateway sent nothing more: closing lets every comparison it started
   * finish and writes their counts, so the legacy double and the returned report then hold all it will ever do.
   */
  async settle(): Promise<ShadowReport> {
    await this.close();
    return readShadowReport(this.h.core.db);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.app.close();
      await this.admin.close();
      await rm(this.keysDir, { recursive: true, force: true });
    })();
    return this.closing;
  }
}

/** Every comparison counted, whatever its outcome. */
export function settled(operation: ShadowReportOperation | undefined): number {
  return operation === undefined ? 0 : operation.compared + operation.notCompared + operation.dropped;
}

export function operationOf(
  report: ShadowReport,
  generation: Generation,
  operation: string,
): ShadowReportOperation | undefined {
  return report.operations.find((entry) => entry.generation === generation && entry.operation === operation);
}

/** All counts of the report added up. */
export function totalSettled(report: ShadowReport): number {
  return report.operations.reduce((sum, operation) => sum + settled(operation), 0);
}
